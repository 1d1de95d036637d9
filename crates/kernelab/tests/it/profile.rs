//! What a kernel engineer reads off real traces.

use super::{fixture, kernelab, profile_json, shared};

#[test]
fn h200_prompt_ranks_fla_kernels_and_grouped_gemm() {
    let f = fixture("kineto_qwen3next_4l_prompt8192_baseline.json.gz");
    let doc = profile_json(&[f.to_str().expect("path"), "--top", "100"]);
    let rows = doc["kernels"].as_array().expect("rows");
    let find = |n: &str| {
        rows.iter()
            .find(|r| r["name"] == n)
            .unwrap_or_else(|| panic!("{n} missing"))
    };
    // Totals from tests/expected/kineto_qwen3next_4l_prompt8192_baseline.json.gz.oracle.json.
    let r = find("recompute_w_u_fwd_kernel");
    assert_eq!(
        (r["calls"].as_u64(), r["total_ns"].as_u64()),
        (Some(3), Some(245_153))
    );
    let h = find("chunk_gated_delta_rule_fwd_kernel_h_blockdim64");
    assert_eq!(
        (h["calls"].as_u64(), h["total_ns"].as_u64()),
        (Some(3), Some(465_313))
    );
    assert_eq!(h["registers"]["max"], 116);
    // The MoE grouped GEMM (CUTLASS) is the second family by time.
    assert_eq!(rows[1]["name"], "cutlass::device_kernel");
    assert_eq!(rows[1]["calls"], 8);
    let s = &doc["summary"];
    assert_eq!(s["kernel_time_ns"], 34_336_719);
    assert_eq!(s["kernel_count"], 572);
}

#[test]
fn nineteen_digit_timestamps_are_exact() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("t.json");
    std::fs::write(
        &p,
        r#"{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1712195495505582.988,"dur":4.928,"args":{"device":0,"stream":7}},{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1712195495505590.001,"dur":0.001}]}"#,
    )
    .expect("write");
    let doc = profile_json(&[p.to_str().expect("path")]);
    assert_eq!(
        doc["summary"]["first_start_ns"].as_i64(),
        Some(1_712_195_495_505_582_988)
    );
    assert_eq!(doc["summary"]["wall_ns"], 7_014);
    assert_eq!(doc["summary"]["gap_ns"], 2_085);
    assert_eq!(doc["kernels"][0]["min_ns"], 1);
}

#[test]
fn format_is_detected_from_content_not_extension() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("trace.txt");
    std::fs::copy(fixture("kineto_gdn_chunk_T8192.json.gz"), &p).expect("copy");
    let doc = profile_json(&[p.to_str().expect("path")]);
    assert_eq!(doc["inputs"][0]["format"], "kineto");
    assert_eq!(doc["summary"]["kernel_count"], 40);
}

#[test]
fn rocprofv3_layouts_read_by_column_name() {
    // 18-column SDK 0.5 layout; rocpd-converted layout (Guid first, title case).
    let doc = profile_json(&[fixture("rocprofv3_sdk0.5_kernel_trace.csv")
        .to_str()
        .expect("p")]);
    assert_eq!(doc["kernels"][0]["name"], "addition_kernel");
    assert_eq!(
        doc["kernels"][0]["grid"],
        serde_json::json!([1024, 1024, 1])
    );
    let doc =
        profile_json(&[
            fixture("rocpd_convert_out_kernel_trace_rocm7.1.1_mi300a_excerpt.csv")
                .to_str()
                .expect("p"),
        ]);
    let r = &doc["kernels"][0];
    assert_eq!(r["registers"]["max"], 16);
    assert_eq!(r["sgprs"]["max"], 32);
    assert_eq!(r["shared_bytes"]["max"], 8456);
    assert_eq!(r["register_granules"], true);
    let notes = doc["notes"].as_array().expect("notes");
    assert!(notes.iter().any(|n| n
        .as_str()
        .is_some_and(|s| s.contains("allocation granules"))));
}

#[test]
fn renamed_and_reordered_columns_still_read() {
    // Layout A/B column names with an extra unknown column and a different order.
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("k.csv");
    std::fs::write(
        &p,
        "\"Extra\",\"End_Timestamp\",\"Kernel_Name\",\"Start_Timestamp\",\"Agent_Id\",\"Queue_Id\"\nx,150,\"a\",100,\"Agent 2\",1\ny,400,\"a\",200,\"Agent 2\",1\n",
    )
    .expect("write");
    let doc = profile_json(&[p.to_str().expect("p")]);
    assert_eq!(doc["kernels"][0]["total_ns"], 250);
    assert_eq!(doc["summary"]["devices"][0], 0); // "Agent 2" is GPU 0
                                                 // Missing optional columns are unavailable, not zero.
    assert!(doc["kernels"][0]["registers"].is_null());
    assert!(doc["kernels"][0]["grid"].is_null());
}

#[test]
fn stats_files_report_unavailable_figures() {
    let doc = profile_json(&[fixture("rocprofv3_kernel_stats_jacobi.csv")
        .to_str()
        .expect("p")]);
    assert!(doc["summary"]["busy_ns"].is_null());
    assert!(doc["kernels"][0]["median_ns"].is_null());
    assert_eq!(doc["kernels"][0]["min_ns"], 526_082);
    let out = kernelab()
        .arg("profile")
        .arg(fixture("rocprofv3_kernel_stats_jacobi.csv"))
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("unavailable"), "{text}");
    if let Some(p) = shared("amd/rocprofv1_gfx1201_llamacpp_stats/results.stats.csv") {
        let doc = profile_json(&[p.to_str().expect("p")]);
        assert!(
            doc["kernels"][0]["min_ns"].is_null(),
            "legacy stats have no min"
        );
        assert_eq!(doc["kernels"][0]["name"], "mul_mat_q");
    }
}

#[test]
fn family_rules_group_user_defined_families() {
    let dir = tempfile::tempdir().expect("tmp");
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[family]]\nname = \"gdn\"\nmatch = \"^chunk_|recompute_w_u|l2norm\"\n",
    )
    .expect("write");
    let f = fixture("kineto_gdn_chunk_T8192.json.gz");
    let doc = profile_json(&[
        f.to_str().expect("p"),
        "--rules",
        rules.to_str().expect("p"),
    ]);
    let gdn = doc["kernels"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["name"] == "gdn")
        .cloned()
        .expect("gdn row");
    let oracle: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            super::root().join("tests/expected/kineto_gdn_chunk_T8192.json.gz.oracle.json"),
        )
        .expect("oracle"),
    )
    .expect("json");
    let re = regex_lite(&["chunk_", "recompute_w_u", "l2norm"]);
    let want: u64 = oracle["kernels"]
        .as_object()
        .expect("kernels")
        .iter()
        .filter(|(n, _)| re(n))
        .map(|(_, v)| v["total_ns"].as_u64().expect("total"))
        .sum();
    assert_eq!(gdn["total_ns"].as_u64(), Some(want));
    assert!(gdn["variants"].as_u64().expect("variants") >= 4);
}

fn regex_lite(parts: &'static [&'static str]) -> impl Fn(&str) -> bool {
    move |n: &str| {
        parts.iter().any(|p| {
            if *p == "chunk_" {
                n.starts_with(p)
            } else {
                n.contains(p)
            }
        })
    }
}

#[test]
fn filters_select_dispatches() {
    let f = fixture("kineto_qwen3next_4l_prompt8192_baseline.json.gz");
    let p = f.to_str().expect("p");
    let doc = profile_json(&[p, "--name", "^chunk_", "--group", "none"]);
    assert!(doc["kernels"]
        .as_array()
        .expect("rows")
        .iter()
        .all(|r| r["name"].as_str().expect("n").starts_with("chunk_")));
    let all = profile_json(&[p])["summary"]["kernel_count"]
        .as_u64()
        .expect("n");
    let first_half = profile_json(&[p, "--time-range", "0ms:18ms"])["summary"]["kernel_count"]
        .as_u64()
        .expect("n");
    let second_half = profile_json(&[p, "--time-range", "18ms:"])["summary"]["kernel_count"]
        .as_u64()
        .expect("n");
    assert_eq!(first_half + second_half, all);
    assert!(first_half > 0 && second_half > 0);
    let none = profile_json(&[p, "--device", "5"]);
    assert_eq!(none["summary"]["kernel_count"], 0);
    assert!(none["summary"]["busy_ns"].is_null());
    assert_eq!(
        profile_json(&[p, "--stream", "7"])["summary"]["kernel_count"],
        all
    );
}

#[test]
fn outliers_are_named() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("o.json");
    let mut events = Vec::new();
    for i in 0..9 {
        events.push(format!(
            r#"{{"ph":"X","cat":"kernel","name":"slowpoke","pid":0,"tid":1,"ts":{},"dur":1000.0}}"#,
            i * 2000
        ));
    }
    events.push(
        r#"{"ph":"X","cat":"kernel","name":"slowpoke","pid":0,"tid":1,"ts":30000,"dur":297000.0}"#
            .to_string(),
    );
    std::fs::write(&p, format!("[{}]", events.join(","))).expect("write");
    let out = kernelab().args(["profile"]).arg(&p).output().expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("one call of slowpoke is 297.000 ms (297x its median of 1.000 ms)"),
        "{text}"
    );
}

/// Issue 26 item 5: JSON, CSV and bundle records hold every row; `--top` shapes the views
/// people read, and an explicit `--top` is obeyed by JSON and CSV too.
#[test]
fn issue26_exports_hold_every_row_and_impact_finds_a_family_below_the_top_20() {
    let trace = fixture("kineto_qwen3next_4l_prompt8192_baseline.json.gz");
    let doc = profile_json(&[trace.to_str().expect("utf-8")]);
    let rows = doc["kernels"].as_array().expect("rows");
    // Every family, none folded: the row count equals the summary's group count (44 here).
    assert_eq!(
        rows.len() as u64,
        doc["summary"]["groups"].as_u64().expect("groups")
    );
    assert_eq!(rows.len(), 44);
    assert!(doc["other"].is_null());
    let sum: u64 = rows.iter().filter_map(|r| r["total_ns"].as_u64()).sum();
    assert_eq!(sum, doc["summary"]["kernel_time_ns"].as_u64().expect("kt"));

    let csv = kernelab()
        .arg("profile")
        .arg(&trace)
        .args(["--format", "csv"])
        .output()
        .expect("runs");
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(csv.lines().count(), 1 + 44, "header and every row");
    assert!(!csv.contains("other ("), "{csv}");

    // An explicit --top cuts JSON as asked, the rest folded into `other`.
    let cut = profile_json(&[trace.to_str().expect("utf-8"), "--top", "5"]);
    assert_eq!(cut["kernels"].as_array().map(Vec::len), Some(5));
    assert_eq!(cut["other"]["name"], "other (39 families)");

    // The terminal keeps its 20 rows.
    let table = kernelab()
        .arg("profile")
        .arg(&trace)
        .output()
        .expect("runs");
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.contains("other (24 families)"), "{table}");

    // A bundle record written with --top 5 still holds all 44 rows.
    let dir = tempfile::tempdir().expect("tmp");
    let bundle = dir.path().join("bundle");
    let out = kernelab()
        .arg("profile")
        .arg(&trace)
        .args(["--top", "5", "--record"])
        .arg(&bundle)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The bundle layout: one `NNNN-<kind>.json` per record.
    let record = bundle.join("0001-profile.json");
    let text = std::fs::read_to_string(&record).expect("read");
    let rec: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(
        rec["result"]["kernels"].as_array().map(Vec::len),
        Some(44),
        "{}",
        record.display()
    );

    // `impact` on the 31st family, which the 20-row export of before lost.
    let family = rows[30]["name"].as_str().expect("name").to_string();
    let profile_path = dir.path().join("profile.json");
    std::fs::write(&profile_path, doc.to_string()).expect("write");
    let impact = super::json_of(
        "impact",
        &[
            "--profile".as_ref(),
            profile_path.as_os_str(),
            "--kernel-run".as_ref(),
            fixture("h200_kernel/recompute_w4s3_vs_w8s2.json").as_os_str(),
            "--family".as_ref(),
            std::ffi::OsStr::new(&family),
        ],
    );
    let share = rows[30]["total_ns"].as_f64().expect("t")
        / doc["summary"]["kernel_time_ns"].as_f64().expect("kt");
    assert!((impact["share"].as_f64().expect("share") - share).abs() < 1e-12);
}
