//! What a rocprof-compute analysis database (`rocprof-compute analyze --output-format db`,
//! schema 1.x) holds beyond its dispatches: each kernel's metric values as rocprof-compute
//! computed and stored them (`compute_metric_definition`, `compute_kernel_metric_value`), its
//! roofline point (`compute_kernel_roofline_data`: performance in GFLOP/s and arithmetic
//! intensity per memory level) and the roofline benchmark's peaks the workload was measured
//! against (`compute_workload.roofline_bench_extdata`). Nothing is estimated: a value stored
//! as NULL is `None`. See `docs/formats.md` (rocprof-compute analysis databases).

use crate::error::{Error, ErrorKind, Result};
use crate::sqlite::{int, rows, text};
use kernelab_model::Location;
use rusqlite::types::Value;
use rusqlite::Connection;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// One metric as the database defines it (`compute_metric_definition`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComputeMetricDef {
    /// `metric_id`, rocprof-compute's table position (`2.1.0`).
    pub metric_id: String,
    /// `name` (`VALU FLOPs`).
    pub name: String,
    /// `unit` as written (`Gflop/s`, `Percent`); empty when NULL.
    pub unit: String,
}

/// One stored value of a kernel (`compute_kernel_metric_value`).
#[derive(Clone, Debug, PartialEq)]
pub struct ComputeValue {
    /// Index of its metric in [`ComputeAnalysis::metrics`].
    pub metric: usize,
    /// `value_name`: which figure of the metric (`Avg`, `Min`, `Max`, `Value`, `Peak`, …).
    pub value_name: String,
    /// `value`; `None` where the database stores NULL (rocprof-compute could not compute it)
    /// or a value that is not a finite number (`not_finite`).
    pub value: Option<f64>,
    /// The database stores an infinity or NaN here (a division by zero in rocprof-compute's
    /// formula): no figure, shown unavailable.
    pub not_finite: bool,
}

/// A kernel's roofline point (`compute_kernel_roofline_data`), as stored.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ComputePoint {
    /// `total_flops`: rocprof-compute's "Performance (GFLOPs)", in GFLOP/s.
    pub gflop_per_s: Option<f64>,
    /// `l1_cache_data`: arithmetic intensity against L1 traffic ("AI L1"), FLOP/byte.
    pub ai_l1: Option<f64>,
    /// `l2_cache_data`: "AI L2", FLOP/byte.
    pub ai_l2: Option<f64>,
    /// `hbm_cache_data`: "AI HBM", FLOP/byte.
    pub ai_hbm: Option<f64>,
}

/// One kernel of the database with what it stores for it.
#[derive(Clone, Debug, PartialEq)]
pub struct ComputeKernel {
    /// `kernel_name`.
    pub name: String,
    /// Its metric values, in the table's order.
    pub values: Vec<ComputeValue>,
    /// Its roofline point, when the database has one.
    pub point: Option<ComputePoint>,
}

/// The metric values, roofline points and roofline peaks of a rocprof-compute analysis
/// database.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ComputeAnalysis {
    /// Every metric definition, in `metric_uuid` order.
    pub metrics: Vec<ComputeMetricDef>,
    /// Every kernel, in `kernel_uuid` order.
    pub kernels: Vec<ComputeKernel>,
    /// The roofline benchmark's peaks (`roofline_bench_extdata`: `HBMBw`, `L2Bw`, … in GB/s;
    /// `FP32Flops`, `MFMABF16Flops`, … in GFLOP/s), by key; empty when not measured.
    pub peaks: BTreeMap<String, f64>,
    /// The data types the roofline was asked for (`profiling_config_extdata`
    /// `roofline_data_type`, e.g. `FP32`).
    pub roofline_data_types: Vec<String>,
    /// The GPU, `gpu_model (gpu_arch)` from `sys_info_extdata`.
    pub device: Option<String>,
    /// `compute_metadata.compute_version` (the rocprof-compute version).
    pub version: Option<String>,
}

impl ComputeAnalysis {
    /// The full name of a value: `metric_id name (value_name)`, e.g. `2.1.0 VALU FLOPs (Avg)`.
    pub fn value_label(&self, v: &ComputeValue) -> String {
        match self.metrics.get(v.metric) {
            Some(m) => format!("{} {} ({})", m.metric_id, m.name, v.value_name),
            None => v.value_name.clone(),
        }
    }
}

fn located(field: String) -> Location {
    Location::default().with_field(field)
}

/// A REAL or INTEGER column as a number, with whether it was stored as an infinity or NaN
/// (then `None`, as is NULL); TEXT or a BLOB is an error located at `table.column (row N)`.
fn number(
    m: &HashMap<String, Value>,
    table: &str,
    col: &str,
    row: u64,
) -> Result<(Option<f64>, bool)> {
    match m.get(col) {
        None | Some(Value::Null) => Ok((None, false)),
        Some(Value::Real(r)) if r.is_finite() => Ok((Some(*r), false)),
        Some(Value::Real(_)) => Ok((None, true)),
        Some(Value::Integer(i)) => Ok((Some(*i as f64), false)),
        Some(other) => Err(Error::syntax(
            located(format!("{table}.{col} (row {row})")),
            "a number or NULL",
            match other {
                Value::Text(t) => format!("text {:?}", t.chars().take(40).collect::<String>()),
                _ => "a BLOB".into(),
            },
        )),
    }
}

/// An integer id column that must be there.
fn id(m: &HashMap<String, Value>, table: &str, col: &str, row: u64) -> Result<i64> {
    int(m, col).ok_or_else(|| {
        Error::syntax(
            located(format!("{table}.{col} (row {row})")),
            "an integer id",
            "NULL or text",
        )
    })
}

/// A JSON object column of `compute_workload` (NULL: none).
fn json_object(
    m: &HashMap<String, Value>,
    col: &str,
    row: u64,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>> {
    let Some(t) = text(m, col) else {
        return Ok(None);
    };
    match serde_json::from_str::<serde_json::Value>(&t) {
        Ok(serde_json::Value::Object(o)) => Ok(Some(o)),
        Ok(serde_json::Value::Null) => Ok(None),
        _ => Err(Error::syntax(
            located(format!("compute_workload.{col} (row {row})")),
            "a JSON object",
            format!("{:?}", t.chars().take(40).collect::<String>()),
        )),
    }
}

/// Reads the metric values, roofline points and peaks of the rocprof-compute analysis
/// database at `path`; errors name the file, table, column and row.
pub fn read_compute_analysis(path: &Path) -> Result<ComputeAnalysis> {
    let read = || -> Result<ComputeAnalysis> {
        let conn = crate::sqlite::open(path)?;
        let objs = crate::sqlite::objects(&conn)?;
        if !super::compute_db::is_compute_db(&objs) {
            return Err(Error::new(
                Location::default(),
                ErrorKind::UnknownFormat {
                    detail: "not a rocprof-compute analysis database (no compute_kernel and compute_dispatch tables)".into(),
                },
            ));
        }
        analysis(&conn, &objs)
    };
    read().map_err(|e| e.with_path(path))
}

fn analysis(conn: &Connection, objs: &[String]) -> Result<ComputeAnalysis> {
    let has = |t: &str| objs.iter().any(|o| o == t);
    for t in [
        "compute_metadata",
        "compute_workload",
        "compute_kernel",
        "compute_metric_definition",
        "compute_kernel_metric_value",
        "compute_kernel_roofline_data",
    ] {
        if has(t) {
            crate::sqlite::quick_check(conn, Some(t))?;
        }
    }
    let mut out = ComputeAnalysis::default();
    if has("compute_metadata") {
        rows(conn, "compute_metadata", |m, _| {
            out.version = out.version.take().or_else(|| text(m, "compute_version"));
            Ok(())
        })?;
    }
    if has("compute_workload") {
        rows(conn, "compute_workload", |m, row| {
            if let Some(info) = json_object(m, "sys_info_extdata", row)? {
                let s = |k: &str| info.get(k).and_then(serde_json::Value::as_str);
                out.device = match (s("gpu_model"), s("gpu_arch")) {
                    (Some(model), Some(arch)) => Some(format!("{model} ({arch})")),
                    (Some(model), None) => Some(model.to_string()),
                    _ => out.device.take(),
                };
            }
            if let Some(bench) = json_object(m, "roofline_bench_extdata", row)? {
                for (k, v) in bench {
                    match v {
                        serde_json::Value::Number(n) => {
                            if let Some(x) = n.as_f64() {
                                out.peaks.entry(k).or_insert(x);
                            }
                        }
                        serde_json::Value::Null => {}
                        other => {
                            return Err(Error::syntax(
                                located(format!(
                                    "compute_workload.roofline_bench_extdata (row {row}): key `{k}`"
                                )),
                                "a number (GB/s or GFLOP/s)",
                                other.to_string().chars().take(40).collect::<String>(),
                            ))
                        }
                    }
                }
            }
            if let Some(cfg) = json_object(m, "profiling_config_extdata", row)? {
                if let Some(types) = cfg
                    .get("roofline_data_type")
                    .and_then(serde_json::Value::as_array)
                {
                    out.roofline_data_types = types
                        .iter()
                        .filter_map(|t| t.as_str().map(str::to_string))
                        .collect();
                }
            }
            Ok(())
        })?;
    }
    let mut kernel_of: HashMap<i64, usize> = HashMap::new();
    rows(conn, "compute_kernel", |m, row| {
        let uuid = id(m, "compute_kernel", "kernel_uuid", row)?;
        kernel_of.insert(uuid, out.kernels.len());
        out.kernels.push(ComputeKernel {
            name: text(m, "kernel_name").unwrap_or_default(),
            values: Vec::new(),
            point: None,
        });
        Ok(())
    })?;
    let kernel = |m: &HashMap<String, Value>, table: &str, row: u64| -> Result<usize> {
        let k = id(m, table, "kernel_uuid", row)?;
        kernel_of.get(&k).copied().ok_or_else(|| {
            Error::syntax(
                located(format!("{table}.kernel_uuid (row {row})")),
                "the id of a compute_kernel row",
                k.to_string(),
            )
        })
    };
    if has("compute_metric_definition") && has("compute_kernel_metric_value") {
        let mut metric_of: HashMap<i64, usize> = HashMap::new();
        rows(conn, "compute_metric_definition", |m, row| {
            let uuid = id(m, "compute_metric_definition", "metric_uuid", row)?;
            metric_of.insert(uuid, out.metrics.len());
            out.metrics.push(ComputeMetricDef {
                metric_id: text(m, "metric_id").unwrap_or_default(),
                name: text(m, "name").unwrap_or_default(),
                unit: text(m, "unit").unwrap_or_default(),
            });
            Ok(())
        })?;
        let table = "compute_kernel_metric_value";
        let mut values: Vec<(usize, ComputeValue)> = Vec::new();
        rows(conn, table, |m, row| {
            let k = kernel(m, table, row)?;
            let uuid = id(m, table, "metric_uuid", row)?;
            let metric = *metric_of.get(&uuid).ok_or_else(|| {
                Error::syntax(
                    located(format!("{table}.metric_uuid (row {row})")),
                    "the id of a compute_metric_definition row",
                    uuid.to_string(),
                )
            })?;
            let (value, not_finite) = number(m, table, "value", row)?;
            values.push((
                k,
                ComputeValue {
                    metric,
                    value_name: text(m, "value_name").unwrap_or_default(),
                    value,
                    not_finite,
                },
            ));
            Ok(())
        })?;
        for (k, v) in values {
            if let Some(kernel) = out.kernels.get_mut(k) {
                kernel.values.push(v);
            }
        }
    }
    if has("compute_kernel_roofline_data") {
        let table = "compute_kernel_roofline_data";
        let mut points: Vec<(usize, ComputePoint)> = Vec::new();
        rows(conn, table, |m, row| {
            let k = kernel(m, table, row)?;
            // An infinite or NaN figure of a point is no figure.
            let n = |c: &str| number(m, table, c, row).map(|(v, _)| v);
            points.push((
                k,
                ComputePoint {
                    gflop_per_s: n("total_flops")?,
                    ai_l1: n("l1_cache_data")?,
                    ai_l2: n("l2_cache_data")?,
                    ai_hbm: n("hbm_cache_data")?,
                },
            ));
            Ok(())
        })?;
        for (k, p) in points {
            if let Some(kernel) = out.kernels.get_mut(k) {
                if kernel.point.is_some() {
                    return Err(Error::syntax(
                        located(format!("{table}.kernel_uuid")),
                        "one roofline row per kernel",
                        format!("two rows for kernel {:?}", kernel.name),
                    ));
                }
                kernel.point = Some(p);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/rocprof-compute-3.5.0-mi350-monte_carlo_pi.db")
    }

    #[test]
    fn the_mi350_sample_holds_its_values_points_and_peaks() {
        let a = read_compute_analysis(&fixture()).expect("the fixture reads");
        assert_eq!(a.metrics.len(), 1942);
        assert_eq!(a.kernels.len(), 7);
        let values: usize = a.kernels.iter().map(|k| k.values.len()).sum();
        assert_eq!(values, 48_405);
        let nulls = a
            .kernels
            .iter()
            .flat_map(|k| &k.values)
            .filter(|v| v.value.is_none())
            .count();
        assert_eq!(nulls, 5290 + 1);
        // One value is stored as an infinity: 3.1.0 Wavefront Occupancy (Value).
        let infinite: Vec<String> = a
            .kernels
            .iter()
            .flat_map(|k| &k.values)
            .filter(|v| v.not_finite)
            .map(|v| a.value_label(v))
            .collect();
        assert_eq!(infinite, ["3.1.0 Wavefront Occupancy (Value)"]);
        assert_eq!(a.peaks.get("HBMBw"), Some(&4885.545015923266));
        assert_eq!(a.peaks.get("FP32Flops"), Some(&137432.91975730713));
        assert_eq!(a.roofline_data_types, ["FP32"]);
        assert_eq!(a.device.as_deref(), Some("MI350 (gfx950)"));
        assert_eq!(a.version.as_deref(), Some("3.5.0"));
        let sobol = a
            .kernels
            .iter()
            .find(|k| k.name.contains("generate_sobol_kernel"))
            .and_then(|k| k.point.clone())
            .expect("sobol has a point");
        assert_eq!(sobol.gflop_per_s, Some(468.1142857142857));
        assert_eq!(sobol.ai_hbm, Some(0.49868738443275984));
    }
}
