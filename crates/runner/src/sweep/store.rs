//! Per-point result files in a sweep's output folder (`points/<id>.json`): each written whole
//! (a temporary file renamed into place), so a killed worker leaves a result or nothing.

use super::error::{Error, Result};
use kernelab_model::kernel_run::Gate;
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
        check_cached(&p, &text, &r)?;
        out.push(r);
    }
    Ok(out)
}

/// The verdict of a point that ran with these gates: pass when it has gates and every one
/// passed, else fail.
pub(super) fn verdict_of(gates: &[Gate]) -> PointVerdict {
    if !gates.is_empty() && gates.iter().all(|g| g.passed) {
        PointVerdict::Pass
    } else {
        PointVerdict::Fail
    }
}

/// A cached result must be what running its point wrote: named by its point's id, and (a point
/// that ran) with the verdict its gates give and no error. One that contradicts itself (a
/// "pass" beside a failed gate) is an error naming the file and the line, never counted.
fn check_cached(path: &Path, text: &str, r: &PointResult) -> Result<()> {
    let at = |key: &str, message: String| {
        let needle = format!("\"{key}\"");
        let line = text
            .lines()
            .position(|l| l.contains(&needle))
            .map(|i| i as u64 + 1);
        Error::File {
            location: Location {
                line,
                ..Location::default()
            }
            .with_path(path),
            message,
        }
    };
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    if stem.as_deref() != Some(r.id.as_str()) {
        return Err(at(
            "id",
            format!(
                "the result of point `{}` in a file of another name: expected the point `{}`",
                r.id,
                stem.unwrap_or_default()
            ),
        ));
    }
    if r.verdict == PointVerdict::Error {
        return Ok(());
    }
    let said = serde_json::to_string(&r.verdict).unwrap_or_default();
    let contradiction = |why: String| {
        at(
            "verdict",
            format!(
                "the cached result says {said} but {why}: it contradicts its own gates (remove the file to run the point again)"
            ),
        )
    };
    if let Some(e) = &r.error {
        return Err(contradiction(format!("records an error ({e})")));
    }
    if r.verdict != verdict_of(&r.gates) {
        return Err(contradiction(match r.gates.iter().find(|g| !g.passed) {
            Some(g) => format!("its gate `{}` failed", g.name),
            None if r.gates.is_empty() => "it has no gate".to_string(),
            None => format!("every one of its {} gates passed", r.gates.len()),
        }));
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, verdict: PointVerdict, gates: &[bool]) -> PointResult {
        PointResult {
            id: id.into(),
            build: None,
            params: Default::default(),
            verdict,
            gates: gates
                .iter()
                .enumerate()
                .map(|(i, &passed)| Gate {
                    name: format!("gate {i}"),
                    passed,
                    detail: String::new(),
                })
                .collect(),
            bitwise: None,
            change: kernelab_model::Change::unavailable("not timed"),
            baseline_ns: None,
            candidate_ns: None,
            device: "cpu".into(),
            worker: "w".into(),
            wall_ns: 1,
            error: None,
            run: None,
            conditions: None,
            noise_floor: None,
        }
    }

    #[test]
    fn a_cached_result_that_contradicts_its_gates_is_refused_naming_the_file_and_line() {
        let out = tempfile::tempdir().expect("tmp");
        write_result(out.path(), &result("a", PointVerdict::Pass, &[true, true])).expect("write");
        write_result(out.path(), &result("b", PointVerdict::Fail, &[true, false])).expect("write");
        assert_eq!(read_results(out.path()).expect("consistent").len(), 2);
        assert_eq!(done_ids(out.path()).expect("ids").len(), 2);
        let cases = [
            (
                result("c", PointVerdict::Pass, &[true, false]),
                "c.json: line 5: the cached result says \"pass\" but its gate `gate 1` failed: it contradicts its own gates",
            ),
            (
                result("c", PointVerdict::Pass, &[]),
                "says \"pass\" but it has no gate",
            ),
            (
                result("c", PointVerdict::Fail, &[true]),
                "says \"fail\" but every one of its 1 gates passed",
            ),
            (
                PointResult {
                    error: Some("boom".into()),
                    ..result("c", PointVerdict::Pass, &[true])
                },
                "says \"pass\" but records an error (boom)",
            ),
            (
                result("d", PointVerdict::Pass, &[true]),
                "c.json: line 2: the result of point `d` in a file of another name",
            ),
        ];
        for (r, said) in cases {
            let text = serde_json::to_string_pretty(&r).expect("json");
            std::fs::write(out.path().join("points/c.json"), text).expect("write");
            let e = read_results(out.path()).expect_err(said).to_string();
            assert!(e.contains(said), "{said}: {e}");
            assert!(done_ids(out.path()).is_err());
        }
    }
}
