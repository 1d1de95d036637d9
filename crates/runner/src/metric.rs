//! Metrics of one run: wall time, or numbers the command prints.

use regex::Regex;
use serde::{Deserialize, Serialize};

/// Where a metric comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// Wall time of the process, in seconds.
    Wall,
    /// The first capture group (or the whole match) of a regex on stdout.
    Regex(Regex),
    /// A key of the last JSON object line on stdout (dots descend into objects).
    JsonKey(String),
}

/// A metric to collect.
#[derive(Clone, Debug)]
pub struct MetricSpec {
    /// Its name.
    pub name: String,
    /// Where it comes from.
    pub source: Source,
    /// Lower or higher is better.
    pub direction: kernelab_stats::Direction,
}

/// A named value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Value {
    /// Metric name.
    pub name: String,
    /// Value.
    pub value: f64,
}

fn json_key(stdout: &str, key: &str) -> Option<f64> {
    for line in stdout.lines().rev() {
        let t = line.trim();
        if !t.starts_with('{') {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(t) else {
            continue;
        };
        let mut cur = &v;
        let mut ok = true;
        for part in key.split('.') {
            match cur.get(part) {
                Some(x) => cur = x,
                None => {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            if let Some(x) = cur.as_f64() {
                return Some(x);
            }
        }
    }
    None
}

/// Extracts `spec` from a finished run; `None` when the output does not contain it.
pub fn extract(spec: &MetricSpec, stdout: &str, wall_s: f64) -> Option<f64> {
    match &spec.source {
        Source::Wall => Some(wall_s),
        Source::Regex(re) => {
            let c = re.captures_iter(stdout).last()?;
            let m = c.get(1).or_else(|| c.get(0))?;
            m.as_str().trim().parse::<f64>().ok()
        }
        Source::JsonKey(k) => json_key(stdout, k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_and_json() {
        let spec = MetricSpec {
            name: "t".into(),
            source: Source::Regex(Regex::new(r"median_us=([0-9.]+)").expect("re")),
            direction: Default::default(),
        };
        assert_eq!(
            extract(&spec, "warm\nmedian_us=12.5\nmedian_us=13.0\n", 0.0),
            Some(13.0)
        );
        let spec = MetricSpec {
            name: "t".into(),
            source: Source::JsonKey("r.tpot".into()),
            direction: Default::default(),
        };
        assert_eq!(
            extract(&spec, "{\"r\": {\"tpot\": 4.25}}\nbye\n", 0.0),
            Some(4.25)
        );
        assert_eq!(extract(&spec, "no json\n", 0.0), None);
    }
}
