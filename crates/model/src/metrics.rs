//! Per-launch hardware metrics (Nsight Compute), in base units.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One metric value: a number in base units, or text (`PolicySpread`, `cudaFuncCachePreferNone`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum MetricValue {
    /// A number, converted to the base unit.
    Number(f64),
    /// A non-numeric value as written.
    Text(String),
}

/// A metric with its base unit (`ns`, `byte`, `hz`, `byte/second`, `%`, `inst`, ...).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Metric {
    /// Unit after normalisation (empty when the tool gave none).
    pub unit: String,
    /// The value.
    pub value: MetricValue,
}

/// The metrics of one profiled kernel launch.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaunchMetrics {
    /// The tool's launch id.
    pub id: String,
    /// Kernel name.
    pub kernel: String,
    /// Identification columns as written (`Process ID`, `Context`, `Stream`, `Device`, `CC`, ...).
    pub ids: BTreeMap<String, String>,
    /// Grid in blocks, when given.
    pub grid: Option<[u32; 3]>,
    /// Block in threads, when given.
    pub block: Option<[u32; 3]>,
    /// Metrics by name (section metrics by their display name).
    pub metrics: BTreeMap<String, Metric>,
}

impl LaunchMetrics {
    /// A numeric metric in its base unit.
    pub fn number(&self, name: &str) -> Option<f64> {
        match self.metrics.get(name)?.value {
            MetricValue::Number(x) => Some(x),
            MetricValue::Text(_) => None,
        }
    }
}

/// Converts a value in `unit` to its base unit: times to `ns`, byte multiples (decimal, as
/// Nsight Compute prints them) to `byte`, `Khz`/`Mhz`/`Ghz` to `hz`, per-time rates to per second.
pub fn normalize_unit(unit: &str, value: f64) -> (String, f64) {
    let time = |u: &str| -> Option<f64> {
        Some(match u {
            "ns" | "nsecond" => 1.0,
            "us" | "usecond" => 1e3,
            "ms" | "msecond" => 1e6,
            "s" | "second" => 1e9,
            _ => return None,
        })
    };
    if let Some(f) = time(unit) {
        return ("ns".into(), value * f);
    }
    let scaled = |u: &str, base: &str| -> Option<f64> {
        let prefix = u.strip_suffix(base)?;
        Some(match prefix {
            "" => 1.0,
            "K" | "k" => 1e3,
            "M" => 1e6,
            "G" => 1e9,
            "T" => 1e12,
            _ => return None,
        })
    };
    for base in [
        "byte/second",
        "byte",
        "hz",
        "Hz",
        "inst/second",
        "cycle/second",
    ] {
        if let Some(f) = scaled(unit, base) {
            return (base.to_ascii_lowercase(), value * f);
        }
    }
    // Rates per scaled time unit: `cycle/nsecond`, `byte/usecond`, ...
    if let Some((num, den)) = unit.split_once('/') {
        if let Some(f) = time(den) {
            let (nu, nv) = normalize_unit(num, value);
            return (format!("{nu}/second"), nv * 1e9 / f);
        }
    }
    (unit.to_string(), value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_normalize_to_base() {
        assert_eq!(normalize_unit("usecond", 2.5), ("ns".into(), 2500.0));
        assert_eq!(normalize_unit("msecond", 1.0), ("ns".into(), 1e6));
        assert_eq!(normalize_unit("Mbyte", 3.0), ("byte".into(), 3e6));
        assert_eq!(
            normalize_unit("Gbyte/second", 2.0),
            ("byte/second".into(), 2e9)
        );
        assert_eq!(normalize_unit("Ghz", 1.5), ("hz".into(), 1.5e9));
        assert_eq!(
            normalize_unit("cycle/nsecond", 1.9),
            ("cycle/second".into(), 1.9e9)
        );
        assert_eq!(normalize_unit("%", 50.0), ("%".into(), 50.0));
        assert_eq!(
            normalize_unit("register/thread", 48.0),
            ("register/thread".into(), 48.0)
        );
    }
}
