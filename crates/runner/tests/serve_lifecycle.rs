//! Server lifecycle against real programs (python3 scripts and `python3 -m http.server`): a
//! server that exits at start, one that never becomes healthy, one killed mid-round, one that
//! ignores SIGTERM, and no orphan when the process that started it is SIGKILLed.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_runner::serve::server::{Ending, Server};
use kernelab_runner::serve::spec::ServerSpec;
use kernelab_runner::serve::Error;
use std::path::Path;
use std::time::{Duration, Instant};

fn spec(argv: &[&str], health: &str, timeout_s: f64) -> ServerSpec {
    ServerSpec {
        argv: argv.iter().map(|s| s.to_string()).collect(),
        env: Default::default(),
        cwd: None,
        port: None,
        base_url: "http://127.0.0.1:{port}".into(),
        health_url: health.into(),
        health_timeout_s: timeout_s,
        ready_log: None,
        stop_grace_s: 2.0,
        model: None,
        metrics_url: None,
    }
}

/// Whether `pid` is a live (not zombie) process.
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

fn wait_dead(pid: u32, within: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < within {
        if !alive(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    !alive(pid)
}

/// A server script: writes its pid and a child's pid to `pids`, then serves HTTP on the port
/// (health answers 200) and, with `ignore_term`, ignores SIGTERM.
const SCRIPT: &str = r#"
import http.server, os, signal, subprocess, sys
port, pids, ignore = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
if ignore:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "300"])
with open(pids + ".tmp", "w") as f:
    f.write(f"{os.getpid()} {child.pid}\n")
os.rename(pids + ".tmp", pids)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"#;

fn script_server(dir: &Path, ignore_term: bool) -> ServerSpec {
    let script = dir.join("server.py");
    std::fs::write(&script, SCRIPT).expect("script");
    let pids = dir.join("pids");
    let ignore = if ignore_term { "1" } else { "0" };
    let argv = [
        "python3",
        script.to_str().expect("utf-8"),
        "{port}",
        pids.to_str().expect("utf-8"),
        ignore,
    ];
    spec(&argv, "http://127.0.0.1:{port}/health", 30.0)
}

fn pids(dir: &Path) -> (u32, u32) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(30) {
        if let Ok(s) = std::fs::read_to_string(dir.join("pids")) {
            let v: Vec<u32> = s
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            if v.len() == 2 {
                return (v[0], v[1]);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the server never wrote its pids");
}

#[test]
fn a_server_that_exits_at_start_is_a_clear_error_with_its_log() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = spec(
        &[
            "python3",
            "-c",
            "import sys; print('no model file'); sys.exit(3)",
            "{port}",
        ],
        "http://127.0.0.1:{port}/health",
        30.0,
    );
    let t = Instant::now();
    let e = Server::start("baseline", &s, dir.path(), &dir.path().join("b.log"))
        .err()
        .expect("must fail");
    assert!(t.elapsed() < Duration::from_secs(10), "not detected early");
    let msg = e.to_string();
    assert!(matches!(e, Error::Start { .. }));
    assert!(msg.starts_with("baseline: exited at start"), "{msg}");
    assert!(msg.contains("exit status: 3"), "{msg}");
    assert!(msg.contains("no model file"), "{msg}");
    assert!(msg.contains("b.log"), "{msg}");
}

#[test]
fn an_unreachable_health_url_times_out_and_leaves_nothing_running() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut s = script_server(dir.path(), false);
    // Healthy on its port, but the health URL points at a port no one listens on.
    s.health_url = "http://127.0.0.1:9/health".into();
    s.health_timeout_s = 1.5;
    let e = Server::start("candidate", &s, dir.path(), &dir.path().join("c.log"))
        .err()
        .expect("must fail");
    let msg = e.to_string();
    assert!(msg.contains("not healthy after 2 s"), "{msg}");
    assert!(msg.starts_with("candidate:"), "{msg}");
    let (server, child) = pids(dir.path());
    assert!(
        wait_dead(server, Duration::from_secs(5)),
        "server left running"
    );
    assert!(
        wait_dead(child, Duration::from_secs(5)),
        "server's child left running"
    );
}

#[test]
fn a_real_http_server_starts_times_health_and_stops_with_its_whole_group() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = spec(
        &[
            "python3",
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            "{port}",
        ],
        "http://127.0.0.1:{port}/",
        30.0,
    );
    let mut server = Server::start("baseline", &s, dir.path(), &dir.path().join("b.log"))
        .expect("http.server starts");
    assert!(server.health_s > 0.0 && server.health_s < 30.0);
    assert!(server.base_url.ends_with(&server.port.to_string()));
    let pid = server.pid();
    assert!(alive(pid));
    assert_eq!(server.stop(), Ending::Terminated);
    assert!(!alive(pid));

    let dir = tempfile::tempdir().expect("tmp");
    let s = script_server(dir.path(), false);
    let mut server =
        Server::start("baseline", &s, dir.path(), &dir.path().join("b.log")).expect("starts");
    let (leader, child) = pids(dir.path());
    assert_eq!(leader, server.pid());
    assert_eq!(server.stop(), Ending::Terminated);
    assert!(
        wait_dead(child, Duration::from_secs(5)),
        "the server's child outlived it"
    );
}

#[test]
fn a_server_ignoring_sigterm_is_killed_after_the_grace_period() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = script_server(dir.path(), true);
    let mut server =
        Server::start("candidate", &s, dir.path(), &dir.path().join("c.log")).expect("starts");
    let (_, child) = pids(dir.path());
    let t = Instant::now();
    assert_eq!(server.stop(), Ending::Killed);
    assert!(t.elapsed() >= Duration::from_secs(2), "grace not given");
    assert!(wait_dead(child, Duration::from_secs(5)));
}

#[test]
fn a_server_killed_mid_round_is_seen_as_exited() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = script_server(dir.path(), false);
    let mut server =
        Server::start("baseline", &s, dir.path(), &dir.path().join("b.log")).expect("starts");
    assert!(server.exited().is_none());
    let pid = server.pid();
    std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("kill");
    let t = Instant::now();
    while server.exited().is_none() && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(server.exited().is_some());
    let (_, child) = pids(dir.path());
    assert_eq!(server.stop(), Ending::Exited);
    assert!(wait_dead(child, Duration::from_secs(5)), "orphaned child");
}

/// Run by `no_orphan_after_the_parent_is_sigkilled` in a child process: starts a server and
/// waits forever.
#[test]
#[ignore = "helper: run by no_orphan_after_the_parent_is_sigkilled"]
fn helper_start_and_hang() {
    let Some(dir) = std::env::var_os("KERNELAB_SERVE_HELPER_DIR") else {
        return;
    };
    let dir = Path::new(&dir);
    let s = script_server(dir, true);
    let server = Server::start("baseline", &s, dir, &dir.join("b.log")).expect("starts");
    std::fs::write(dir.join("ready"), server.pid().to_string()).expect("ready");
    std::thread::sleep(Duration::from_secs(300));
}

#[test]
fn no_orphan_after_the_parent_is_sigkilled() {
    let dir = tempfile::tempdir().expect("tmp");
    let exe = std::env::current_exe().expect("test binary");
    let mut parent = std::process::Command::new(exe)
        .args([
            "--exact",
            "helper_start_and_hang",
            "--ignored",
            "--nocapture",
        ])
        .env("KERNELAB_SERVE_HELPER_DIR", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("helper");
    let t = Instant::now();
    while !dir.path().join("ready").exists() {
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "helper never got ready"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let (server, child) = pids(dir.path());
    assert!(alive(server) && alive(child));
    parent.kill().expect("SIGKILL the parent");
    parent.wait().expect("reap");
    // The server ignores SIGTERM and its child is a grandchild of the killed process: both
    // must still go.
    assert!(wait_dead(server, Duration::from_secs(5)), "server orphaned");
    assert!(
        wait_dead(child, Duration::from_secs(5)),
        "server's child orphaned"
    );
}
