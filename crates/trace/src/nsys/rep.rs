//! Nsight Systems reports (`.nsys-rep`, `.qdrep`): an undocumented binary format, read through
//! `nsys export --type sqlite` into a cache folder keyed by the report's SHA-256, then as an
//! Nsight Systems SQLite export. Without `nsys` on `PATH` the error gives the exact command.

use crate::error::{Error, ErrorKind, Result};
use crate::tool;
use kernelab_model::Location;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The first bytes of every Nsight Systems report (the name of its Tegra-era ancestor).
pub(crate) const REPORT_MAGIC: &[u8] = b"NVIDIA Tegra Profiler Report";

/// The Nsight Systems version a report's first line names (`NVIDIA Tegra Profiler Report
/// 2025@5@1@121-255136380782v0.` is 2025.5.1.121); `None` for the older first line
/// (`… Report 1.`, which names none) or a header that is not one.
pub(crate) fn header_version(head: &[u8]) -> Option<String> {
    let rest = head.strip_prefix(REPORT_MAGIC)?.strip_prefix(b" ")?;
    let line = &rest[..rest.iter().position(|&b| b == b'\n')?];
    let text = std::str::from_utf8(line).ok()?;
    let numbers = text.split('-').next()?.trim_end_matches('.');
    let parts: Vec<&str> = numbers.split('@').collect();
    let whole = parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 6 && p.bytes().all(|b| b.is_ascii_digit()));
    whole.then(|| parts.join("."))
}

/// What the report's first bytes `head` say of the version that wrote it, for messages.
fn written_by(head: &[u8]) -> String {
    match header_version(head) {
        Some(v) => {
            format!(" (written by Nsight Systems {v}: export it with that version or a later one)")
        }
        None => String::new(),
    }
}

/// A path as one shell word (single-quoted unless it needs no quoting).
pub(crate) fn shell_word(p: &Path) -> String {
    let s = p.to_string_lossy();
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+,:=@%".contains(c));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The command that exports `report` to `sqlite`.
pub(crate) fn export_command(report: &Path, sqlite: &Path) -> String {
    format!(
        "nsys export --type sqlite --force-overwrite true --output {} {}",
        shell_word(sqlite),
        shell_word(report)
    )
}

fn unsupported(detail: String) -> Error {
    Error::new(Location::byte(0), ErrorKind::Unsupported { detail })
}

/// The SQLite export of `report` (whose first bytes, as detection read them, are `head`): the
/// cached one, else one made now by `nsys export`.
///
/// Running `nsys` is refused in a confined run without permission to run programs
/// ([`kernelab_model::may_run`]). The export is written into a fresh folder of an unpredictable
/// name made inside the cache folder (nothing planted there can be written through), with
/// `nsys`'s output in files there (a daemon that keeps them open cannot hold kernelab), killed
/// with its process group past the deadline, then renamed into the cache by handle.
pub(crate) fn sqlite_for(report: &Path, head: &[u8]) -> Result<PathBuf> {
    let io = |e| Error::new(Location::default(), ErrorKind::Io(e));
    let beside = report.with_extension("sqlite");
    let file = kernelab_model::open_regular(report).map_err(io)?;
    let (hash, _) = kernelab_model::sha256_reader(std::io::BufReader::new(file)).map_err(io)?;
    let cached = tool::cache_dir("nsys").map(|d| d.join(format!("{hash}.sqlite")));
    if let Some(db) = cached.as_ref().filter(|db| kernelab_model::is_file(db)) {
        return Ok(db.clone());
    }
    if let Err(why) = kernelab_model::may_run("nsys export") {
        return Err(unsupported(format!(
            "an Nsight Systems report (.nsys-rep){}, which only `nsys` reads: {why}; export it \
             yourself, then give the .sqlite file: {}",
            written_by(head),
            export_command(report, &beside)
        )));
    }
    let Some(nsys) = tool::find("nsys", "KERNELAB_NSYS") else {
        return Err(unsupported(format!(
            "an Nsight Systems report (.nsys-rep){}, which only `nsys` reads, and `nsys` is not \
             on PATH; export it, then give the .sqlite file: {}",
            written_by(head),
            export_command(report, &beside)
        )));
    };
    let (Some(dir), Some(db)) = (tool::cache_dir("nsys"), cached) else {
        return Err(unsupported(format!(
            "an Nsight Systems report: no cache folder (set KERNELAB_CACHE_DIR or HOME); export \
             it yourself: {}",
            export_command(report, &beside)
        )));
    };
    kernelab_model::create_dir_all(&dir).map_err(io)?;
    let work = kernelab_model::TempDir::new_in(&dir).map_err(io)?;
    let tmp = work.path().join("export.sqlite");
    let args = [
        OsStr::new("export"),
        OsStr::new("--type"),
        OsStr::new("sqlite"),
        OsStr::new("--force-overwrite"),
        OsStr::new("true"),
        OsStr::new("--output"),
        tmp.as_os_str(),
        report.as_os_str(),
    ];
    let limit = tool::deadline("KERNELAB_NSYS_TIMEOUT");
    let Some(status) = tool::run(&nsys, &args, &work, "nsys.out", limit)? else {
        return Err(unsupported(format!(
            "an Nsight Systems report that `{}` did not export within {} s (killed; set \
             KERNELAB_NSYS_TIMEOUT for longer); the command was: {}",
            nsys.display(),
            limit.as_secs(),
            export_command(report, &tmp)
        )));
    };
    if !status.success() || !work.has_file("export.sqlite") {
        let last = tool::last_error(&nsys, &work);
        return Err(unsupported(format!(
            "an Nsight Systems report that `{}` could not export ({}{}{}); the command was: {}",
            nsys.display(),
            status,
            if last.is_empty() { "" } else { ": " },
            last,
            export_command(report, &tmp)
        )));
    }
    work.keep_as("export.sqlite", &db).map_err(io)?;
    Ok(db)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_names_the_version_that_wrote_it() {
        let v = |h: &[u8]| header_version(h);
        assert_eq!(
            v(b"NVIDIA Tegra Profiler Report 2025@5@1@121-255136380782v0.\n\x0bLocal").as_deref(),
            Some("2025.5.1.121")
        );
        assert_eq!(v(b"NVIDIA Tegra Profiler Report 1.\n\x0bLocal (CLI)"), None);
        assert_eq!(
            v(b"NVIDIA Tegra Profiler Report 2025@5@1@121"),
            None,
            "no line end"
        );
        assert_eq!(v(b"NVIDIA Tegra Profiler Report @@\n"), None);
        assert_eq!(v(b"ELF"), None);
    }

    #[test]
    fn the_command_quotes_only_what_needs_it() {
        assert_eq!(
            export_command(Path::new("/r/report1.nsys-rep"), Path::new("/r/report1.sqlite")),
            "nsys export --type sqlite --force-overwrite true --output /r/report1.sqlite /r/report1.nsys-rep"
        );
        assert_eq!(
            shell_word(Path::new("my run's.nsys-rep")),
            r"'my run'\''s.nsys-rep'"
        );
    }
}
