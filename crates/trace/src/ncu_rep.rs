//! Nsight Compute reports (`.ncu-rep`): a binary format kernelab does not parse, read through
//! `ncu --import FILE --csv --page raw` (the raw page: every metric of every launch) into a
//! cache folder keyed by the report's SHA-256, then as an Nsight Compute CSV, as `.nsys-rep`
//! goes through `nsys export`. Without `ncu` on `PATH` the error gives the exact command.

use crate::detect::ncu_report_detail;
use crate::error::{Error, ErrorKind, Result};
use crate::tool;
use kernelab_model::Location;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

fn unsupported(detail: String) -> Error {
    Error::new(Location::byte(0), ErrorKind::Unsupported { detail })
}

/// The CSV export of `report`: the cached one, else one made now by `ncu --import`.
///
/// Running `ncu` is refused in a confined run without permission to run programs
/// ([`kernelab_model::may_run`]); its output goes into a fresh folder made inside the cache
/// folder, killed with its process group past `$KERNELAB_NCU_TIMEOUT` seconds (default 600),
/// then renamed into the cache.
pub(crate) fn csv_for(report: &Path) -> Result<PathBuf> {
    let io = |e| Error::new(Location::default(), ErrorKind::Io(e));
    let file = kernelab_model::open_regular(report).map_err(io)?;
    let (hash, _) = kernelab_model::sha256_reader(std::io::BufReader::new(file)).map_err(io)?;
    let cached = tool::cache_dir("ncu").map(|d| d.join(format!("{hash}.csv")));
    if let Some(csv) = cached.as_ref().filter(|c| kernelab_model::is_file(c)) {
        return Ok(csv.clone());
    }
    let refused = |why: String| unsupported(format!("{} ({why})", ncu_report_detail(Some(report))));
    if let Err(why) = kernelab_model::may_run("ncu --import") {
        return Err(refused(why));
    }
    let Some(ncu) = tool::find("ncu", "KERNELAB_NCU") else {
        return Err(refused("`ncu` is not on PATH".into()));
    };
    let (Some(dir), Some(csv)) = (tool::cache_dir("ncu"), cached) else {
        return Err(refused(
            "no cache folder for the export: set KERNELAB_CACHE_DIR or HOME".into(),
        ));
    };
    kernelab_model::create_dir_all(&dir).map_err(io)?;
    let work = kernelab_model::TempDir::new_in(&dir).map_err(io)?;
    let args = [
        OsStr::new("--import"),
        report.as_os_str(),
        OsStr::new("--csv"),
        OsStr::new("--page"),
        OsStr::new("raw"),
    ];
    let command = format!(
        "ncu --import {} --csv --page raw",
        crate::nsys::rep::shell_word(report)
    );
    let limit = tool::deadline("KERNELAB_NCU_TIMEOUT");
    let Some(status) = tool::run(&ncu, &args, &work, "export.csv", limit)? else {
        return Err(unsupported(format!(
            "an Nsight Compute report that `{}` did not export within {} s (killed; set \
             KERNELAB_NCU_TIMEOUT for longer); the command was: {command}",
            ncu.display(),
            limit.as_secs(),
        )));
    };
    if !status.success() {
        let last = tool::last_error(&ncu, &work);
        return Err(unsupported(format!(
            "an Nsight Compute report that `{}` could not export ({status}{}{last}); the command \
             was: {command}",
            ncu.display(),
            if last.is_empty() { "" } else { ": " },
        )));
    }
    work.keep_as("export.csv", &csv).map_err(io)?;
    Ok(csv)
}
