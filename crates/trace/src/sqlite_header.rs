//! The 100-byte header of a SQLite database file, checked as SQLite checks it when it opens
//! one; the SQL reader and the page reader both start here.

use crate::error::{Error, Result};
use kernelab_model::Location;

/// What the header of a database file says, checked as SQLite checks it when it opens one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    /// Bytes per page.
    pub(crate) page_size: usize,
    /// Bytes reserved at the end of each page.
    pub(crate) reserved: usize,
    /// The pages SQLite reads: the header's database size when it is valid (bytes 92–95 equal
    /// to 24–27) and the file is in rollback-journal mode, else the file's.
    pub(crate) pages: u32,
}

/// The header `h` of a database file of `len` bytes, or an error naming the first byte that
/// SQLite itself would refuse (`file is not a database`, or a size past the file's end).
pub(crate) fn check_header(h: &[u8; 100], len: u64) -> Result<Header> {
    let bad = |at: u64, expected: &str, found: String| {
        Error::syntax(
            Location::byte(at),
            format!("{expected} (a SQLite database header, as SQLite checks it)"),
            found,
        )
    };
    if &h[..16] != b"SQLite format 3\0" {
        return Err(bad(
            0,
            "the magic `SQLite format 3`",
            format!("{:?}", &h[..16]),
        ));
    }
    let raw = u32::from(h[16]) << 8 | u32::from(h[17]) << 16;
    if !raw.is_power_of_two() || !(512..=65536).contains(&raw) {
        return Err(bad(
            16,
            "a page size that is a power of two from 512 to 65,536",
            format!("{}", be::<2>(h, 16).unwrap_or(0)),
        ));
    }
    let page_size = raw as usize;
    // A write version (byte 18) past 2 only makes the file read-only; a read version past 2
    // is refused.
    if h[19] > 2 {
        return Err(bad(19, "a read version of 1 or 2", h[19].to_string()));
    }
    let reserved = usize::from(h[20]);
    if page_size - reserved < 480 {
        return Err(bad(
            20,
            &format!("reserved bytes that leave at least 480 of the {page_size}-byte page"),
            reserved.to_string(),
        ));
    }
    for (at, want) in [(21u64, 64u8), (22, 32), (23, 32)] {
        let got = h[at as usize];
        if got != want {
            return Err(bad(
                at,
                &format!("the payload fraction {want}"),
                got.to_string(),
            ));
        }
    }
    let file_pages = u32::try_from(len.div_ceil(page_size as u64)).unwrap_or(u32::MAX);
    let declared = be::<4>(h, 28).unwrap_or(0) as u32;
    // In WAL mode the WAL may hold a newer first page: the size is SQLite's to check.
    let wal = h[18] == 2 || h[19] == 2;
    let pages = if wal || declared == 0 || h[24..28] != h[92..96] {
        file_pages
    } else if declared > file_pages {
        return Err(bad(
            28,
            &format!("a database size of at most the file's {file_pages} pages"),
            format!("{declared} pages"),
        ));
    } else {
        declared
    };
    Ok(Header {
        page_size,
        reserved,
        pages,
    })
}

/// A big-endian unsigned integer of `N` bytes at `at`.
pub(crate) fn be<const N: usize>(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(N)?)?;
    Some(s.iter().fold(0u64, |a, &x| (a << 8) | u64::from(x)))
}
