//! Hostile input, round 3 (issue 39), the runner: a `/metrics` body of 100,000 series, a request
//! trace one request past the cap, samples files with a 150 MB record or a 3 GB line, run
//! `state` files of 1 GiB, FIFOs and links, a kernel spec's `triton` metadata that is a FIFO,
//! profilers and `ab` commands whose daemons keep the output pipe open, and a sweep whose cached
//! point result says "pass" beside a failed gate. Each test asserts the exit code, the message's
//! file and place, and the time where a hang is the failure.

use crate::{fixture, kernelab, root};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn mkfifo(p: &Path) -> bool {
    std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `kernelab ARGS` in `dir` with the state folder `dir/state` and a limit of `limit`
/// seconds; the output and the wall time.
fn run_in(dir: &Path, args: &[&std::ffi::OsStr], limit: u64) -> (std::process::Output, Duration) {
    let t = Instant::now();
    let out = kernelab()
        .current_dir(dir)
        .env("XDG_STATE_HOME", dir.join("state"))
        .args(args)
        .timeout(Duration::from_secs(limit))
        .output()
        .expect("runs");
    (out, t.elapsed())
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

/// A serve spec of one trace case (`trace.csv` beside it) whose servers are never started.
fn trace_spec(dir: &Path, rows: usize, case: &str) -> PathBuf {
    use std::io::Write;
    let mut f =
        std::io::BufWriter::new(std::fs::File::create(dir.join("trace.csv")).expect("trace"));
    f.write_all(b"arrival_s,input_tokens,output_tokens\n")
        .expect("write");
    for _ in 0..rows {
        f.write_all(b"0,4,4\n").expect("write");
    }
    f.flush().expect("flush");
    let server = "argv = [\"false\", \"{port}\"]\nhealth_url = \"http://127.0.0.1:{port}/health\"\nhealth_timeout_s = 1\n";
    let text = format!(
        "[baseline]\n{server}\n[candidate]\n{server}\n[workload]\nrequests = 2\nwarmup = 0\n\n[[workload.case]]\ntrace = \"trace.csv\"\n{case}\nconcurrency = [1]\n\n[rounds]\ncount = 2\n"
    );
    let p = dir.join("spec.toml");
    std::fs::write(&p, text).expect("spec");
    p
}

#[test]
fn a_trace_one_request_past_the_cap_exits_2_naming_the_file_and_the_cap() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = trace_spec(dir.path(), 1_000_001, "");
    let (o, took) = run_in(
        dir.path(),
        &[os("serve"), spec.as_os_str(), os("--format"), os("json")],
        60,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    // The trace named, the line of request 1,000,001 (after the header), and the cap.
    assert!(err.contains("trace.csv: line 1000002"), "{err}");
    assert!(
        err.contains("the trace holds more than 1000000 requests"),
        "{err}"
    );
    assert!(err.contains("trace_limit"), "{err}");
    assert!(
        o.stdout.is_empty(),
        "no result: {}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    // A `trace_limit` asks for the first requests: the spec is read (the servers then fail to
    // start, which is another error, after the trace was read).
    let spec = trace_spec(dir.path(), 1_000_001, "trace_limit = 10");
    let (o, _) = run_in(
        dir.path(),
        &[os("serve"), spec.as_os_str(), os("--format"), os("json")],
        60,
    );
    assert!(!stderr(&o).contains("holds more than"), "{}", stderr(&o));
}

/// The kernel spec fixture with its code path made absolute and `extra` added to `[launch]`.
fn kernel_spec(dir: &Path, extra: &str) -> PathBuf {
    let text = std::fs::read_to_string(fixture("kernel/copy_scalar_vs_vec4.toml"))
        .expect("spec")
        .replace(
            "../code/copy_variants_sm90.cubin",
            &fixture("code/copy_variants_sm90.cubin")
                .display()
                .to_string(),
        )
        .replace("[launch]\n", &format!("[launch]\n{extra}\n"));
    let p = dir.join("k.toml");
    std::fs::write(&p, text).expect("write");
    p
}

#[test]
fn a_fifo_for_triton_metadata_or_a_kernel_spec_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let meta = d.join("meta.json");
    if !mkfifo(&meta) {
        kernelab_testkit::skip("mkfifo", "mkfifo is not available");
        return;
    }
    let spec = kernel_spec(d, "triton = \"meta.json\"");
    let (o, took) = run_in(
        d,
        &[os("kernel"), os("run"), os("--dry-run"), spec.as_os_str()],
        20,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("meta.json") && err.contains("not a regular file"),
        "{err}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
    // The kernel spec itself a FIFO.
    let fifo_spec = d.join("fifo.toml");
    assert!(mkfifo(&fifo_spec));
    let (o, took) = run_in(
        d,
        &[
            os("kernel"),
            os("run"),
            os("--dry-run"),
            fifo_spec.as_os_str(),
        ],
        20,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("fifo.toml") && err.contains("not a regular file"),
        "{err}"
    );
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn run_state_files_and_folders_that_are_links_fifos_or_1_gib_are_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let runs = d.join("state/kernelab/runs");
    let run = runs.join("ab-20250101T000000-000001");
    std::fs::create_dir_all(&run).expect("run");
    std::fs::write(
        run.join("samples.jsonl"),
        "{\"kind\":\"header\",\"schema_version\":3,\"run\":\"ab\",\"id\":\"ab-20250101T000000-000001\",\"baseline\":[\"true\"]}\n",
    )
    .expect("samples");
    let state = run.join("state");
    let outside = tempfile::tempdir().expect("tmp");
    let before = std::fs::read_dir(outside.path()).expect("ls").count();
    let mut cases: Vec<(&str, String)> = Vec::new();
    // 1 GiB, sparse.
    std::fs::File::create(&state)
        .and_then(|f| f.set_len(1 << 30))
        .expect("sparse");
    let (o, took) = run_in(d, &[os("runs")], 20);
    cases.push(("1 GiB", stderr(&o)));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(
        stderr(&o).contains("larger than the limit of 64 bytes"),
        "{}",
        stderr(&o)
    );
    // A FIFO.
    std::fs::remove_file(&state).expect("rm");
    if mkfifo(&state) {
        let (o, took) = run_in(d, &[os("runs")], 20);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(took < Duration::from_secs(5), "{took:?}");
        assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
        cases.push(("FIFO", stderr(&o)));
        std::fs::remove_file(&state).expect("rm");
    }
    // A link out of the state folder.
    std::fs::write(outside.path().join("s"), "complete\n").expect("write");
    std::os::unix::fs::symlink(outside.path().join("s"), &state).expect("link");
    let (o, _) = run_in(d, &[os("runs")], 20);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("a symbolic link where a run's state file is expected"));
    cases.push(("link", stderr(&o)));
    std::fs::remove_file(&state).expect("rm");
    for (what, err) in &cases {
        assert!(err.contains(&state.display().to_string()), "{what}: {err}");
    }
    // A run folder that is a link out of the state folder: `runs` and `--resume` refuse it.
    let elsewhere = outside.path().join("ab-x");
    std::fs::create_dir_all(&elsewhere).expect("dir");
    std::fs::copy(run.join("samples.jsonl"), elsewhere.join("samples.jsonl")).expect("copy");
    let link = runs.join("ab-linked");
    std::os::unix::fs::symlink(&elsewhere, &link).expect("link");
    let (o, _) = run_in(d, &[os("runs")], 20);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{}: a symbolic link where a run's folder is expected",
            link.display()
        )),
        "{err}"
    );
    let (o, _) = run_in(
        d,
        &[
            os("ab"),
            os("--resume"),
            os("ab-linked"),
            os("--baseline"),
            os("true"),
            os("--candidate"),
            os("true"),
        ],
        20,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("a symbolic link where a run's folder is expected"),
        "{err}"
    );
    // Nothing was written outside.
    assert_eq!(
        std::fs::read_dir(outside.path()).expect("ls").count(),
        before + 2
    );
    assert_eq!(std::fs::read_dir(&elsewhere).expect("ls").count(), 1);
}

/// A real `ab` samples file (two pairs of `true`) in `dir`: its text.
fn ab_samples(dir: &Path) -> String {
    let samples = dir.join("ab.jsonl");
    let (o, _) = run_in(
        dir,
        &[
            os("ab"),
            os("--baseline"),
            os("true"),
            os("--candidate"),
            os("true"),
            os("--no-aa"),
            os("--warmup"),
            os("0"),
            os("--fixed"),
            os("--min-pairs"),
            os("2"),
            os("--max-pairs"),
            os("2"),
            os("--samples"),
            samples.as_os_str(),
        ],
        60,
    );
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    std::fs::read_to_string(&samples).expect("samples")
}

/// `kernelab ab analyze FILE` under `/usr/bin/time`: the output, wall time and peak RSS (KiB).
fn analyze(dir: &Path, file: &Path) -> (std::process::Output, Duration, u64) {
    let rss = dir.join("rss");
    let t = Instant::now();
    let o = assert_cmd::Command::new("/usr/bin/time")
        .current_dir(dir)
        .envs(kernelab_testkit::isolated_env())
        .env("XDG_STATE_HOME", dir.join("state"))
        .args(["-f", "%M", "-o"])
        .arg(&rss)
        .arg(assert_cmd::cargo::cargo_bin("kernelab"))
        .args(["ab", "analyze"])
        .arg(file)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs");
    let took = t.elapsed();
    let kb = std::fs::read_to_string(&rss)
        .ok()
        .and_then(|t| t.lines().last()?.trim().parse().ok())
        .unwrap_or(0);
    (o, took, kb)
}

#[test]
fn an_ab_samples_file_with_a_3_gb_line_or_a_150_mb_record_is_read_within_its_caps() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let text = ab_samples(d);
    let lines = text.lines().count();
    for (name, size, end) in [
        ("torn.jsonl", 3_000_000_000u64, ""),
        ("record.jsonl", 150_000_000, "\"}\n"),
    ] {
        let samples = d.join(name);
        std::fs::write(&samples, format!("{text}{{\"kind\":\"run\",\"pad\":\"")).expect("write");
        // Zero bytes (sparse) to `size`, then the record's end.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&samples)
            .expect("open");
        f.set_len(size).expect("sparse");
        std::io::Write::write_all(&mut f, end.as_bytes()).expect("end");
        drop(f);
        let (o, took, kb) = analyze(d, &samples);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        let want = format!(
            "{}: line {}: a line longer than 67108864 bytes",
            samples.display(),
            lines + 1
        );
        assert!(err.contains(&want), "{name}: {err}");
        assert!(took < Duration::from_secs(10), "{name}: {took:?}");
        // The line is never held whole: about its 64 MiB cap, twice at most as it grows.
        assert!(kb < 300_000, "{name}: max RSS {kb} KiB");
    }
}

/// Kills the pids listed (one a line) in `file`; how many were listed.
fn kill_listed(file: &Path) -> usize {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let pids: Vec<&str> = text.split_whitespace().collect();
    for p in &pids {
        let _ = std::process::Command::new("kill").args(["-9", p]).status();
    }
    pids.len()
}

/// `kernelab counters` with the stand-in `profiler` on PATH, whose every invocation leaves a
/// daemon out of reach of the kill holding its standard error.
fn counters_with_escaped_daemons(profiler: &str, metrics: &str, listed: &str) {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::create_dir_all(d.join("state")).expect("state");
    std::fs::copy(
        root().join("tests/standins").join(profiler),
        bin.join(profiler),
    )
    .expect("copy");
    std::fs::write(d.join("listing.txt"), format!("{listed:<60} (listed)\n")).expect("listing");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&path));
    let t = Instant::now();
    let o = kernelab()
        .current_dir(d)
        .env("XDG_STATE_HOME", d.join("xdg"))
        .env("PATH", std::env::join_paths(paths).expect("PATH"))
        .env("STANDIN_STATE", d.join("state"))
        .env("STANDIN_FIXTURES", root().join("tests/fixtures"))
        .env("STANDIN_LISTING", d.join("listing.txt"))
        .env("STANDIN_HOSTILE", "escaped-daemon")
        .args(["counters", "--profiler", profiler, "--metrics", metrics])
        .args(["--repeats", "1", "--format", "json", "--", "true"])
        .timeout(Duration::from_secs(120))
        .output()
        .expect("runs");
    let took = t.elapsed();
    let daemons = kill_listed(&d.join("state/daemons"));
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{profiler}: {}",
        stderr(&o)
    );
    // Each side's run left one.
    assert!(daemons >= 2, "{profiler}: {daemons} daemons");
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(doc.to_string().contains(metrics), "{profiler}: {doc}");
    // Each was waited for at most `DRAIN_MAX` (2 s), not until it ended (300 s).
    assert!(took < Duration::from_secs(20), "{profiler}: {took:?}");
}

#[test]
fn a_profiler_daemon_out_of_reach_of_the_kill_holding_stderr_cannot_stall_counters() {
    counters_with_escaped_daemons("ncu", "gpu__time_duration.sum", "gpu__time_duration");
    counters_with_escaped_daemons("rocprofv3", "SQ_WAVES", "SQ_WAVES");
}

#[test]
fn an_ab_command_whose_daemon_holds_stdout_cannot_stall_the_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let script = d.join("cmd.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho '{{\"t\": 1.5}}'\nenv -i setsid sleep 300 </dev/null 2>/dev/null & echo $! >> {}\n",
            d.join("daemons").display()
        ),
    )
    .expect("script");
    std::process::Command::new("chmod")
        .args(["+x"])
        .arg(&script)
        .status()
        .expect("chmod");
    let cmd = script.display().to_string();
    let (o, took) = run_in(
        d,
        &[
            os("ab"),
            os("--baseline"),
            os(&cmd),
            os("--candidate"),
            os(&cmd),
            os("--no-aa"),
            os("--warmup"),
            os("0"),
            os("--fixed"),
            os("--min-pairs"),
            os("2"),
            os("--max-pairs"),
            os("2"),
            os("--metric-json"),
            os("t"),
            os("--format"),
            os("json"),
        ],
        120,
    );
    let daemons = kill_listed(&d.join("daemons"));
    let err = stderr(&o);
    assert!(o.status.code().is_some_and(|c| c <= 1), "{err}");
    assert!(daemons >= 4, "{daemons} daemons");
    // The metric printed before the daemon started was read from every run.
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        (doc["runs"].as_u64(), doc["failures"].as_u64()),
        (Some(4), Some(0)),
        "{doc}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn a_cached_sweep_point_that_says_pass_beside_a_failed_gate_is_refused_not_counted() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let sweep = crate::sweep::tensor_sweep(d, 1);
    let results = d.join("results");
    let (o, _) = run_in(
        d,
        &[
            os("sweep"),
            os("--format"),
            os("json"),
            os("--dir"),
            results.as_os_str(),
            sweep.as_os_str(),
        ],
        60,
    );
    // The flip build fails its bitwise gate.
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The cached result of the failing point edited to say "pass", its gate still failed.
    let point = results.join("points/flip-n=1.json");
    let text = std::fs::read_to_string(&point).expect("point");
    let forged = text.replace("\"verdict\": \"fail\"", "\"verdict\": \"pass\"");
    assert_ne!(forged, text);
    std::fs::write(&point, &forged).expect("write");
    let line = forged
        .lines()
        .position(|l| l.contains("\"verdict\""))
        .expect("verdict")
        + 1;
    for args in [
        vec![
            os("sweep"),
            os("collect"),
            os("--format"),
            os("json"),
            os("--dir"),
        ],
        vec![os("sweep"), os("--format"), os("json"), os("--dir")],
    ] {
        let mut args = args;
        args.push(results.as_os_str());
        args.push(sweep.as_os_str());
        let (o, took) = run_in(d, &args, 60);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "{}: line {line}: the cached result says \"pass\" but its gate `baseline vs candidate bitwise` failed",
                point.display()
            )),
            "{err}"
        );
        assert!(
            o.stdout.is_empty(),
            "no matrix: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(took < Duration::from_secs(10), "{took:?}");
    }
}
