//! A design from the settings a user gives (`--threshold 0.5%`, `--alpha`, `--until`, …):
//! the one place that parses and bounds them, for the command line and the Python module.

use crate::design::{Design, StopRule};
use crate::Direction;

/// The most pairs (and warm-up runs, A/A pairs, failures) any option may ask for: far more
/// than any real experiment, small enough that nothing sized by it exhausts memory.
pub const MAX_PAIRS: usize = 10_000_000;

/// The design settings as given, fractions as text (`0.5%` or `0.005`).
#[derive(Clone, Debug, PartialEq)]
pub struct DesignSettings {
    /// Practical threshold δ.
    pub threshold: String,
    /// Target half-width of the default sequential rule.
    pub resolution: String,
    /// Stop on width only at this half-width.
    pub until: Option<String>,
    /// Anytime-valid confidence sequence.
    pub watch: bool,
    /// Every pair, one interval.
    pub fixed: bool,
    /// Error rate α.
    pub alpha: f64,
    /// First planned look.
    pub min_pairs: usize,
    /// Last planned look.
    pub max_pairs: usize,
}

impl Default for DesignSettings {
    fn default() -> Self {
        DesignSettings {
            threshold: "0.5%".into(),
            resolution: "0.5%".into(),
            until: None,
            watch: false,
            fixed: false,
            alpha: 0.05,
            min_pairs: 8,
            max_pairs: 256,
        }
    }
}

/// `0.5%` → 0.005; `0.005` → 0.005. Finite, at least 0 and below 1 (100%); zero only when
/// `zero_ok`.
pub fn fraction(option: &str, s: &str, zero_ok: bool) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    let v = v.map_err(|_| {
        format!("{option} {s:?}: expected a fraction such as 0.005 or a percentage such as 0.5%")
    })?;
    let low_ok = if zero_ok { v >= 0.0 } else { v > 0.0 };
    if !(v.is_finite() && low_ok && v < 1.0) {
        let low = if zero_ok { "[0" } else { "(0" };
        return Err(format!(
            "{option} {s:?}: expected a finite fraction in {low}, 1), such as 0.005 or 0.5%"
        ));
    }
    Ok(v)
}

/// `value` of `option` if it is at most [`MAX_PAIRS`].
pub fn bounded(option: &str, value: usize) -> Result<usize, String> {
    if value > MAX_PAIRS {
        return Err(format!("{option} {value}: expected at most {MAX_PAIRS}"));
    }
    Ok(value)
}

impl DesignSettings {
    /// The design of a run (`kernelab ab`) for a primary metric in `direction`.
    pub fn design(&self, direction: Direction) -> Result<Design, String> {
        let stop = if self.fixed {
            StopRule::Fixed
        } else if self.watch {
            StopRule::Watch
        } else if let Some(u) = &self.until {
            StopRule::Until {
                resolution: fraction("--until", u, false)?,
            }
        } else {
            StopRule::Auto {
                resolution: fraction("--resolution", &self.resolution, false)?,
            }
        };
        if !(self.alpha > 0.0 && self.alpha <= 0.5) {
            return Err(format!(
                "--alpha {}: expected a value in (0, 0.5]",
                self.alpha
            ));
        }
        bounded("--min-pairs", self.min_pairs)?;
        bounded("--max-pairs", self.max_pairs)?;
        if self.min_pairs < 2 || self.max_pairs < self.min_pairs {
            return Err(format!(
                "--min-pairs {} / --max-pairs {}: expected 2 <= min <= max",
                self.min_pairs, self.max_pairs
            ));
        }
        Ok(Design {
            alpha: self.alpha,
            threshold: fraction("--threshold", &self.threshold, true)?,
            min_pairs: self.min_pairs,
            max_pairs: self.max_pairs,
            stop,
            direction,
        })
    }

    /// The design of `ab analyze`: collected data is analysed whole (a fixed design, every
    /// pair), unless the samples file records a sequential plan (`recorded`), which is then
    /// followed (its stop rule and looks); `fixed`, `watch` or `until` choose explicitly.
    pub fn analysis_design(
        &self,
        direction: Direction,
        recorded: Option<Design>,
    ) -> Result<Design, String> {
        let mut out = self.design(direction)?;
        if !(self.fixed || self.watch || self.until.is_some()) {
            match recorded {
                Some(r) if r.stop != StopRule::Fixed => {
                    out.stop = r.stop;
                    out.min_pairs = r.min_pairs;
                    out.max_pairs = r.max_pairs;
                }
                _ => out.stop = StopRule::Fixed,
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_and_bounds() {
        assert_eq!(fraction("--threshold", "0.5%", true), Ok(0.005));
        assert_eq!(fraction("--threshold", "0.005", true), Ok(0.005));
        assert!(fraction("--until", "0", false).is_err());
        assert!(fraction("--threshold", "100%", true).is_err());
        let d = DesignSettings::default();
        let fixed = d.analysis_design(Direction::LowerIsBetter, None);
        assert_eq!(fixed.map(|x| x.stop), Ok(StopRule::Fixed));
        let bad = DesignSettings {
            alpha: 0.7,
            ..DesignSettings::default()
        };
        assert!(bad.design(Direction::LowerIsBetter).is_err());
    }
}
