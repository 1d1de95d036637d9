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
