//! Issue 15, item 7: fractional timestamps (rocprof-compute averages its passes) are kept
//! exact: every sum, union and gap is computed exactly and rounded once, and each per-dispatch
//! value is its exact value rounded once. Checked by hand (tenths of a nanosecond, exact in
//! integers) and, where python3 is present, against the oracle's `fractions` arithmetic.

use super::{profile_json, root};
use std::process::Command;

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).expect("write");
    p.to_str().expect("utf-8 path").to_string()
}

/// A rocprof-compute per-dispatch table: k1 three times 10.3 ns, k2 once 14.7 ns overlapping
/// k1's third call.
const KERNELS: &str = "Dispatch_ID,Kernel_Name,GPU_ID,Start_Timestamp,End_Timestamp\n\
0,k1,2,1000.3,1010.6\n\
1,k1,2,1020.3,1030.6\n\
2,k1,2,1040.3,1050.6\n\
3,k2,2,1045.5,1060.2\n";

/// Three copies of 100.4 ns.
const COPIES: &str = "\"Kind\",\"Direction\",\"Source_Agent_Id\",\"Destination_Agent_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\
\"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",0,2,0,900.3,1000.7\n\
\"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",0,2,0,1100.3,1200.7\n\
\"MEMORY_COPY\",\"MEMORY_COPY_DEVICE_TO_HOST\",2,0,0,1300.3,1400.7\n";

#[test]
fn fractional_timestamps_are_summed_exactly_and_rounded_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let k = write(&dir, "pmc_perf.csv", KERNELS);
    let c = write(&dir, "memory_copy_trace.csv", COPIES);
    let doc = profile_json(&[&k, &c, "--group", "none"]);
    let s = &doc["summary"];
    // By hand, in tenths of a nanosecond: kernel time 3 × 103 + 147 = 456 → 45.6 ns → 46.
    // Rounded one by one it would be 3 × 10 + 15 = 45 (durations) or 3 × 11 + 14 = 47
    // (each timestamp rounded, the old reading): neither is the exact sum.
    assert_eq!(s["kernel_time_ns"], 46);
    // Busy: [1000.3, 1010.6) + [1020.3, 1030.6) + [1040.3, 1060.2) = 10.3 + 10.3 + 19.9
    // = 40.5 → 41; gaps 9.7 + 9.7 = 19.4 → 19 (2 of them); wall 1060.2 − 1000.3 = 59.9 → 60.
    assert_eq!(s["busy_ns"], 41);
    assert_eq!(s["gap_ns"], 19);
    assert_eq!(s["gap_count"], 2);
    assert_eq!(s["wall_ns"], 60);
    assert_eq!(s["first_start_ns"], 1000);
    // Copies: 3 × 100.4 = 301.2 → 301 (one by one: 300, or 303 from rounded timestamps).
    assert_eq!(s["memcpy_ns"], 301);
    assert_eq!(s["memcpy_count"], 3);
    let rows = doc["kernels"].as_array().expect("rows");
    let k1 = rows.iter().find(|r| r["name"] == "k1").expect("k1");
    // 30.9 → 31; each call 10.3, shown rounded once as 10.
    assert_eq!(k1["total_ns"], 31);
    assert_eq!(
        (k1["min_ns"].as_u64(), k1["max_ns"].as_u64()),
        (Some(10), Some(10))
    );
    assert!((k1["median_ns"].as_f64().expect("median") - 10.3).abs() < 1e-9);
    assert!((k1["mean_ns"].as_f64().expect("mean") - 10.3).abs() < 1e-9);
    let k2 = rows.iter().find(|r| r["name"] == "k2").expect("k2");
    assert_eq!(k2["total_ns"], 15);
    // Device numbers: agent 2 is GPU 0 for the kernels and the copies alike.
    assert_eq!(s["devices"], serde_json::json!([0]));
    let gpu0 = profile_json(&[&k, &c, "--device", "0"]);
    assert_eq!(gpu0["summary"]["memcpy_count"], 3);
    assert_eq!(gpu0["summary"]["kernel_count"], 4);
    oracle_agrees(&k, &doc);
}

/// The oracle (Python `fractions`) on the same file, when python3 is present.
fn oracle_agrees(input: &str, doc: &serde_json::Value) {
    let out_dir = tempfile::tempdir().expect("tmp");
    let run = Command::new("python3")
        .arg(root().join("tests/oracle/profile_oracle.py"))
        .arg(input)
        .arg("--out-dir")
        .arg(out_dir.path())
        .output();
    let out = match run {
        Ok(o) if o.status.success() => o,
        Ok(o) => panic!("oracle failed: {}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => {
            kernelab_testkit::skip(
                "python3",
                format!("the oracle part: python3 is absent ({e}); the hand computation above still ran"),
            );
            return;
        }
    };
    assert!(out.status.success());
    let text = std::fs::read_to_string(out_dir.path().join("pmc_perf.csv.oracle.json"))
        .expect("oracle output");
    let want: serde_json::Value = serde_json::from_str(&text).expect("oracle JSON");
    for key in [
        "kernel_time_ns",
        "busy_ns",
        "wall_ns",
        "gap_ns",
        "first_start_ns",
    ] {
        assert_eq!(doc["summary"][key], want["summary"][key], "{key}");
    }
    for row in doc["kernels"].as_array().expect("rows") {
        let w = &want["kernels"][row["name"].as_str().expect("name")];
        for key in ["calls", "total_ns", "min_ns", "max_ns"] {
            assert_eq!(row[key], w[key], "{key}");
        }
        let (a, b) = (row["median_ns"].as_f64(), w["median_ns"].as_f64());
        assert!((a.expect("median") - b.expect("oracle median")).abs() < 1e-9);
    }
}

#[test]
fn activity_totals_over_files_are_rounded_once() {
    // The same API function in two statistics files, 10.5 ns each: 21 ns, not 11 + 11.
    let dir = tempfile::tempdir().expect("tmp");
    let text = "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n\"hipMemcpy\",1,10.5,10.5,100.0\n";
    let a = write(&dir, "a.hip_stats.csv", text);
    let b = write(&dir, "b.hip_stats.csv", text);
    let doc = profile_json(&[&a, &b]);
    let acts = doc["activities"].as_array().expect("activities");
    assert_eq!(acts.len(), 1, "{acts:?}");
    assert_eq!(acts[0]["calls"], 2);
    assert_eq!(acts[0]["total_ns"], 21);
}
