//! A rocprof CSV file: its first line checked for the CRLF that csv-core miscounts, its header
//! read, then its rows by the reader of its kind (traces in [`super::csv`], statistics in
//! [`super::stats`]).

use super::csv::{api_trace, header, kernel_trace, memory_copies, reader, Lines};
use super::{stats, CsvKind};
use crate::error::{Error, ErrorKind, Result};
use kernelab_model::{Location, Profile, SourceInfo};
use std::io::{BufRead, Read};

/// Reads a rocprof CSV of `kind` into `profile`.
pub(crate) fn read<R: Read>(
    r: R,
    kind: CsvKind,
    profile: &mut Profile,
    source: &mut SourceInfo,
) -> Result<()> {
    let mut buffered = std::io::BufReader::with_capacity(1 << 20, r);
    // csv-core reports record lines one short in CRLF files; correct it here.
    let crlf = {
        let head = buffered
            .fill_buf()
            .map_err(|e| Error::new(Location::byte(0), ErrorKind::Io(e)))?;
        memchr::memchr(b'\n', head).is_some_and(|i| i > 0 && head[i - 1] == b'\r')
    };
    // Legacy rocprof wrote kernel names with unquoted commas: stats rows may be longer.
    let stats = matches!(
        kind,
        CsvKind::KernelStats | CsvKind::LegacyStats | CsvKind::KernelTop
    );
    let mut rdr = Lines {
        rdr: reader(buffered, stats),
        offset: u64::from(crlf),
    };
    let cols = header(&mut rdr.rdr)?;
    match kind {
        CsvKind::KernelTrace => kernel_trace(&mut rdr, &cols, profile, source),
        CsvKind::KernelStats | CsvKind::LegacyStats | CsvKind::KernelTop => {
            stats::read(&mut rdr, &cols, profile, source)
        }
        CsvKind::ApiTrace => api_trace(&mut rdr, &cols, profile, source),
        CsvKind::MemoryCopyTrace => memory_copies(&mut rdr, &cols, profile, source),
    }
}
