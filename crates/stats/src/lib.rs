//! Paired A/B statistics for timing comparisons on noisy machines, as designed in
//! `docs/ab-statistics.md`: adjacent pairs in ABBA order, per-pair log ratios, the
//! Hodges–Lehmann estimate with the exact Wilcoxon signed-rank interval, three-way verdicts
//! against a practical threshold, planned looks with Bonferroni, and A/A calibration.
//!
//! ```
//! use kernelab_stats::{analyze, abba_order, Design, Order, Pair, Verdict};
//! let pairs: Vec<Pair> = (0..64)
//!     .map(|k| Pair { order: abba_order(k, Order::AB), a: 100.0 + (k % 7) as f64 * 0.01, b: 103.0 + (k % 5) as f64 * 0.01 })
//!     .collect();
//! let a = analyze(&pairs, &Design::default());
//! assert_eq!(a.verdict, Verdict::Slower);
//! let r = a.ratio().expect("an estimate");
//! assert!(r > 1.029 && r < 1.031);
//! ```
#![deny(missing_docs)]

mod change;
mod design;
mod order;
mod until;

/// A fraction as a percentage with two decimals, with an explicit sign when `signed`:
/// `0.0527` → `5.27%` or `+5.27%`. The one percentage formatter of kernelab (verdict texts here,
/// every renderer through `kernelab_report::format::percent`).
pub fn percent(fraction: f64, signed: bool) -> String {
    if signed {
        format!("{:+.2}%", fraction * 100.0)
    } else {
        format!("{:.2}%", fraction * 100.0)
    }
}
pub mod rank;
pub mod settings;

pub use change::{Change, Direction, Interval};
pub use design::{
    aa_check, abba_order, analyze, drift, log_ratios, next, order_effect, planned_looks, usable,
    verdict, verdict_text, AaCheck, Analysis, Design, Drift, Look, Next, Order, OrderEffect, Pair,
    StopRule, Verdict,
};
pub use settings::{DesignSettings, MAX_PAIRS};
