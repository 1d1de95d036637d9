//! `kernelab kernel run`: spec resolution against the real Triton cubins and metadata, and the
//! errors a machine without a GPU gives. (The launches themselves ran on an H200; see
//! docs/benchmarks.md.)

use crate::{fixture, kernelab};

#[test]
fn dry_run_resolves_triton_builds_from_their_metadata() {
    let out = kernelab()
        .args(["kernel", "run", "--dry-run", "--format", "json"])
        .arg(fixture("kernel/recompute_w4s3_vs_w4s4.toml"))
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["kind"], "kernel_dry_run");
    let b = &v["builds"];
    assert_eq!(b[0]["block"], serde_json::json!([128, 1, 1]));
    assert_eq!(b[0]["shared"], 32768);
    assert_eq!(b[1]["shared"], 40960, "w4s4 metadata asks for 40 KiB");
    assert_eq!(
        b[0]["params"],
        serde_json::json!([
            "k",
            "v",
            "beta",
            "w",
            "u",
            "A",
            "g",
            "4-byte scalar",
            "null",
            "null"
        ])
    );
    // k is [1, 8192, 32, 128] bf16 = 64 MiB.
    assert_eq!(v["buffers"][0]["bytes"], 8192 * 32 * 128 * 2);
}

#[test]
fn dry_run_markdown_lists_both_builds() {
    let out = kernelab()
        .args(["kernel", "run", "--dry-run", "--format", "md"])
        .arg(fixture("kernel/copy_scalar_vs_vec4.toml"))
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("| baseline") && text.contains("copy_scalar"),
        "{text}"
    );
    assert!(
        text.contains("copy_vec4") && text.contains("[65536, 1, 1]"),
        "{text}"
    );
}

#[test]
fn bad_spec_names_the_file_and_the_problem() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = dir.path().join("bad.toml");
    std::fs::write(&p, "[baseline]\ncode = \"a\"\n[candidate]\ncode = \"b\"\n[[arg]]\nname = \"x\"\ntype = \"f32\"\nshape = [\"M\"]\n").expect("write");
    let out = kernelab()
        .args(["kernel", "run"])
        .arg(&p)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.toml") && err.contains("unknown size `M`"),
        "{err}"
    );
}

#[test]
fn without_a_cuda_driver_the_error_says_so() {
    let has_cuda = [
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "/usr/lib64/libcuda.so.1",
        "/usr/local/nvidia/lib64/libcuda.so.1",
    ]
    .iter()
    .any(|p| std::path::Path::new(p).exists());
    if has_cuda {
        kernelab_testkit::skip(
            "no-cuda-driver",
            "this machine has a CUDA driver; the no-driver error cannot be shown here",
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let samples = dir.path().join("s.jsonl");
    let out = kernelab()
        .args(["kernel", "run"])
        .arg(fixture("kernel/copy_scalar_vs_vec4.toml"))
        .arg("--samples")
        .arg(&samples)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no CUDA driver"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        !samples.exists(),
        "no samples file is created when no GPU opens"
    );
}

#[test]
fn a_controls_ledger_that_is_not_one_is_refused_before_the_gpu_opens() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ledger = dir.path().join("controls.jsonl");
    std::fs::write(&ledger, "{\"key\": \"k\", \"change\": 0.01}\n").expect("write");
    let out = kernelab()
        .args(["kernel", "run"])
        .arg(fixture("kernel/copy_scalar_vs_vec4.toml"))
        .arg("--controls")
        .arg(&ledger)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("controls.jsonl: line 1: expected a control of kernelab kernel run"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&ledger).expect("kept"),
        "{\"key\": \"k\", \"change\": 0.01}\n",
        "the ledger is left as it was"
    );
}

#[test]
fn without_a_hip_runtime_the_error_says_so() {
    if std::path::Path::new("/opt/rocm/lib/libamdhip64.so").exists() {
        kernelab_testkit::skip("no-hip-runtime", "this machine has a HIP runtime");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = std::fs::read_to_string(fixture("kernel/copy_scalar_vs_vec4.toml"))
        .expect("fixture")
        .replace("../code/", &format!("{}/", fixture("code").display()));
    let p = dir.path().join("hip.toml");
    std::fs::write(&p, format!("backend = \"hip\"\n{spec}")).expect("write");
    let out = kernelab()
        .args(["kernel", "run"])
        .arg(&p)
        .arg("--samples")
        .arg(dir.path().join("s.jsonl"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no HIP runtime"), "{err}");
}

fn h200(name: &str) -> serde_json::Value {
    let p = fixture(&format!("h200_kernel/{name}.json"));
    serde_json::from_slice(&std::fs::read(&p).expect("H200 record")).expect("JSON")
}

/// The records `bench/h200/run_kernel.sh` wrote on an H200: the Triton configs agree bitwise,
/// the A/A pair is SAME, and the verdicts agree with an independent look at the rounds.
#[test]
fn h200_records_hold_the_expected_results() {
    for name in [
        "recompute_w4s3_aa",
        "recompute_w4s3_vs_w4s4",
        "recompute_w4s3_vs_w8s2",
        "copy_scalar_vs_vec4",
    ] {
        let v = h200(name);
        assert_eq!(v["kind"], "kernel_run");
        assert_eq!(v["pass"], true, "{name}");
        let gates = v["gates"].as_array().expect("gates");
        assert_eq!(gates.len(), 6, "{name}");
        for g in gates {
            assert!(
                g["detail"].as_str().expect("detail").starts_with("0 of "),
                "{name}: {g}"
            );
        }
        // Independent check: the median of per-round log ratios lies inside the reported CI.
        let mut d: Vec<f64> = v["rounds"]
            .as_array()
            .expect("rounds")
            .iter()
            .map(|r| {
                (r["candidate_us"].as_f64().expect("b") / r["baseline_us"].as_f64().expect("a"))
                    .ln()
            })
            .collect();
        d.sort_by(f64::total_cmp);
        let med = d[d.len() / 2].exp();
        let ci = &v["analysis"]["ci"];
        let (lo, hi) = (ci[0].as_f64().expect("lo"), ci[1].as_f64().expect("hi"));
        assert!(
            lo - 0.002 <= med && med <= hi + 0.002,
            "{name}: median ratio {med} vs CI [{lo}, {hi}]"
        );
    }
    assert_eq!(h200("recompute_w4s3_aa")["analysis"]["verdict"], "SAME");
    assert_eq!(
        h200("recompute_w4s3_vs_w8s2")["analysis"]["verdict"],
        "SLOWER"
    );
    let copy = h200("copy_scalar_vs_vec4");
    assert_eq!(copy["analysis"]["verdict"], "FASTER");
    // copy_vec4 moves 2 × 256 MiB per launch; at its median time that is close to the
    // H200's measured 4.1 TB/s copy ceiling (tests/fixtures ceilings).
    let mut b: Vec<f64> = copy["rounds"]
        .as_array()
        .expect("rounds")
        .iter()
        .map(|r| r["candidate_us"].as_f64().expect("us"))
        .collect();
    b.sort_by(f64::total_cmp);
    let tbs = 2.0 * 268_435_456.0 / (b[b.len() / 2] * 1e-6) / 1e12;
    assert!((3.5..4.3).contains(&tbs), "copy_vec4 at {tbs} TB/s");
}

/// `kernel run --python` hands the command line to the Python module: the interpreter
/// `KERNELAB_PYTHON` names gets `-m kernelab` and every argument, and its exit code (0, 1 a
/// gate failed, 2) is the command's; an interpreter that cannot start is exit 2 naming it.
#[cfg(unix)]
#[test]
fn python_callables_run_through_the_python_module() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("args.txt");
    let fake = dir.path().join("python");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\n[ \"$1\" = -c ] && exit 0\necho \"$@\" > {}\nexit 1\n",
            log.display()
        ),
    )
    .expect("write");
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let args = [
        "--label", "x", "kernel", "run", "--python", "m:a", "m:b", "--inputs", "m:make",
    ];
    let out = kernelab()
        .env("KERNELAB_PYTHON", &fake)
        .args(args)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1), "a failed gate passes through");
    let seen = std::fs::read_to_string(&log).expect("the interpreter ran");
    assert_eq!(seen.trim(), format!("-m kernelab {}", args.join(" ")));
    let out = kernelab()
        .env("KERNELAB_PYTHON", dir.path().join("no-such-python"))
        .args(args)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("KERNELAB_PYTHON") && err.contains("no-such-python"),
        "{err}"
    );
}
