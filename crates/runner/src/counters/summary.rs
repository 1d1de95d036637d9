//! Per side, kernel and metric: median and range over repeats; derived metrics (achieved DRAM
//! bandwidth, L2 hit rate, achieved occupancy) per repeat; baseline versus candidate with
//! change = (candidate − baseline) / baseline, flagged only when the ranges do not overlap.
//! The formulas are listed in `docs/counters.md`.

use kernelab_model::counters::{CounterChange, CounterSample, CounterStat};
use kernelab_stats::rank::median;
use kernelab_stats::Change;

/// The name rocprofv3 rows' dispatch duration is recorded under (End − Start, ns).
pub const AMD_DURATION: &str = "dispatch duration (End_Timestamp - Start_Timestamp)";

/// One derived metric: its name, unit, and alternative formulas tried in order.
struct Derived {
    name: &'static str,
    unit: &'static str,
    formulas: &'static [Formula],
}

/// Looks a measured value up by metric name.
type Lookup<'a> = &'a dyn Fn(&str) -> Option<f64>;

/// A formula: its text and how to compute it from a lookup of measured values.
struct Formula {
    text: &'static str,
    compute: fn(Lookup) -> Option<f64>,
}

fn ratio(hit: Option<f64>, miss: Option<f64>) -> Option<f64> {
    let (h, m) = (hit?, miss?);
    (h + m > 0.0).then(|| 100.0 * h / (h + m))
}

fn per_second(bytes: Option<f64>, ns: Option<f64>) -> Option<f64> {
    let (b, t) = (bytes?, ns?);
    (t > 0.0).then(|| b / (t * 1e-9))
}

const DERIVED: &[Derived] = &[
    Derived {
        name: "derived: achieved DRAM bandwidth",
        unit: "byte/second",
        formulas: &[
            Formula {
                text: "dram__bytes.sum / gpu__time_duration.sum",
                compute: |v| per_second(v("dram__bytes.sum"), v("gpu__time_duration.sum")),
            },
            Formula {
                text: "(dram__bytes_read.sum + dram__bytes_write.sum) / gpu__time_duration.sum",
                compute: |v| {
                    per_second(
                        Some(v("dram__bytes_read.sum")? + v("dram__bytes_write.sum")?),
                        v("gpu__time_duration.sum"),
                    )
                },
            },
            Formula {
                text: "(FETCH_SIZE + WRITE_SIZE) × 1024 / (End_Timestamp − Start_Timestamp)",
                compute: |v| {
                    per_second(
                        Some((v("FETCH_SIZE")? + v("WRITE_SIZE")?) * 1024.0),
                        v(AMD_DURATION),
                    )
                },
            },
        ],
    },
    Derived {
        name: "derived: L2 hit rate",
        unit: "%",
        formulas: &[
            Formula {
                text: "lts__t_sector_hit_rate.pct",
                compute: |v| v("lts__t_sector_hit_rate.pct"),
            },
            Formula {
                text: "100 × lts__t_sectors_lookup_hit.sum / (lts__t_sectors_lookup_hit.sum + lts__t_sectors_lookup_miss.sum)",
                compute: |v| {
                    ratio(
                        v("lts__t_sectors_lookup_hit.sum"),
                        v("lts__t_sectors_lookup_miss.sum"),
                    )
                },
            },
            Formula {
                text: "100 × TCC_HIT_sum / (TCC_HIT_sum + TCC_MISS_sum)",
                compute: |v| ratio(v("TCC_HIT_sum"), v("TCC_MISS_sum")),
            },
            Formula {
                text: "100 × GL2C_HIT_sum / (GL2C_HIT_sum + GL2C_MISS_sum)",
                compute: |v| ratio(v("GL2C_HIT_sum"), v("GL2C_MISS_sum")),
            },
            Formula {
                text: "L2CacheHit",
                compute: |v| v("L2CacheHit"),
            },
        ],
    },
    Derived {
        name: "derived: achieved occupancy",
        unit: "%",
        formulas: &[
            Formula {
                text: "sm__warps_active.avg.pct_of_peak_sustained_active",
                compute: |v| v("sm__warps_active.avg.pct_of_peak_sustained_active"),
            },
            Formula {
                text: "OccupancyPercent",
                compute: |v| v("OccupancyPercent"),
            },
        ],
    },
];

/// Median, min and max of `values` (all `None` when empty).
fn spread(values: &[f64]) -> (Option<f64>, Option<f64>, Option<f64>) {
    let min = values.iter().copied().reduce(f64::min);
    let max = values.iter().copied().reduce(f64::max);
    (median(values), min, max)
}

/// The samples grouped by (side, kernel), groups in first-seen order, each group's samples in
/// input order: one pass through a hash map, no scan per sample.
fn groups(samples: &[CounterSample]) -> Vec<((&str, &str), Vec<&CounterSample>)> {
    let mut index: std::collections::HashMap<(&str, &str), usize> =
        std::collections::HashMap::new();
    let mut out: Vec<((&str, &str), Vec<&CounterSample>)> = Vec::new();
    for s in samples {
        let key = (s.side.as_str(), s.kernel.as_str());
        let i = *index.entry(key).or_insert_with(|| {
            out.push((key, Vec::new()));
            out.len() - 1
        });
        if let Some(g) = out.get_mut(i) {
            g.1.push(s);
        }
    }
    out
}

/// Per side, kernel and metric: values in repeat order, median and range; then the derived
/// metrics, computed per repeat from that repeat's values (the first launch of each metric).
pub fn stats(samples: &[CounterSample], metrics: &[String], repeats: usize) -> Vec<CounterStat> {
    use std::collections::HashMap;
    let mut out = Vec::new();
    for ((side, kernel), mine) in groups(samples) {
        // Per metric: its values in input order and its first unit; metric order is the
        // requested order, then first appearance.
        let mut by_metric: HashMap<&str, (Vec<f64>, &str)> = HashMap::new();
        let mut seen_order: Vec<&str> = Vec::new();
        // The first value of each (repeat, metric), for the derived formulas.
        let mut first: HashMap<(usize, &str), f64> = HashMap::new();
        for s in &mine {
            let e = by_metric.entry(s.metric.as_str()).or_insert_with(|| {
                seen_order.push(s.metric.as_str());
                (Vec::new(), s.unit.as_str())
            });
            e.0.push(s.value);
            first
                .entry((s.repeat, s.metric.as_str()))
                .or_insert(s.value);
        }
        let mut names: Vec<&str> = metrics
            .iter()
            .map(String::as_str)
            .filter(|m| by_metric.contains_key(m))
            .collect();
        let requested: std::collections::HashSet<&str> = names.iter().copied().collect();
        names.extend(
            seen_order
                .iter()
                .copied()
                .filter(|m| !requested.contains(m)),
        );
        for m in names {
            let Some((values, unit)) = by_metric.remove(m) else {
                continue;
            };
            let (median, min, max) = spread(&values);
            out.push(CounterStat {
                side: side.to_string(),
                kernel: kernel.to_string(),
                metric: m.to_string(),
                unit: unit.to_string(),
                values,
                median,
                min,
                max,
                formula: None,
            });
        }
        for d in DERIVED {
            let mut values = Vec::new();
            let mut used: Option<&str> = None;
            for r in 0..repeats {
                let lookup = |name: &str| first.get(&(r, name)).copied();
                if let Some((f, v)) = d
                    .formulas
                    .iter()
                    .find_map(|f| (f.compute)(&lookup).map(|v| (f, v)))
                {
                    values.push(v);
                    used.get_or_insert(f.text);
                }
            }
            let Some(formula) = used else { continue };
            let (median, min, max) = spread(&values);
            out.push(CounterStat {
                side: side.to_string(),
                kernel: kernel.to_string(),
                metric: d.name.to_string(),
                unit: d.unit.to_string(),
                values,
                median,
                min,
                max,
                formula: Some(formula.to_string()),
            });
        }
    }
    out
}

/// The formulas of every derived metric, as `name = formula` lines (for docs and notes).
pub fn formulas() -> Vec<String> {
    DERIVED
        .iter()
        .map(|d| {
            let f: Vec<&str> = d.formulas.iter().map(|f| f.text).collect();
            format!("{} ({}) = {}", d.name, d.unit, f.join(", else "))
        })
        .collect()
}

/// Baseline versus candidate per kernel and metric. Kernels are matched by name; when the two
/// sides have no kernel name in common and one kernel each (two builds with different
/// symbols), those two are compared.
pub fn changes(stats: &[CounterStat]) -> Vec<CounterChange> {
    let side = |s: &str| -> Vec<&CounterStat> { stats.iter().filter(|c| c.side == s).collect() };
    let (base, cand) = (side("baseline"), side("candidate"));
    let kernels = |v: &[&CounterStat]| {
        let mut k: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for c in v {
            if seen.insert(c.kernel.as_str()) {
                k.push(c.kernel.clone());
            }
        }
        k
    };
    let (kb, kc) = (kernels(&base), kernels(&cand));
    let kc_set: std::collections::HashSet<&str> = kc.iter().map(String::as_str).collect();
    let pairs: Vec<(String, String, String)> =
        if !kb.iter().any(|k| kc_set.contains(k.as_str())) && kb.len() == 1 && kc.len() == 1 {
            vec![(
                kb[0].clone(),
                kc[0].clone(),
                format!("{} → {}", kb[0], kc[0]),
            )]
        } else {
            kb.iter()
                .filter(|k| kc_set.contains(k.as_str()))
                .map(|k| (k.clone(), k.clone(), k.clone()))
                .collect()
        };
    let mut out = Vec::new();
    for (kbase, kcand, label) in pairs {
        for b in base.iter().filter(|s| s.kernel == kbase) {
            let c = cand
                .iter()
                .find(|s| s.kernel == kcand && s.metric == b.metric);
            let cm = c.and_then(|c| c.median);
            let change = Change::between_opt(b.median, cm);
            let flagged = match c {
                Some(c) if b.values.len() >= 2 && c.values.len() >= 2 => {
                    match (b.min, b.max, c.min, c.max) {
                        (Some(bl), Some(bh), Some(cl), Some(ch)) => cl > bh || ch < bl,
                        _ => false,
                    }
                }
                _ => false,
            };
            out.push(CounterChange {
                kernel: label.clone(),
                metric: b.metric.clone(),
                unit: b.unit.clone(),
                baseline: b.median,
                candidate: cm,
                change,
                flagged,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(side: &str, kernel: &str, metric: &str, repeat: usize, value: f64) -> CounterSample {
        CounterSample {
            side: side.into(),
            kernel: kernel.into(),
            metric: metric.into(),
            unit: String::new(),
            repeat,
            value,
        }
    }

    #[test]
    fn sign_convention_and_flag_beyond_the_spread() {
        let mut v = Vec::new();
        for (r, (a, b)) in [(100.0, 80.0), (102.0, 81.0), (101.0, 79.0)]
            .iter()
            .enumerate()
        {
            v.push(s("baseline", "k", "x", r, *a));
            v.push(s("candidate", "k", "x", r, *b));
        }
        let st = stats(&v, &["x".into()], 3);
        assert_eq!(st[0].median, Some(101.0));
        assert_eq!((st[0].min, st[0].max), (Some(100.0), Some(102.0)));
        let c = changes(&st);
        assert_eq!(c.len(), 1);
        let ch = c[0].change.change().expect("change");
        assert!((ch - (80.0 - 101.0) / 101.0).abs() < 1e-12);
        assert_eq!(c[0].change.ratio(), Some(80.0 / 101.0));
        assert_eq!(c[0].arrow(), "↓");
        assert!(c[0].flagged);
    }

    #[test]
    fn overlapping_ranges_are_not_flagged_and_zero_baseline_is_unavailable() {
        let v = vec![
            s("baseline", "k", "x", 0, 10.0),
            s("baseline", "k", "x", 1, 12.0),
            s("candidate", "k", "x", 0, 11.0),
            s("candidate", "k", "x", 1, 13.0),
            s("baseline", "k", "z", 0, 0.0),
            s("candidate", "k", "z", 0, 5.0),
        ];
        let c = changes(&stats(&v, &[], 2));
        assert_eq!(c[0].arrow(), "↑");
        assert!(!c[0].flagged);
        assert_eq!(c[1].change.ratio(), None);
        assert_eq!(
            c[1].change.unavailable_reason(),
            Some("the baseline is not above 0")
        );
        assert_eq!(c[1].arrow(), "");
    }

    #[test]
    fn different_symbols_are_paired_and_bandwidth_is_derived_per_repeat() {
        let mut v = Vec::new();
        for r in 0..2 {
            v.push(s("baseline", "copy_scalar", "dram__bytes.sum", r, 1000.0));
            v.push(s(
                "baseline",
                "copy_scalar",
                "gpu__time_duration.sum",
                r,
                1000.0 + r as f64,
            ));
            v.push(s("candidate", "copy_vec4", "dram__bytes.sum", r, 1000.0));
            v.push(s(
                "candidate",
                "copy_vec4",
                "gpu__time_duration.sum",
                r,
                500.0,
            ));
        }
        let st = stats(&v, &[], 2);
        let bw = st
            .iter()
            .find(|x| x.side == "baseline" && x.metric.contains("bandwidth"))
            .expect("derived");
        assert_eq!(bw.values.len(), 2);
        assert!((bw.values[0] - 1e9).abs() < 1e-3);
        assert_eq!(
            bw.formula.as_deref(),
            Some("dram__bytes.sum / gpu__time_duration.sum")
        );
        let c = changes(&st);
        assert!(c.iter().all(|c| c.kernel == "copy_scalar → copy_vec4"));
        let d = c
            .iter()
            .find(|c| c.metric.contains("bandwidth"))
            .expect("row");
        assert_eq!(d.arrow(), "↑");
        assert!(d.flagged);
    }

    #[test]
    fn a_missing_input_leaves_the_derived_metric_out() {
        let v = vec![s("run", "k", "dram__bytes.sum", 0, 1.0)];
        let st = stats(&v, &[], 1);
        assert_eq!(st.len(), 1);
    }
}
