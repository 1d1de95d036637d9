//! The simulation study of `docs/ab-statistics.md` §3 (invented noise parameters):
//! false calls under A/A and detection of a 1% and 3% slowdown, for the default sequential
//! design and for a hyperfine-style block comparison with Welch's t-test; and, for the default
//! design at two practical thresholds, how judging against the threshold (an interval inside
//! ±δ is SAME) changed the calls from the earlier rule (a call whenever the interval excludes 0).
//!
//! Usage: `cargo run --release -p kernelab-stats --example simulate -- [EXPERIMENTS]`
// An example, not the library: it prints and may stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

#[path = "../tests/support/noise.rs"]
mod noise;

use kernelab_stats::{analyze, Design, Verdict};

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let pct = |x: usize| format!("{:.1}%", 100.0 * x as f64 / reps as f64);
    println!("| method | threshold | true change | experiments | called (SLOWER for a slowdown, any call under A/A) | SAME | earlier rule: interval excludes 0 | mean runs |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for threshold in [0.005, 0.02] {
        let design = Design {
            threshold,
            ..Design::default()
        };
        for effect in [0.0, 0.01, 0.03] {
            let (mut hits, mut same, mut old, mut runs) = (0usize, 0usize, 0usize, 0usize);
            let (mut block_hits, mut block_runs) = (0usize, 0usize);
            for r in 0..reps {
                let pairs = noise::noisy_pairs(r as u64, design.max_pairs, effect);
                let a = analyze(&pairs, &design);
                runs += 2 * a.pairs;
                let hit = if effect == 0.0 {
                    a.verdict.is_call()
                } else {
                    a.verdict == Verdict::Slower
                };
                hits += usize::from(hit);
                same += usize::from(a.verdict == Verdict::Same);
                let excludes = a.interval().is_some_and(|i| !i.contains(1.0));
                let old_hit =
                    excludes && (effect == 0.0 || a.interval().is_some_and(|i| i.low > 1.0));
                old += usize::from(old_hit);
                if threshold == 0.005 {
                    let (slower, n) = noise::block_welch(r as u64, 50, effect);
                    block_runs += n;
                    if slower.is_some_and(|s| effect == 0.0 || s) {
                        block_hits += 1;
                    }
                }
            }
            println!(
                "| kernelab sequential (ABBA, HL, exact Wilcoxon, Bonferroni looks) | {:.1}% | {:.0}% | {reps} | {} | {} | {} | {:.0} |",
                threshold * 100.0,
                effect * 100.0,
                pct(hits),
                pct(same),
                pct(old),
                runs as f64 / reps as f64
            );
            if threshold == 0.005 {
                println!(
                    "| hyperfine-style (50 A runs then 50 B runs, Welch t, p < 0.05) | — | {:.0}% | {reps} | {} | — | — | {:.0} |",
                    effect * 100.0,
                    pct(block_hits),
                    block_runs as f64 / reps as f64
                );
            }
        }
    }
}
