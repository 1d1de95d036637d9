//! `.ncu-rep` reports (issue 44): read through `ncu --import FILE --csv --page raw` into a cache
//! keyed by the report's hash, as `.nsys-rep` goes through `nsys export`. A stand-in `ncu` (a
//! shell script printing a real raw-page CSV that Nsight Compute 2025.3.1 exported from a real
//! H100 report) plays the exporter, since no test machine has Nsight Compute.

use super::{fixture, kernelab};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn profile_json(report: &Path, path: &Path) -> (Option<i32>, serde_json::Value, String) {
    let out = kernelab()
        .env("PATH", path)
        .env_remove("KERNELAB_NCU")
        .args(["profile", "--group", "none", "--format", "json"])
        .arg(report)
        .output()
        .expect("runs");
    (
        out.status.code(),
        serde_json::from_slice(&out.stdout).unwrap_or_default(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn script(dir: &Path, body: &str) {
    std::fs::create_dir_all(dir).expect("dir");
    let p = dir.join("ncu");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).expect("write");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn ncu_rep_reads_through_ncu_import_and_its_cache_and_says_why_when_it_cannot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("mm run.ncu-rep");
    std::fs::write(&report, b"NVR\0\x06\0\0\0\x08\x0b\x10\x01\x18\0").expect("report");
    let csv = fixture("ncu_h100_mm_raw.csv");
    // Without ncu: exit 2 with the export command, as before.
    let empty = dir.path().join("bin-empty");
    std::fs::create_dir(&empty).expect("dir");
    let (code, _, err) = profile_json(&report, &empty);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("--csv --page raw >") && err.contains("`ncu` is not on PATH"),
        "{err}"
    );
    // A failing ncu: exit 2 with its last error line and the command.
    let broken = dir.path().join("bin-broken");
    script(
        &broken,
        "echo '==ERROR== the report is from a newer version' >&2; exit 1",
    );
    let (code, _, err) = profile_json(&report, &broken);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the report is from a newer version"), "{err}");
    assert!(err.contains("ncu --import"), "{err}");
    // The stand-in: checks its arguments, prints the real CSV.
    let bin = dir.path().join("bin");
    let calls = dir.path().join("calls");
    script(
        &bin,
        &format!(
            "[ \"$1\" = --import ] && [ \"$3 $4 $5\" = '--csv --page raw' ] || exit 3\necho called >> '{}'\ncat '{}'",
            calls.display(),
            csv.display()
        ),
    );
    // The stand-in first, the system's tools (cat) after it.
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let (code, doc, err) = profile_json(&report, Path::new(&path));
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(doc["inputs"][0]["format"], "ncu-rep");
    assert!(doc["inputs"][0]["facts"]["exported_to"]
        .as_str()
        .is_some_and(|p| p.ends_with(".csv")));
    // The same kernels as the CSV read directly.
    let direct = super::profile_json(&[csv.to_str().expect("utf-8"), "--group", "none"]);
    assert!(!direct["kernels"].as_array().expect("kernels").is_empty());
    assert_eq!(doc["kernels"], direct["kernels"]);
    assert_eq!(doc["summary"], direct["summary"]);
    // Again without ncu: the cached export, ncu not run again.
    let (code, again, err) = profile_json(&report, &empty);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(again["kernels"], doc["kernels"]);
    let n = std::fs::read_to_string(&calls)
        .expect("calls")
        .lines()
        .count();
    assert_eq!(n, 1);
}
