//! Hostile input, round 2 (issue 24), `kernelab serve`: spec numbers that validate but would
//! break the run, a resumed header, server paths, `extra`, and a hostile scripted server
//! (tests/fixtures/serve/hostile_server.py) that drips its health, answers 500 with an endless
//! body, sends a 20 MB event, doubles its tokens, sends invalid bytes, leaves daemons, exits
//! while a child keeps its port, or grows its log to 1 GiB. Each test asserts the exit code, the
//! message's location, the time, and that no process is left.

use crate::{fixture, kernelab};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A spec running the hostile server in `base` and `cand` modes. `server` is added to both
/// server tables, `workload` to the workload table; the pids of everything the servers start
/// are appended to `DIR/pids`.
fn spec(dir: &Path, base: &str, cand: &str, server: &str, workload: &str) -> PathBuf {
    let script = fixture("serve/hostile_server.py");
    let pids = dir.join("pids");
    let table = |mode: &str| {
        format!(
            "argv = [\"python3\", \"{}\", \"{{port}}\", \"{mode}\", \"--pids\", \"{}\"]\nhealth_url = \"http://127.0.0.1:{{port}}/health\"\nstop_grace_s = 1\nhealth_timeout_s = 20\n{server}\n",
            script.display(),
            pids.display()
        )
    };
    let text = format!(
        "[baseline]\n{}\n[candidate]\n{}\n[workload]\nrequests = 2\nwarmup = 0\nrequest_timeout_s = 20\n{workload}\n\n[[workload.case]]\ninput_tokens = 4\noutput_tokens = 4\nconcurrency = [1]\n\n[rounds]\ncount = 2\n",
        table(base),
        table(cand)
    );
    let p = dir.join("spec.toml");
    std::fs::write(&p, text).expect("spec");
    p
}

/// `kernelab serve SPEC --samples DIR/s.jsonl --format json` with a 60 s limit; the output
/// and the wall time.
fn serve(spec: &Path, dir: &Path) -> (std::process::Output, Duration) {
    let t = Instant::now();
    let out = kernelab()
        .current_dir(dir)
        .arg("serve")
        .arg(spec)
        .arg("--samples")
        .arg(dir.join("s.jsonl"))
        .args(["--format", "json"])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("run");
    (out, t.elapsed())
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Whether `pid` is a live process (not a zombie).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .is_some_and(|zombie| !zombie)
}

/// Every pid the servers wrote to `DIR/pids`, asserted gone (after up to 3 s).
fn assert_none_left(dir: &Path) -> usize {
    let pids: Vec<u32> = std::fs::read_to_string(dir.join("pids"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect();
    let t = Instant::now();
    while pids.iter().any(|&p| alive(p)) && t.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let left: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    for &p in &left {
        let _ = std::process::Command::new("kill")
            .arg("-9")
            .arg(p.to_string())
            .status();
    }
    assert!(left.is_empty(), "processes left running: {left:?}");
    pids.len()
}

/// The 1-based line of the first line of `path` containing `needle`.
fn line_of(path: &Path, needle: &str) -> usize {
    std::fs::read_to_string(path)
        .expect("spec")
        .lines()
        .position(|l| l.contains(needle))
        .expect("needle")
        + 1
}

#[test]
fn spec_numbers_that_would_break_the_run_exit_2_naming_file_line_and_key() {
    // (which table gets the line, the line, the key named in the message)
    let cases = [
        ("server", "stop_grace_s = 1e300", "baseline.stop_grace_s"),
        (
            "server",
            "health_timeout_s = 1e300",
            "baseline.health_timeout_s",
        ),
        (
            "workload",
            "request_timeout_s = 1e300",
            "workload.request_timeout_s",
        ),
        ("workload", "rate = 1e-300", "workload.rate"),
        (
            "workload",
            "requests = 1152921504606846976",
            "workload.requests",
        ),
        (
            "case",
            "concurrency = [4611686018427387904]",
            "workload.case[0].concurrency",
        ),
        (
            "case",
            "input_tokens = 1099511627776",
            "workload.case[0].input_tokens",
        ),
        ("rounds", "count = 1000000000000000000", "rounds.count"),
        ("workload", "flush = \"@evil.example/x\"", "workload.flush"),
        (
            "workload",
            "tokenize = \"//evil.example/t\"",
            "workload.tokenize",
        ),
        (
            "workload",
            "detokenize = \"http://evil.example/d\"",
            "workload.detokenize",
        ),
        (
            "workload",
            "extra = { temperature = 1.0, prompt = \"x\" }",
            "workload.extra",
        ),
    ];
    for (table, line, key) in cases {
        let dir = tempfile::tempdir().expect("tmp");
        let p = spec(dir.path(), "ok", "ok", "", "");
        let mut text = std::fs::read_to_string(&p).expect("spec");
        let k = line.split('=').next().unwrap_or("").trim();
        // Replace the key where the template has it, else add it to its table.
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        let at = match table {
            "server" => lines.iter().position(|l| l == "[baseline]"),
            "workload" => lines.iter().position(|l| l == "[workload]"),
            "case" => lines.iter().position(|l| l == "[[workload.case]]"),
            _ => lines.iter().position(|l| l == "[rounds]"),
        }
        .expect("table");
        let mut out: Vec<String> = Vec::new();
        let mut inside = false;
        for (i, l) in lines.iter().enumerate() {
            if l.starts_with('[') {
                inside = i == at;
            }
            if inside && l.split('=').next().unwrap_or("").trim() == k {
                continue;
            }
            out.push(l.clone());
            if i == at {
                out.push(line.to_string());
            }
        }
        text = out.join("\n") + "\n";
        std::fs::write(&p, &text).expect("write");
        let (o, took) = serve(&p, dir.path());
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{line}: {err}");
        let want = format!("spec.toml: line {}: `{key}`", line_of(&p, line));
        assert!(err.contains(&want), "{line}: want {want:?} in {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(took < Duration::from_secs(5), "{line}: {took:?}");
        assert!(!dir.path().join("s.jsonl").exists(), "no samples file");
        assert!(!dir.path().join("pids").exists(), "no server started");
    }
    // `extra` names every owned key it tried to set.
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(
        dir.path(),
        "ok",
        "ok",
        "",
        "extra = { temperature = 1.0, max_tokens = 9 }",
    );
    let (o, _) = serve(&p, dir.path());
    let err = stderr(&o);
    assert!(err.contains("`max_tokens`, `temperature`"), "{err}");
}

#[test]
fn a_resumed_header_is_validated_like_a_spec() {
    for (edit, key) in [
        (
            "\"rounds\":{\"count\":1000000000000000000}",
            "spec.rounds.count",
        ),
        ("\"rounds\":{\"count\":2},\"x\":0", "spec"),
    ] {
        let dir = tempfile::tempdir().expect("tmp");
        let case = if key == "spec" {
            "[]".to_string()
        } else {
            "[{\"input_tokens\":4,\"output_tokens\":4,\"concurrency\":[1]}]".to_string()
        };
        let server =
            "{\"argv\":[\"true\",\"{port}\"],\"health_url\":\"http://127.0.0.1:{port}/h\"}";
        let edit = edit.replace(",\"x\":0", "");
        let header = format!(
            "{{\"kind\":\"header\",\"schema_version\":1,\"spec\":{{\"baseline\":{server},\"candidate\":{server},\"workload\":{{\"case\":{case}}},{edit}}},\"spec_sha256\":\"0\",\"spec_dir\":\"/\",\"start\":\"AB\"}}\n"
        );
        let samples = dir.path().join("s.jsonl");
        std::fs::write(&samples, &header).expect("write");
        let t = Instant::now();
        let o = kernelab()
            .current_dir(dir.path())
            .args(["serve", "--resume"])
            .arg(&samples)
            .timeout(Duration::from_secs(30))
            .output()
            .expect("run");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        let want = if key == "spec" {
            "s.jsonl: line 1: `spec.workload.case`".to_string()
        } else {
            format!("s.jsonl: line 1: `{key}`")
        };
        assert!(err.contains(&want), "want {want:?} in {err}");
        assert!(t.elapsed() < Duration::from_secs(5));
        assert_eq!(
            std::fs::read_to_string(&samples).expect("read"),
            header,
            "the samples file is untouched"
        );
    }
}

#[test]
fn a_health_endpoint_that_drips_cannot_outlive_health_timeout() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(dir.path(), "drip-health", "ok", "", "");
    let text = std::fs::read_to_string(&p).expect("spec").replacen(
        "health_timeout_s = 20",
        "health_timeout_s = 2",
        1,
    );
    std::fs::write(&p, text).expect("write");
    let (o, took) = serve(&p, dir.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("not healthy after 2 s"), "{err}");
    assert!(took < Duration::from_secs(6), "{took:?}");
    assert!(assert_none_left(dir.path()) >= 1);
}

/// Runs the ok baseline against a candidate in `mode`; asserts exit 2 within `limit` with
/// `message` in standard error, a failing document and no process left.
fn candidate_fails(mode: &str, message: &str, limit: Duration) -> serde_json::Value {
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(dir.path(), "ok", mode, "", "");
    let (o, took) = serve(&p, dir.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{mode}: {err}");
    assert!(err.contains(message), "{mode}: want {message:?} in {err}");
    assert!(took < limit, "{mode}: {took:?}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json document");
    assert_eq!(v["pass"], false, "{mode}");
    assert_none_left(dir.path());
    v
}

#[test]
fn an_endless_error_body_is_read_only_to_its_cap_and_a_point_without_success_fails() {
    let v = candidate_fails("fail-500", "HTTP 500", Duration::from_secs(30));
    // Two rounds, one point each: both candidate points failed.
    assert_eq!(v["failed_points"], 2, "{v}");
    assert_eq!(v["identity"]["compared"], 0);
}

#[test]
fn a_20_mb_sse_event_is_refused_at_the_event_cap_fast() {
    candidate_fails(
        "huge-event",
        "an SSE event is longer than 16777216 bytes",
        Duration::from_secs(30),
    );
}

#[test]
fn token_events_must_agree_with_usage() {
    candidate_fails(
        "double",
        "the stream carried 8 tokens, its usage says 4 completion tokens",
        Duration::from_secs(30),
    );
}

#[test]
fn invalid_bytes_are_never_replaced_and_hashed_alike() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(dir.path(), "byte-ff", "byte-fe", "", "");
    let (o, _) = serve(&p, dir.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("an SSE event is not JSON"), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        v["identity"]["identical"], 0,
        "0xFF and 0xFE are not identical"
    );
    assert_eq!(v["pass"], false);
    assert_none_left(dir.path());
}

#[test]
fn a_setsid_daemon_of_each_server_is_gone_after_a_clean_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(dir.path(), "daemon", "daemon", "", "");
    let (o, _) = serve(&p, dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // 2 rounds × 2 servers, each a server and its daemon.
    assert_eq!(assert_none_left(dir.path()), 8);
}

#[test]
fn a_server_whose_parent_exits_leaves_no_child_on_the_port() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(dir.path(), "parent-exits", "ok", "", "");
    let (o, took) = serve(&p, dir.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("exited at start"), "{err}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    // The parent and its setsid child (which had started serving the port).
    std::thread::sleep(Duration::from_millis(300));
    assert!(assert_none_left(dir.path()) >= 1);
}

#[test]
fn a_fixed_port_already_served_is_refused_before_the_start() {
    let dir = tempfile::tempdir().expect("tmp");
    let impostor = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = impostor.local_addr().expect("addr").port();
    let p = spec(dir.path(), "ok", "ok", &format!("port = {port}"), "");
    let (o, took) = serve(&p, dir.path());
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("port {port} is already in use")),
        "{err}"
    );
    assert!(took < Duration::from_secs(5));
    assert!(!dir.path().join("pids").exists(), "nothing was started");
}

#[test]
fn a_1_gib_sparse_log_is_tailed_not_read_whole() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(dir.path(), "sparse-log", "ok", "", "");
    let rss = dir.path().join("rss");
    let t = Instant::now();
    let o = assert_cmd::Command::new("/usr/bin/time")
        .current_dir(dir.path())
        .arg("-f")
        .arg("%M")
        .arg("-o")
        .arg(&rss)
        .arg(assert_cmd::cargo::cargo_bin("kernelab"))
        .envs(kernelab_testkit::isolated_env())
        .arg("serve")
        .arg(&p)
        .arg("--samples")
        .arg(dir.path().join("s.jsonl"))
        .timeout(Duration::from_secs(60))
        .output()
        .expect("run");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("boom: the last line of a 1 GiB log"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(10));
    if let Some(kb) = std::fs::read_to_string(&rss)
        .ok()
        .and_then(|t| t.lines().last()?.trim().parse::<u64>().ok())
    {
        assert!(kb < 200_000, "max RSS {kb} KiB");
    }
    assert_none_left(dir.path());
}
