//! `kernelab impact` on the real H200 fixtures: the profile of the w4s3 request and the
//! `kernel run` of w4s3 → w8s2, with the prediction recomputed here from the stored figures.

use super::{fixture, json_of, kernelab};
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().expect("number")
}

#[test]
fn impact_of_the_h200_pair_matches_share_times_ratio() {
    let dir = tempfile::tempdir().expect("tmp");
    let trace = fixture("h200_pair/gdn_w4s3_run1.json.gz");
    let profile = json_of("profile", &[&trace]);
    let profile_path = dir.path().join("profile.json");
    std::fs::write(&profile_path, profile.to_string()).expect("write");
    let run_path = fixture("h200_kernel/recompute_w4s3_vs_w8s2.json");
    let run: Value =
        serde_json::from_slice(&std::fs::read(&run_path).expect("read")).expect("json");
    let cmp = json_of(
        "compare",
        &[
            "--base".into(),
            fixture("h200_pair/gdn_w4s3_run1.json.gz"),
            fixture("h200_pair/gdn_w4s3_run2.json.gz"),
            fixture("h200_pair/gdn_w4s3_run3.json.gz"),
            "--cand".into(),
            fixture("h200_pair/gdn_w8s2_run1.json.gz"),
            fixture("h200_pair/gdn_w8s2_run2.json.gz"),
            fixture("h200_pair/gdn_w8s2_run3.json.gz"),
        ],
    );
    let cmp_path = dir.path().join("compare.json");
    std::fs::write(&cmp_path, cmp.to_string()).expect("write");

    let doc = json_of(
        "impact",
        &[
            "--profile".as_ref(),
            profile_path.as_os_str(),
            "--kernel-run".as_ref(),
            run_path.as_os_str(),
            "--measured".as_ref(),
            cmp_path.as_os_str(),
        ],
    );
    assert_eq!(doc["kind"], "impact");
    assert_eq!(doc["family"], "recompute_w_u_fwd_kernel");
    // Independently: the row's total over the summary's kernel time, times (ratio − 1).
    let row = profile["kernels"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["name"] == "recompute_w_u_fwd_kernel")
        .expect("row");
    let share = f(&row["total_ns"]) / f(&profile["summary"]["kernel_time_ns"]);
    assert!((share - 0.16897).abs() < 1e-5, "{share}");
    assert!((f(&doc["share"]) - share).abs() < 1e-12);
    let ratio = f(&run["analysis"]["ratio"]);
    let (lo, hi) = (f(&run["analysis"]["ci"][0]), f(&run["analysis"]["ci"][1]));
    let predicted = share * (ratio - 1.0);
    assert!((predicted - 0.02764).abs() < 1e-5, "{predicted}");
    assert!((f(&doc["request"]["value"]) - predicted).abs() < 1e-12);
    assert!((f(&doc["request"]["interval"]["low"]) - share * (lo - 1.0)).abs() < 1e-12);
    assert!((f(&doc["request"]["interval"]["high"]) - share * (hi - 1.0)).abs() < 1e-12);
    // The same nanoseconds over the trace wall bound the wall time.
    let wall = f(&profile["summary"]["wall_ns"]);
    let wall_bound = f(&row["total_ns"]) * (ratio - 1.0) / wall;
    assert!((f(&doc["wall_bound"]["value"]) - wall_bound).abs() < 1e-12);
    assert!((wall_bound - 0.01366).abs() < 1e-4, "{wall_bound}");
    // The measured request kernel time (medians over three runs a side) and the family's
    // change agree with the prediction.
    let measured = doc["measured"].as_array().expect("measured");
    assert_eq!(measured.len(), 2);
    let request = &measured[1];
    assert_eq!(request["figure"], "request kernel time");
    let kt = &cmp["summary"][0];
    assert_eq!(kt["figure"], "kernel_time_ns");
    assert!(
        (f(&request["change"]["value"]) - (f(&kt["candidate"]) / f(&kt["baseline"]) - 1.0)).abs()
            < 1e-12
    );
    assert!((f(&request["change"]["value"]) - 0.02414).abs() < 1e-4);
    assert_eq!(request["consistent"], true);
    assert_eq!(measured[0]["figure"], "family kernel time");
    assert_eq!(measured[0]["consistent"], true);

    // The terminal table says the same, with the sign convention.
    let out = kernelab()
        .args(["impact", "--profile"])
        .arg(&profile_path)
        .arg("--kernel-run")
        .arg(&run_path)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("+2.76% [+2.70%, +2.84%]"), "{text}");
    assert!(text.contains("at most +1.37%"), "{text}");
}

#[test]
fn impact_names_what_is_missing() {
    let dir = tempfile::tempdir().expect("tmp");
    let profile = json_of("profile", &[fixture("h200_pair/gdn_w4s3_run1.json.gz")]);
    let profile_path = dir.path().join("profile.json");
    std::fs::write(&profile_path, profile.to_string()).expect("write");
    // A kernel that is not in the request.
    let out = kernelab()
        .args(["impact", "--profile"])
        .arg(&profile_path)
        .arg("--kernel-run")
        .arg(fixture("h200_kernel/copy_scalar_vs_vec4.json"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("family `copy_scalar` is not among the profile's 6 rows"),
        "{err}"
    );
    // --family picks the row.
    let out = kernelab()
        .args(["impact", "--family", "chunk_fwd_kernel_o", "--profile"])
        .arg(&profile_path)
        .arg("--kernel-run")
        .arg(fixture("h200_kernel/copy_scalar_vs_vec4.json"))
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("27.26% share"));
    // The two inputs swapped.
    let out = kernelab()
        .args(["impact", "--kernel-run"])
        .arg(&profile_path)
        .arg("--profile")
        .arg(fixture("h200_kernel/copy_scalar_vs_vec4.json"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected a `profile` record"));
}
