//! Issue 15, item 1: `--by-phase` with two streams, and rocpd marker regions as phases.
//!
//! The issue asks for a two-stream trace recorded on the H200 (a loop on a side stream
//! overlapping annotated ranges on the main one); until the lead engineer records it, the test
//! below builds a synthetic Kineto trace with that layout and checks kernelab against a
//! brute-force attribution written here.

use super::profile_json;
use std::collections::BTreeMap;

/// A range: name, device (`pid`), stream or thread (`tid`), start µs, duration µs.
type Range = (&'static str, i64, i64, i64, i64);

const MAIN: i64 = 7;
const SIDE: i64 = 20;
const HOST: (i64, i64) = (100, 200);

/// GPU-side ranges on the main stream (nested `attn` inside `layer0`).
const GPU_RANGES: [Range; 3] = [
    ("layer0", 0, MAIN, 1000, 1000),
    ("attn", 0, MAIN, 1200, 300),
    ("layer1", 0, MAIN, 2000, 1000),
];
/// Host ranges: the side loop's launches, and a forward pass around the main launches.
const CPU_RANGES: [Range; 2] = [
    ("side_loop", HOST.0, HOST.1, 900, 1500),
    ("forward", HOST.0, HOST.1 + 1, 800, 2500),
];

/// Kernels: name, stream, start µs, duration µs, correlation, launch µs, launch thread.
const KERNELS: [(&str, i64, i64, i64, u64, i64, i64); 8] = [
    ("main_gemm", MAIN, 1100, 50, 1, 1090, HOST.1 + 1),
    ("main_attn", MAIN, 1300, 50, 2, 1290, HOST.1 + 1),
    ("main_mlp", MAIN, 2100, 100, 3, 2090, HOST.1 + 1),
    ("side_gemm", SIDE, 1050, 30, 11, 1000, HOST.1),
    ("side_gemm", SIDE, 1400, 30, 12, 1010, HOST.1),
    ("side_gemm", SIDE, 1900, 30, 13, 1020, HOST.1),
    ("side_gemm", SIDE, 2500, 30, 14, 1030, HOST.1),
    ("side_gemm", SIDE, 3500, 30, 15, 2600, HOST.1),
];

fn trace() -> String {
    let mut ev = Vec::new();
    for (name, pid, tid, ts, dur) in GPU_RANGES {
        ev.push(format!(r#"{{"ph":"X","cat":"gpu_user_annotation","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur},"args":{{}}}}"#));
    }
    for (name, pid, tid, ts, dur) in CPU_RANGES {
        ev.push(format!(r#"{{"ph":"X","cat":"user_annotation","name":"{name}","pid":{pid},"tid":{tid},"ts":{ts},"dur":{dur}}}"#));
    }
    for (name, stream, ts, dur, corr, launch, thread) in KERNELS {
        ev.push(format!(r#"{{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":{},"tid":{thread},"ts":{launch},"dur":5,"args":{{"correlation":{corr}}}}}"#, HOST.0));
        ev.push(format!(r#"{{"ph":"X","cat":"kernel","name":"{name}","pid":0,"tid":{stream},"ts":{ts},"dur":{dur},"args":{{"device":0,"stream":{stream},"correlation":{corr}}}}}"#));
    }
    format!("{{\"traceEvents\":[\n{}\n]}}", ev.join(",\n"))
}

/// Brute force: the shortest range containing the time, on the kernel's own stream first, then
/// the shortest host range containing its launch on the launching thread.
fn oracle() -> BTreeMap<String, (u64, u64)> {
    let innermost = |ranges: &[Range], pid: i64, tid: i64, t: i64| {
        ranges
            .iter()
            .filter(|r| r.1 == pid && r.2 == tid && r.3 <= t && t < r.3 + r.4)
            .min_by_key(|r| r.4)
            .map(|r| r.0)
    };
    let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (_, stream, ts, dur, _, launch, thread) in KERNELS {
        let phase = innermost(&GPU_RANGES, 0, stream, ts)
            .or_else(|| innermost(&CPU_RANGES, HOST.0, thread, launch))
            .unwrap_or("(no phase)");
        let e = out.entry(phase.to_string()).or_default();
        e.0 += 1;
        e.1 += dur as u64 * 1000;
    }
    out
}

fn phases(doc: &serde_json::Value) -> BTreeMap<String, (u64, u64)> {
    doc["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .map(|p| {
            (
                p["phase"].as_str().expect("name").to_string(),
                (
                    p["calls"].as_u64().expect("calls"),
                    p["total_ns"].as_u64().expect("total"),
                ),
            )
        })
        .collect()
}

#[test]
fn side_stream_kernels_go_to_their_own_stream_or_launch_range() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("two_streams.json");
    std::fs::write(&p, trace()).expect("write");
    let doc = profile_json(&[p.to_str().expect("p"), "--by-phase"]);
    let want = oracle();
    assert_eq!(phases(&doc), want);
    // The side loop's kernels that ran during layer0/layer1 are not in those layers.
    assert_eq!(want["layer0"], (1, 50_000));
    assert_eq!(want["side_loop"], (4, 120_000));
}

#[test]
fn rocpd_marker_regions_are_phases() {
    use rusqlite::Connection;
    let dir = tempfile::tempdir().expect("tmp");
    let db = dir.path().join("results.db");
    let c = Connection::open(&db).expect("db");
    c.execute_batch(
        "CREATE TABLE rocpd_metadata (tag TEXT, value TEXT);
         CREATE TABLE kernels (name TEXT, start INTEGER, \"end\" INTEGER, agent_type_index INTEGER, stream_id INTEGER, corr_id INTEGER, stack_id INTEGER);
         CREATE TABLE regions (category TEXT, name TEXT, pid INTEGER, tid INTEGER, start INTEGER, \"end\" INTEGER, corr_id INTEGER, stack_id INTEGER);
         INSERT INTO regions VALUES ('MARKER_CORE_API', 'prefill', 1, 1, 0, 1000, 0, 1);
         INSERT INTO regions VALUES ('MARKER_CORE_API', 'decode', 1, 1, 1000, 3000, 0, 2);
         INSERT INTO regions VALUES ('MARKER_CORE_API', 'sample', 1, 1, 2500, 2900, 0, 3);
         INSERT INTO regions VALUES ('HIP_RUNTIME_API_EXT', 'hipLaunchKernel', 1, 1, 100, 110, 0, 10);
         INSERT INTO regions VALUES ('HIP_RUNTIME_API_EXT', 'hipLaunchKernel', 1, 1, 1100, 1110, 0, 11);
         INSERT INTO regions VALUES ('HIP_RUNTIME_API_EXT', 'hipLaunchKernel', 1, 1, 2600, 2610, 0, 12);
         INSERT INTO regions VALUES ('HIP_RUNTIME_API_EXT', 'hipLaunchKernel', 1, 1, 3100, 3110, 0, 13);
         INSERT INTO kernels VALUES ('gemm', 5000, 5400, 0, 0, 0, 10);
         INSERT INTO kernels VALUES ('gemm', 5500, 5800, 0, 0, 0, 11);
         INSERT INTO kernels VALUES ('topk', 6000, 6070, 0, 0, 0, 12);
         INSERT INTO kernels VALUES ('copy', 7000, 7010, 0, 0, 0, 13);",
    )
    .expect("db");
    // Independent: SQL joins each kernel to its launch region (stack_id) and the shortest
    // marker region holding that launch on the same thread.
    let mut want: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut st = c
        .prepare(
            "SELECT COALESCE((SELECT m.name FROM regions m WHERE m.category LIKE 'MARKER%'
                     AND m.pid = l.pid AND m.tid = l.tid AND m.start <= l.start AND l.start < m.\"end\"
                     ORDER BY m.\"end\" - m.start LIMIT 1), '(no phase)'),
                    COUNT(*), SUM(k.\"end\" - k.start)
             FROM kernels k JOIN regions l ON l.stack_id = k.stack_id AND l.category NOT LIKE 'MARKER%'
             GROUP BY 1",
        )
        .expect("sql");
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?)))
        .expect("rows");
    for r in rows {
        let (name, n, t): (String, u64, u64) = r.expect("row");
        want.insert(name, (n, t));
    }
    let doc = profile_json(&[db.to_str().expect("p"), "--by-phase"]);
    assert_eq!(phases(&doc), want);
    assert_eq!(want["sample"], (1, 70));
    assert_eq!(doc["inputs"][0]["facts"]["marker_ranges"], 3);
}
