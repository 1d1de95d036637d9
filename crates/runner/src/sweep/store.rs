//! Per-point result files in a sweep's output folder (`points/<id>.json`): each written whole
//! (a temporary file renamed into place), so a killed worker leaves a result or nothing.

use super::error::{Error, Result};
use kernelab_model::sweep::{PointResult, PointVerdict};
use kernelab_model::Location;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Largest point result file read: 16 MiB.
pub const MAX_POINT_FILE_BYTES: u64 = 16 << 20;

fn points_dir(out: &Path) -> PathBuf {
    out.join("points")
}

/// Writes one point's result; returns its path.
pub fn write_result(out: &Path, r: &PointResult) -> Result<PathBuf> {
    let dir = points_dir(out);
    let write = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::Write { path, source }
    };
    std::fs::create_dir_all(&dir).map_err(write(&dir))?;
    let path = dir.join(format!("{}.json", r.id));
    let text = serde_json::to_string_pretty(r)
        .map_err(|e| Error::Internal(format!("serializing a point result: {e}")))?;
    // An unpredictable temporary name (O_EXCL, never a planted link), renamed over the result
    // (a rerun replaces an error result); errors name the result's path.
    let mut tmp = tempfile::Builder::new()
        .prefix(".point-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(write(&path))?;
    std::io::Write::write_all(&mut tmp, (text + "\n").as_bytes()).map_err(write(&path))?;
    tmp.persist(&path).map_err(|e| Error::Write {
        path: path.clone(),
        source: e.error,
    })?;
    Ok(path)
}

/// Every point result in the folder (none when it has no `points/` yet); a file that is not a
/// point result is an error naming it.
pub fn read_results(out: &Path) -> Result<Vec<PointResult>> {
    let dir = points_dir(out);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(Error::Read { path: dir, source }),
    };
    let mut paths = Vec::new();
    for e in entries {
        let e = e.map_err(|source| Error::Read {
            path: dir.clone(),
            source,
        })?;
        let p = e.path();
        let name = e.file_name().to_string_lossy().to_string();
        if name.ends_with(".json") && !name.starts_with('.') {
            paths.push(p);
        }
    }
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let text =
            kernelab_model::read_regular_text(&p, MAX_POINT_FILE_BYTES).map_err(|source| {
                Error::Read {
                    path: p.clone(),
                    source,
                }
            })?;
        let r: PointResult = serde_json::from_str(&text).map_err(|e| Error::File {
            location: Location {
                line: Some(e.line() as u64),
                ..Location::default()
            }
            .with_path(&p),
            message: format!("not a sweep point result: {e}"),
        })?;
        out.push(r);
    }
    Ok(out)
}

/// Ids of the points already done (passed or failed a gate); points that could not run are
/// run again.
pub fn done_ids(out: &Path) -> Result<BTreeSet<String>> {
    Ok(read_results(out)?
        .into_iter()
        .filter(|r| r.verdict != PointVerdict::Error)
        .map(|r| r.id)
        .collect())
}
