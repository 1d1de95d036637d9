//! The simulation study of `docs/ab-statistics.md` §3 (invented noise parameters):
//! false "changed" rate under A/A and detection of a 1% and 3% slowdown, for the default
//! sequential design and for a hyperfine-style block comparison with Welch's t-test.
//!
//! Usage: `cargo run --release -p kernelab-stats --example simulate -- [EXPERIMENTS]`

#[path = "../tests/support/noise.rs"]
mod noise;

use kernelab_stats::{analyze, Design, Verdict};

fn main() {
    let reps: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let design = Design::default();
    println!("| method | true change | experiments | \"changed\" or detected | mean runs |");
    println!("|---|---:|---:|---:|---:|");
    for effect in [0.0, 0.01, 0.03] {
        let (mut hits, mut runs) = (0usize, 0usize);
        let (mut block_hits, mut block_runs) = (0usize, 0usize);
        for r in 0..reps {
            let pairs = noise::noisy_pairs(r as u64, design.max_pairs, effect);
            let a = analyze(&pairs, &design);
            runs += 2 * a.pairs;
            let called = matches!(a.verdict, Verdict::Slower | Verdict::Faster);
            if (effect == 0.0 && called) || (effect > 0.0 && a.verdict == Verdict::Slower) {
                hits += 1;
            }
            let (slower, n) = noise::block_welch(r as u64, 50, effect);
            block_runs += n;
            if slower.is_some_and(|s| effect == 0.0 || s) {
                block_hits += 1;
            }
        }
        let pct = |x: usize| format!("{:.1}%", 100.0 * x as f64 / reps as f64);
        println!("| kernelab sequential (ABBA, HL, exact Wilcoxon, Bonferroni looks) | {:.0}% | {reps} | {} | {:.0} |", effect * 100.0, pct(hits), runs as f64 / reps as f64);
        println!("| hyperfine-style (50 A runs then 50 B runs, Welch t, p < 0.05) | {:.0}% | {reps} | {} | {:.0} |", effect * 100.0, pct(block_hits), block_runs as f64 / reps as f64);
    }
}
