//! Hostile and impossible text, JSON and SQLite inputs and option values: each is refused
//! with exit 2 and a located message (or read), never a panic, abort or hang. Every run is
//! under a 2 GiB address-space ceiling and a time limit.

use super::fixture;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

/// Runs kernelab with `args` under `ulimit -v 2097152` (2 GiB) and a 60 s limit.
fn capped<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("kernelab");
    assert_cmd::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 2097152; exec "$0" "$@""#)
        .arg(bin)
        .envs(kernelab_testkit::isolated_env())
        .args(args)
        .env_remove("COLUMNS")
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs")
}

/// Asserts exit code `code`, that stderr holds every needle, and that nothing panicked.
fn assert_fails(out: &Output, code: i32, needles: &[&str]) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "exit code; stderr: {err}");
    for n in needles {
        assert!(err.contains(n), "stderr should contain {n:?}: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

fn profile(path: &Path) -> Output {
    capped(&[std::ffi::OsStr::new("profile"), path.as_os_str()])
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).expect("write");
    p
}

#[test]
fn fifo_and_device_are_not_regular_files() {
    let dir = tempfile::tempdir().expect("tmp");
    let fifo = dir.path().join("trace.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let out = profile(&fifo);
    assert_fails(
        &out,
        2,
        &[&format!("{}: not a regular file", fifo.display())],
    );
    let out = profile(Path::new("/dev/zero"));
    assert_fails(&out, 2, &["/dev/zero: not a regular file"]);
    // The rules file and the pairs file are opened the same way.
    let out = capped(&[
        std::ffi::OsStr::new("profile"),
        fixture("rocprofv3_kernel_stats_jacobi.csv").as_os_str(),
        std::ffi::OsStr::new("--rules"),
        fifo.as_os_str(),
    ]);
    assert_fails(&out, 2, &["not a regular file"]);
    let out = capped(&[
        std::ffi::OsStr::new("ab"),
        std::ffi::OsStr::new("analyze"),
        fifo.as_os_str(),
    ]);
    assert_fails(
        &out,
        2,
        &["cannot read the samples file", "not a regular file"],
    );
}

fn kernel_event(dur: &str) -> Vec<u8> {
    format!(
        r#"{{"traceEvents": [{{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": {dur}}}]}}"#
    )
    .into_bytes()
}

#[test]
fn kineto_negative_and_huge_durations_are_located() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = write(dir.path(), "neg.json", &kernel_event("-5"));
    assert_fails(
        &profile(&p),
        2,
        &[
            "neg.json: byte 17",
            "`dur`",
            "expected a non-negative duration, found -5000",
        ],
    );
    let p = write(dir.path(), "exp.json", &kernel_event("1e999999999"));
    assert_fails(
        &profile(&p),
        2,
        &[
            "exp.json: byte 17",
            "`dur`",
            "decimal number of microseconds",
        ],
    );
    let digits = "9".repeat(1 << 20);
    let p = write(dir.path(), "digits.json", &kernel_event(&digits));
    assert_fails(&profile(&p), 2, &["digits.json: byte 17", "`dur`"]);
    let p = write(dir.path(), "zero.json", &kernel_event("0e999999999"));
    let out = profile(&p);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn kineto_deep_nesting_and_deep_templates_do_not_overflow() {
    let dir = tempfile::tempdir().expect("tmp");
    let depth = 1_000_000;
    let mut ev = br#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"x": "#.to_vec();
    ev.extend(std::iter::repeat_n(b'[', depth));
    ev.extend(std::iter::repeat_n(b']', depth));
    ev.extend_from_slice(b"}}]}");
    let p = write(dir.path(), "deep.json", &ev);
    // Skipped members are not recursed into: read, no stack overflow.
    let out = profile(&p);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let levels = 100_000;
    let name = format!("void f{}x{}(int)", "<a".repeat(levels), ">".repeat(levels));
    let ev = format!(
        r#"{{"traceEvents": [{{"ph": "X", "cat": "kernel", "name": "{name}", "ts": 1, "dur": 1}}]}}"#
    );
    let p = write(dir.path(), "templates.json", ev.as_bytes());
    let out = profile(&p);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(" f"),
        "family key f"
    );
}

#[test]
fn csv_negative_and_nan_values_are_located() {
    let dir = tempfile::tempdir().expect("tmp");
    let header = "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\",\"StdDev\"\n";
    let p = write(
        dir.path(),
        "stats.csv",
        format!("{header}\"k\",3,-5,1.0,100,1,2,0.5\n").as_bytes(),
    );
    assert_fails(
        &profile(&p),
        2,
        &["stats.csv: line 2", "TotalDurationNs", "not negative", "-5"],
    );
    let p = write(
        dir.path(),
        "nan.csv",
        format!("{header}\"k\",3,5,1.0,100,1,2,NaN\n").as_bytes(),
    );
    assert_fails(
        &profile(&p),
        2,
        &["nan.csv: line 2", "StdDev", "finite, not negative", "NaN"],
    );
    let p = write(
        dir.path(),
        "calls.csv",
        format!("{header}\"k\",-3,5,1.0,100,1,2,0.5\n").as_bytes(),
    );
    assert_fails(
        &profile(&p),
        2,
        &["calls.csv: line 2", "Calls", "call count (not negative)"],
    );
    let ncu = concat!(
        r#""ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value""#,
        "\n",
        r#""0","1","p","h","k","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0","S","gpu__time_duration.sum","ns","-5""#,
        "\n"
    );
    let p = write(dir.path(), "ncu.csv", ncu.as_bytes());
    assert_fails(
        &profile(&p),
        2,
        &[
            "ncu.csv: line 2",
            "gpu__time_duration.sum",
            "non-negative, finite duration in ns",
            "-5",
        ],
    );
}

/// A rocpd-shaped database with one kernel named by `name` (an SQL expression).
fn rocpd(path: &Path, name: &str, start: i64, end: i64) {
    let c = rusqlite::Connection::open(path).expect("db");
    c.execute_batch(&format!(
        "CREATE TABLE rocpd_kernel_dispatch (id INTEGER);
         CREATE TABLE kernels (name TEXT, start INTEGER, \"end\" INTEGER);
         INSERT INTO kernels VALUES ({name}, {start}, {end});"
    ))
    .expect("schema");
}

#[test]
fn sqlite_invalid_utf8_text_is_read_lossily_and_negative_spans_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("bad_text.db");
    rocpd(&p, "CAST(X'6BFF6E' AS TEXT)", 10, 20);
    let out = profile(&p);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("k\u{fffd}n"), "lossy name: {all}");
    assert!(
        all.contains("1 TEXT values in the rocpd database were not valid UTF-8"),
        "{all}"
    );
    let p = dir.path().join("neg.db");
    rocpd(&p, "'k'", 20, 10);
    assert_fails(
        &profile(&p),
        2,
        &[
            "neg.db",
            "kernels.end (row 1)",
            "non-negative duration",
            "start 20, end 10",
        ],
    );
    let p = dir.path().join("overflow.db");
    rocpd(&p, "'k'", i64::MIN, i64::MAX);
    assert_fails(&profile(&p), 2, &["overflow.db", "kernels.end (row 1)"]);
    let p = dir.path().join("nsys.db");
    let c = rusqlite::Connection::open(&p).expect("db");
    c.execute_batch(
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO StringIds VALUES (1, CAST(X'C328' AS TEXT));
         CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, \"end\" INTEGER, demangledName INTEGER);
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 50, 1);",
    )
    .expect("schema");
    drop(c);
    assert_fails(
        &profile(&p),
        2,
        &["nsys.db", "CUPTI_ACTIVITY_KIND_KERNEL", "start 100, end 50"],
    );
}

fn pairs_file(dir: &Path) -> std::path::PathBuf {
    let mut text = String::from("a,b\n");
    for k in 0..40 {
        text.push_str(&format!("{},{}\n", 100 + k % 7, 103 + k % 5));
    }
    write(dir, "pairs.csv", text.as_bytes())
}

#[test]
fn ab_options_out_of_range_are_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let pairs = pairs_file(dir.path());
    let p = pairs.to_str().expect("utf-8 path");
    let cases: &[(&[&str], &str)] = &[
        (&["--alpha", "0"], "--alpha 0: expected a value in (0, 0.5]"),
        (
            &["--alpha", "0.7"],
            "--alpha 0.7: expected a value in (0, 0.5]",
        ),
        (&["--alpha", "NaN"], "expected a value in (0, 0.5]"),
        (
            &["--max-pairs", "18446744073709551615"],
            "--max-pairs 18446744073709551615: expected at most 10000000",
        ),
        (
            &["--min-pairs", "50", "--max-pairs", "20"],
            "expected 2 <= min <= max",
        ),
        (
            &["--threshold", "nan"],
            "--threshold \"nan\": expected a finite fraction in [0, 1)",
        ),
        (
            &["--threshold=-1%"],
            "--threshold \"-1%\": expected a finite fraction in [0, 1)",
        ),
        (
            &["--until", "inf"],
            "--until \"inf\": expected a finite fraction in (0, 1)",
        ),
    ];
    for (opts, msg) in cases {
        let mut args = vec!["ab", "analyze", p];
        args.extend_from_slice(opts);
        assert_fails(&capped(&args), 2, &[msg]);
    }
    // Tiny alpha is valid: no interval, no panic.
    let out = capped(&["ab", "analyze", p, "--alpha", "1e-300", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = capped(&[
        "ab",
        "--baseline",
        "true",
        "--candidate",
        "true",
        "--timeout=-1",
    ]);
    assert_fails(
        &out,
        2,
        &["invalid value '-1' for '--timeout <SECONDS>': \"-1\": expected seconds in (0, 86400]"],
    );
    let out = capped(&[
        "ab",
        "--baseline",
        "true",
        "--candidate",
        "true",
        "--warmup",
        "99999999999",
    ]);
    assert_fails(
        &out,
        2,
        &["--warmup 99999999999: expected at most 10000000"],
    );
    let out = capped(&[
        "profile",
        fixture("rocprofv3_kernel_stats_jacobi.csv")
            .to_str()
            .expect("p"),
        "--top",
        "18446744073709551615",
    ]);
    assert_fails(
        &out,
        2,
        &["--top 18446744073709551615: expected at most 1000000"],
    );
}

/// `kernelab profile PATH` under the caps of [`capped`], with `$KERNELAB_THREADS` set.
fn profile_threads(path: &Path, threads: &str) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("kernelab");
    assert_cmd::Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 2097152; exec "$0" "$@""#)
        .arg(bin)
        .envs(kernelab_testkit::isolated_env())
        .arg("profile")
        .arg(path)
        .env_remove("COLUMNS")
        .env("KERNELAB_THREADS", threads)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs")
}

/// A kernel table large enough to be read in rowid ranges on several threads: the same
/// ranking on one thread and on several, and with a malformed row late in it, the same
/// message, naming the file and what was expected.
#[test]
fn a_large_nsys_kernel_table_reads_the_same_on_every_core() {
    let dir = tempfile::tempdir().expect("tmp");
    let make = |name: &str, bad: &str| {
        let p = dir.path().join(name);
        let c = rusqlite::Connection::open(&p).expect("db");
        c.execute_batch(&format!(
            "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
             INSERT INTO StringIds VALUES (1, 'gemm'), (2, 'softmax'), (3, 'copy');
             CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, \"end\" INTEGER,
               deviceId INTEGER, streamId INTEGER, demangledName INTEGER, gridX INTEGER,
               gridY INTEGER, gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);
             WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 100000)
             INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT i * 10, i * 10 + i % 9, 0, i % 2,
               i % 3 + 1, i % 5 + 1, 1, 1, 256, 1, 1 FROM r;
             {bad}"
        ))
        .expect("schema");
        p
    };
    let good = make("good.sqlite", "");
    let one = profile_threads(&good, "1");
    assert_eq!(
        one.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );
    for threads in ["2", "3"] {
        let many = profile_threads(&good, threads);
        assert_eq!(many.status.code(), Some(0));
        assert_eq!(one.stdout, many.stdout, "{threads} threads");
    }
    let bad = make(
        "bad.sqlite",
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET \"end\" = 0 WHERE rowid = 90000;",
    );
    let one = profile_threads(&bad, "1");
    assert_fails(
        &one,
        2,
        &[
            "bad.sqlite",
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "start 900000, end 0",
        ],
    );
    for threads in ["2", "3"] {
        let many = profile_threads(&bad, threads);
        assert_eq!(one.stderr, many.stderr, "{threads} threads");
        assert_eq!(many.status.code(), Some(2));
    }
}
