//! `kernelab compare` on a real baseline/candidate pair made on the H200 (fla's
//! chunk_gated_delta_rule with recompute_w_u_fwd_kernel forced to another config; see
//! bench/h200/), checked against the oracle's per-run totals.

use super::{fixture, kernelab, root};
use serde_json::Value;

fn compare_json(args: &[String]) -> Value {
    super::json_of("compare", args)
}

fn runs(config: &str) -> Vec<String> {
    (1..=3)
        .map(|i| {
            fixture(&format!("h200_pair/gdn_{config}_run{i}.json.gz"))
                .display()
                .to_string()
        })
        .collect()
}

/// Median over the three runs of one kernel's total, from the oracle files.
fn oracle_median(config: &str, kernel: &str) -> f64 {
    let mut v: Vec<f64> = (1..=3)
        .map(|i| {
            let p = root().join(format!(
                "tests/expected/h200_pair/gdn_{config}_run{i}.json.gz.oracle.json"
            ));
            let doc: Value =
                serde_json::from_str(&std::fs::read_to_string(p).expect("oracle")).expect("json");
            doc["kernels"][kernel]["total_ns"].as_f64().expect("total")
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[1]
}

fn family<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["families"]
        .as_array()
        .expect("families")
        .iter()
        .find(|f| f["family"] == name)
        .unwrap_or_else(|| panic!("{name}"))
}

#[test]
fn the_changed_kernel_stands_out_and_the_rest_is_within_noise() {
    let mut args = vec!["--base".to_string()];
    args.extend(runs("w4s3"));
    args.push("--cand".into());
    args.extend(runs("w8s2"));
    let doc = compare_json(&args);
    assert_eq!(
        (
            doc["baseline_runs"].as_u64(),
            doc["candidate_runs"].as_u64()
        ),
        (Some(3), Some(3))
    );
    let r = family(&doc, "recompute_w_u_fwd_kernel");
    let (b, c) = (
        oracle_median("w4s3", "recompute_w_u_fwd_kernel"),
        oracle_median("w8s2", "recompute_w_u_fwd_kernel"),
    );
    assert_eq!(r["baseline"]["total_ns"].as_f64(), Some(b));
    assert_eq!(r["candidate"]["total_ns"].as_f64(), Some(c));
    assert_eq!(r["delta_ns"].as_f64(), Some(c - b));
    // One convention (docs/json.md): ratio = candidate / baseline, change = ratio − 1.
    let ratio = r["ratio"].as_f64().expect("ratio");
    assert!((ratio - c / b).abs() < 1e-12, "{ratio}");
    assert!((r["change"].as_f64().expect("change") - (c / b - 1.0)).abs() < 1e-12);
    assert!(
        ratio > 1.0,
        "the candidate takes longer, so its ratio is above 1"
    );
    assert_eq!(r["status"], "slower");
    for f in doc["families"].as_array().expect("families") {
        if f["family"] != "recompute_w_u_fwd_kernel" {
            assert_eq!(f["status"], "within_noise", "{}", f["family"]);
        }
    }
}

#[test]
fn controls_set_the_noise_floor() {
    let mut args = vec!["--base".to_string()];
    args.extend(runs("w4s3"));
    args.push("--cand".into());
    args.extend(runs("w2s4"));
    args.extend([
        "--control".into(),
        "chunk_fwd_kernel_o".into(),
        "chunk_gated_delta_rule_fwd_kernel_h_blockdim64".into(),
    ]);
    let doc = compare_json(&args);
    let floor = doc["control_noise"].as_f64().expect("floor");
    let controls: Vec<f64> = [
        "chunk_fwd_kernel_o",
        "chunk_gated_delta_rule_fwd_kernel_h_blockdim64",
    ]
    .iter()
    .map(|f| family(&doc, f)["change"].as_f64().expect("change").abs())
    .collect();
    assert_eq!(floor, controls.iter().copied().fold(0.0, f64::max));
    assert_eq!(family(&doc, "recompute_w_u_fwd_kernel")["status"], "slower");
    assert_eq!(family(&doc, "chunk_fwd_kernel_o")["control"], true);
}

#[test]
fn one_run_each_does_not_judge_noise() {
    let doc = compare_json(&[runs("w4s3")[0].clone(), runs("w8s2")[0].clone()]);
    assert_eq!(
        family(&doc, "recompute_w_u_fwd_kernel")["status"],
        "changed"
    );
    assert!(doc["notes"][0]
        .as_str()
        .expect("note")
        .contains("noise is unknown"));
}

#[test]
fn a_trace_against_itself_is_the_same() {
    let f = fixture("kineto_qwen3next_4l_prompt8192_baseline.json.gz")
        .display()
        .to_string();
    let doc = compare_json(&[f.clone(), f, "--top".into(), "100".into()]);
    for fam in doc["families"].as_array().expect("families") {
        assert_eq!(fam["status"], "same");
        assert_eq!(fam["delta_ns"], 0.0);
    }
    assert!(doc["only_baseline_names"]
        .as_array()
        .expect("names")
        .is_empty());
}

#[test]
fn formats_may_differ_between_sides() {
    let dir = tempfile::tempdir().expect("tmp");
    let csv = dir.path().join("report_cuda_gpu_kern_sum.csv");
    std::fs::write(
        &csv,
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n100.0,88573480,5,17714696.0,17713960.0,17700808,17733416,12992.1,\"saxpy(double *, double *, double *, double, int)\"\n",
    )
    .expect("write");
    let sqlite = fixture("nsys-2022.2-a100-saxpy-mpi-cuda.sqlite")
        .display()
        .to_string();
    let doc = compare_json(&[sqlite, csv.display().to_string()]);
    assert_eq!(family(&doc, "saxpy")["status"], "same");
    // The stats file has no timeline: busy time is unavailable on that side only.
    let busy = doc["summary"]
        .as_array()
        .expect("summary")
        .iter()
        .find(|f| f["figure"] == "busy_ns")
        .cloned()
        .expect("busy");
    assert!(busy["baseline"].is_number() && busy["candidate"].is_null());
}

#[test]
fn families_on_one_side_only() {
    let a = fixture("kineto_gdn_chunk_T8192.json.gz")
        .display()
        .to_string();
    let b = fixture("kineto-a100-cuda12-triton_example.json.gz")
        .display()
        .to_string();
    let doc = compare_json(&[a, b]);
    assert_eq!(
        family(&doc, "triton_poi_fused_add_cos_sin_0")["status"],
        "only_candidate"
    );
    assert_eq!(
        family(&doc, "recompute_w_u_fwd_kernel")["status"],
        "only_baseline"
    );
    assert!(doc["only_candidate_names"]
        .as_array()
        .expect("names")
        .iter()
        .any(|n| n == "triton_poi_fused_add_cos_sin_0"));
}

#[test]
fn usage_errors_exit_2() {
    kernelab()
        .args(["compare"])
        .arg(fixture("kineto_gdn_chunk_T8192.json.gz"))
        .assert()
        .code(2);
    kernelab()
        .args(["compare", "--base"])
        .arg(fixture("kineto_gdn_chunk_T8192.json.gz"))
        .assert()
        .code(2);
}

/// Issue 26 item 5: `compare --format json` holds every family; an explicit `--top` cuts it.
#[test]
fn issue26_compare_json_holds_every_family() {
    let t = super::fixture("kineto_qwen3next_4l_prompt8192_baseline.json.gz");
    let all = super::json_of("compare", &[&t, &t]);
    let families = all["families"].as_array().expect("families");
    // The profile of the same trace has 44 families (see the profile test).
    assert_eq!(families.len(), 44);
    assert!(all["other"].is_null());
    let cut = super::json_of(
        "compare",
        &[t.as_os_str(), t.as_os_str(), "--top".as_ref(), "3".as_ref()],
    );
    assert_eq!(cut["families"].as_array().map(Vec::len), Some(3));
    assert_eq!(cut["other"]["family"], "other (41 rows)");
}

/// A real before/after pair of Nsight Systems 2026.2 exports (schema 3.25, two H100s;
/// GindaChen/nsys-ai, MIT): `compare`'s whole-trace figures on each side are the oracle's
/// independent SQL reading of that side (`tests/oracle/profile_oracle.py`, which also checks
/// NVIDIA's `cuda_gpu_kern_sum` query).
#[test]
fn the_nsys_2026_pair_compares_as_the_sql_reading_says() {
    let side = |name: &str| {
        let path = fixture(&format!("nsys-2026.2-h100x2-mfu_{name}.sqlite"));
        let oracle = root().join(format!(
            "tests/expected/nsys-2026.2-h100x2-mfu_{name}.sqlite.oracle.json"
        ));
        let oracle: Value =
            serde_json::from_str(&std::fs::read_to_string(oracle).expect("oracle")).expect("json");
        (path.to_str().expect("utf-8").to_string(), oracle)
    };
    let ((before, b), (after, a)) = (side("before"), side("after"));
    let doc = compare_json(&[before, after]);
    let figures = doc["summary"].as_array().expect("summary figures");
    for key in [
        "kernel_time_ns",
        "busy_ns",
        "wall_ns",
        "gap_ns",
        "kernel_count",
    ] {
        let f = figures
            .iter()
            .find(|f| f["figure"] == key)
            .unwrap_or_else(|| panic!("{key} in {figures:?}"));
        assert_eq!(f["baseline"].as_f64(), b["summary"][key].as_f64(), "{key}");
        assert_eq!(f["candidate"].as_f64(), a["summary"][key].as_f64(), "{key}");
    }
}
