//! rocprofv3 `counter_collection.csv` (`--pmc C1 C2 …`): one row per (dispatch, counter), in
//! the 16-column (ROCprofiler-SDK ≈ 0.5) and 19-column (SDK 1.x: `Accum_VGPR_Count`,
//! `Start_Timestamp`, `End_Timestamp`) layouts and the rocpd-converted form (`Guid` first).
//! Columns are found by name, never by position. See `docs/formats.md`.

use crate::error::{Error, ErrorKind, Result};
use kernelab_model::{parse_scaled_decimal, parse_scaled_decimal_wide, Location};
use serde::{Deserialize, Serialize};
use std::io::Read;

/// The largest counter_collection CSV kernelab reads (it is read whole).
pub const MAX_COUNTER_CSV_BYTES: u64 = 256 << 20;

/// One counter value of one kernel dispatch.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CounterRow {
    /// `Dispatch_Id`: the per-process dispatch counter (1-based).
    pub dispatch: u64,
    /// `Kernel_Name` as rocprofv3 wrote it.
    pub kernel: String,
    /// `Counter_Name`.
    pub counter: String,
    /// `Counter_Value`, summed by rocprofv3 over the counter's hardware instances.
    pub value: f64,
    /// `End_Timestamp − Start_Timestamp` in ns (19-column layout only; `None` otherwise).
    pub duration_ns: Option<u64>,
    /// The physical line of the row (1-based).
    pub line: u64,
}

fn find(header: &[String], names: &[&str]) -> Option<usize> {
    names
        .iter()
        .find_map(|n| header.iter().position(|h| h.trim().eq_ignore_ascii_case(n)))
}

fn require(header: &[String], names: &[&str]) -> Result<usize> {
    find(header, names).ok_or_else(|| {
        Error::syntax(
            Location::line(1).with_field(names[0]),
            format!("a column named {}", names.join(" or ")),
            format!("header {}", header.join(",")),
        )
    })
}

/// Whether a CSV header is a rocprofv3 counter_collection header.
pub fn is_counter_header(header: &[String]) -> bool {
    find(header, &["Counter_Name"]).is_some() && find(header, &["Counter_Value"]).is_some()
}

/// Reads a rocprofv3 counter_collection CSV into its rows, in file order. Errors name the line
/// and column.
pub fn read_counter_collection<R: Read>(r: R) -> Result<Vec<CounterRow>> {
    let mut bytes = Vec::new();
    r.take(MAX_COUNTER_CSV_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::new(Location::byte(0), ErrorKind::Io(e)))?;
    if bytes.len() as u64 > MAX_COUNTER_CSV_BYTES {
        return Err(Error::new(
            Location::byte(MAX_COUNTER_CSV_BYTES),
            ErrorKind::TooLarge {
                what: "a rocprofv3 counter_collection CSV".into(),
                limit: MAX_COUNTER_CSV_BYTES,
            },
        ));
    }
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(bytes.as_slice());
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| Error::syntax(Location::line(1), "a CSV header", e.to_string()))?
        .iter()
        .map(str::to_string)
        .collect();
    if !is_counter_header(&header) {
        return Err(Error::syntax(
            Location::line(1),
            "a rocprofv3 counter_collection header (Counter_Name, Counter_Value)",
            format!("header {}", header.join(",")),
        ));
    }
    let dispatch = require(&header, &["Dispatch_Id", "Dispatch_ID"])?;
    let kernel = require(&header, &["Kernel_Name", "KernelName"])?;
    let counter = require(&header, &["Counter_Name"])?;
    let value = require(&header, &["Counter_Value"])?;
    let start = find(&header, &["Start_Timestamp"]);
    let end = find(&header, &["End_Timestamp"]);
    let mut rows = Vec::new();
    let mut rec = csv::StringRecord::new();
    loop {
        let more = rdr.read_record(&mut rec).map_err(|e| {
            let line = e.position().map(|p| p.line()).unwrap_or(0);
            Error::syntax(Location::line(line), "a CSV record", e.to_string())
        })?;
        if !more {
            break;
        }
        let line = rec.position().map(|p| p.line()).unwrap_or(0);
        if rec.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let text = |c: usize| rec.get(c).unwrap_or("").trim();
        let at = |c: usize| Location::line(line).with_field(header[c].clone());
        let int = |c: usize, what: &str| -> Result<u64> {
            let t = text(c);
            parse_scaled_decimal(t, 0)
                .filter(|_| !t.contains(['e', 'E']))
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(|| Error::syntax(at(c), what.to_string(), format!("{t:?}")))
        };
        // Timestamps exact to 10⁻⁹ ns, so a duration is rounded once, not its two ends.
        let exact = |c: usize, what: &str| -> Result<i128> {
            let t = text(c);
            parse_scaled_decimal_wide(t, 9)
                .filter(|v| !t.contains(['e', 'E']) && *v >= 0)
                .ok_or_else(|| Error::syntax(at(c), what.to_string(), format!("{t:?}")))
        };
        let v = text(value);
        let number = v
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| Error::syntax(at(value), "a finite number", format!("{v:?}")))?;
        let duration_ns = match (start, end) {
            (Some(s), Some(e)) if !text(s).is_empty() && !text(e).is_empty() => {
                let (s_ns, e_ns) = (
                    exact(s, "a start timestamp in ns")?,
                    exact(e, "an end timestamp in ns")?,
                );
                let d = e_ns.checked_sub(s_ns).filter(|d| *d >= 0).ok_or_else(|| {
                    Error::syntax(
                        at(e),
                        "an end timestamp not before the start",
                        format!("{} < {}", text(e), text(s)),
                    )
                })?;
                Some(u64::try_from(kernelab_model::exact::round_e9(d)).unwrap_or(u64::MAX))
            }
            _ => None,
        };
        let name = text(counter);
        if name.is_empty() {
            return Err(Error::syntax(
                at(counter),
                "a counter name",
                "an empty field",
            ));
        }
        rows.push(CounterRow {
            dispatch: int(dispatch, "a dispatch id (integer)")?,
            kernel: text(kernel).to_string(),
            counter: name.to_string(),
            value: number,
            duration_ns,
            line,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn fixture(name: &str) -> Vec<u8> {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures")
            .join(name);
        std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn sixteen_column_layout_has_no_durations() {
        let rows = read_counter_collection(&fixture("rocprofv3_sdk0.5_counter_collection.csv")[..])
            .expect("reads");
        assert_eq!(rows.len(), 7);
        assert_eq!(rows[0].dispatch, 1);
        assert_eq!(
            rows[0].kernel,
            "void addition_kernel<float>(float*, float const*, float const*, int, int)"
        );
        assert_eq!(rows[0].counter, "SQ_WAVES");
        assert_eq!(rows[0].value, 16384.0);
        assert_eq!(rows[0].duration_ns, None);
        assert_eq!(rows[0].line, 2);
    }

    #[test]
    fn nineteen_column_layout_has_durations() {
        let rows = read_counter_collection(&fixture("rocprofv3_sdk1.x_counter_collection.csv")[..])
            .expect("reads");
        assert_eq!(rows.len(), 4);
        assert_eq!(
            rows[0].duration_ns,
            Some(3200098838483232 - 3200098838431081)
        );
        assert_eq!(
            rows[3].kernel,
            "divide_kernel(float*, float const*, float const*, int, int)"
        );
    }

    #[test]
    fn fractional_timestamps_give_the_exact_duration_rounded_once() {
        // Start .6 and end .4 after 52150.8 ns: rounded once 52151; the ends rounded one by one
        // (…432 − …081 + …) would give 52150.
        let text = String::from_utf8(fixture("rocprofv3_sdk1.x_counter_collection.csv"))
            .expect("utf-8")
            .replacen(
                "3200098838431081,3200098838483232",
                "3200098838431081.6,3200098838483232.4",
                1,
            );
        let rows = read_counter_collection(text.as_bytes()).expect("reads");
        assert_eq!(rows[0].duration_ns, Some(52151));
    }

    #[test]
    fn scientific_values_of_derived_counters() {
        let rows = read_counter_collection(
            &fixture("rocprofv3_counter_collection_OccupancyPercent_mi300a_excerpt.csv")[..],
        )
        .expect("reads");
        assert_eq!(rows.len(), 8);
        assert_eq!(rows[0].counter, "OccupancyPercent");
        assert!((rows[0].value - 13.271172).abs() < 1e-9);
        assert!((rows[1].value - 4.34259040e-02).abs() < 1e-12);
        assert_eq!(rows[1].kernel, "apply_reflect_bc");
    }

    #[test]
    fn a_bad_value_is_located() {
        let mut text =
            String::from_utf8(fixture("rocprofv3_sdk1.x_counter_collection.csv")).expect("utf-8");
        text = text.replacen("16384.000000", "lots", 1);
        let e = read_counter_collection(text.as_bytes()).expect_err("refused");
        let msg = e.to_string();
        assert!(
            msg.contains("line 2") && msg.contains("Counter_Value"),
            "{msg}"
        );
    }

    #[test]
    fn a_kernel_trace_is_not_a_counter_file() {
        let e = read_counter_collection(&fixture("rocprofv3_sdk0.5_kernel_trace.csv")[..])
            .expect_err("refused");
        assert!(e.to_string().contains("Counter_Name"), "{e}");
    }
}
