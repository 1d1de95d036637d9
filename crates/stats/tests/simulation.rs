//! Validation of the design under the noise model of ab-statistics.md §3: over 2,000 simulated
//! A/A experiments the false "changed" rate stays at or below α (plus three Monte-Carlo
//! standard errors), and a 1% slowdown is detected at least 90% of the time.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

#[path = "support/noise.rs"]
mod noise;

use kernelab_stats::{analyze, Design, Verdict};

const REPS: usize = 2000;

#[test]
fn aa_false_changed_rate_is_at_most_alpha() {
    let design = Design::default();
    let called = (0..REPS)
        .filter(|&r| {
            matches!(
                analyze(
                    &noise::noisy_pairs(r as u64, design.max_pairs, 0.0),
                    &design
                )
                .verdict,
                Verdict::Slower | Verdict::Faster
            )
        })
        .count();
    let rate = called as f64 / REPS as f64;
    let se = (design.alpha * (1.0 - design.alpha) / REPS as f64).sqrt();
    assert!(
        rate <= design.alpha + 3.0 * se,
        "false changed rate {rate} over {REPS} A/A experiments"
    );
}

#[test]
fn one_percent_slowdown_is_detected() {
    let design = Design::default();
    let detected = (0..REPS)
        .filter(|&r| {
            analyze(
                &noise::noisy_pairs(10_000 + r as u64, design.max_pairs, 0.01),
                &design,
            )
            .verdict
                == Verdict::Slower
        })
        .count();
    let power = detected as f64 / REPS as f64;
    assert!(power >= 0.90, "power {power} for a 1% slowdown");
}

#[test]
fn same_samples_same_answer() {
    let pairs = noise::noisy_pairs(7, 256, 0.02);
    let design = Design::default();
    assert_eq!(analyze(&pairs, &design), analyze(&pairs, &design));
}
