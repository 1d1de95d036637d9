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
// Lints for libraries (issue #40, as uv has them): a library returns what it has to say,
// names no `pub` item its users cannot reach, documents every `unsafe` and panics on no `expect`.

mod change;
mod design;
mod order;
mod until;

/// Figures at or past this size are written in scientific notation by [`fixed`] and
/// [`percent`]: a ratio of 1e308 printed with `{:.4}` is 310 digits, which no reader can take
/// in and no table or pull-request body should hold.
pub const FIXED_LIMIT: f64 = 1e12;

/// The text shown for a figure that is not a finite number (docs/report.md, "Absurd figures").
pub const NOT_FINITE: &str = "unavailable (not a finite number)";

/// `x` with `decimals` digits after the point (`{:.4}`), of bounded width: a figure whose size
/// reaches [`FIXED_LIMIT`] in scientific notation with the same digits (`1.0000e308`), and one
/// that is not finite as [`NOT_FINITE`] (never `inf` or `NaN`). The one fixed-point formatter
/// of ratios and intervals.
pub fn fixed(x: f64, decimals: usize) -> String {
    if !x.is_finite() {
        NOT_FINITE.to_string()
    } else if x.abs() >= FIXED_LIMIT {
        format!("{x:.decimals$e}")
    } else {
        format!("{x:.decimals$}")
    }
}

/// A fraction as a percentage with two decimals, with an explicit sign when `signed`:
/// `0.0527` → `5.27%` or `+5.27%`. The one percentage formatter of kernelab (verdict texts here,
/// every renderer through `kernelab_report::format::percent`). A percentage whose size reaches
/// [`FIXED_LIMIT`] is written in scientific notation (`+1.00e310%`: the exponent is the
/// fraction's plus 2, so a fraction near `f64::MAX` does not overflow to `inf`); a fraction that
/// is not finite is [`NOT_FINITE`].
pub fn percent(fraction: f64, signed: bool) -> String {
    if !fraction.is_finite() {
        return NOT_FINITE.to_string();
    }
    if fraction.abs() * 100.0 >= FIXED_LIMIT {
        // The fraction's mantissa and exponent, the exponent raised by 2 (× 100).
        let sci = format!("{:.2e}", fraction);
        let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
        let exp = exp.parse::<i64>().unwrap_or(0) + 2;
        let sign = if signed && fraction > 0.0 { "+" } else { "" };
        return format!("{sign}{mantissa}e{exp}%");
    }
    if signed {
        format!("{:+.2}%", fraction * 100.0)
    } else {
        format!("{:.2}%", fraction * 100.0)
    }
}
pub mod modes;
pub mod rank;
pub mod settings;

pub use change::{Change, Direction, Interval};
pub use design::{
    aa_check, abba_order, analyze, drift, log_ratios, next, order_effect, planned_looks, usable,
    verdict, verdict_text, AaCheck, Analysis, Design, Drift, Look, Next, Order, OrderEffect, Pair,
    StopRule, Verdict,
};
pub use settings::{DesignSettings, MAX_PAIRS};
