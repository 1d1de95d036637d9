//! The one change convention of kernelab (docs/json.md, "Ratios and changes"), as types:
//! `ratio` = candidate / baseline of the metric as measured, `change` = `ratio` − 1, an interval
//! is on the ratio and written `{"low": …, "high": …}`. A speedup (baseline time / candidate time)
//! is derived from a ratio of times and only ever shown under that name. A figure that cannot be
//! computed (a zero baseline, a side without the figure, a non-finite value) is unavailable with
//! its reason; JSON never holds NaN or infinity.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A closed interval `[low, high]` with finite ends, `low ≤ high`. JSON: `{"low", "high"}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "IntervalRepr")]
pub struct Interval {
    /// Lower end.
    pub low: f64,
    /// Upper end.
    pub high: f64,
}

/// The JSON form of an interval: an object with `low` and `high` only (a positional `[lo, hi]`
/// of earlier layouts is refused, naming the form expected).
#[derive(schemars::JsonSchema)]
struct IntervalRepr {
    low: f64,
    high: f64,
}

impl<'de> Deserialize<'de> for IntervalRepr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<IntervalRepr, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = IntervalRepr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an interval object {\"low\": number, \"high\": number}")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<IntervalRepr, A::Error> {
                let (mut low, mut high) = (None, None);
                while let Some(k) = m.next_key::<String>()? {
                    match k.as_str() {
                        "low" => low = Some(m.next_value::<f64>()?),
                        "high" => high = Some(m.next_value::<f64>()?),
                        other => {
                            return Err(serde::de::Error::unknown_field(other, &["low", "high"]))
                        }
                    }
                }
                Ok(IntervalRepr {
                    low: low.ok_or_else(|| serde::de::Error::missing_field("low"))?,
                    high: high.ok_or_else(|| serde::de::Error::missing_field("high"))?,
                })
            }
        }
        d.deserialize_map(V)
    }
}

impl TryFrom<IntervalRepr> for Interval {
    type Error = String;
    fn try_from(r: IntervalRepr) -> Result<Interval, String> {
        Interval::new(r.low, r.high).ok_or_else(|| {
            format!(
                "an interval needs finite ends with low ≤ high, found low {} and high {}",
                r.low, r.high
            )
        })
    }
}

impl Interval {
    /// The interval `[low, high]`; `None` when an end is not finite or `low > high`.
    pub fn new(low: f64, high: f64) -> Option<Interval> {
        (low.is_finite() && high.is_finite() && low <= high).then_some(Interval { low, high })
    }
    /// The interval from a `(low, high)` pair of the statistics routines.
    pub fn from_pair(pair: (f64, f64)) -> Option<Interval> {
        Interval::new(pair.0, pair.1)
    }
    /// `f` applied to both ends (`f` increasing); `None` when the result is not an interval.
    pub fn map(self, f: impl Fn(f64) -> f64) -> Option<Interval> {
        Interval::new(f(self.low), f(self.high))
    }
    /// Whether `x` lies inside, ends included.
    pub fn contains(self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
    /// Whether the two intervals share a point.
    pub fn overlaps(self, other: Interval) -> bool {
        self.low <= other.high && other.low <= self.high
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}, {}]",
            crate::fixed(self.low, 4),
            crate::fixed(self.high, 4)
        )
    }
}

/// Whether smaller values of a metric are better (times) or larger (throughputs).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Times, latencies.
    #[default]
    LowerIsBetter,
    /// Throughputs, goodputs.
    HigherIsBetter,
}

/// A candidate / baseline ratio with its change and interval, or the reason it is unavailable.
/// The only way A/B figures are written: `change` is derived from `ratio`, never stored apart.
///
/// JSON (flattened into the row that holds it): `ratio` (number or null), `change` (number or
/// null), `interval` (`{"low", "high"}` on the ratio, or null) and, when unavailable,
/// `unavailable` with the reason.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(try_from = "ChangeRepr", into = "ChangeRepr")]
pub struct Change {
    ratio: Option<f64>,
    interval: Option<Interval>,
    unavailable: Option<String>,
}

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct ChangeRepr {
    ratio: Option<f64>,
    change: Option<f64>,
    interval: Option<Interval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unavailable: Option<String>,
}

impl From<Change> for ChangeRepr {
    fn from(c: Change) -> ChangeRepr {
        ChangeRepr {
            change: c.change(),
            ratio: c.ratio,
            interval: c.interval,
            unavailable: c.unavailable,
        }
    }
}

impl TryFrom<ChangeRepr> for Change {
    type Error = String;
    fn try_from(r: ChangeRepr) -> Result<Change, String> {
        match (r.ratio, r.change) {
            (Some(ratio), Some(change)) => {
                if !(ratio.is_finite() && ratio >= 0.0) {
                    return Err(format!("ratio {ratio} is not a finite ratio ≥ 0"));
                }
                if (ratio - 1.0 - change).abs() > 1e-9 * ratio.abs().max(1.0) {
                    return Err(format!(
                        "change {change} is not ratio − 1 (ratio {ratio}): docs/json.md, \"Ratios and changes\""
                    ));
                }
                Ok(Change {
                    ratio: Some(ratio),
                    interval: r.interval,
                    unavailable: None,
                })
            }
            (None, None) => Ok(Change {
                ratio: None,
                interval: None,
                unavailable: Some(r.unavailable.unwrap_or_else(|| "not recorded".into())),
            }),
            _ => Err("`ratio` and `change` must both be numbers or both be null".into()),
        }
    }
}

impl Change {
    /// `candidate / baseline`; unavailable when the baseline is not above 0 or a value is not
    /// finite.
    pub fn between(baseline: f64, candidate: f64) -> Change {
        if !(baseline.is_finite() && candidate.is_finite()) {
            return Change::unavailable("a value is not finite");
        }
        if baseline <= 0.0 {
            return Change::unavailable("the baseline is not above 0");
        }
        if candidate < 0.0 {
            return Change::unavailable("the candidate is below 0");
        }
        Change::from_ratio(candidate / baseline, None)
    }
    /// `candidate / baseline` of two optional figures: unavailable when either is missing.
    pub fn between_opt(baseline: Option<f64>, candidate: Option<f64>) -> Change {
        match (baseline, candidate) {
            (Some(b), Some(c)) => Change::between(b, c),
            (None, _) => Change::unavailable("the baseline lacks the figure"),
            (_, None) => Change::unavailable("the candidate lacks the figure"),
        }
    }
    /// A ratio (candidate / baseline) with its interval; unavailable when it is not a finite
    /// number ≥ 0. An interval that does not hold the ratio is dropped.
    pub fn from_ratio(ratio: f64, interval: Option<Interval>) -> Change {
        if !(ratio.is_finite() && ratio >= 0.0) {
            return Change::unavailable("the ratio is not a finite number ≥ 0");
        }
        Change {
            ratio: Some(ratio),
            interval,
            unavailable: None,
        }
    }
    /// An unavailable change with its reason.
    pub fn unavailable(why: impl Into<String>) -> Change {
        Change {
            ratio: None,
            interval: None,
            unavailable: Some(why.into()),
        }
    }
    /// candidate / baseline, when available.
    pub fn ratio(&self) -> Option<f64> {
        self.ratio
    }
    /// `ratio` − 1, when available.
    pub fn change(&self) -> Option<f64> {
        self.ratio.map(|r| r - 1.0)
    }
    /// The interval on the ratio, when one exists.
    pub fn interval(&self) -> Option<Interval> {
        self.interval
    }
    /// The interval on the change (`interval` − 1).
    pub fn change_interval(&self) -> Option<Interval> {
        self.interval.and_then(|i| i.map(|x| x - 1.0))
    }
    /// Why the figure is unavailable, when it is.
    pub fn unavailable_reason(&self) -> Option<&str> {
        self.unavailable.as_deref()
    }
    /// The speedup, baseline time / candidate time (for times only), when available.
    pub fn speedup(&self) -> Option<f64> {
        self.ratio.filter(|&r| r > 0.0).map(|r| 1.0 / r)
    }
    /// Whether the candidate is better than the baseline by the point estimate (`None` when
    /// unavailable or equal).
    pub fn better(&self, direction: Direction) -> Option<bool> {
        let r = self.ratio?;
        if r == 1.0 {
            return None;
        }
        Some(match direction {
            Direction::LowerIsBetter => r < 1.0,
            Direction::HigherIsBetter => r > 1.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn change_is_ratio_minus_one_and_round_trips() {
        let c = Change::between(415_486.0, 481_532.0);
        let r = c.ratio().expect("ratio");
        assert!((r - 481_532.0 / 415_486.0).abs() < 1e-15);
        assert!((c.change().expect("change") - 0.158_960_4).abs() < 1e-6);
        let text = serde_json::to_string(&c).expect("writes");
        assert!(text.contains("\"change\":0.1589"), "{text}");
        let back: Change = serde_json::from_str(&text).expect("reads");
        assert_eq!(back, c);
        assert_eq!(serde_json::to_string(&back).expect("writes"), text);
    }

    #[test]
    fn unavailable_is_null_with_a_reason() {
        for c in [
            Change::between(0.0, 5.0),
            Change::between(f64::NAN, 5.0),
            Change::from_ratio(f64::INFINITY, None),
            Change::between_opt(None, Some(1.0)),
        ] {
            let text = serde_json::to_string(&c).expect("writes");
            assert!(
                text.starts_with(r#"{"ratio":null,"change":null,"interval":null,"unavailable":"#),
                "{text}"
            );
            let back: Change = serde_json::from_str(&text).expect("reads");
            assert_eq!(back, c);
        }
    }

    #[test]
    fn contradictions_are_refused() {
        for bad in [
            r#"{"ratio":1.5,"change":0.4,"interval":null}"#,
            r#"{"ratio":1.5,"change":null,"interval":null}"#,
            r#"{"ratio":-1.0,"change":-2.0,"interval":null}"#,
            r#"{"ratio":1.0,"change":0.0,"interval":{"low":2.0,"high":1.0}}"#,
            r#"{"ratio":1.0,"change":0.0,"interval":[0.9,1.1]}"#,
        ] {
            assert!(serde_json::from_str::<Change>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn direction_decides_better() {
        let slower = Change::between(100.0, 110.0);
        assert_eq!(slower.better(Direction::LowerIsBetter), Some(false));
        assert_eq!(slower.better(Direction::HigherIsBetter), Some(true));
        assert!((slower.speedup().expect("speedup") - 100.0 / 110.0).abs() < 1e-15);
        let i = Interval::new(0.9, 1.1).expect("interval");
        assert!(i.contains(1.0) && !i.contains(1.2));
        assert!(Interval::new(1.0, f64::NAN).is_none());
    }
}
