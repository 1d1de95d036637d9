//! A server's life: started fresh in its own session (and process group) with its output in a
//! log file, health timed, stopped with SIGTERM then SIGKILL after a grace period, the whole
//! group reaped. Nothing it starts may outlive kernelab: the server gets `PR_SET_PDEATHSIG`
//! (SIGKILL when kernelab's spawning thread dies), and a watchdog process in a group of its own
//! kills the whole server group when its pipe from kernelab closes, which happens however
//! kernelab ends, SIGKILL included.

use super::error::{io, Error, Result};
use super::spec::ServerSpec;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// A port no one listens on now (bound to 127.0.0.1:0 and released).
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// `text` with every `{port}` replaced.
pub fn with_port(text: &str, port: u16) -> String {
    text.replace("{port}", &port.to_string())
}

/// Most bytes of a log's end read for [`log_tail`]: 64 KiB.
pub const LOG_TAIL_BYTES: u64 = 64 * 1024;

/// The last `n` lines of a log file, from at most its last [`LOG_TAIL_BYTES`] (the file is
/// seeked to, never read whole; empty when it cannot be read or is not a regular file).
pub fn log_tail(path: &Path, n: usize) -> String {
    let text = read_end(path, LOG_TAIL_BYTES);
    let text = String::from_utf8_lossy(&text);
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The last `limit` bytes of the regular file `path` (empty when it cannot be read).
fn read_end(path: &Path, limit: u64) -> Vec<u8> {
    use std::io::{Seek, SeekFrom};
    let Ok(mut f) = kernelab_model::open_regular(path) else {
        return Vec::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if f.seek(SeekFrom::Start(len.saturating_sub(limit))).is_err() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let _ = f.take(limit).read_to_end(&mut out);
    out
}

/// Most bytes of a server log searched for `ready_log`: its last 1 MiB.
pub const READY_LOG_BYTES: u64 = 1 << 20;

/// How a server ended (the one type of the samples file and the serve document).
pub use kernelab_model::serve::Ending;

/// A running server.
pub struct Server {
    name: String,
    child: Child,
    /// The stdin of the watchdog; dropping it (or kernelab dying) fires the watchdog.
    watchdog: Option<(Child, ChildStdin)>,
    /// The port it was given.
    pub port: u16,
    /// Its base URL (with the port).
    pub base_url: String,
    /// Its log file.
    pub log: PathBuf,
    /// Seconds from spawn to the first healthy answer.
    pub health_s: f64,
    grace: Duration,
    ended: Option<Ending>,
    tracked: crate::process::Tracked,
}

/// A server spawned and not yet healthy.
struct Starting {
    /// The server (taken when healthy; `None` after).
    server: Option<Server>,
    health: String,
    ready: Option<regex::Regex>,
    limit: Duration,
    t0: Instant,
    /// What the last poll saw.
    last: String,
}

impl Starting {
    /// One health poll: `Some(seconds to health)` when healthy (and the log ready), `None`
    /// while starting; an error (the server stopped) when it exited, timed out or another
    /// process answers on its port.
    fn poll_once(&mut self) -> Result<Option<f64>> {
        let Some(server) = self.server.as_mut() else {
            return Ok(None);
        };
        let (name, log, port) = (server.name.clone(), server.log.clone(), server.port);
        let fail = |message: String| Error::Start {
            server: name.clone(),
            message,
            log: log.clone(),
        };
        let health = &self.health;
        if let Ok(Some(status)) = server.child.try_wait() {
            server.ended = Some(Ending::Exited);
            server.stop();
            return Err(fail(format!(
                "exited at start ({status}) before {health} answered; its log ends:\n{}",
                log_tail(&log, 20)
            )));
        }
        let poll_deadline = (Instant::now() + Duration::from_secs(2)).min(self.t0 + self.limit);
        match http_status(health, poll_deadline) {
            Ok(200) => {
                let log_ready = match &self.ready {
                    Some(re) => {
                        re.is_match(&String::from_utf8_lossy(&read_end(&log, READY_LOG_BYTES)))
                    }
                    None => true,
                };
                if log_ready {
                    if let Some(other) = crate::serve::ports::impostor(port, &server.tracked) {
                        server.stop();
                        return Err(fail(format!(
                            "port {port} is served by process {other}, which kernelab did not start"
                        )));
                    }
                    return Ok(Some(self.t0.elapsed().as_secs_f64()));
                }
                self.last = "healthy, but the log does not match ready_log yet".into();
            }
            Ok(code) => self.last = format!("HTTP {code}"),
            Err(e) => self.last = e.to_string(),
        }
        if self.t0.elapsed() >= self.limit {
            server.stop();
            return Err(fail(format!(
                "{health} not healthy after {:.0} s (last: {})",
                self.limit.as_secs_f64(),
                self.last
            )));
        }
        Ok(None)
    }

    /// One poll; the healthy server when it is.
    fn poll(&mut self) -> Result<Option<Server>> {
        Ok(self.poll_once()?.and_then(|h| self.take(h)))
    }

    /// The healthy server, with its time to health (`None` once taken).
    fn take(&mut self, health_s: f64) -> Option<Server> {
        let mut s = self.server.take()?;
        s.health_s = health_s;
        Some(s)
    }
}

/// One HTTP/1.0 GET; the status code. The whole request (connect, send, the status line)
/// must be done by `deadline`: a server that sends a byte at a time cannot stretch it.
fn http_status(url: &str, deadline: Instant) -> std::io::Result<u16> {
    let timed_out = || std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer in time");
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(timed_out)
    };
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| std::io::Error::other("expected an http:// URL"))?;
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = hostport
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| std::io::Error::other("no address"))?;
    let mut s = TcpStream::connect_timeout(&addr, left()?)?;
    s.set_write_timeout(Some(left()?))?;
    write!(
        s,
        "GET {path} HTTP/1.0\r\nHost: {hostport}\r\nConnection: close\r\n\r\n"
    )?;
    let mut head = [0u8; 32];
    let mut n = 0;
    while n < 12 {
        s.set_read_timeout(Some(left()?))?;
        let k = s.read(&mut head[n..])?;
        if k == 0 {
            break;
        }
        n += k;
    }
    let line = String::from_utf8_lossy(&head[..n]);
    line.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| std::io::Error::other(format!("not an HTTP answer: {line:?}")))
}

/// Makes `cmd` start in a new session (so a new process group it leads) and die with SIGKILL
/// when the thread that spawned it ends.
fn detach(cmd: &mut Command) {
    // SAFETY: getpid is async-signal-safe and runs here, before the fork.
    #[allow(unsafe_code)]
    let parent = unsafe { libc::getpid() };
    #[allow(unsafe_code)]
    // SAFETY: the closure runs in the child between fork and exec, where only async-signal-safe
    // calls are allowed: it calls setsid, prctl and getppid (all async-signal-safe system calls),
    // allocates nothing, takes no locks and touches only a copied integer.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) == -1
            {
                return Err(std::io::Error::last_os_error());
            }
            // kernelab died before prctl: the signal will never come, so do not start.
            if libc::getppid() != parent {
                return Err(std::io::Error::other("kernelab exited during the start"));
            }
            Ok(())
        });
    }
}

impl Server {
    /// Starts `spec` (named `name` in messages) with its output appended to `log`, and waits
    /// until its health URL answers 200 (and its log matches `ready_log`, when given).
    /// `dir` is the spec's folder (the default working directory).
    pub fn start(name: &str, spec: &ServerSpec, dir: &Path, log: &Path) -> Result<Server> {
        let mut s = Server::spawn(name, spec, dir, log, None)?;
        loop {
            if let Some(done) = s.poll()? {
                return Ok(done);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Starts several servers at once (`(name, spec, log)` each) and waits until every one is
    /// healthy, polling them in turn: the time to health of each is its own. Each gets its own
    /// port. On any failure the others are stopped; the error names the server that failed.
    pub fn start_together(
        servers: &[(&str, &ServerSpec, &Path)],
        dir: &Path,
    ) -> std::result::Result<Vec<Server>, (usize, Error)> {
        let mut starting: Vec<Starting> = Vec::with_capacity(servers.len());
        let mut taken = Vec::new();
        let stop_all = |starting: Vec<Starting>| {
            for mut s in starting {
                if let Some(mut server) = s.server.take() {
                    server.stop();
                }
            }
        };
        for (i, (name, spec, log)) in servers.iter().enumerate() {
            match Server::spawn(name, spec, dir, log, Some(&taken)) {
                Ok(s) => {
                    taken.extend(s.server.as_ref().map(|srv| srv.port));
                    starting.push(s);
                }
                Err(e) => {
                    stop_all(starting);
                    return Err((i, e));
                }
            }
        }
        let mut ready: Vec<Option<Server>> = (0..starting.len()).map(|_| None).collect();
        loop {
            for (i, s) in starting.iter_mut().enumerate() {
                if ready[i].is_some() {
                    continue;
                }
                match s.poll_once() {
                    Ok(Some(health_s)) => ready[i] = s.take(health_s),
                    Ok(None) => {}
                    Err(e) => {
                        for mut r in ready.into_iter().flatten() {
                            r.stop();
                        }
                        let rest: Vec<Starting> = starting
                            .into_iter()
                            .enumerate()
                            .filter(|(j, _)| *j != i)
                            .map(|(_, s)| s)
                            .collect();
                        stop_all(rest);
                        return Err((i, e));
                    }
                }
            }
            if ready.iter().all(Option::is_some) {
                return Ok(ready.into_iter().flatten().collect());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Spawns `spec` with its watchdog; the start is complete once [`Starting::poll`] says
    /// healthy. A free port is chosen unless the spec fixes one, never one of `taken`.
    fn spawn(
        name: &str,
        spec: &ServerSpec,
        dir: &Path,
        log: &Path,
        taken: Option<&[u16]>,
    ) -> Result<Starting> {
        let fail = |message: String| Error::Start {
            server: name.to_string(),
            message,
            log: log.to_path_buf(),
        };
        let port = match spec.port {
            Some(p) => {
                // A fixed port must be free: else another process would be measured.
                if let Err(e) = TcpListener::bind(("127.0.0.1", p)) {
                    return Err(fail(format!(
                        "port {p} is already in use ({e}): another process answers there; stop it or choose another port"
                    )));
                }
                p
            }
            None => {
                let taken = taken.unwrap_or(&[]);
                let mut p = free_port().map_err(io("choosing a free port"))?;
                for _ in 0..100 {
                    if !taken.contains(&p) {
                        break;
                    }
                    p = free_port().map_err(io("choosing a free port"))?;
                }
                p
            }
        };
        let argv: Vec<String> = spec.argv.iter().map(|a| with_port(a, port)).collect();
        let (prog, args) = argv
            .split_first()
            .ok_or_else(|| fail("empty argv".into()))?;
        crate::process::permitted(prog).map_err(|e| fail(e.to_string()))?;
        let out = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(io(format!("{}: cannot open the server log", log.display())))?;
        let err = out
            .try_clone()
            .map_err(io(format!("{}: cannot open the server log", log.display())))?;
        let cwd = match &spec.cwd {
            Some(c) => dir.join(c),
            None => dir.to_path_buf(),
        };
        let mut cmd = Command::new(prog);
        cmd.args(args)
            .envs(&spec.env)
            .current_dir(&cwd)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        detach(&mut cmd);
        let mut tracked = crate::process::Tracked::prepare(&mut cmd, true);
        let t0 = Instant::now();
        let child = cmd
            .spawn()
            .map_err(|e| fail(format!("cannot start {prog:?} in {}: {e}", cwd.display())))?;
        let pgid = child.id();
        tracked.started(pgid);
        let killer = tracked.shell_killer();
        let mut server = Server {
            name: name.to_string(),
            child,
            watchdog: None,
            port,
            base_url: with_port(&spec.base_url, port),
            log: log.to_path_buf(),
            health_s: f64::NAN,
            grace: kernelab_model::duration_clamped(spec.stop_grace_s),
            ended: None,
            tracked,
        };
        // The watchdog: `read` returns at end of file, when kernelab's end of the pipe closes.
        let mut dog = Command::new("sh");
        dog.arg("-c")
            .arg(format!("read _; kill -KILL -\"$1\" 2>/dev/null; {killer}"))
            .arg("kernelab-watchdog")
            .arg(pgid.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        match dog.spawn() {
            Ok(mut d) => {
                if let Some(pipe) = d.stdin.take() {
                    server.watchdog = Some((d, pipe));
                }
            }
            Err(e) => {
                server.stop();
                return Err(fail(format!("cannot start the watchdog (sh): {e}")));
            }
        }
        let health = with_port(&spec.health_url, port);
        let ready = spec
            .ready_log
            .as_deref()
            .map(regex::Regex::new)
            .transpose()
            .map_err(|e| fail(format!("ready_log: {e}")))?;
        let limit = kernelab_model::duration_clamped(spec.health_timeout_s);
        Ok(Starting {
            server: Some(server),
            health,
            ready,
            limit,
            t0,
            last: String::new(),
        })
    }

    /// The server's name (`baseline` or `candidate`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The process id of the server (the leader of its group).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `Some(status)` when the server has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Stops the server: SIGTERM to its group, SIGKILL after the grace period, the leader
    /// reaped, then SIGKILL to whatever is left of the group and the watchdog retired.
    pub fn stop(&mut self) -> Ending {
        if let Some(e) = &self.ended {
            if self.watchdog.is_none() {
                return *e;
            }
        }
        let ending = if let Ok(Some(_)) = self.child.try_wait() {
            self.ended.unwrap_or(Ending::Exited)
        } else {
            self.tracked.signal_all(libc::SIGTERM);
            match self.child.wait_timeout(self.grace) {
                Ok(Some(_)) => Ending::Terminated,
                _ => {
                    self.tracked.kill_all();
                    let _ = self.child.wait();
                    Ending::Killed
                }
            }
        };
        // Whatever the server started and left behind: its group, its descendants (kernelab
        // is their subreaper) and every process carrying its tag, a setsid daemon included.
        self.tracked.kill_all();
        if let Some((mut dog, pipe)) = self.watchdog.take() {
            let _ = dog.kill();
            drop(pipe);
            let _ = dog.wait();
        }
        self.ended = Some(ending);
        ending
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_status_of_nothing_listening_is_an_error() {
        let port = free_port().expect("port");
        let r = http_status(
            &format!("http://127.0.0.1:{port}/health"),
            Instant::now() + Duration::from_secs(1),
        );
        assert!(r.is_err());
    }

    #[test]
    fn port_placeholder() {
        assert_eq!(
            with_port("http://127.0.0.1:{port}/h", 81),
            "http://127.0.0.1:81/h"
        );
    }
}
