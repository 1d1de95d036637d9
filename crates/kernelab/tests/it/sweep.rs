//! `kernelab sweep` with CPU-only tensor points: the grid, local workers, resume, the matrix,
//! bad input, and the record in a bundle.

use crate::{fixture, kernelab};
use std::path::{Path, PathBuf};

/// Writes a tensor sweep under `dir`: builds `same` (baseline outputs copied) and `flip`
/// (two elements flipped, and a changed code object) × `n` in 1..=points_per_build.
pub fn tensor_sweep(dir: &Path, points_per_build: usize) -> PathBuf {
    let code = fixture("code");
    for n in 1..=points_per_build {
        let d = dir.join(format!("out/n{n}"));
        std::fs::create_dir_all(&d).expect("mkdir");
        for (from, to) in [
            ("a.npy", "base.npy"),
            ("a_copy.npy", "cand_same.npy"),
            ("a_flip.npy", "cand_flip.npy"),
        ] {
            std::fs::copy(fixture("tensor").join(from), d.join(to)).expect("copy");
        }
    }
    let ns: Vec<String> = (1..=points_per_build).map(|n| n.to_string()).collect();
    let cubin = |c: &str| {
        code.join(format!("recompute_w_u_fwd_kernel_{c}.cubin"))
            .display()
            .to_string()
    };
    let text = format!(
        r#"[tensor]
gate = "bitwise"
baseline = "out/n{{n}}/base.npy"
candidate = "out/n{{n}}/cand_{{build}}.npy"

[grid.sizes]
n = [{}]

[[grid.build]]
key = "same"
baseline = "{w4s3}"
candidate = "{w4s3}"

[[grid.build]]
key = "flip"
baseline = "{w4s3}"
candidate = "{w8s2}"
"#,
        ns.join(", "),
        w4s3 = cubin("w4s3"),
        w8s2 = cubin("w8s2"),
    );
    let path = dir.join("sweep.toml");
    std::fs::write(&path, text).expect("write sweep");
    path
}

fn matrix(out: &[u8]) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_slice(out).expect("json");
    assert_eq!(v["kind"], "sweep");
    v
}

#[test]
fn local_sweep_runs_every_point_then_resumes_only_the_missing_ones() {
    let t = tempfile::tempdir().expect("tempdir");
    let sweep = tensor_sweep(t.path(), 3);
    let dir = t.path().join("results");
    let out = kernelab()
        .args(["sweep", "--jobs", "2", "--format", "json", "--dir"])
        .arg(&dir)
        .arg(&sweep)
        .output()
        .expect("run");
    // The flip build fails its bitwise gate: exit 1.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = matrix(&out.stdout);
    assert_eq!(m["total"], 6);
    assert_eq!(m["done"], 6);
    assert_eq!(m["lines"][0], "3 of 6 configs bitwise equal");
    assert_eq!(m["lines"][2], "1 of 2 builds change code (3 of 6 configs)");
    let flip = &m["points"][3];
    assert_eq!(flip["id"], "flip-n=1");
    assert_eq!(flip["verdict"], "fail");
    let detail = flip["gates"][0]["detail"].as_str().expect("detail");
    // The count, and the first element that differs with both values.
    assert!(
        detail.starts_with("2 of 2048 elements differ; first at "),
        "{detail}"
    );
    assert!(detail.contains(" vs "), "{detail}");
    assert!(dir.join("matrix.json").is_file());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ran 6 points"), "{stderr}");

    // Resume: remove one result; only that point runs again, and the matrix is the same.
    std::fs::remove_file(dir.join("points/same-n=2.json")).expect("rm");
    let again = kernelab()
        .args(["sweep", "--format", "json", "--dir"])
        .arg(&dir)
        .arg(&sweep)
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("ran 1 point in") && stderr.contains("5 skipped"),
        "{stderr}"
    );
    let m2 = matrix(&again.stdout);
    assert_eq!(m2["lines"], m["lines"]);

    // Nothing left: nothing runs, and collect renders the same matrix.
    let c = kernelab()
        .args(["sweep", "collect", "--format", "md", "--dir"])
        .arg(&dir)
        .arg(&sweep)
        .output()
        .expect("run");
    let md = String::from_utf8_lossy(&c.stdout);
    assert!(
        md.contains("| flip | 1 | FAIL | 1 of 2 | DIFFER | changed |"),
        "{md}"
    );
    assert!(md.contains("- flip: recompute_w_u_fwd_kernel"), "{md}");
}

#[test]
fn a_point_whose_file_is_missing_is_an_error_rerun_later() {
    let t = tempfile::tempdir().expect("tempdir");
    let sweep = tensor_sweep(t.path(), 1);
    std::fs::remove_file(t.path().join("out/n1/cand_flip.npy")).expect("rm");
    let dir = t.path().join("r");
    let out = kernelab()
        .args(["sweep", "--format", "json", "--dir"])
        .arg(&dir)
        .arg(&sweep)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let m = matrix(&out.stdout);
    assert_eq!(m["errors"], 1);
    let e = m["points"][1]["error"].as_str().expect("error text");
    assert!(e.contains("cand_flip.npy"), "{e}");
    // The file appears: the rerun runs the errored point again (and only it).
    std::fs::copy(
        fixture("tensor/a_flip.npy"),
        t.path().join("out/n1/cand_flip.npy"),
    )
    .expect("cp");
    let out = kernelab()
        .args(["sweep", "--format", "json", "--dir"])
        .arg(&dir)
        .arg(&sweep)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ran 1 point in"));
    assert_eq!(matrix(&out.stdout)["errors"], 0);
}

#[test]
fn a_bad_sweep_file_is_located_and_exits_2() {
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().join("bad.toml");
    std::fs::write(&p, "[tensor]\ngate = \"bitwise\"\nbaseline = \"a\"\ncandidate = \"b\"\n[grid.sizes]\nn = \"x\"\n").expect("write");
    let out = kernelab().arg("sweep").arg(&p).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.toml: line 6"), "{err}");
    // Settings the sweep would drop are refused at their line: a [tensor] sweep is not timed,
    // and neither are [[config]] points.
    for (text, line) in [
        ("timing = true\n[tensor]\ngate = \"bitwise\"\nbaseline = \"a\"\ncandidate = \"b\"\n[grid.sizes]\nn = [1]\n", 1),
        ("timing = true\n[[config]]\nname = \"x\"\nbaseline = \"a\"\ncandidate = \"b\"\n", 2),
    ] {
        std::fs::write(&p, text).expect("write");
        let out = kernelab().arg("sweep").arg(&p).output().expect("run");
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("bad.toml: line {line}")), "{err}");
        assert!(err.contains("timing"), "{err}");
    }
}

#[test]
fn the_sweep_record_reaches_the_report() {
    let t = tempfile::tempdir().expect("tempdir");
    let sweep = tensor_sweep(t.path(), 2);
    let bundle = t.path().join("bundle");
    kernelab()
        .args(["sweep", "--record"])
        .arg(&bundle)
        .arg(&sweep)
        .assert()
        .code(1);
    let out = kernelab()
        .arg("report")
        .arg(&bundle)
        .output()
        .expect("report");
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("2 of 4 configs bitwise equal"), "{md}");
    assert!(md.contains("flip-n=2"), "{md}");
}

/// The golden `check sweep` manifest's three configs, with their files, under `dir`.
pub(crate) fn config_manifest(dir: &Path) -> PathBuf {
    for f in [
        "a.npy",
        "a_copy.npy",
        "a_flip.npy",
        "a_perturbed.npy",
        "a_nonfinite.npy",
    ] {
        std::fs::copy(fixture("tensor").join(f), dir.join(f)).expect("copy");
    }
    let config = |name: &str, cand: &str, extra: &str| {
        format!("[[config]]\nname = \"{name}\"\nbaseline = \"a.npy\"\ncandidate = \"{cand}\"\n{extra}\n")
    };
    let oracle = "oracle = \"a_perturbed.npy\"";
    let text = [
        "[tolerance]\nrtol = 1e-5\natol = 1e-5\n".to_string(),
        config(
            "T64_w4s3",
            "a_copy.npy",
            &format!("repeats = [\"a.npy\"]\n{oracle}"),
        ),
        config(
            "T64_w8s2",
            "a_flip.npy",
            &format!("repeats = [\"a_copy.npy\"]\n{oracle}"),
        ),
        config("T64_nonfinite", "a_nonfinite.npy", ""),
    ]
    .join("\n");
    let path = dir.join("sweep.toml");
    std::fs::write(&path, text).expect("write");
    path
}

/// A point without where and how long it ran (those differ between runs by design).
fn outcome(p: &serde_json::Value) -> serde_json::Value {
    let mut p = p.clone();
    for k in ["worker", "wall_ns"] {
        p.as_object_mut().expect("point").remove(k);
    }
    p
}

/// One engine: `check sweep` (in one process) and `kernelab sweep` (a worker process per
/// point, results kept per point) give the same matrix for the same `[[config]]` manifest.
#[test]
fn check_sweep_and_sweep_are_one_engine() {
    let t = tempfile::tempdir().expect("tmp");
    let m = config_manifest(t.path());
    let check = kernelab()
        .current_dir(t.path())
        .args(["check", "sweep", "sweep.toml", "--format", "json"])
        .output()
        .expect("run");
    assert_eq!(check.status.code(), Some(1), "a gate fails");
    let a = matrix(&check.stdout);
    let dir = t.path().join("results");
    let sweep = kernelab()
        .args(["sweep", "--format", "json", "--dir"])
        .arg(&dir)
        .arg(&m)
        .output()
        .expect("run");
    assert_eq!(sweep.status.code(), Some(1));
    let b = matrix(&sweep.stdout);
    for k in [
        "mode", "total", "passed", "failed", "errors", "lines", "gates", "pass",
    ] {
        assert_eq!(a[k], b[k], "{k}");
    }
    let points = |v: &serde_json::Value| -> Vec<serde_json::Value> {
        v["points"]
            .as_array()
            .expect("points")
            .iter()
            .map(outcome)
            .collect()
    };
    assert_eq!(points(&a), points(&b));
    assert_eq!(
        a["lines"],
        serde_json::json!([
            "1 of 3 configs bitwise equal",
            "1 of 3 configs passed every gate"
        ])
    );
    // `check sweep` kept no results folder, and wrote nothing beside the manifest.
    let mut names: Vec<String> = std::fs::read_dir(t.path())
        .expect("dir")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "a.npy",
            "a_copy.npy",
            "a_flip.npy",
            "a_nonfinite.npy",
            "a_perturbed.npy",
            "results",
            "sweep.toml"
        ]
    );
}

/// A grid of tensor points takes the same gate list as `[[config]]` points: repeats and an
/// oracle as templates; a failed oracle gate fails the point.
#[test]
fn a_tensor_grid_runs_repeats_and_oracle_gates() {
    let t = tempfile::tempdir().expect("tmp");
    config_manifest(t.path());
    let text = r#"[tensor]
gate = "bitwise"
baseline = "a.npy"
candidate = "{cand}.npy"
repeats = ["a_copy.npy"]
oracle = "a_perturbed.npy"
rtol = 1e-5
atol = 1e-5

[grid.values]
cand = ["a_copy", "a_flip"]
"#;
    let m = t.path().join("grid.toml");
    std::fs::write(&m, text).expect("write");
    let out = kernelab()
        .args(["check", "sweep", "--format", "json"])
        .arg(&m)
        .output()
        .expect("run");
    let v = matrix(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{v}");
    let gates: Vec<&str> = v["gates"]
        .as_array()
        .expect("gates")
        .iter()
        .map(|g| g["line"].as_str().expect("line"))
        .collect();
    assert_eq!(
        gates,
        [
            "1 of 2 configs: baseline vs candidate bitwise",
            "1 of 2 configs: repeated candidate runs bit-identical",
            "2 of 2 configs: candidate finite",
            "1 of 2 configs: candidate within tolerance of the oracle",
        ]
    );
    assert_eq!(v["points"][0]["id"], "cand=a_copy");
    assert_eq!(v["points"][0]["verdict"], "pass");
    assert_eq!(v["points"][1]["verdict"], "fail");
}

/// A `check sweep` record of schema version 5 (written by kernelab 0.1.0 at 4d82f8b on the
/// golden manifest, tests/fixtures/bundle_v5_check_sweep/) renders as a `sweep`, with the
/// same points and gates as a fresh `check sweep` of the same files.
#[test]
fn a_version_5_check_sweep_record_renders_as_the_sweep_of_today() {
    let t = tempfile::tempdir().expect("tmp");
    let bundle = t.path().join("bundle");
    std::fs::create_dir(&bundle).expect("mkdir");
    std::fs::copy(
        fixture("bundle_v5_check_sweep/0001-check_sweep.json"),
        bundle.join("0001-check_sweep.json"),
    )
    .expect("copy");
    let out = kernelab()
        .args(["report", "--format", "md"])
        .arg(&bundle)
        .output()
        .expect("run");
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for needle in [
        "1 of 3 configs bitwise equal",
        "1 of 3 configs passed every gate",
        "2 of 3 configs: candidate finite",
        "1 of 2 configs: candidate within tolerance of the oracle",
        "T64_nonfinite",
    ] {
        assert!(md.contains(needle), "missing {needle:?}:\n{md}");
    }
    // The record's upgraded body against a fresh run of the same manifest.
    let text = std::fs::read_to_string(bundle.join("0001-check_sweep.json")).expect("read");
    let rec: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut kind = rec["kind"].as_str().expect("kind").to_string();
    let mut old = rec["result"].clone();
    kernelab_report::upgrade::upgrade(&mut kind, 5, &mut old).expect("upgrades");
    assert_eq!(kind, "sweep");
    let d = t.path().join("fresh");
    std::fs::create_dir(&d).expect("mkdir");
    config_manifest(&d);
    let fresh = kernelab()
        .current_dir(&d)
        .args(["check", "sweep", "sweep.toml", "--format", "json"])
        .output()
        .expect("run");
    let new = matrix(&fresh.stdout);
    for k in [
        "total",
        "passed",
        "failed",
        "errors",
        "bitwise_equal",
        "lines",
        "gates",
    ] {
        assert_eq!(old[k], new[k], "{k}");
    }
    let verdicts = |v: &serde_json::Value| -> Vec<(String, String, usize)> {
        v["points"]
            .as_array()
            .expect("points")
            .iter()
            .map(|p| {
                (
                    p["id"].as_str().unwrap_or_default().to_string(),
                    p["verdict"].as_str().unwrap_or_default().to_string(),
                    p["gates"].as_array().map_or(0, Vec::len),
                )
            })
            .collect()
    };
    assert_eq!(verdicts(&old), verdicts(&new));
}

/// Version 5 did not require distinct config names: a record with a repeated name upgrades
/// to distinct point ids (`name#2`), every config counted and none left pending.
#[test]
fn a_version_5_check_sweep_with_a_repeated_name_keeps_every_config() {
    let text = std::fs::read_to_string(fixture("bundle_v5_check_sweep/0001-check_sweep.json"))
        .expect("read");
    let rec: serde_json::Value = serde_json::from_str(&text).expect("json");
    let mut result = rec["result"].clone();
    let first = result["configs"][0]["name"].clone();
    result["configs"][1]["name"] = first.clone();
    let mut kind = "check_sweep".to_string();
    kernelab_report::upgrade::upgrade(&mut kind, 5, &mut result).expect("upgrades");
    let first = first.as_str().expect("name");
    let ids: Vec<&str> = result["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter_map(|p| p["id"].as_str())
        .collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    assert_eq!(ids[0], first);
    assert_eq!(ids[1], format!("{first}#2"));
    assert_eq!(result["total"], 3);
    assert_eq!(result["pending"], serde_json::json!([]));
}

/// A config whose name starts with `.` gets an id that is not a hidden file name, so its
/// result is read back: the sweep completes instead of leaving the point pending.
#[test]
fn a_config_named_with_a_leading_dot_is_read_back() {
    let t = tempfile::tempdir().expect("tmp");
    for f in ["a.npy", "a_copy.npy"] {
        std::fs::copy(fixture("tensor").join(f), t.path().join(f)).expect("copy");
    }
    let path = t.path().join("sweep.toml");
    std::fs::write(
        &path,
        "[[config]]\nname = \".hidden\"\nbaseline = \"a.npy\"\ncandidate = \"a_copy.npy\"\n",
    )
    .expect("write");
    let out = kernelab()
        .args(["sweep", "--format", "json", "--dir"])
        .arg(t.path().join("results"))
        .arg(&path)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let m = matrix(&out.stdout);
    assert_eq!(m["points"][0]["id"], "_hidden");
    assert_eq!(m["done"], 1);
    assert_eq!(m["pending"], serde_json::json!([]));
}

/// A sweep with a point that could not run and another that failed a gate is exit 2: the
/// matrix is incomplete, whatever the others say.
#[test]
fn an_error_beside_a_failure_is_exit_2() {
    let t = tempfile::tempdir().expect("tempdir");
    let sweep = tensor_sweep(t.path(), 2);
    std::fs::remove_file(t.path().join("out/n1/cand_flip.npy")).expect("rm");
    let out = kernelab()
        .args(["sweep", "--format", "json", "--dir"])
        .arg(t.path().join("r"))
        .arg(&sweep)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let m = matrix(&out.stdout);
    assert_eq!(
        (m["errors"].as_u64(), m["failed"].as_u64()),
        (Some(1), Some(1))
    );
}
