//! `kernelab export --parquet`: real fixtures written as Parquet and read back with DuckDB,
//! compared with kernelab's own `profile --format json` tables.

use crate::{fixture, kernelab, profile_json};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::Command;

/// Runs a DuckDB query through python3 and returns its rows as JSON, or `None` with a printed
/// reason when python3 or the duckdb module is absent.
fn duckdb(sql: &str) -> Option<serde_json::Value> {
    let script = "import duckdb, json, sys\n\
                  rows = duckdb.sql(sys.argv[1]).fetchall()\n\
                  print(json.dumps([[v if isinstance(v, (str, bool, type(None))) else float(v) for v in r] for r in rows]))";
    let out = match Command::new("python3").args(["-c", script, sql]).output() {
        Ok(o) => o,
        Err(e) => {
            kernelab_testkit::skip(
                "python3",
                format!("python3 is absent ({e}); the Parquet read-back needs it"),
            );
            return None;
        }
    };
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        if err.contains("No module named 'duckdb'") {
            kernelab_testkit::skip(
                "duckdb",
                "the duckdb Python module is absent (pip install duckdb; .ci/run installs it)",
            );
            return None;
        }
        panic!("duckdb query failed: {err}");
    }
    Some(serde_json::from_slice(&out.stdout).expect("JSON rows"))
}

fn pq(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string().replace('\'', "''")
}

#[test]
fn dispatches_and_samples_read_back_with_duckdb() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // The kernel run samples fixture, gunzipped.
    let mut text = String::new();
    flate2::read::GzDecoder::new(
        std::fs::File::open(fixture("h200_kernel/all.samples.jsonl.gz")).expect("fixture"),
    )
    .read_to_string(&mut text)
    .expect("gunzip");
    let samples = tmp.path().join("all.samples.jsonl");
    std::fs::write(&samples, &text).expect("write samples");
    let trace = fixture("kineto_gdn_chunk_T8192.json.gz");
    let ab = fixture("h200_ab/ab_proc_w4s3_w8s2.jsonl");
    let out = tmp.path().join("out");
    kernelab()
        .args(["export", "--parquet"])
        .arg(&out)
        .arg(&trace)
        .arg(&samples)
        .arg(&ab)
        .assert()
        .success();
    for f in [
        "dispatches.parquet",
        "kernel_samples.parquet",
        "ab_samples.parquet",
    ] {
        assert!(out.join(f).is_file(), "{f} written");
    }

    // The gzipped fixture is read as it is, to the same rows.
    let gz_out = tmp.path().join("gz");
    kernelab()
        .args(["export", "--parquet"])
        .arg(&gz_out)
        .arg(fixture("h200_kernel/all.samples.jsonl.gz"))
        .assert()
        .success()
        .stdout(predicates::str::contains(format!(
            "{} rows",
            text.lines().filter(|l| !l.trim().is_empty()).count()
        )));

    // A second export into the same folder replaces nothing and names the file.
    let again = kernelab()
        .args(["export", "--parquet"])
        .arg(&out)
        .arg(&trace)
        .output()
        .expect("runs");
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("dispatches.parquet"));

    let profile = profile_json(&["--group", "none", trace.to_str().expect("utf-8")]);
    let mut want: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for k in profile["kernels"].as_array().expect("kernels") {
        want.insert(
            k["name"].as_str().expect("name").to_string(),
            (
                k["calls"].as_f64().expect("calls"),
                k["total_ns"].as_f64().expect("total"),
            ),
        );
    }
    assert_eq!(want.len(), 7, "the trace's seven kernels");

    let Some(rows) = duckdb(&format!(
        "select name, count(*), sum(duration_ns) from '{}' group by name order by name",
        pq(&out, "dispatches.parquet")
    )) else {
        return;
    };
    let mut got = BTreeMap::new();
    for r in rows.as_array().expect("rows") {
        got.insert(
            r[0].as_str().expect("name").to_string(),
            (r[1].as_f64().expect("n"), r[2].as_f64().expect("sum")),
        );
    }
    assert_eq!(
        got, want,
        "DuckDB per-name counts and totals match kernelab profile"
    );
    let total = duckdb(&format!(
        "select count(*), sum(duration_ns) from '{}'",
        pq(&out, "dispatches.parquet")
    ))
    .expect("duckdb");
    assert_eq!(
        total[0][0].as_f64(),
        profile["summary"]["kernel_count"].as_f64()
    );
    assert_eq!(
        total[0][1].as_f64(),
        profile["summary"]["kernel_time_ns"].as_f64()
    );

    // kernel run samples: one row per line, the sample's fields as columns.
    let lines = text.lines().filter(|l| !l.trim().is_empty()).count() as f64;
    let k = duckdb(&format!(
        "select count(*), count(distinct spec), sum(ns_per_launch) from '{}'",
        pq(&out, "kernel_samples.parquet")
    ))
    .expect("duckdb");
    assert_eq!(k[0][0].as_f64(), Some(lines));
    let mut sum = 0.0;
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
        // The fixture predates schema version 4 (µs); the export holds nanoseconds.
        sum += v["sample"]["us_per_launch"].as_f64().expect("us") * 1e3;
    }
    let got_sum = k[0][2].as_f64().expect("sum");
    assert!((got_sum - sum).abs() <= 1e-6 * sum, "{got_sum} vs {sum}");

    // ab samples: one row per (run, metric).
    let mut runs = 0.0;
    let mut ab_sum = 0.0;
    for l in std::fs::read_to_string(&ab).expect("ab").lines() {
        let v: serde_json::Value = serde_json::from_str(l).expect("JSON line");
        if v["kind"] == "run" {
            for m in v["values"].as_array().expect("values") {
                runs += 1.0;
                ab_sum += m["value"].as_f64().expect("value");
            }
        }
    }
    let a = duckdb(&format!(
        "select count(*), sum(value) from '{}'",
        pq(&out, "ab_samples.parquet")
    ))
    .expect("duckdb");
    assert_eq!(a[0][0].as_f64(), Some(runs));
    assert!((a[0][1].as_f64().expect("sum") - ab_sum).abs() < 1e-6 * ab_sum.abs().max(1.0));
}

/// The results folder of a two-point-per-build tensor sweep run under `root`.
fn swept(root: &std::path::Path) -> std::path::PathBuf {
    let sweep = crate::sweep::tensor_sweep(root, 2);
    let dir = root.join("results");
    let run = kernelab()
        .args(["sweep", "--format", "json", "--dir"])
        .arg(&dir)
        .arg(&sweep)
        .output()
        .expect("run");
    // The flip build fails its bitwise gate: exit 1.
    assert_eq!(run.status.code(), Some(1));
    dir
}

#[test]
fn a_sweep_folder_becomes_one_row_per_point() {
    let t = tempfile::tempdir().expect("tempdir");
    let dir = swept(t.path());
    let out = t.path().join("pq");
    kernelab()
        .args(["export", "--parquet"])
        .arg(&out)
        .arg(&dir)
        .assert()
        .success();
    let Some(rows) = duckdb(&format!(
        "select build, count(*), count(*) filter (where bitwise), count(*) filter (where code_changed), \
         count(*) filter (where verdict = 'fail') from '{}' group by build order by build",
        pq(&out, "sweep_points.parquet")
    )) else {
        return;
    };
    assert_eq!(
        rows,
        serde_json::json!([["flip", 2.0, 0.0, 2.0, 2.0], ["same", 2.0, 2.0, 0.0, 0.0]])
    );
    let ns = duckdb(&format!(
        "select param_n from '{}' order by id",
        pq(&out, "sweep_points.parquet")
    ))
    .expect("duckdb");
    assert_eq!(ns, serde_json::json!([["1"], ["2"], ["1"], ["2"]]));
    // Durations in their declared types (schema version 4: nanoseconds).
    let types = duckdb(&format!(
        "select typeof(wall_ns), typeof(baseline_ns), wall_ns > 0 from '{}' limit 1",
        pq(&out, "sweep_points.parquet")
    ))
    .expect("duckdb");
    assert_eq!(types, serde_json::json!([["BIGINT", "DOUBLE", true]]));
}

#[test]
fn serve_records_are_not_taken_for_ab_runs() {
    // Lines shaped as crates/runner/src/serve/samples.rs writes them (they too carry `kind`
    // and `slot`).
    let t = tempfile::tempdir().expect("tempdir");
    let samples = t.path().join("serve.samples.jsonl");
    std::fs::write(
        &samples,
        concat!(
            r#"{"kind":"header","schema_version":1,"spec":{},"spec_sha256":"00","spec_dir":".","start":"AB"}"#,
            "\n",
            r#"{"kind":"start","round":0,"slot":"A","health_s":1.5,"error":null,"log":"a.log"}"#,
            "\n",
            r#"{"kind":"point","round":0,"slot":"A","case":0,"concurrency":4,"wall_s":2.5,"guard":{"ok":true}}"#,
            "\n",
        ),
    )
    .expect("write");
    let out = t.path().join("pq");
    kernelab()
        .args(["export", "--parquet"])
        .arg(&out)
        .arg(&samples)
        .assert()
        .success();
    assert!(!out.join("ab_samples.parquet").exists());
    let Some(rows) = duckdb(&format!(
        "select kind, slot, wall_s, guard_ok from '{}' order by line",
        pq(&out, "serve_samples.parquet")
    )) else {
        return;
    };
    // `guard_ok` is no declared column: kept as text (types are never taken from values).
    assert_eq!(
        rows,
        serde_json::json!([["start", "A", null, null], ["point", "A", 2.5, "true"]])
    );
}

/// Issue 27: column types are declared, never taken from the values: a column that is all null
/// in one run's export (serve's `send_lag_s` of a run before it was measured) keeps its
/// declared double type, so DuckDB reads two exports of different runs together without
/// turning the other run's numbers into booleans.
#[test]
fn issue27_two_exports_of_different_runs_read_together_in_duckdb() {
    let tmp = tempfile::tempdir().expect("tmp");
    let fixture_text = std::fs::read_to_string(fixture("serve/h200/eager_vs_sdpa.samples.jsonl"))
        .expect("fixture");
    let later = tmp.path().join("later.samples.jsonl");
    std::fs::write(
        &later,
        fixture_text.replace("\"send_lag_s\":null", "\"send_lag_s\":0.25"),
    )
    .expect("writes");
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    for (out, input) in [
        (&a, fixture("serve/h200/eager_vs_sdpa.samples.jsonl")),
        (&b, later.clone()),
    ] {
        kernelab()
            .args(["export", "--parquet"])
            .arg(out)
            .arg(&input)
            .assert()
            .success();
    }
    let Some(rows) = duckdb(&format!(
        "select typeof(send_lag_s), typeof(measured_ttft_s), count(*), count(send_lag_s), sum(send_lag_s) \
         from read_parquet(['{}', '{}']) where kind = 'request' group by all",
        pq(&a, "serve_samples.parquet"),
        pq(&b, "serve_samples.parquet")
    )) else {
        return;
    };
    assert_eq!(
        rows,
        serde_json::json!([["DOUBLE", "DOUBLE", 288.0, 144.0, 36.0]]),
        "the null column of one run and the numbers of the other are one double column"
    );
    // The all-null column is typed double in the first export alone too.
    let one = duckdb(&format!(
        "select typeof(send_lag_s), typeof(error) from '{}' limit 1",
        pq(&a, "serve_samples.parquet")
    ))
    .expect("duckdb");
    assert_eq!(one, serde_json::json!([["DOUBLE", "VARCHAR"]]));
}

/// Issue 27: a value of another type than its column declares is refused, naming file, line and
/// column, and nothing is written.
#[test]
fn issue27_a_value_against_the_declared_type_is_exit_2_naming_the_line() {
    let t = tempfile::tempdir().expect("tmp");
    let samples = t.path().join("ab.jsonl");
    std::fs::write(
        &samples,
        "{\"kind\":\"header\",\"schema_version\":3,\"baseline\":[\"a\"],\"candidate\":[\"b\"],\"metrics\":[\"t\"],\"start\":\"AB\"}\n\
         {\"kind\":\"run\",\"pair\":\"zero\",\"aa\":false,\"order\":\"AB\",\"slot\":\"A\",\"values\":[{\"name\":\"t\",\"value\":1.0}],\"exit_code\":0}\n",
    )
    .expect("writes");
    let out = t.path().join("pq");
    let o = kernelab()
        .args(["export", "--parquet"])
        .arg(&out)
        .arg(&samples)
        .output()
        .expect("runs");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("ab.jsonl: line 2: `pair`: expected an integer, found \"zero\""),
        "{err}"
    );
    assert!(!out.exists(), "nothing written");
}

/// Issue 27: the header's run kind decides the table; an ab failure record is no serve sample.
#[test]
fn issue27_the_header_names_the_table_and_an_ab_failure_is_no_serve_row() {
    let t = tempfile::tempdir().expect("tmp");
    let samples = t.path().join("samples.jsonl");
    std::fs::write(
        &samples,
        "{\"kind\":\"header\",\"run\":\"ab\",\"id\":\"ab-x\",\"schema_version\":3,\"baseline\":[\"a\"],\"candidate\":[\"b\"],\"metrics\":[\"t\"],\"start\":\"AB\"}\n\
         {\"kind\":\"run\",\"pair\":0,\"aa\":false,\"order\":\"AB\",\"slot\":\"A\",\"values\":[{\"name\":\"t\",\"value\":1.0}],\"exit_code\":0}\n\
         {\"kind\":\"failure\",\"pair\":0,\"aa\":false,\"slot\":\"B\",\"reason\":\"exit status 1\"}\n",
    )
    .expect("writes");
    let out = t.path().join("pq");
    kernelab()
        .args(["export", "--parquet"])
        .arg(&out)
        .arg(&samples)
        .assert()
        .success()
        .stdout(predicates::str::contains("ab_samples.parquet\t1 row\n"));
    assert!(!out.join("serve_samples.parquet").exists());
}

/// Issue 24: rows are written in row groups as they are read (the inputs are read twice: once
/// to find the columns, once to write), so an export holds one batch, not the whole file.
#[test]
fn a_samples_file_larger_than_a_row_group_is_written_in_several() {
    use std::io::Write;
    let t = tempfile::tempdir().expect("tmp");
    let samples = t.path().join("kernel.jsonl");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&samples).expect("create"));
    writeln!(
        f,
        "{{\"kind\":\"header\",\"schema_version\":4,\"run\":\"kernel_run\",\"id\":\"x\",\"label\":\"x\",\"started\":\"2026-12-01T00:00:00Z\",\"plan\":{{}}}}"
    )
    .expect("write");
    let n: u64 = 140_000;
    let mut sum = 0u64;
    for i in 0..n {
        let ns = 1000 + i % 97;
        sum += ns;
        writeln!(
            f,
            "{{\"kind\":\"sample\",\"spec\":\"s.toml\",\"sample\":{{\"round\":{},\"build\":\"b\",\"sample\":{i},\"batch\":1,\"ns_per_launch\":{ns}.0}}}}",
            i / 1000
        )
        .expect("write");
    }
    drop(f);
    let out = t.path().join("pq");
    kernelab()
        .args(["export", "--parquet"])
        .arg(&out)
        .arg(&samples)
        .assert()
        .success();
    let file = pq(&out, "kernel_samples.parquet");
    let Some(rows) = duckdb(&format!(
        "select count(*), sum(ns_per_launch), max(line) from '{file}'"
    )) else {
        return;
    };
    assert_eq!(
        rows,
        serde_json::json!([[n as f64, sum as f64, (n + 1) as f64]])
    );
    let groups = duckdb(&format!(
        "select count(distinct row_group_id) from parquet_metadata('{file}')"
    ))
    .expect("duckdb");
    // 140,000 rows in groups of 65,536: three.
    assert_eq!(groups, serde_json::json!([[3.0]]));
    // Nothing else is left in the output folder (no temporary file).
    let names: Vec<String> = std::fs::read_dir(&out)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["kernel_samples.parquet".to_string()]);
}

/// A sweep's timed kernel point is an experiment run (header kind `sweep_point`, made by the
/// runner's one run type); its sample lines become `kernel_samples` rows naming their point,
/// and the header is not a row.
#[test]
fn a_sweep_points_samples_are_kernel_samples_naming_the_point() {
    let t = tempfile::tempdir().expect("tmp");
    let run = crate::runs::sweep_point_run(&t.path().join("runs"), &[1500.0, 1520.0, 1490.0]);
    let head = std::fs::read_to_string(&run.samples).expect("read");
    assert!(head.starts_with("{\"kind\":\"header\""), "{head}");
    assert!(head.contains("\"run\":\"sweep_point\""), "{head}");
    let out = t.path().join("pq");
    kernelab()
        .args(["export", "--parquet"])
        .arg(&out)
        .arg(&run.samples)
        .assert()
        .success();
    let file = pq(&out, "kernel_samples.parquet");
    let Some(rows) = duckdb(&format!(
        "select count(*), min(point), sum(ns_per_launch), min(line) from '{file}'"
    )) else {
        return;
    };
    assert_eq!(rows, serde_json::json!([[3.0, "w4s3-T=2048", 4510.0, 2.0]]));
}

/// A results folder whose `matrix.json` was written before schema version 6 (no per-gate
/// `gates` lines) still exports: one row per point.
#[test]
fn a_sweep_folder_written_before_version_6_still_exports() {
    let t = tempfile::tempdir().expect("tempdir");
    let dir = swept(t.path());
    let path = dir.join("matrix.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    let body = m.as_object_mut().expect("object");
    assert!(
        body.remove("gates").is_some(),
        "a version 6 matrix has gates"
    );
    m["schema_version"] = serde_json::json!(5);
    std::fs::write(&path, serde_json::to_string(&m).expect("json")).expect("write");
    let out = t.path().join("pq");
    kernelab()
        .args(["export", "--parquet"])
        .arg(&out)
        .arg(&dir)
        .assert()
        .success();
    let Some(rows) = duckdb(&format!(
        "select count(*) from '{}'",
        pq(&out, "sweep_points.parquet")
    )) else {
        return;
    };
    assert_eq!(rows, serde_json::json!([[4.0]]));
}
