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

/// One row of `compute_kernel_metric_view`: kernel, metric id, name, value name, unit, value.
type SqlValue = (String, String, String, String, Option<String>, Option<f64>);

/// `counters --from DB` with every metric selected: each stored value, against the database's
/// own view `compute_kernel_metric_view` read here by SQL (NULL and infinite values
/// unavailable).
#[test]
fn counters_from_a_rocprof_compute_db_give_every_stored_value_against_sql() {
    let path = fixture(DB);
    let c =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("db");
    let tops: Vec<String> = c
        .prepare("SELECT DISTINCT metric_id FROM compute_metric_definition")
        .expect("query")
        .query_map([], |r| r.get::<_, String>(0))
        .expect("rows")
        .map(|r| r.expect("row").split('.').next().unwrap_or("").to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let doc = super::json_of(
        "counters",
        &[
            "--from",
            path.to_str().expect("utf-8"),
            "--metrics",
            &tops.join(","),
        ],
    );
    assert_eq!(doc["kind"], "counters");
    assert_eq!(doc["profiler"], "rocprof-compute");
    assert_eq!(doc["sides"], serde_json::json!(["run"]));
    let stats = doc["stats"].as_array().expect("stats");
    let mut sql = c
        .prepare(
            "SELECT kernel_name, metric_id, metric_name, value_name, unit, value
             FROM compute_kernel_metric_view ORDER BY kernel_uuid, value_uuid",
        )
        .expect("query");
    let rows: Vec<SqlValue> = sql
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    assert_eq!(rows.len(), 48_405);
    assert_eq!(stats.len(), rows.len());
    let (mut nulls, mut infinite) = (0, 0);
    for (s, (kernel, id, name, value_name, unit, value)) in stats.iter().zip(&rows) {
        assert_eq!(s["kernel"].as_str(), Some(kernel.as_str()));
        assert_eq!(
            s["metric"].as_str(),
            Some(format!("{id} {name} ({value_name})").as_str())
        );
        let want_unit = if value_name == "Pct of Peak" {
            "Percent".to_string()
        } else {
            unit.clone().unwrap_or_default()
        };
        assert_eq!(s["unit"].as_str(), Some(want_unit.as_str()), "{id}");
        match value {
            Some(v) if v.is_finite() => assert_eq!(s["median"].as_f64(), Some(*v), "{id}"),
            Some(_) => {
                infinite += 1;
                assert!(s["median"].is_null(), "{s}");
            }
            None => {
                nulls += 1;
                assert!(s["median"].is_null() && s["values"] == serde_json::json!([]));
            }
        }
    }
    assert_eq!((nulls, infinite), (5290, 1));
}

/// Two databases: baseline versus candidate per kernel and metric, the change of each stored
/// value; a value NULL on one side is unavailable, not 0.
#[test]
fn counters_from_two_rocprof_compute_dbs_diff_their_values() {
    let dir = tempfile::tempdir().expect("tmp");
    let cand = dir.path().join("cand.db");
    std::fs::copy(fixture(DB), &cand).expect("copy");
    rusqlite::Connection::open(&cand)
        .expect("db")
        .execute_batch(
            "UPDATE compute_kernel_metric_value SET value = value * 2 WHERE kernel_uuid = 7
               AND value_name = 'Avg' AND metric_uuid =
               (SELECT metric_uuid FROM compute_metric_definition WHERE metric_id = '2.1.0');
             UPDATE compute_kernel_metric_value SET value = NULL WHERE kernel_uuid = 7
               AND value_name = 'Avg' AND metric_uuid =
               (SELECT metric_uuid FROM compute_metric_definition WHERE metric_id = '2.1.17');",
        )
        .expect("edit");
    let base = fixture(DB);
    let doc = super::json_of(
        "counters",
        &[
            "--from",
            base.to_str().expect("utf-8"),
            "--from",
            cand.to_str().expect("utf-8"),
            "--kernel",
            "generate_sobol",
        ],
    );
    assert_eq!(doc["sides"], serde_json::json!(["baseline", "candidate"]));
    let changes = doc["changes"].as_array().expect("changes");
    let of = |m: &str| {
        changes
            .iter()
            .find(|c| c["metric"] == m)
            .unwrap_or_else(|| panic!("{m}: {changes:?}"))
    };
    let flops = of("2.1.0 VALU FLOPs (Avg)");
    assert_eq!(flops["unit"], "Gflop/s");
    assert_eq!(flops["baseline"].as_f64(), Some(468.1142857142857));
    assert_eq!(flops["candidate"].as_f64(), Some(2.0 * 468.1142857142857));
    assert_eq!(flops["change"].as_f64(), Some(1.0));
    let occupancy = of("2.1.17 Wavefront Occupancy (Avg)");
    assert!(occupancy["candidate"].is_null() && occupancy["change"].is_null());
    assert_eq!(occupancy["unavailable"], "the candidate lacks the figure");
    // Every other value of the default selection (2.1) is unchanged: a change of 0, or
    // unavailable with both sides equal (NULL on both, or a zero baseline).
    for c in changes {
        if c["metric"] == "2.1.0 VALU FLOPs (Avg)"
            || c["metric"] == "2.1.17 Wavefront Occupancy (Avg)"
        {
            continue;
        }
        assert!(
            c["change"].as_f64() == Some(0.0)
                || (c["change"].is_null() && c["baseline"] == c["candidate"]),
            "{c}"
        );
    }
}

/// `roofline DB`: rocprof-compute's benchmark peaks as the ceilings and each kernel's stored
/// point placed, against SQL over `compute_kernel_roofline_data` and
/// `roofline_bench_extdata`.
#[test]
fn roofline_of_a_rocprof_compute_db_places_its_points_under_its_peaks_against_sql() {
    let path = fixture(DB);
    let c =
        rusqlite::Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("db");
    let (hbm, fp32): (f64, f64) = c
        .query_row(
            "SELECT json_extract(roofline_bench_extdata, '$.HBMBw'),
                    json_extract(roofline_bench_extdata, '$.FP32Flops') FROM compute_workload",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("peaks");
    let doc = super::json_of("roofline", &[path.to_str().expect("utf-8")]);
    assert_eq!(doc["device"], "MI350 (gfx950)");
    assert_eq!(doc["bandwidth"]["value"].as_f64(), Some(hbm * 1e9));
    assert!(doc["ceilings_source"]
        .as_str()
        .is_some_and(|s| s.contains("roofline_bench_extdata")));
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("rocprof-compute's own roofline points"),
        "{notes}"
    );
    let families = doc["families"].as_array().expect("families");
    let mut q = c
        .prepare(
            "SELECT k.kernel_name, r.total_flops, r.hbm_cache_data
             FROM compute_kernel_roofline_data r JOIN compute_kernel k USING (kernel_uuid)",
        )
        .expect("query");
    let points: Vec<(String, f64, f64)> = q
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    assert_eq!(points.len(), 7);
    assert_eq!(families.len(), 7, "one row per kernel");
    for (name, gflops, ai) in &points {
        // The family row of the kernel: its full name where its family holds two kernels.
        let f = families
            .iter()
            .find(|f| f["family"] == name.as_str())
            .or_else(|| {
                families.iter().find(|f| {
                    f["family"]
                        .as_str()
                        .is_some_and(|fam| name.contains(fam) && !fam.contains('<'))
                })
            })
            .unwrap_or_else(|| panic!("{name}"));
        assert_eq!(f["roof"], "fp32");
        let p = &f["placement"];
        assert_eq!(
            p["flop_per_s"]["value"].as_f64(),
            Some(gflops * 1e9),
            "{name}"
        );
        assert_eq!(p["intensity"]["value"].as_f64(), Some(*ai), "{name}");
        if *gflops > 0.0 {
            let attainable = (ai * hbm).min(fp32);
            let fraction = p["fraction"]["value"].as_f64().expect("fraction");
            assert!((fraction - gflops / attainable).abs() < 1e-9, "{name}");
            assert_eq!(p["bound"], "memory");
        } else {
            assert!(p["fraction"]["value"].is_null(), "{name}");
        }
    }
}

#[test]
fn hostile_rocprof_compute_dbs_exit_2_for_counters_and_roofline_naming_the_place() {
    let dir = tempfile::tempdir().expect("tmp");
    let hostile = |name: &str, sql: &str| {
        let p = dir.path().join(name);
        std::fs::copy(fixture(DB), &p).expect("copy");
        rusqlite::Connection::open(&p)
            .expect("db")
            .execute_batch(&format!("PRAGMA foreign_keys = OFF; {sql}"))
            .expect("edit");
        p
    };
    let run = |args: &[&std::ffi::OsStr], want: &[&str]| {
        let out = kernelab().args(args).output().expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(!err.contains("panicked"), "{err}");
        for w in want {
            assert!(err.contains(w), "{w}: {err}");
        }
    };
    let counters = |p: &Path, want: &[&str]| {
        run(
            &["counters".as_ref(), "--from".as_ref(), p.as_os_str()],
            want,
        )
    };
    let roofline = |p: &Path, want: &[&str]| run(&["roofline".as_ref(), p.as_os_str()], want);
    let text = hostile(
        "text.db",
        "UPDATE compute_kernel_metric_value SET value = 'high' WHERE value_uuid = 5",
    );
    counters(
        &text,
        &["text.db", "compute_kernel_metric_value.value (row 5)"],
    );
    let orphan = hostile(
        "orphan.db",
        "UPDATE compute_kernel_metric_value SET metric_uuid = 99999 WHERE value_uuid = 7",
    );
    counters(
        &orphan,
        &[
            "orphan.db",
            "compute_kernel_metric_value.metric_uuid (row 7)",
            "99999",
        ],
    );
    let bench = hostile(
        "bench.db",
        "UPDATE compute_workload SET roofline_bench_extdata = '{\"HBMBw\": \"fast\"'",
    );
    roofline(
        &bench,
        &[
            "bench.db",
            "compute_workload.roofline_bench_extdata (row 1)",
        ],
    );
    let point = hostile(
        "point.db",
        "UPDATE compute_kernel_roofline_data SET kernel_uuid = 42 WHERE roofline_uuid = 4",
    );
    roofline(
        &point,
        &[
            "point.db",
            "compute_kernel_roofline_data.kernel_uuid (row 4)",
            "42",
        ],
    );
    let bytes = std::fs::read(fixture(DB)).expect("read");
    let cut = dir.path().join("cut.db");
    std::fs::write(&cut, &bytes[..bytes.len() / 3]).expect("write");
    counters(&cut, &["cut.db"]);
    roofline(&cut, &["cut.db"]);
}
