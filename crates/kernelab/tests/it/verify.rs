//! `kernelab report verify`: a bundle of CPU-only records (a profile, a tensor gate, an A/B
//! analysis of recorded pairs and an A/B run of two commands) re-run on this machine.

use super::{fixture, kernelab, root};
use serde_json::Value;
use std::path::Path;

fn record(bundle: &Path, label: &str, args: &[&str]) {
    let out = kernelab()
        .current_dir(root())
        .args(args)
        .arg("--record")
        .arg(bundle)
        .args(["--label", label, "--format", "json"])
        .output()
        .expect("runs");
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn verify(bundle: &Path) -> (Option<i32>, Value) {
    let out = kernelab()
        .args(["report", "verify"])
        .arg(bundle)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), v)
}

/// The finding and detail of each record, by label.
fn findings(v: &Value) -> Vec<(String, String, String)> {
    v["records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap_or("").to_string(),
                r["finding"].as_str().unwrap_or("").to_string(),
                r["detail"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn a_bundle_of_cpu_records_is_reproduced_and_a_tampered_record_moved() {
    let dir = tempfile::tempdir().expect("tmp");
    let b = dir.path().join("bundle");
    let trace = root().join("examples/kineto_qwen3next_4l_prompt8192_baseline.json.gz");
    let (wu, wu2) = (
        fixture("tensor/wu.npz"),
        fixture("tensor/wu_compressed.npz"),
    );
    let pairs = fixture("h200_ab/inproc_w4s3_w8s2.csv");
    let s = |p: &Path| p.display().to_string();
    record(&b, "request", &["profile", &s(&trace)]);
    record(&b, "gate", &["check", "bitwise", &s(&wu), &s(&wu2)]);
    record(
        &b,
        "pairs",
        &["ab", "analyze", &s(&pairs), "--metric", "median_us"],
    );
    // Two commands whose run times differ by far more than a loaded machine's noise.
    let ab = [
        "ab",
        "--baseline",
        "sleep 0.1",
        "--candidate",
        "sleep 0.3",
        "--no-aa",
        "--warmup",
        "1",
        "--fixed",
        "--min-pairs",
        "6",
        "--max-pairs",
        "6",
    ];
    record(&b, "sleeps", &ab);
    let (code, v) = verify(&b);
    assert_eq!(v["kind"], "report_verify");
    let f = findings(&v);
    assert_eq!(f.len(), 4, "{v}");
    for (label, finding, detail) in &f[..3] {
        assert_eq!(
            (finding.as_str(), detail.as_str()),
            (
                "reproduced",
                if label == "pairs" {
                    "SLOWER 1.0763 [1.0712, 1.0814] → SLOWER 1.0763 [1.0712, 1.0814] (same verdict, intervals overlap)"
                } else {
                    "the same document"
                }
            ),
            "{label}"
        );
    }
    // The run of two commands is measured again: the same verdict, whatever the noise.
    let (_, finding, detail) = &f[3];
    assert_ne!(finding, "not_rerunnable", "{detail}");
    assert!(
        detail.starts_with("SLOWER ") && detail.contains(" → SLOWER "),
        "{detail}"
    );
    if finding == "reproduced" {
        assert_eq!(code, Some(0));
    }

    // A tampered record (a gate's count of differing elements, a recorded ratio) moved.
    let edit = |file: &str, f: &dyn Fn(&mut Value)| {
        let p = b.join(file);
        let mut r: Value =
            serde_json::from_slice(&std::fs::read(&p).expect("record")).expect("JSON");
        f(&mut r);
        std::fs::write(&p, serde_json::to_vec(&r).expect("JSON")).expect("write");
    };
    edit("0002-check_bitwise.json", &|r| {
        r["result"]["tensors"][0]["result"]["differing"] = 7.into();
    });
    let (code, v) = verify(&b);
    assert_eq!(code, Some(1), "{v}");
    let (_, finding, detail) = &findings(&v)[1];
    assert_eq!(finding, "moved");
    assert!(
        detail.starts_with("differs at /tensors/0/result/differing: 7 → 0"),
        "{detail}"
    );

    // An input that changed since it was recorded: not re-run, and said why.
    let copy = dir.path().join("pairs.csv");
    std::fs::copy(&pairs, &copy).expect("copy");
    let b2 = dir.path().join("bundle2");
    record(
        &b2,
        "pairs",
        &["ab", "analyze", &s(&copy), "--metric", "median_us"],
    );
    std::fs::write(&copy, "a,b\n1,2\n").expect("change the input");
    let (code, v) = verify(&b2);
    assert_eq!(code, Some(0), "{v}");
    let (_, finding, detail) = &findings(&v)[0];
    assert_eq!(finding, "not_rerunnable");
    assert!(
        detail.ends_with("pairs.csv changed since it was recorded"),
        "{detail}"
    );
}

#[test]
fn a_rerun_under_other_clocks_shows_both_fingerprints_and_names_the_field() {
    let dir = tempfile::tempdir().expect("tmp");
    let b = dir.path().join("bundle");
    let bin = dir.path().join("bin");
    let path = |bin: &Path| {
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    };
    // Recorded at 1980 MHz…
    super::gate::fake_nvidia_smi(&bin, 1_000_000);
    let out = kernelab()
        .args([
            "ab",
            "--baseline",
            "sleep 0.01",
            "--candidate",
            "sleep 0.01",
        ])
        .args(["--no-aa", "--warmup", "0", "--fixed", "--min-pairs", "4"])
        .args(["--max-pairs", "4", "--threshold", "50%", "--format", "json"])
        .args(["--label", "sleeps", "--record"])
        .arg(&b)
        .env("PATH", path(&bin))
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // …re-run at 1410 MHz.
    std::fs::remove_dir_all(&bin).expect("rm");
    super::gate::fake_nvidia_smi(&bin, 0);
    let out = kernelab()
        .args(["report", "verify"])
        .arg(&b)
        .args(["--format", "json"])
        .env("PATH", path(&bin))
        .output()
        .expect("runs");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)));
    let r = &v["records"][0];
    assert_eq!(
        r["recorded_conditions"]["gpus"][0]["sm_clock_mhz"], "1980",
        "{v}"
    );
    assert_eq!(
        r["rerun_conditions"]["gpus"][0]["sm_clock_mhz"], "1410",
        "{v}"
    );
    let env: Vec<&str> = r["environment"]
        .as_array()
        .expect("environment")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(env.contains(&"gpu 0 sm_clock_mhz: 1980 → 1410"), "{env:?}");
    assert!(env.contains(&"gpu 0 clocks_locked: no → yes"), "{env:?}");
    // The table shows both fingerprints.
    let out = kernelab()
        .args(["report", "verify"])
        .arg(&b)
        .env("PATH", path(&bin))
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("0001-ab.json recorded under: nvidia-smi, CUDA 13.0; gpu 0 NVIDIA H100")
            && text.contains("SM 1980 MHz")
            && text.contains("0001-ab.json re-run under: nvidia-smi, CUDA 13.0; gpu 0")
            && text.contains("SM 1410 MHz"),
        "{text}"
    );
}

#[test]
fn a_verification_is_a_record_that_renders_in_the_report_and_audits_clean() {
    // `report verify --record DIR` records its document like every evidence command: the
    // report renders it (its headline and per-record table), and the report's own audit
    // passes with its counts as figures.
    let dir = tempfile::tempdir().expect("tmp");
    let b = dir.path().join("bundle");
    let (wu, wu2) = (
        fixture("tensor/wu.npz"),
        fixture("tensor/wu_compressed.npz"),
    );
    let pairs = fixture("h200_ab/inproc_w4s3_w8s2.csv");
    let s = |p: &Path| p.display().to_string();
    record(&b, "gate", &["check", "bitwise", &s(&wu), &s(&wu2)]);
    record(
        &b,
        "pairs",
        &["ab", "analyze", &s(&pairs), "--metric", "median_us"],
    );
    let evidence = dir.path().join("evidence");
    let out = kernelab()
        .args(["report", "verify"])
        .arg(&b)
        .arg("--record")
        .arg(&evidence)
        .args(["--label", "re-measured"])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<String> = std::fs::read_dir(&evidence)
        .expect("the record's bundle")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, ["0001-report_verify.json"]);
    let out = kernelab()
        .arg("report")
        .arg(&evidence)
        .args(["--format", "md"])
        .output()
        .expect("runs");
    let md = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(out.status.success(), "{md}");
    assert!(
        md.contains("2 of 2 records reproduced, 0 moved, 0 not re-runnable here"),
        "{md}"
    );
    assert!(md.contains("| re-measured | report_verify |"), "{md}");
    let note = dir.path().join("note.md");
    std::fs::write(&note, &md).expect("note");
    let check = kernelab()
        .args(["report", "check"])
        .arg(&note)
        .arg("--bundle")
        .arg(&evidence)
        .output()
        .expect("runs");
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    // A planted count is caught.
    std::fs::write(
        &note,
        md.replacen("2 of 2 records reproduced", "1 of 2 records reproduced", 1),
    )
    .expect("note");
    let check = kernelab()
        .args(["report", "check"])
        .arg(&note)
        .arg("--bundle")
        .arg(&evidence)
        .output()
        .expect("runs");
    assert_eq!(check.status.code(), Some(1));
}
