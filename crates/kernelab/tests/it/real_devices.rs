//! Issue 15, items 5, 8 and 9: CPU-only Nsight Systems exports, one meaning of the device
//! number in every format, and device facts that name the GPUs that ran kernels.

use super::{profile_json, shared};
use rusqlite::Connection;

/// An Nsight Systems-like export: two GPUs in the capture, kernels on `kernel_devices`.
fn nsys_export(path: &std::path::Path, kernel_devices: &[i64]) {
    let c = Connection::open(path).expect("db");
    c.execute_batch(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);
         CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
         INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.11.1');
         CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER);
         CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);
         INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA A100-SXM4-80GB'), (1, 'NVIDIA H100 80GB HBM3');
         INSERT INTO StringIds VALUES (7, 'gemm_kernel');",
    )
    .expect("schema");
    if kernel_devices.is_empty() {
        c.execute_batch("DROP TABLE TARGET_INFO_GPU")
            .expect("cpu only");
        return;
    }
    c.execute_batch(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, \"end\" INTEGER, deviceId INTEGER, streamId INTEGER, correlationId INTEGER, demangledName INTEGER);",
    )
    .expect("kernels");
    for (i, d) in kernel_devices.iter().enumerate() {
        let s = 1000 * i as i64;
        c.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, ?3, 7, ?4, 7)",
            rusqlite::params![s, s + 100 + i as i64, d, i as i64],
        )
        .expect("row");
    }
}

#[test]
fn cpu_only_nsys_export_has_no_kernel_dispatches() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("cpu.sqlite");
    nsys_export(&db, &[]);
    let doc = profile_json(&[db.to_str().expect("p")]);
    assert_eq!(doc["inputs"][0]["format"], "nsys-sqlite");
    assert_eq!(doc["summary"]["kernel_count"], 0);
    let notes = doc["notes"].to_string();
    assert!(notes.contains("no kernel dispatches"), "{notes}");
    assert!(notes.contains("CPU-only capture"), "{notes}");
    if let Some(real) = shared("external/nsys/sc23_omp_report1.sqlite") {
        let doc = profile_json(&[real.to_str().expect("p")]);
        assert!(doc["notes"].to_string().contains("no kernel dispatches"));
    }
}

#[test]
fn nsys_device_fact_names_the_gpus_that_ran_kernels() {
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("two.sqlite");
    nsys_export(&db, &[1, 1, 1]);
    // Independent: the GPU names SQL joins to the kernel table's deviceId.
    let c = Connection::open(&db).expect("db");
    let want: Vec<String> = c
        .prepare("SELECT id || ': ' || name FROM TARGET_INFO_GPU WHERE id IN (SELECT deviceId FROM CUPTI_ACTIVITY_KIND_KERNEL) ORDER BY id")
        .expect("sql")
        .query_map([], |r| r.get(0))
        .expect("rows")
        .collect::<Result<_, _>>()
        .expect("names");
    let doc = profile_json(&[db.to_str().expect("p")]);
    let facts = &doc["inputs"][0]["facts"];
    assert_eq!(facts["device"], want.join(", "));
    assert_eq!(facts["device"], "1: NVIDIA H100 80GB HBM3");
    assert!(facts["GPUs in the capture"]
        .as_str()
        .is_some_and(|s| s.contains("A100")));
    assert!(facts["device numbers"]
        .as_str()
        .is_some_and(|s| s.contains("CUDA device ordinal")));
}

#[test]
fn empty_kineto_device_name_is_unknown() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("t.json");
    std::fs::write(
        &p,
        r#"{"deviceProperties": [{"id": 0, "name": ""}], "traceEvents": [
  {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, "dur": 2.0, "args": {"device": 0, "stream": 7}}
]}"#,
    )
    .expect("write");
    let doc = profile_json(&[p.to_str().expect("p")]);
    assert_eq!(doc["inputs"][0]["facts"]["device"], "unknown");
}

#[test]
fn device_number_is_the_gpu_index_in_every_format() {
    let dir = tempfile::tempdir().expect("tmp");
    // rocprofv3: HSA agents 4 and 5 (four CPU agents first) are GPUs 0 and 1.
    let csv = dir.path().join("kernel_trace.csv");
    std::fs::write(
        &csv,
        "\"Agent_Id\",\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\n\"Agent 4\",\"a\",100,150\n\"Agent 5\",\"b\",100,300\n\"Agent 5\",\"b\",400,500\n",
    )
    .expect("write");
    let gpu1 = profile_json(&[csv.to_str().expect("p"), "--device", "1"]);
    // Independent: the rows with the second-smallest agent id, summed by hand.
    assert_eq!(gpu1["summary"]["kernel_time_ns"], 200 + 100);
    assert_eq!(gpu1["summary"]["devices"], serde_json::json!([1]));
    let facts = gpu1["inputs"][0]["facts"]["device numbers"].to_string();
    assert!(
        facts.contains("agent 4 → GPU 0, agent 5 → GPU 1"),
        "{facts}"
    );
    // Nsight Systems: deviceId is the CUDA ordinal, so --device 1 is the H100 above.
    let db = dir.path().join("n.sqlite");
    nsys_export(&db, &[0, 1, 1]);
    let n1 = profile_json(&[db.to_str().expect("p"), "--device", "1"]);
    assert_eq!(n1["summary"]["kernel_count"], 2);
}
