//! Running one tool call: the same `kernelab` binary as a child process in its own process
//! group, started in the root, its JSON document read from standard output, its progress
//! lines (`KERNELAB_PROGRESS=jsonl`) turned into notifications, and the whole process tree
//! stopped when the call is cancelled (the samples written so far stay, resumable).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};

/// The environment variable that makes the CLI write machine-readable progress lines.
pub const PROGRESS_ENV: &str = "KERNELAB_PROGRESS";

/// The most bytes of a document read from a child (a profile of a large trace is tens of MB).
pub const MAX_DOCUMENT_BYTES: u64 = 512 << 20;
/// The most bytes of standard error kept for the error message (the end is kept).
const MAX_STDERR_BYTES: usize = 64 << 10;
/// Time between SIGTERM and SIGKILL when a call is cancelled.
const GRACE: Duration = Duration::from_secs(3);

/// One progress step of a child: done of total, in units, with its message.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Steps done.
    pub done: f64,
    /// Steps planned, when known.
    pub total: Option<f64>,
    /// The line a person would read.
    pub message: String,
}

/// How a child ended.
#[derive(Debug)]
pub enum Ended {
    /// It exited with `code`; `stdout` is its standard output, `stderr` the end of its errors.
    Exited {
        /// Exit status (0 success, 1 a gate failed, 2 an error).
        code: i32,
        /// Standard output.
        stdout: Vec<u8>,
        /// Standard error, without progress lines (the last 64 KiB).
        stderr: String,
    },
    /// The call was cancelled and every process of the tree stopped.
    Cancelled {
        /// Processes signalled.
        stopped: usize,
        /// Standard error so far (it names the run and its samples).
        stderr: String,
    },
}

/// What a child is started with.
pub struct Launch<'a> {
    /// The kernelab binary.
    pub exe: &'a Path,
    /// Its arguments.
    pub argv: &'a [String],
    /// Its working directory (the root).
    pub cwd: &'a Path,
    /// `XDG_STATE_HOME` for its runs folder.
    pub state: &'a Path,
    /// Whether the child may start programs (`--allow-run`): [`kernelab_model::ALLOW_RUN_ENV`].
    pub allow_run: bool,
}

/// Reads a progress line of the CLI: `{"kernelab_progress": {"done", "total", "message"}}`.
pub fn parse_progress(line: &str) -> Option<Step> {
    let v: Value = serde_json::from_str(line.trim()).ok()?;
    let p = v.get("kernelab_progress")?;
    Some(Step {
        done: p.get("done")?.as_f64()?,
        total: p.get("total").and_then(Value::as_f64),
        message: p
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    })
}

/// Runs the child until it exits or `cancelled` resolves; `progress` sees each step.
pub async fn run(
    launch: Launch<'_>,
    mut progress: impl FnMut(Step) + Send + 'static,
    cancelled: impl std::future::Future<Output = ()>,
) -> std::io::Result<Ended> {
    let mut cmd = tokio::process::Command::new(launch.exe);
    cmd.args(launch.argv)
        .current_dir(launch.cwd)
        .env(PROGRESS_ENV, "jsonl")
        .env("XDG_STATE_HOME", launch.state)
        // Paths named inside specs and manifests are held to the root too.
        .env(kernelab_model::CONFINE_ENV, launch.cwd)
        // Nothing is recorded where the call did not ask (`record` is an argument).
        .env_remove("KERNELAB_BUNDLE")
        // A confined child starts no program (an `nsys` a `.nsys-rep` asks for) unless allowed.
        .env(
            kernelab_model::ALLOW_RUN_ENV,
            if launch.allow_run { "1" } else { "0" },
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let pid = child.id().unwrap_or(0);
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| std::io::Error::other("no standard output pipe"))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| std::io::Error::other("no standard error pipe"))?;
    let err = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let err_w = err.clone();
    let read_out = async move {
        let mut out = Vec::new();
        let mut limited = (&mut stdout).take(MAX_DOCUMENT_BYTES + 1);
        limited.read_to_end(&mut out).await.map(|_| out)
    };
    let read_err = async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            match parse_progress(&line) {
                Some(step) => progress(step),
                None => {
                    let Ok(mut e) = err_w.lock() else { continue };
                    e.push_str(&line);
                    e.push('\n');
                    if e.len() > MAX_STDERR_BYTES {
                        let cut = e.len() - MAX_STDERR_BYTES / 2;
                        let cut = (cut..e.len())
                            .find(|&i| e.is_char_boundary(i))
                            .unwrap_or(e.len());
                        e.drain(..cut);
                    }
                }
            }
        }
    };
    let stderr_text = move || err.lock().map(|e| e.clone()).unwrap_or_default();
    let work = async move {
        let (o, ()) = tokio::join!(read_out, read_err);
        let status = child.wait().await;
        (o, status)
    };
    tokio::pin!(work);
    tokio::pin!(cancelled);
    tokio::select! {
        (o, status) = &mut work => {
            let out = o?;
            let status = status?;
            if out.len() as u64 > MAX_DOCUMENT_BYTES {
                return Err(std::io::Error::other(format!(
                    "the document is larger than {MAX_DOCUMENT_BYTES} bytes; give `out` to write it to a file"
                )));
            }
            Ok(Ended::Exited {
                code: status.code().unwrap_or(2),
                stdout: out,
                stderr: stderr_text(),
            })
        }
        () = &mut cancelled => {
            let stopped = tokio::task::spawn_blocking(move || {
                kernelab_runner::process::stop_tree(pid, GRACE).len()
            })
            .await
            .unwrap_or(0);
            // The readers end once every writer of the pipes is gone; the child is reaped.
            let _ = tokio::time::timeout(Duration::from_secs(10), &mut work).await;
            Ok(Ended::Cancelled { stopped, stderr: stderr_text() })
        }
    }
}

/// The run id and samples file a run names on standard error (`kernelab ab: run ID, samples
/// in FILE`), for the message of a cancelled call.
pub fn run_named(stderr: &str) -> Option<(String, PathBuf)> {
    stderr.lines().rev().find_map(|l| {
        let rest = l.split_once(": run ")?.1;
        let (id, rest) = rest.split_once(", samples in ")?;
        let samples = rest.split(", ").next()?;
        Some((id.trim().to_string(), PathBuf::from(samples.trim())))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_and_run_names_are_read() {
        let s = parse_progress(
            r#"{"kernelab_progress":{"done":3,"total":64,"unit":"pairs","message":"pair 3 (max 64)"}}"#,
        )
        .expect("a step");
        assert_eq!((s.done, s.total), (3.0, Some(64.0)));
        assert_eq!(s.message, "pair 3 (max 64)");
        assert_eq!(parse_progress("kernelab ab: run x, samples in y"), None);
        assert_eq!(parse_progress(r#"{"other": 1}"#), None);
        let (id, p) = run_named(
            "warning\nkernelab serve: run 2026-ab12, samples in /r/s.jsonl, server logs in /r/logs\n",
        )
        .expect("named");
        assert_eq!(id, "2026-ab12");
        assert_eq!(p, PathBuf::from("/r/s.jsonl"));
    }
}
