//! rocprof-compute analysis databases (`rocprof-compute analyze --output-format db`): the real
//! MI350 sample of ROCm/roc-optiq (MIT) against an independent SQL reading, and truncated,
//! empty and hostile copies.

use super::{fixture, kernelab, profile_json};
use std::path::Path;

const DB: &str = "rocprof-compute-3.5.0-mi350-monte_carlo_pi.db";

#[test]
fn a_rocprof_compute_db_reads_its_dispatches_against_sql_and_no_copies_is_null() {
    let path = fixture(DB);
    let doc = profile_json(&[path.to_str().expect("utf-8"), "--group", "none"]);
    let input = &doc["inputs"][0];
    assert_eq!(input["format"], "rocprof-compute-db");
    assert_eq!(input["facts"]["device"], "MI350 (gfx950)");
    assert_eq!(input["facts"]["rocprof_compute_version"], "3.5.0");
    assert_eq!(input["facts"]["rocm_version"], "7.3.0");
    // By SQL, here: each kernel's dispatch count and time, joined by kernel_uuid.
    let c =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("db");
    let mut q = c
        .prepare(
            "SELECT k.kernel_name, count(*), sum(d.end_timestamp - d.start_timestamp)
             FROM compute_dispatch d JOIN compute_kernel k USING (kernel_uuid)
             GROUP BY k.kernel_name",
        )
        .expect("query");
    let rows: Vec<(String, i64, i64)> = q
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    assert_eq!(rows.len(), 7);
    let kernels = doc["kernels"].as_array().expect("kernels");
    for (name, calls, total) in &rows {
        let k = kernels
            .iter()
            .find(|k| k["name"].as_str() == Some(name.as_str()))
            .unwrap_or_else(|| panic!("{name} not read"));
        assert_eq!(
            (k["calls"].as_i64(), k["total_ns"].as_i64()),
            (Some(*calls), Some(*total)),
            "{name}"
        );
    }
    // The database holds no copies: their time is unknown, not 0.
    let s = &doc["summary"];
    assert!(
        s["memcpy_ns"].is_null() && s["memset_count"].is_null(),
        "{s}"
    );
}

fn fails(path: &Path, want: &[&str]) {
    let out = kernelab().arg("profile").arg(path).output().expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for w in want {
        assert!(err.contains(w), "{w}: {err}");
    }
}

#[test]
fn truncated_empty_and_hostile_rocprof_compute_dbs_exit_2_naming_the_place() {
    let dir = tempfile::tempdir().expect("tmp");
    let bytes = std::fs::read(fixture(DB)).expect("read");
    let cut = dir.path().join("cut.db");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    fails(&cut, &["cut.db"]);
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").expect("write");
    fails(&empty, &["empty.db", "empty"]);
    let hostile = |name: &str, sql: &str| {
        let p = dir.path().join(name);
        std::fs::copy(fixture(DB), &p).expect("copy");
        rusqlite::Connection::open(&p)
            .expect("db")
            .execute_batch(&format!("PRAGMA foreign_keys = OFF; {sql}"))
            .expect("edit");
        p
    };
    let backwards = hostile(
        "backwards.db",
        "UPDATE compute_dispatch SET end_timestamp = start_timestamp - 1 WHERE dispatch_uuid = 3",
    );
    fails(
        &backwards,
        &["backwards.db", "compute_dispatch.end_timestamp (row 3)"],
    );
    let orphan = hostile(
        "orphan.db",
        "UPDATE compute_dispatch SET kernel_uuid = 99 WHERE dispatch_uuid = 2",
    );
    fails(
        &orphan,
        &["orphan.db", "compute_dispatch.kernel_uuid (row 2)", "99"],
    );
    let text = hostile(
        "text.db",
        "UPDATE compute_dispatch SET start_timestamp = 'soon' WHERE dispatch_uuid = 1",
    );
    fails(
        &text,
        &["text.db", "compute_dispatch.start_timestamp (row 1)"],
    );
}
