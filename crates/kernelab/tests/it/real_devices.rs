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
    assert!(facts["gpus_in_the_capture"]
        .as_str()
        .is_some_and(|s| s.contains("A100")));
    assert!(facts["device_numbers"]
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
    let facts = gpu1["inputs"][0]["facts"]["device_numbers"].to_string();
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

/// Lines of a file that start with `prefix` (an independent count of rows).
fn count_lines(path: &std::path::Path, prefix: &str) -> u64 {
    std::fs::read_to_string(path)
        .expect("read")
        .lines()
        .filter(|l| l.starts_with(prefix))
        .count() as u64
}

#[test]
fn rocprofv3_copies_are_on_the_gpu_of_their_kernels() {
    // The SDK's own example files: agent 1 is the GPU (agent 0 the CPU). Kernels and copies,
    // host-to-device and device-to-host alike, are GPU 0.
    let k = super::fixture("rocprofv3_sdk0.5_kernel_trace.csv");
    let c = super::fixture("rocprofv3_sdk0.5_memory_copy_trace.csv");
    let kernels = count_lines(&k, "\"KERNEL_DISPATCH\",1,");
    let copies = count_lines(&c, "\"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",0,1,")
        + count_lines(&c, "\"MEMORY_COPY\",\"MEMORY_COPY_DEVICE_TO_HOST\",1,0,");
    assert!(kernels > 0 && copies > 1);
    let args = |dev: &'static str| {
        vec![
            k.to_str().expect("p").to_string(),
            c.to_str().expect("p").to_string(),
            "--device".to_string(),
            dev.to_string(),
        ]
    };
    let a0: Vec<String> = args("0");
    let gpu0 = profile_json(&a0.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(gpu0["summary"]["kernel_count"], kernels);
    assert_eq!(gpu0["summary"]["memcpy_count"], copies);
    let a1: Vec<String> = args("1");
    let gpu1 = profile_json(&a1.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(gpu1["summary"]["kernel_count"], 0);
    assert_eq!(gpu1["summary"]["memcpy_count"], 0);
    let facts = gpu0["inputs"][1]["facts"]["device_numbers"].to_string();
    assert!(facts.contains("agent 1 → GPU 0"), "{facts}");
    assert!(facts.contains("GPU end"), "{facts}");
}

#[test]
fn copy_trace_agent_names_say_which_end_is_the_gpu() {
    let dir = tempfile::tempdir().expect("tmp");
    let head = "\"Kind\",\"Direction\",\"Source_Agent_Id\",\"Destination_Agent_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n";
    // Absolute agent names (four CPU agents first): GPUs are agents 4 and 5; a copy to the
    // host is on its source GPU; a host-to-host copy is no GPU transfer.
    let abs = dir.path().join("abs.csv");
    std::fs::write(
        &abs,
        format!(
            "{head}\"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",\"Agent 0\",\"Agent 5\",1,100,200\n\
             \"MEMORY_COPY\",\"MEMORY_COPY_DEVICE_TO_HOST\",\"Agent 5\",\"Agent 1\",2,300,350\n\
             \"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",\"Agent 0\",\"Agent 4\",3,400,410\n\
             \"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_HOST\",\"Agent 0\",\"Agent 1\",4,500,900\n"
        ),
    )
    .expect("write");
    let g1 = profile_json(&[abs.to_str().expect("p"), "--device", "1"]);
    // By hand: agent 5 → GPU 1; its copies last 100 and 50 ns.
    assert_eq!(g1["summary"]["memcpy_count"], 2);
    assert_eq!(g1["summary"]["memcpy_ns"], 150);
    let notes = g1["notes"].to_string() + &g1["inputs"].to_string();
    assert!(notes.contains("1 copies between host agents"), "{notes}");
    // Type-relative names carry the GPU index themselves.
    let rel = dir.path().join("rel.csv");
    std::fs::write(
        &rel,
        format!(
            "{head}\"MEMORY_COPY\",\"MEMORY_COPY_DEVICE_TO_HOST\",\"GPU 1\",\"CPU 0\",1,100,200\n\
             \"MEMORY_COPY\",\"MEMORY_COPY_HOST_TO_DEVICE\",\"CPU 0\",\"GPU 0\",2,300,350\n"
        ),
    )
    .expect("write");
    let r1 = profile_json(&[rel.to_str().expect("p"), "--device", "1"]);
    assert_eq!(r1["summary"]["memcpy_ns"], 100);
}

#[test]
fn rocpd_copies_are_on_their_gpu_end() {
    let Some(real) = shared("amd/rocpd_rocm7_gfx942_att_results.db") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("with_copies.db");
    std::fs::copy(&real, &db).expect("copy");
    let c = Connection::open(&db).expect("db");
    let table: String = c
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd_memory_copy_%'",
            [],
            |r| r.get(0),
        )
        .expect("copy table");
    let dispatches: String = table.replace("memory_copy", "kernel_dispatch");
    // Agents of this MI300X database: ids 0 and 1 are CPUs, 2.. are GPUs 0..7. Four copies
    // borrowing a real dispatch's process, thread, event and a string: to GPU 2, from GPU 2 to
    // the host, GPU 0 to GPU 2, and host to host.
    for (src, dst) in [(0, 4), (4, 0), (2, 4), (0, 1)] {
        c.execute(
            &format!(
                "INSERT INTO {table} (nid, pid, tid, start, \"end\", name_id, dst_agent_id, src_agent_id, size, event_id)
                 SELECT nid, pid, tid, start, start + 1000, (SELECT MIN(id) FROM rocpd_string), ?2, ?1, 64, event_id
                 FROM {dispatches} LIMIT 1"
            ),
            rusqlite::params![src, dst],
        )
        .expect("insert");
    }
    // Independent: the copies whose GPU end (destination if a GPU, else a GPU source) is GPU 2.
    let on_gpu2: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM memory_copies WHERE (dst_agent_type = 'GPU' AND dst_agent_type_index = 2)
               OR (dst_agent_type <> 'GPU' AND src_agent_type = 'GPU' AND src_agent_type_index = 2)",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(on_gpu2, 3);
    drop(c);
    let p = db.to_str().expect("p");
    let g2 = profile_json(&[p, "--device", "2"]);
    assert_eq!(g2["summary"]["memcpy_count"], on_gpu2);
    assert_eq!(g2["summary"]["memcpy_ns"], 1000 * on_gpu2);
    // GPU 0 ran the kernels and none of the copies (the host-to-host one is left out).
    let g0 = profile_json(&[p, "--device", "0"]);
    assert_eq!(g0["summary"]["memcpy_count"], 0);
    assert!(g0["summary"]["kernel_count"]
        .as_u64()
        .is_some_and(|n| n > 0));
    assert!(g0["notes"]
        .to_string()
        .contains("1 copies between host agents"));
}

/// Kernels and copies of a legacy rocprof Chrome trace, counted from its JSON: X events on a
/// `GPU<n>` process (not `GPU Barriers`) and on `COPY`.
fn legacy_counts(path: &std::path::Path) -> (u64, u64) {
    let doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).expect("read")).expect("json");
    let events = doc["traceEvents"].as_array().expect("events");
    let mut names = std::collections::HashMap::new();
    for e in events {
        if e["ph"] == "M" && e["name"] == "process_name" {
            names.insert(
                e["pid"].to_string().replace('"', ""),
                e["args"]["name"].clone(),
            );
        }
    }
    let (mut kernels, mut copies) = (0, 0);
    for e in events.iter().filter(|e| e["ph"] == "X") {
        let name = names
            .get(&e["pid"].to_string().replace('"', ""))
            .and_then(|n| n.as_str())
            .unwrap_or("");
        if name == "COPY" {
            copies += 1;
        } else if name.starts_with("GPU") && !name.starts_with("GPU Barrier") {
            kernels += 1;
        }
    }
    (kernels, copies)
}

#[test]
fn legacy_rocprof_chrome_trace_numbers_gpus_like_its_csv() {
    // An MI300X with two CPU agents: rocprof v1 writes the first GPU as dev-id 2.
    for (rel, agent) in [
        ("amd/rocprofv1_gfx942_bmm_stats/results.json", 2),
        ("external/rocprof_v1/kokkos_6f0a1c4a_results.json", 0),
    ] {
        let Some(path) = shared(rel) else {
            return;
        };
        let (kernels, copies) = legacy_counts(&path);
        assert!(kernels > 0 && copies > 0, "{rel}");
        let p = path.to_str().expect("p");
        let gpu0 = profile_json(&[p, "--device", "0"]);
        assert_eq!(gpu0["inputs"][0]["format"], "rocprof-chrome-trace");
        assert_eq!(gpu0["summary"]["kernel_count"], kernels, "{rel}");
        assert_eq!(gpu0["summary"]["memcpy_count"], copies, "{rel}");
        let facts = gpu0["inputs"][0]["facts"]["device_numbers"].to_string();
        assert!(facts.contains(&format!("agent {agent} → GPU 0")), "{facts}");
        if agent != 0 {
            let raw = profile_json(&[p, "--device", &agent.to_string()]);
            assert_eq!(raw["summary"]["kernel_count"], 0);
        }
    }
}
