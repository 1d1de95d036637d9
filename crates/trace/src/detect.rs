//! Format detection from content, never from the file name.

use crate::error::{Error, ErrorKind, Result};
pub use crate::format::{formats_read, Format};
use crate::input::SQLITE_MAGIC;
use crate::rocprof::classify_header;
use kernelab_model::Location;

/// The first bytes of an Nsight Compute report (`.ncu-rep`): `NVR` and a zero byte, then the
/// header's length (two third-party readers of the format agree: a Kaitai description
/// `nsight_cuprof_report` and the ncu-viewer JavaScript parser; docs/formats/nvidia.md §3.4).
pub(crate) const NCU_REP_MAGIC: &[u8] = b"NVR\0";

/// The error for an Nsight Compute report, which kernelab does not read: what it is and the
/// command that exports `path` (else `FILE.ncu-rep`) as the CSV kernelab reads.
pub(crate) fn ncu_report(path: Option<&std::path::Path>) -> Error {
    Error::new(
        Location::byte(0),
        ErrorKind::Unsupported {
            detail: ncu_report_detail(path),
        },
    )
}

/// What an Nsight Compute report is, and the command that exports `path` (else
/// `FILE.ncu-rep`) as the CSV kernelab reads.
pub(crate) fn ncu_report_detail(path: Option<&std::path::Path>) -> String {
    let (report, csv) = match path {
        Some(p) => (
            crate::nsys::rep::shell_word(p),
            crate::nsys::rep::shell_word(&p.with_extension("csv")),
        ),
        None => ("FILE.ncu-rep".into(), "FILE.csv".into()),
    };
    format!(
        "an Nsight Compute report (.ncu-rep, binary); kernelab reads its CSV export: `ncu --import {report} --csv --page raw > {csv}`, then read {csv}"
    )
}

/// The first line of `head` split as CSV fields.
pub(crate) fn csv_header(head: &[u8]) -> Option<Vec<String>> {
    let line_end = memchr::memchr(b'\n', head).unwrap_or(head.len());
    let line = &head[..line_end];
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line);
    let rec = rdr.records().next()?.ok()?;
    Some(
        rec.iter()
            .map(|s| s.trim().trim_start_matches('\u{feff}').to_string())
            .collect(),
    )
}

/// Detects the format of decompressed content from its first bytes. On failure the error
/// ([`ErrorKind::UnknownFormat`], at byte 0) describes what was seen.
pub fn detect(head: &[u8]) -> Result<Format> {
    if head.starts_with(SQLITE_MAGIC) {
        return Ok(Format::Sqlite);
    }
    if head.starts_with(crate::nsys::rep::REPORT_MAGIC) {
        return Ok(Format::NsysRep);
    }
    if crate::xplane::looks_like(head) {
        return Ok(Format::Xplane);
    }
    if head.starts_with(NCU_REP_MAGIC) {
        return Err(ncu_report(None));
    }
    let text = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    let first = text.iter().copied().find(|c| !c.is_ascii_whitespace());
    match first {
        None => return Err(unknown("only whitespace".into())),
        Some(b'{') if crate::rocprof::sdk_json::looks_like(text) => return Ok(Format::RocprofJson),
        Some(b'[') if crate::proton::looks_like(text) => return Ok(Format::Proton),
        Some(b'{') if crate::proton::looks_like_trace(text) => return Ok(Format::ProtonTrace),
        Some(b'{') | Some(b'[') => return Ok(Format::Kineto),
        _ => {}
    }
    // Nsight Compute: the header may follow `==PROF==`/`==WARNING==` lines and program output.
    if memchr::memmem::find(text, b"\"ID\",\"Process ID\"").is_some() {
        return Ok(Format::NcuCsv);
    }
    if let Some(cols) = csv_header(text) {
        if cols.len() >= 2 {
            if let Some(kind) = classify_header(&cols) {
                return Ok(Format::RocprofCsv(kind));
            }
            if cols.iter().any(|c| c == "Time (%)") && cols.iter().any(|c| c == "Total Time (ns)") {
                return Ok(Format::NsysStatsCsv);
            }
            let shown: Vec<&str> = cols.iter().take(8).map(String::as_str).collect();
            return Err(unknown(format!(
                "CSV header [{}{}] is not one kernelab reads (a rocprofv3 kernel_trace.csv has Kernel_Name and Start_Timestamp, a kernel_stats.csv or results.stats.csv Name, Calls, TotalDurationNs); kernelab reads {}",
                shown.join(", "),
                if cols.len() > 8 { ", …" } else { "" },
                formats_read()
            )));
        }
    }
    Err(unknown(format!(
        "starts with {}; kernelab reads {}",
        kernelab_model::quote_bytes(text, 32),
        formats_read()
    )))
}

fn unknown(detail: String) -> Error {
    Error::new(Location::byte(0), ErrorKind::UnknownFormat { detail })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::CsvKind;

    /// The place of `f` in [`Format::ALL`]: a match with no catch-all, so a new format does
    /// not compile until it has a place.
    fn place(f: Format) -> usize {
        match f {
            Format::Kineto => 0,
            Format::RocprofCsv(CsvKind::KernelTrace) => 1,
            Format::RocprofCsv(CsvKind::KernelStats) => 2,
            Format::RocprofCsv(CsvKind::MemoryCopyTrace) => 3,
            Format::RocprofCsv(CsvKind::ApiTrace) => 4,
            Format::Sqlite => 5,
            Format::RocprofCsv(CsvKind::LegacyStats) => 6,
            Format::RocprofCsv(CsvKind::KernelTop) => 7,
            Format::NsysRep => 8,
            Format::NcuCsv => 9,
            Format::NsysStatsCsv => 10,
            Format::Xplane => 11,
            Format::RocprofJson => 12,
            Format::Proton => 13,
            Format::ProtonTrace => 14,
        }
    }

    #[test]
    fn every_format_is_listed() {
        let mut listed = vec![false; Format::ALL.len()];
        for f in Format::ALL {
            listed[place(f)] = true;
        }
        assert!(listed.iter().all(|l| *l), "{listed:?}");
        let text = formats_read();
        for f in Format::ALL {
            assert!(text.contains(f.describe()), "{text}");
        }
    }

    #[test]
    fn binary_prefixes_are_shown_as_hex() {
        let err = detect(b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe")
            .err()
            .map(|e| e.to_string());
        let err = err.unwrap_or_default();
        assert!(err.contains("bytes 89 50 4e 47"), "{err}");
        assert!(!err.contains('\u{fffd}'), "{err}");
        assert!(
            err.contains("Nsight Compute --csv"),
            "every format is named: {err}"
        );
    }

    /// No real `.ncu-rep` is public under a licence we can copy, so this is the documented
    /// magic (`NVR\0` and a little-endian header length, see [`NCU_REP_MAGIC`]) followed by
    /// bytes of a protobuf header: the error names the report and the export command, and
    /// never prints the binary prefix.
    #[test]
    fn an_ncu_report_is_named_with_its_export_command() {
        let head = b"NVR\0\x06\x00\x00\x00\x08\x0b\x10\x01\x18\x00\x1a\x02\x08\x01";
        let err = detect(head).expect_err("not read directly").to_string();
        assert!(err.contains("an Nsight Compute report (.ncu-rep"), "{err}");
        assert!(
            err.contains("ncu --import FILE.ncu-rep --csv --page raw > FILE.csv"),
            "{err}"
        );
        assert!(!err.contains("bytes 4e 56 52"), "{err}");
    }

    #[test]
    fn detects_by_content() {
        assert_eq!(
            detect(b"  {\"traceEvents\": []}").ok(),
            Some(Format::Kineto)
        );
        assert_eq!(detect(b"SQLite format 3\0rest").ok(), Some(Format::Sqlite));
        assert_eq!(
            detect(b"\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n").ok(),
            Some(Format::RocprofCsv(CsvKind::LegacyStats))
        );
        assert_eq!(
            detect(
                b"\"Kind\",\"Agent_Id\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n"
            )
            .ok(),
            Some(Format::RocprofCsv(CsvKind::KernelTrace))
        );
        let err = detect(b"a,b,c\n1,2,3\n").expect_err("unknown").to_string();
        assert!(
            err.starts_with("byte 0: unknown format: CSV header [a, b, c]"),
            "{err}"
        );
        assert!(detect(b"hello world").is_err());
    }
}
