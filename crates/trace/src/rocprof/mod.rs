//! AMD profilers: rocprofv3 CSV (`kernel_trace.csv` in the 16/18/22-column and rocpd-converted
//! layouts, `kernel_stats.csv`, `memory_copy_trace.csv`), the rocpd SQLite database that ROCm 7
//! writes by default (`*_results.db`), rocprofv3 `-f json` (`*_results.json`), and the legacy rocprof `results.stats.csv`. Columns are
//! found by name (case-insensitive, with the synonyms listed in `docs/formats.md`),
//! never by position. See `docs/formats.md`.

pub(crate) mod compute_analysis;
pub(crate) mod compute_db;
pub(crate) mod counters;
pub(crate) mod csv;
pub(crate) mod csv_file;
pub(crate) mod rocpd;
pub(crate) mod sdk_json;
mod stats;

pub(crate) use stats::round_e9;

/// Whether `name` is a barrier or marker packet as legacy rocprof names it (`<barrier packet>`,
/// sometimes with its own quotes kept): AQL queue activity, never a kernel execution. rocprof's
/// `tblextr.py` renames every HIP activity op whose name contains `Marker` to `"<barrier packet>"`.
pub(crate) fn is_queue_packet(name: &str) -> bool {
    let n = name.trim().trim_matches('"').trim();
    let Some(inner) = n.strip_prefix('<').and_then(|n| n.strip_suffix('>')) else {
        return false;
    };
    let inner = inner.to_ascii_lowercase();
    inner.ends_with("packet") && (inner.contains("barrier") || inner.contains("marker"))
}

pub use crate::format::CsvKind;

/// Classifies a CSV header line by its column names, or `None` if it is not a rocprof CSV.
pub(crate) fn classify_header(columns: &[String]) -> Option<CsvKind> {
    let has = |names: &[&str]| {
        columns
            .iter()
            .any(|c| names.iter().any(|n| c.eq_ignore_ascii_case(n)))
    };
    let start = has(&["Start_Timestamp", "BeginNs"]);
    if has(&["Kernel_Name", "KernelName"]) && start {
        return Some(CsvKind::KernelTrace);
    }
    if has(&["Direction"]) && start {
        return Some(CsvKind::MemoryCopyTrace);
    }
    if has(&["Domain"]) && has(&["Function"]) && has(&["Correlation_Id"]) && start {
        return Some(CsvKind::ApiTrace);
    }
    if has(&["Kernel_Name"]) && has(&["Count"]) && has(&["Sum(ns)"]) {
        return Some(CsvKind::KernelTop);
    }
    if has(&["Name"]) && has(&["Calls"]) && has(&["TotalDurationNs"]) {
        return Some(if has(&["MinNs"]) {
            CsvKind::KernelStats
        } else {
            CsvKind::LegacyStats
        });
    }
    None
}
