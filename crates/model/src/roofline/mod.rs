//! Rooflines: device ceilings (measured or from datasheets), work models of kernel families,
//! and where each family's achieved rate sits under its roof.

mod ceiling_kind;
mod ceilings;
mod datasheet;
pub mod work;

pub use ceiling_kind::{CeilingKind, Measured, Quoted};
pub use ceilings::{Ceiling, Ceilings, Clocks, DeviceIdentity};
pub use datasheet::{datasheet_for, DATASHEETS};
pub use work::{Work, WorkError, WorkRule, WorkRules};

/// Every roof, in order.
pub const ROOFS: [Roof; 4] = [Roof::Fp32, Roof::Fp16, Roof::Bf16, Roof::Fp8];

use serde::{Deserialize, Serialize};
use std::fmt;

/// A number, or why the input does not give it ("missing `T`"): never a silent 0. JSON:
/// `{"value": 1.2e12}`, or `{"value": null, "unavailable": "missing `B`"}` (the value or null,
/// the reason beside it, as for changes); a bare number or `{"unavailable": …}` of earlier
/// layouts reads too.
#[derive(Clone, Debug, PartialEq)]
pub enum Figure {
    /// The value.
    Value(f64),
    /// Why there is none.
    Unavailable {
        /// What is missing.
        unavailable: String,
    },
}

#[derive(Serialize, Deserialize, schemars::JsonSchema)]
struct FigureRepr {
    value: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    unavailable: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum FigureIn {
    Number(f64),
    Object(FigureRepr),
}

impl Serialize for Figure {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Figure::Value(v) if v.is_finite() => FigureRepr {
                value: Some(*v),
                unavailable: None,
            },
            Figure::Value(_) => FigureRepr {
                value: None,
                unavailable: Some("not a finite number".into()),
            },
            Figure::Unavailable { unavailable } => FigureRepr {
                value: None,
                unavailable: Some(unavailable.clone()),
            },
        }
        .serialize(s)
    }
}

/// The schema of the written form (`{"value", "unavailable"}`).
impl schemars::JsonSchema for Figure {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Figure".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        FigureRepr::json_schema(g)
    }
}

impl<'de> Deserialize<'de> for Figure {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Figure, D::Error> {
        Ok(match FigureIn::deserialize(d)? {
            FigureIn::Number(v) => Figure::Value(v),
            FigureIn::Object(FigureRepr {
                value: Some(v),
                unavailable: None,
            }) => Figure::Value(v),
            FigureIn::Object(FigureRepr {
                value: Some(_),
                unavailable: Some(_),
            }) => {
                return Err(serde::de::Error::custom(
                    "a figure holds a value or the reason it is unavailable, not both",
                ))
            }
            FigureIn::Object(FigureRepr {
                value: None,
                unavailable,
            }) => Figure::Unavailable {
                unavailable: unavailable.unwrap_or_else(|| "not recorded".into()),
            },
        })
    }
}

impl Figure {
    /// An unavailable figure naming what is missing.
    pub fn unavailable(why: impl Into<String>) -> Figure {
        Figure::Unavailable {
            unavailable: why.into(),
        }
    }
    /// The value, when there is one.
    pub fn value(&self) -> Option<f64> {
        match self {
            Figure::Value(v) => Some(*v),
            Figure::Unavailable { .. } => None,
        }
    }
    /// `f` of the value, or the same reason.
    pub fn map(&self, f: impl FnOnce(f64) -> f64) -> Figure {
        match self {
            Figure::Value(v) => Figure::Value(f(*v)),
            u => u.clone(),
        }
    }
    /// `f` of both values, or the first reason.
    pub fn zip(&self, other: &Figure, f: impl FnOnce(f64, f64) -> f64) -> Figure {
        match (self, other) {
            (Figure::Value(a), Figure::Value(b)) => Figure::Value(f(*a, *b)),
            (Figure::Unavailable { .. }, _) => self.clone(),
            _ => other.clone(),
        }
    }
}

impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Figure::Value(v) => write!(f, "{v}"),
            Figure::Unavailable { unavailable } => write!(f, "unavailable ({unavailable})"),
        }
    }
}

/// The compute roof a kernel family runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Roof {
    /// FP32 FMA on the vector units.
    Fp32,
    /// FP16 on the matrix units.
    Fp16,
    /// BF16 on the matrix units.
    Bf16,
    /// FP8 on the matrix units.
    Fp8,
}

impl Roof {
    /// Parses `fp32`, `fp16`, `bf16`, `fp8`.
    pub fn parse(s: &str) -> Option<Roof> {
        Some(match s {
            "fp32" => Roof::Fp32,
            "fp16" => Roof::Fp16,
            "bf16" => Roof::Bf16,
            "fp8" => Roof::Fp8,
            _ => return None,
        })
    }
    /// The ceiling holding this roof's peak.
    pub fn ceiling(self) -> CeilingKind {
        match self {
            Roof::Fp32 => CeilingKind::Fp32Fma,
            Roof::Fp16 => CeilingKind::Fp16Tensor,
            Roof::Bf16 => CeilingKind::Bf16Tensor,
            Roof::Fp8 => CeilingKind::Fp8Tensor,
        }
    }
}

/// Which roof bounds a kernel at its arithmetic intensity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// DRAM bandwidth (intensity below the ridge, or no FLOP model).
    Memory,
    /// The compute peak.
    Compute,
}

/// Where one family sits under its roof.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Placement {
    /// Achieved FLOP/s.
    pub flop_per_s: Figure,
    /// Achieved DRAM byte/s.
    pub byte_per_s: Figure,
    /// FLOPs per byte.
    pub intensity: Figure,
    /// The attainable rate's fraction reached: achieved FLOP/s over min(peak, intensity ×
    /// bandwidth), or achieved byte/s over bandwidth without a FLOP model.
    pub fraction: Figure,
    /// The bounding roof, when it can be told.
    pub bound: Option<Bound>,
}

/// Places `flops` and `bytes` done in `seconds` under a roof of `peak` FLOP/s and
/// `bandwidth` byte/s (either unavailable with its reason).
pub fn place(
    flops: &Figure,
    bytes: &Figure,
    seconds: f64,
    peak: &Figure,
    bandwidth: &Figure,
) -> Placement {
    // A zero time, a zero byte count, or a peak or bandwidth that is not above zero gives an
    // unavailable figure with its reason, never an infinity or NaN.
    let peak = &positive(peak, "the peak");
    let bandwidth = &positive(bandwidth, "the bandwidth");
    let timed = seconds.is_finite() && seconds > 0.0;
    let rate = |f: &Figure| {
        if timed {
            finite(f.map(|x| x / seconds))
        } else {
            f.value().map_or_else(
                || f.clone(),
                |_| Figure::unavailable(format!("the kernel time is {seconds} s")),
            )
        }
    };
    let flop_per_s = rate(flops);
    let byte_per_s = rate(bytes);
    let intensity = match bytes.value() {
        Some(b) if !(b.is_finite() && b > 0.0) => Figure::unavailable(format!("{b} bytes moved")),
        _ => finite(flops.zip(bytes, |f, b| f / b)),
    };
    let (fraction, bound) = match (flops.value(), intensity.value()) {
        (Some(_), Some(ai)) => match (peak.value(), bandwidth.value()) {
            (Some(p), Some(bw)) => {
                let memory = ai * bw < p;
                let attainable = if memory { ai * bw } else { p };
                let fraction = match flop_per_s.value() {
                    Some(achieved) => Figure::Value(achieved / attainable),
                    None => flop_per_s.clone(),
                };
                (
                    fraction,
                    Some(if memory {
                        Bound::Memory
                    } else {
                        Bound::Compute
                    }),
                )
            }
            _ => (
                match peak.value() {
                    Some(_) => bandwidth.clone(),
                    None => peak.clone(),
                },
                None,
            ),
        },
        (Some(_), None) => match peak.value() {
            Some(p) => (flop_per_s.map(|r| r / p), Some(Bound::Compute)),
            None => (peak.clone(), None),
        },
        (None, _) => match (byte_per_s.value(), bandwidth.value()) {
            (Some(r), Some(bw)) => (Figure::Value(r / bw), Some(Bound::Memory)),
            (None, _) => (byte_per_s.clone(), None),
            (_, None) => (bandwidth.clone(), None),
        },
    };
    Placement {
        flop_per_s,
        byte_per_s,
        intensity,
        fraction: finite(fraction),
        bound,
    }
}

/// `f` when it is a finite value above zero (or already unavailable), else unavailable
/// naming `what`.
fn positive(f: &Figure, what: &str) -> Figure {
    match f.value() {
        Some(v) if !(v.is_finite() && v > 0.0) => {
            Figure::unavailable(format!("{what} is {v}, not a positive number"))
        }
        _ => f.clone(),
    }
}

/// `f`, or unavailable when its value is not finite.
fn finite(f: Figure) -> Figure {
    match f.value() {
        Some(v) if !v.is_finite() => Figure::unavailable(format!("not a finite number ({v})")),
        _ => f,
    }
}

/// One roof's peak as used by a roofline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RoofPeak {
    /// The roof.
    pub roof: Roof,
    /// Its peak FLOP/s (measured, else datasheet), or why there is none.
    pub peak: Figure,
}

/// One kernel family under its roof (`kernelab roofline`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FamilyRoofline {
    /// The family key.
    pub family: String,
    /// Launches in the profile.
    pub calls: u64,
    /// Total kernel time in ns.
    pub total_ns: u64,
    /// The work-model rule's line, `None` when no rule covers the family.
    pub rule_line: Option<u64>,
    /// The rule's roof.
    pub roof: Option<Roof>,
    /// Modelled FLOPs of one launch.
    pub flops_per_launch: Figure,
    /// Modelled DRAM bytes of one launch.
    pub bytes_per_launch: Figure,
    /// Measured DRAM bytes of one launch (mean over the Nsight Compute launches), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_bytes_per_launch: Option<f64>,
    /// Launches the measured bytes are the mean of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_launches: Option<u64>,
    /// Where the family sits (from the modelled work over the total time).
    pub placement: Placement,
    /// The shapes its launches ran at, as the rule's sizes read from each launch's operator
    /// `Input Dims`, with their launch counts (empty when no launch's shapes were read).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shapes: Vec<ShapeLaunches>,
    /// Why this placement cannot be right: it is above 100% of the roof, with its likely causes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above_roof: Option<String>,
}

/// Launches of one family at one shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShapeLaunches {
    /// The rule's sizes read from the launching operator's `Input Dims`.
    pub sizes: std::collections::BTreeMap<String, i64>,
    /// Launches at these sizes.
    pub launches: u64,
    /// Modelled FLOPs of one of these launches.
    pub flops: Figure,
    /// Modelled bytes of one of these launches.
    pub bytes: Figure,
}

/// What a placement above the roof means, or `None` for one at or below it (`fraction` ≤ 1):
/// the device was measured not to go faster, so the work is overcounted or the roof is low.
pub fn above_roof(fraction: &Figure, ceilings_source: &str) -> Option<String> {
    let f = fraction.value().filter(|f| *f > 1.0)?;
    Some(format!(
        "{:.1}% of the roof: faster than the device was measured to go; likely the work model \
         overcounts (FLOPs or bytes of one launch too high, or a size read from the wrong input) \
         or the ceiling ({ceilings_source}) was measured low (clocks throttled, a measurement \
         below the device's reach); the timing may also have missed work",
        100.0 * f
    ))
}

/// The body of a `roofline` document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Roofline {
    /// The ceilings' device name.
    pub device: String,
    /// Where the ceilings come from (a file, or `datasheet NAME`).
    pub ceilings_source: String,
    /// DRAM bandwidth used (byte/s).
    pub bandwidth: Figure,
    /// Peaks of every roof.
    pub peaks: Vec<RoofPeak>,
    /// The shape variables given on the command line.
    pub sizes: std::collections::BTreeMap<String, i64>,
    /// One entry per family, by total time.
    pub families: Vec<FamilyRoofline>,
    /// Things the reader should know.
    pub notes: Vec<String>,
}

impl crate::Body for Roofline {
    const KIND: &'static str = "roofline";
}

impl Roofline {
    /// The peak of `roof`.
    pub fn peak(&self, roof: Roof) -> Figure {
        self.peaks
            .iter()
            .find(|p| p.roof == roof)
            .map(|p| p.peak.clone())
            .unwrap_or_else(|| Figure::unavailable("no peak"))
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn zero_times_and_non_positive_roofs_are_unavailable_never_infinite() {
        let v = Figure::Value;
        let zero = place(&v(1e9), &v(1e6), 0.0, &v(1e12), &v(1e11));
        for f in [&zero.flop_per_s, &zero.byte_per_s, &zero.fraction] {
            assert!(f.value().is_none(), "{f:?}");
        }
        let negative = place(&v(1e9), &v(1e6), 1.0, &v(-2e10), &v(1e11));
        assert!(negative.fraction.value().is_none(), "{negative:?}");
        assert!(negative.flop_per_s.value().is_some());
        let no_bytes = place(&v(1e9), &v(0.0), 1.0, &v(1e12), &v(1e11));
        assert!(no_bytes.intensity.value().is_none());
        let bw0 = place(&Figure::unavailable("x"), &v(1e6), 1.0, &v(1e12), &v(0.0));
        assert!(bw0.fraction.value().is_none());
    }

    use super::*;

    #[test]
    fn placement_against_the_roof() {
        let (peak, bw) = (Figure::Value(1000e12), Figure::Value(4e12));
        // 1 GFLOP over 1 GB in 0.5 ms: intensity 1, memory-bound, attainable 4 TFLOP/s.
        let p = place(&Figure::Value(1e9), &Figure::Value(1e9), 5e-4, &peak, &bw);
        assert_eq!(p.bound, Some(Bound::Memory));
        assert_eq!(p.byte_per_s, Figure::Value(2e12));
        assert!((p.fraction.value().unwrap_or(0.0) - 0.5).abs() < 1e-12);
        // 8192³ bf16 GEMM in 1.4 ms: intensity far past the ridge (250), compute-bound.
        let f = 2.0 * 8192f64.powi(3);
        let b = 3.0 * 2.0 * 8192f64.powi(2);
        let p = place(&Figure::Value(f), &Figure::Value(b), 1.4e-3, &peak, &bw);
        assert_eq!(p.bound, Some(Bound::Compute));
        let expect = f / 1.4e-3 / 1000e12;
        assert!((p.fraction.value().unwrap_or(0.0) - expect).abs() < 1e-12);
        // Bytes only: fraction of the bandwidth; FLOP figures say why they are missing.
        for (f, text) in [
            (Figure::Value(1.5), r#"{"value":1.5}"#),
            (
                Figure::unavailable("missing `B`"),
                r#"{"value":null,"unavailable":"missing `B`"}"#,
            ),
        ] {
            assert_eq!(serde_json::to_string(&f).expect("writes"), text);
            assert_eq!(serde_json::from_str::<Figure>(text).expect("reads"), f);
        }
        // Earlier layouts read too.
        assert_eq!(
            serde_json::from_str::<Figure>("2.0").expect("reads"),
            Figure::Value(2.0)
        );
        assert_eq!(
            serde_json::from_str::<Figure>(r#"{"unavailable": "x"}"#).expect("reads"),
            Figure::unavailable("x")
        );
        assert!(serde_json::from_str::<Figure>(r#"{"value": 1.0, "unavailable": "x"}"#).is_err());
        let none = Figure::unavailable("missing `K`");
        let p = place(&none, &Figure::Value(4e9), 2e-3, &peak, &bw);
        assert_eq!(p.fraction, Figure::Value(0.5));
        assert_eq!(p.flop_per_s.to_string(), "unavailable (missing `K`)");
        let p = place(&none, &none, 1.0, &peak, &bw);
        assert_eq!(p.fraction, none);
        assert_eq!(p.bound, None);
    }
}
