//! The one place kernelab ends the processes it started: each child runs in its own process
//! group and carries a tag in its environment (`KERNELAB_TRACK`, unique per child), which its
//! descendants inherit even after `setsid` or a double fork. kernelab is the subreaper of its
//! descendants (Linux `PR_SET_CHILD_SUBREAPER`), so an orphan becomes its child, not init's.
//! [`Tracked::kill_all`] kills the group, every descendant of the child and every process
//! carrying the tag, repeatedly until none is left, and reaps those that are kernelab's.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// The environment variable that tags a tracked child and its descendants.
pub const TRACK_ENV: &str = "KERNELAB_TRACK";

/// Whether this run may start `program` ([`kernelab_model::may_run`]): a confined run
/// (`kernelab mcp`'s children) starts none without `--allow-run`, whatever a spec or manifest
/// under the root names. The error is of kind `PermissionDenied` and says why.
pub fn permitted(program: &str) -> std::io::Result<()> {
    kernelab_model::may_run(program)
        .map_err(|why| std::io::Error::new(std::io::ErrorKind::PermissionDenied, why))
}

/// Sends `sig` to the process group `pgid` (ignored for 0 and 1, and when the group is gone).
pub fn kill_group(pgid: u32, sig: libc::c_int) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid > 1 {
        #[allow(unsafe_code)]
        // SAFETY: kill(2) has no memory-safety preconditions; a negative pid names a group.
        unsafe {
            libc::kill(-pgid, sig);
        }
    }
}

fn kill_pid(pid: u32, sig: libc::c_int) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    if pid > 1 {
        #[allow(unsafe_code)]
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(pid, sig);
        }
    }
}

/// Makes this process the subreaper of its descendants (Linux), so that an orphaned
/// descendant of a child (a daemon that forked and let its parent exit) stays in kernelab's
/// process tree, where [`Tracked::kill_all`] finds it. Elsewhere a no-op.
pub fn become_subreaper() {
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER) takes integers only and changes no memory.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Every live process: (pid, parent pid, whether it is a zombie), from `/proc`.
fn processes() -> Vec<(u32, u32, bool)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses: fields follow the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let mut f = rest.split_whitespace();
        let state = f.next().unwrap_or("");
        let ppid = f.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        out.push((pid, ppid, state == "Z"));
    }
    out
}

/// The descendants of `root` (not `root` itself), from a snapshot of `/proc`.
pub fn descendants(root: u32) -> Vec<u32> {
    let all = processes();
    let mut out = Vec::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for &(pid, ppid, _) in &all {
            if ppid == p && pid != root && !out.contains(&pid) {
                out.push(pid);
                frontier.push(pid);
            }
        }
    }
    out
}

/// Stops `root` and every process it started, for a cancelled run: each process of the tree
/// is stopped (SIGSTOP) while the tree is collected, so that none forks unseen; then each gets
/// SIGTERM and is continued (a program may flush what it measured); those still alive after
/// `grace` get SIGKILL. The caller reaps `root`. Returns the processes signalled.
pub fn stop_tree(root: u32, grace: std::time::Duration) -> Vec<u32> {
    let mut seen: Vec<u32> = Vec::new();
    for _ in 0..100 {
        let mut tree = vec![root];
        tree.extend(descendants(root));
        let new: Vec<u32> = tree.into_iter().filter(|p| !seen.contains(p)).collect();
        if new.is_empty() {
            break;
        }
        for &p in &new {
            kill_pid(p, libc::SIGSTOP);
        }
        seen.extend(new);
    }
    for &p in &seen {
        kill_pid(p, libc::SIGTERM);
        kill_pid(p, libc::SIGCONT);
    }
    let alive = |seen: &[u32]| -> Vec<u32> {
        let all = processes();
        seen.iter()
            .copied()
            .filter(|p| all.iter().any(|&(q, _, z)| q == *p && !z))
            .collect()
    };
    let deadline = std::time::Instant::now() + grace;
    while std::time::Instant::now() < deadline && !alive(&seen).is_empty() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for p in alive(&seen) {
        kill_pid(p, libc::SIGKILL);
    }
    seen
}

/// Whether process `pid` carries `TRACK_ENV=tag` in its environment.
fn carries(pid: u32, tag: &str) -> bool {
    let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let want = format!("{TRACK_ENV}={tag}");
    env.split(|&b| b == 0).any(|v| v == want.as_bytes())
}

/// A unique tag: this process's id, a counter and the clock.
fn new_tag() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{}-{n}-{t}", std::process::id())
}

/// A child and everything it starts, tracked so that all of it can be ended.
#[derive(Debug, Clone)]
pub struct Tracked {
    tag: String,
    pid: Option<u32>,
}

impl Tracked {
    /// Prepares `cmd`: its own process group (unless `new_session`, which gives it its own
    /// session too) and the tag in its environment. Makes kernelab the subreaper.
    pub fn prepare(cmd: &mut Command, new_session: bool) -> Tracked {
        become_subreaper();
        let tag = new_tag();
        cmd.env(TRACK_ENV, &tag);
        if !new_session {
            cmd.process_group(0);
        }
        Tracked { tag, pid: None }
    }

    /// Records the started child's pid (the leader of its group).
    pub fn started(&mut self, pid: u32) {
        self.pid = Some(pid);
    }

    /// The tag in the child's environment.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// A shell command that kills every process carrying the tag (for a watchdog that must
    /// work after kernelab is gone).
    pub fn shell_killer(&self) -> String {
        format!(
            "for p in /proc/[0-9]*; do grep -qxz '{TRACK_ENV}={}' \"$p/environ\" 2>/dev/null && kill -KILL \"${{p#/proc/}}\" 2>/dev/null; done",
            self.tag
        )
    }

    /// The live processes of this child: its group's leader, its descendants, and every
    /// process carrying the tag (zombies left out).
    pub fn members(&self) -> Vec<u32> {
        let all = processes();
        let me = std::process::id();
        let mut out: Vec<u32> = Vec::new();
        if let Some(root) = self.pid {
            if all.iter().any(|&(p, _, z)| p == root && !z) {
                out.push(root);
            }
            for d in descendants(root) {
                if all.iter().any(|&(p, _, z)| p == d && !z) {
                    out.push(d);
                }
            }
        }
        for &(pid, _, zombie) in &all {
            if !zombie && pid != me && !out.contains(&pid) && carries(pid, &self.tag) {
                out.push(pid);
            }
        }
        out
    }

    /// Kills the child's group, its descendants and every tagged process with SIGKILL, again
    /// until none is left (a process forking while it is killed), and reaps those that became
    /// kernelab's children. Returns how many processes were killed.
    pub fn kill_all(&self) -> usize {
        if let Some(pid) = self.pid {
            kill_group(pid, libc::SIGKILL);
        }
        let mut killed = 0;
        let mut seen: Vec<u32> = Vec::new();
        for _ in 0..100 {
            let live = self.members();
            if live.is_empty() {
                break;
            }
            for &p in &live {
                // Stop first so that it cannot fork between the snapshot and the kill.
                kill_pid(p, libc::SIGSTOP);
            }
            for &p in &live {
                kill_pid(p, libc::SIGKILL);
                killed += 1;
                if !seen.contains(&p) {
                    seen.push(p);
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
            // The leader is reaped by its `Child` handle; orphans adopted by kernelab here.
            reap(live.iter().copied().filter(|&p| Some(p) != self.pid));
        }
        // Those whose parent died after them were adopted by kernelab as zombies.
        std::thread::sleep(std::time::Duration::from_millis(5));
        reap(seen.into_iter().filter(|&p| Some(p) != self.pid));
        killed
    }

    /// Sends `sig` to the child's group and to every other tagged process or descendant.
    pub fn signal_all(&self, sig: libc::c_int) {
        if let Some(pid) = self.pid {
            kill_group(pid, sig);
        }
        for p in self.members() {
            kill_pid(p, sig);
        }
    }
}

/// Which part of a child's output [`PipeReader`] keeps (the rest is read and dropped, so the
/// child never blocks on a full pipe).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// The first bytes, at most this many.
    Head(usize),
    /// The last bytes, at most this many, from the start of a line (a metric printed last).
    Tail(usize),
}

/// Once the child has exited, how long [`PipeReader::finish`] waits for more output before it
/// stops: what the child wrote is already in the pipe, so a pause this long means only a
/// process it left behind (one that escaped the kill) still holds the pipe.
pub const DRAIN_IDLE: std::time::Duration = std::time::Duration::from_millis(200);
/// Once the child has exited, the longest [`PipeReader::finish`] reads (a process it left
/// behind writing without pause).
pub const DRAIN_MAX: std::time::Duration = std::time::Duration::from_secs(2);

/// A child's standard output or error, read on a thread of its own with memory bounded by
/// [`Keep`]. After the child has exited and its processes were killed
/// ([`Tracked::kill_all`]), [`PipeReader::finish`] takes what is left within [`DRAIN_IDLE`]
/// and [`DRAIN_MAX`]: a daemon that escaped the kill (a cleared environment, a new session
/// and a double fork) and keeps the pipe open cannot stall kernelab.
pub struct PipeReader {
    thread: std::thread::JoinHandle<(Vec<u8>, bool)>,
    finishing: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl PipeReader {
    /// Starts reading `pipe`.
    pub fn spawn<R>(pipe: R, keep: Keep) -> PipeReader
    where
        R: std::io::Read + std::os::fd::AsRawFd + Send + 'static,
    {
        let finishing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = finishing.clone();
        let thread = std::thread::spawn(move || drain(pipe, keep, &flag));
        PipeReader { thread, finishing }
    }

    /// The output kept, and whether a process still held the pipe open when reading stopped
    /// (the child's own output is all there: it had exited).
    pub fn finish(self) -> (Vec<u8>, bool) {
        self.finishing
            .store(true, std::sync::atomic::Ordering::Release);
        self.thread.join().unwrap_or_default()
    }
}

/// The reader thread: reads until the end of the pipe, or (once `finishing`) until a pause of
/// [`DRAIN_IDLE`] or [`DRAIN_MAX`] in all.
fn drain<R: std::io::Read + std::os::fd::AsRawFd>(
    mut pipe: R,
    keep: Keep,
    finishing: &std::sync::atomic::AtomicBool,
) -> (Vec<u8>, bool) {
    use std::time::Instant;
    let mut out: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut finish_at: Option<Instant> = None;
    let mut last_data = Instant::now();
    let mut held = false;
    loop {
        let mut fd = libc::pollfd {
            fd: pipe.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        #[allow(unsafe_code)]
        // SAFETY: one valid pollfd, its count 1; poll(2) writes only its `revents`.
        let ready = unsafe { libc::poll(&mut fd, 1, 50) };
        if ready > 0 {
            match pipe.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => {
                    last_data = Instant::now();
                    let got = chunk.get(..n).unwrap_or_default();
                    match keep {
                        Keep::Head(max) => {
                            let room = max.saturating_sub(out.len());
                            out.extend_from_slice(got.get(..room.min(n)).unwrap_or(got));
                        }
                        Keep::Tail(max) => {
                            out.extend_from_slice(got);
                            // Amortised: cut back to `max` once twice as much is held.
                            if out.len() > max.saturating_mul(2).max(1 << 16) {
                                out.drain(..out.len() - max);
                            }
                        }
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        } else if ready < 0
            && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted
        {
            break;
        }
        if finishing.load(std::sync::atomic::Ordering::Acquire) {
            let now = Instant::now();
            let start = *finish_at.get_or_insert(now);
            if now.duration_since(last_data.max(start)) >= DRAIN_IDLE
                || now.duration_since(start) >= DRAIN_MAX
            {
                held = true;
                break;
            }
        }
    }
    if let Keep::Tail(max) = keep {
        if out.len() > max {
            out.drain(..out.len() - max);
            // From the start of a line: never half a number.
            let cut = out
                .iter()
                .position(|&b| b == b'\n')
                .map_or(out.len(), |i| i + 1);
            out.drain(..cut);
        }
    }
    (out, held)
}

/// Reaps those of `pids` that are zombie children of kernelab (orphans it adopted as the
/// subreaper and killed); others are left alone.
fn reap(pids: impl Iterator<Item = u32>) {
    let me = std::process::id();
    let all = processes();
    for pid in pids {
        if !all.iter().any(|&(p, pp, z)| p == pid && pp == me && z) {
            continue;
        }
        if let Ok(p) = libc::pid_t::try_from(pid) {
            let mut status = 0;
            #[allow(unsafe_code)]
            // SAFETY: waitpid on a zombie child of this process, with a valid pointer.
            unsafe {
                libc::waitpid(p, &mut status, libc::WNOHANG);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_setsid_daemon_of_a_child_is_found_and_killed() {
        if Command::new("setsid").arg("--version").output().is_err() {
            kernelab_testkit::skip("setsid", "setsid (util-linux) is not available");
            return;
        }
        // Other tests of this binary start, signal and reap processes meanwhile; about once
        // in 15 runs of the binary on a loaded 2-core machine the daemon was dead (a zombie)
        // before it was tracked or killed, from outside this test (the cause is not pinned
        // down). A daemon that died is not what this test is about: it starts another, and
        // fails only when three in a row die so.
        let alive = |pid: u32| {
            processes()
                .iter()
                .any(|&(p, _, zombie)| p == pid && !zombie)
        };
        let mut lost = Vec::new();
        for _ in 0..3 {
            let mut cmd = Command::new("sh");
            // The child starts a daemon in a session of its own, then exits.
            cmd.arg("-c")
                .arg("setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!");
            cmd.stdout(std::process::Stdio::piped());
            let mut t = Tracked::prepare(&mut cmd, false);
            let child = cmd.spawn().expect("spawn");
            t.started(child.id());
            let out = child.wait_with_output().expect("wait");
            let daemon: u32 = String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .expect("pid");
            let until = Instant::now() + Duration::from_secs(5);
            while !t.members().contains(&daemon) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
            if !t.members().contains(&daemon) && !alive(daemon) {
                lost.push(daemon);
                continue;
            }
            assert!(t.members().contains(&daemon), "the daemon is tracked");
            let killed = t.kill_all();
            if killed == 0 && !alive(daemon) {
                lost.push(daemon);
                continue;
            }
            assert!(killed >= 1);
            assert!(t.members().is_empty());
            return;
        }
        panic!("every daemon died before it could be tracked and killed: {lost:?}");
    }

    #[test]
    fn an_escaped_daemon_holding_the_pipe_cannot_stall_the_reader() {
        if Command::new("setsid").arg("--version").output().is_err() {
            kernelab_testkit::skip("setsid", "setsid (util-linux) is not available");
            return;
        }
        // The child prints, starts a daemon that clears its environment (no tag) in a session
        // of its own, holding standard output, and exits.
        let dir = tempfile::tempdir().expect("tmp");
        let pid_file = dir.path().join("daemon");
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(format!(
            "echo first; env -i setsid sleep 30 & echo $! > '{}'; echo \"daemon $!\"",
            pid_file.display()
        ));
        cmd.stdout(std::process::Stdio::piped());
        let mut t = Tracked::prepare(&mut cmd, false);
        let mut child = cmd.spawn().expect("spawn");
        t.started(child.id());
        let reader = PipeReader::spawn(child.stdout.take().expect("stdout"), Keep::Head(1 << 20));
        child.wait().expect("wait");
        // Until the daemon is `sleep` (its environment, and the tag, cleared), the kill would
        // still find it: wait for it to escape, as a real one would have.
        let pid: Option<u32> = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|p| p.trim().parse().ok());
        let until = Instant::now() + Duration::from_secs(5);
        while let Some(p) = pid {
            let cmdline = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
            if cmdline.starts_with(b"sleep") || Instant::now() > until {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        t.kill_all();
        let start = Instant::now();
        let (bytes, held) = reader.finish();
        let took = start.elapsed();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let daemon = text
            .lines()
            .find_map(|l| l.strip_prefix("daemon "))
            .and_then(|p| p.trim().parse::<u32>().ok());
        if let Some(p) = daemon {
            kill_pid(p, libc::SIGKILL);
            reap(std::iter::once(p));
        }
        assert!(text.starts_with("first\n"), "{text:?}");
        assert!(daemon.is_some(), "{text:?}");
        assert!(held, "the daemon held the pipe");
        assert!(took < DRAIN_MAX + Duration::from_millis(500), "{took:?}");
    }

    #[test]
    fn the_tail_kept_starts_at_a_line() {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("i=0; while [ $i -lt 2000 ]; do echo \"line $i value=$i\"; i=$((i+1)); done");
        cmd.stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().expect("spawn");
        let reader = PipeReader::spawn(child.stdout.take().expect("stdout"), Keep::Tail(100));
        child.wait().expect("wait");
        let (bytes, held) = reader.finish();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        assert!(!held);
        assert!(text.ends_with("line 1999 value=1999\n"), "{text:?}");
        assert!(text.starts_with("line "), "{text:?}");
        assert!(text.len() <= 100, "{text:?}");
    }
}
