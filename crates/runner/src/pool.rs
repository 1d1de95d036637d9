//! A worker pool of child processes: one worker per slot (a GPU), each running its tasks one
//! at a time as fresh processes with the slot's environment (`CUDA_VISIBLE_DEVICES=1`).

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

/// One worker: its name and the environment its children get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    /// Name (`gpu0`).
    pub name: String,
    /// Variables set for its children.
    pub env: Vec<(String, String)>,
}

impl Slot {
    /// A worker pinned to GPU `index` (CUDA and HIP device masks both set).
    pub fn gpu(index: u32) -> Slot {
        let i = index.to_string();
        Slot {
            name: format!("gpu{index}"),
            env: vec![
                ("CUDA_VISIBLE_DEVICES".into(), i.clone()),
                ("HIP_VISIBLE_DEVICES".into(), i),
            ],
        }
    }
}

/// How one task ended.
#[derive(Clone, Debug)]
pub struct TaskOutcome {
    /// The task's index in the list given.
    pub task: usize,
    /// The slot that ran it.
    pub slot: String,
    /// Exit code (`None` when killed by a signal or not started).
    pub exit_code: Option<i32>,
    /// The last lines of its standard error (or why it did not start).
    pub stderr_tail: String,
    /// Wall time, seconds.
    pub seconds: f64,
}

fn tail(s: &str, lines: usize) -> String {
    let v: Vec<&str> = s.lines().collect();
    v[v.len().saturating_sub(lines)..].join("\n")
}

fn run_one(program: &Path, slot: &Slot, args: &[String], unset: &[&str]) -> (Option<i32>, String) {
    if let Err(e) = crate::process::permitted(&program.to_string_lossy()) {
        return (None, e.to_string());
    }
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for v in unset {
        cmd.env_remove(v);
    }
    for (k, v) in &slot.env {
        cmd.env(k, v);
    }
    // The workspace's one process-group helper: whatever the worker leaves running ends
    // with it.
    let mut tracked = crate::process::Tracked::prepare(&mut cmd, false);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return (None, format!("{}: cannot start: {e}", program.display())),
    };
    tracked.started(child.id());
    // Read on a thread of its own (its end kept) while the worker runs; after it exits, a
    // process it left holding standard error stalls the read no longer than `DRAIN_MAX`.
    let reader = child
        .stderr
        .take()
        .map(|e| crate::process::PipeReader::spawn(e, crate::process::Keep::Tail(64 << 10)));
    let status = child.wait();
    tracked.kill_all();
    let (bytes, _) = reader.map(|r| r.finish()).unwrap_or_default();
    let err = String::from_utf8_lossy(&bytes);
    match status {
        Ok(s) => (s.code(), tail(&err, 5)),
        Err(e) => (None, format!("waiting for the child: {e}")),
    }
}

/// Runs every task (the arguments of one `program` run) on the slots, each slot one task at a
/// time, tasks taken in order; `unset` names variables the children must not inherit.
/// `on_done` sees each outcome as it arrives (progress); the outcomes are returned in task
/// order.
pub fn run_pool(
    program: &Path,
    slots: &[Slot],
    tasks: &[Vec<String>],
    unset: &[&str],
    on_done: &mut dyn FnMut(&TaskOutcome),
) -> Vec<TaskOutcome> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<TaskOutcome>();
    let mut out: Vec<TaskOutcome> = Vec::with_capacity(tasks.len());
    std::thread::scope(|s| {
        for slot in slots {
            let tx = tx.clone();
            let next = &next;
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(args) = tasks.get(i) else { break };
                let start = Instant::now();
                let (exit_code, stderr_tail) = run_one(program, slot, args, unset);
                let o = TaskOutcome {
                    task: i,
                    slot: slot.name.clone(),
                    exit_code,
                    stderr_tail,
                    seconds: start.elapsed().as_secs_f64(),
                };
                if tx.send(o).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for o in rx {
            on_done(&o);
            out.push(o);
        }
    });
    out.sort_by_key(|o| o.task);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_whose_daemon_holds_stderr_does_not_stall_the_pool() {
        if Command::new("setsid").arg("--version").output().is_err() {
            kernelab_testkit::skip("setsid", "setsid (util-linux) is not available");
            return;
        }
        // The worker starts a daemon that clears its environment and takes a session of its
        // own (out of reach of the kill), holding standard error, and exits 3.
        let task = vec![
            "-c".to_string(),
            "echo oops >&2; env -i setsid sleep 30 & echo \"daemon $!\" >&2; exit 3".to_string(),
        ];
        let t = Instant::now();
        let out = run_pool(Path::new("sh"), &[Slot::gpu(0)], &[task], &[], &mut |_| {});
        let took = t.elapsed();
        let o = &out[0];
        if let Some(pid) = o
            .stderr_tail
            .lines()
            .find_map(|l| l.strip_prefix("daemon "))
        {
            let _ = Command::new("kill").args(["-9", pid.trim()]).status();
        }
        assert_eq!(o.exit_code, Some(3));
        assert!(o.stderr_tail.starts_with("oops\n"), "{}", o.stderr_tail);
        assert!(took < std::time::Duration::from_secs(5), "{took:?}");
    }
}
