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
        md.contains("| flip | 1 | FAIL | DIFFER | changed |"),
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
