//! `.nsys-rep` reports (issue 26): read through `nsys export --type sqlite` into a cache keyed
//! by the report's hash; without `nsys` on PATH, exit 2 with the exact command. A stand-in
//! `nsys` (a shell script copying a real SQLite export) plays the exporter here, since no test
//! machine has Nsight Systems.

use super::{fixture, kernelab};
use std::os::unix::fs::PermissionsExt;

fn kernels(out: &std::process::Output) -> serde_json::Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    v["summary"].clone()
}

/// `kernelab profile REPORT` on a PATH of only the empty folder `empty` (no `nsys`).
fn profile_without_nsys(report: &std::path::Path, empty: &std::path::Path) -> std::process::Output {
    kernelab()
        .env("PATH", empty)
        .env_remove("KERNELAB_NSYS")
        .args(["profile"])
        .arg(report)
        .output()
        .expect("runs")
}

#[test]
fn nsys_rep_without_nsys_prints_the_export_command_and_with_it_reads_the_cached_export() {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = dir.path().join("run 1.nsys-rep");
    std::fs::copy(fixture("nsys_rep_header_only.nsys-rep"), &report).expect("copy");
    let empty = dir.path().join("bin-empty");
    std::fs::create_dir(&empty).expect("dir");
    let out = profile_without_nsys(&report, &empty);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let want = format!(
        "nsys export --type sqlite --force-overwrite true --output '{}' '{}'",
        dir.path().join("run 1.sqlite").display(),
        report.display()
    );
    assert!(err.contains(&want), "{err}");
    assert!(err.contains("run 1.nsys-rep: byte 0"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // A stand-in exporter: copies a real export (cloverleaf, nsys 2024.5) to --output.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).expect("dir");
    let db = fixture("nsys-2024.5-a100-cloverleaf-cuda.sqlite");
    let script = bin.join("nsys");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nwhile [ $# -gt 0 ]; do case \"$1\" in --output) out=\"$2\"; shift 2;; *) shift;; esac; done\necho called >> '{}'\ncp '{}' \"$out\"\n",
            dir.path().join("calls").display(),
            db.display()
        ),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let cache = dir.path().join("cache");
    let run = || {
        kernelab()
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env_remove("KERNELAB_NSYS")
            .env("KERNELAB_CACHE_DIR", &cache)
            .args(["profile", "--format", "json"])
            .arg(&report)
            .output()
            .expect("runs")
    };
    let first = run();
    let direct = kernelab()
        .args(["profile", "--format", "json"])
        .arg(&db)
        .output()
        .expect("runs");
    let want = kernels(&direct);
    assert_eq!(kernels(&first), want);
    assert!(
        want["kernel_count"].as_u64().is_some_and(|n| n > 0),
        "{want}"
    );
    // The export is cached under the report's SHA-256: a second read does not call nsys.
    let (hash, _) =
        kernelab_model::sha256_reader(std::fs::File::open(&report).expect("report")).expect("hash");
    assert!(cache.join("nsys").join(format!("{hash}.sqlite")).is_file());
    let second = run();
    assert_eq!(kernels(&second), want);
    let calls = std::fs::read_to_string(dir.path().join("calls")).expect("calls");
    assert_eq!(calls.lines().count(), 1, "{calls}");
}

#[test]
fn real_reports_of_nsys_2025_and_2020_are_told_and_the_export_command_given() {
    // Raw reports written by `nsys profile` (tests/fixtures/PROVENANCE.md): no test machine has
    // Nsight Systems, so each is exit 2 with the export command and, where the header names
    // it, the version that wrote it (an older nsys cannot export a newer report).
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("bin-empty");
    std::fs::create_dir(&empty).expect("dir");
    for (name, version) in [
        (
            "nsys-2025.5-jaxtoolbox-cuda_graph_pdl_stream_capture.nsys-rep",
            Some("2025.5.1.121"),
        ),
        ("nsys-2020.5-gpubootcamp-jacobi_report.qdrep", None),
    ] {
        let report = fixture(name);
        let out = profile_without_nsys(&report, &empty);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(out.stdout.is_empty(), "{name}: nothing on stdout");
        let err = String::from_utf8_lossy(&out.stderr);
        let export = format!(
            "nsys export --type sqlite --force-overwrite true --output {} {}",
            report.with_extension("sqlite").display(),
            report.display()
        );
        assert!(err.contains(&export), "{err}");
        match version {
            Some(v) => assert!(
                err.contains(&format!("written by Nsight Systems {v}")),
                "{err}"
            ),
            None => assert!(!err.contains("written by"), "{err}"),
        }
    }
}
