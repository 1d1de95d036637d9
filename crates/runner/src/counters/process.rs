//! One profiler process: its own process group, standard output to a file, standard error
//! kept (whole in a file, its end in the record), killed with its group at the timeout.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use wait_timeout::ChildExt;

/// The most standard error kept in memory for classification.
const MAX_STDERR: usize = 1 << 20;
/// The end of standard error kept in the record.
pub(super) const STDERR_TAIL: usize = 4096;

/// How one process ended.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    /// Could not start (the profiler missing, not executable).
    pub spawn_error: Option<std::io::Error>,
    /// Exit status, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// Killed at the timeout.
    pub timed_out: bool,
    /// Wall time in seconds.
    pub wall_s: f64,
    /// Standard error (its first MiB).
    pub stderr: String,
}

/// The last `STDERR_TAIL` bytes of `text`, cut at a character boundary.
pub(super) fn tail(text: &str) -> String {
    let mut start = text.len().saturating_sub(STDERR_TAIL);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].to_string()
}

/// Creates a profiler's output file: a new file (a file or link planted at its name is
/// refused, never followed).
fn create_new(p: &Path) -> std::io::Result<std::fs::File> {
    let _ = std::fs::remove_file(p);
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
}

/// Runs `argv` with standard output written to `stdout_path` and standard error to
/// `stderr_path`.
pub(super) fn run(
    argv: &[String],
    stdout_path: &Path,
    stderr_path: &Path,
    timeout: Duration,
) -> Outcome {
    let Some((prog, args)) = argv.split_first() else {
        return Outcome {
            spawn_error: Some(std::io::Error::other("empty command")),
            ..Outcome::default()
        };
    };
    if let Err(e) = crate::process::permitted(prog) {
        return Outcome {
            spawn_error: Some(e),
            ..Outcome::default()
        };
    }
    let stdout = match create_new(stdout_path) {
        Ok(f) => f,
        Err(e) => {
            return Outcome {
                spawn_error: Some(e),
                ..Outcome::default()
            }
        }
    };
    let mut cmd = Command::new(prog);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped());
    let mut tracked = crate::process::Tracked::prepare(&mut cmd, false);
    let start = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => {
            tracked.started(c.id());
            c
        }
        Err(e) => {
            return Outcome {
                spawn_error: Some(e),
                ..Outcome::default()
            }
        }
    };
    // Read on a thread of its own, the first MiB kept; after the profiler exits, a process it
    // left holding standard error stalls the read no longer than `DRAIN_MAX`.
    let reader = child
        .stderr
        .take()
        .map(|e| crate::process::PipeReader::spawn(e, crate::process::Keep::Head(MAX_STDERR)));
    let status = match child.wait_timeout(timeout) {
        Ok(Some(s)) => Some(s),
        Ok(None) | Err(_) => {
            tracked.kill_all();
            let _ = child.kill();
            let _ = child.wait();
            None
        }
    };
    // A descendant still holding standard error (a daemon the profiler left) would keep the
    // reader waiting: every descendant ends with the profiler.
    tracked.kill_all();
    let wall_s = start.elapsed().as_secs_f64();
    let (bytes, _) = reader.map(|r| r.finish()).unwrap_or_default();
    let _ = create_new(stderr_path).and_then(|mut f| std::io::Write::write_all(&mut f, &bytes));
    Outcome {
        spawn_error: None,
        exit_code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        timed_out: status.is_none(),
        wall_s,
        stderr: String::from_utf8_lossy(&bytes).into_owned(),
    }
}
