//! Running a vendor tool that converts a binary report kernelab does not read into one it
//! does (`nsys export`, `ncu --import … --csv`): finding the tool, the cache folder its output
//! is kept in, and one run of it in its own process group with a deadline, its output in files
//! of a fresh folder.

use crate::error::{Error, ErrorKind, Result};
use kernelab_model::{Location, TempDir};
use std::ffi::OsStr;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;
use wait_timeout::ChildExt;

/// The folder a tool's conversions are cached in: `$KERNELAB_CACHE_DIR/<sub>`, else
/// `$XDG_CACHE_HOME/kernelab/<sub>`, else `$HOME/.cache/kernelab/<sub>`. A confined run
/// ([`kernelab_model::CONFINE_ENV`]) caches in its state folder instead,
/// `$XDG_STATE_HOME/kernelab/<sub>` (under the root, where `kernelab mcp` puts it), and nowhere
/// else.
pub(crate) fn cache_dir(sub: &str) -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if std::env::var_os(kernelab_model::CONFINE_ENV).is_some() {
        return var("XDG_STATE_HOME").map(|s| s.join("kernelab").join(sub));
    }
    let base = var("KERNELAB_CACHE_DIR")
        .or_else(|| var("XDG_CACHE_HOME").map(|x| x.join("kernelab")))
        .or_else(|| var("HOME").map(|h| h.join(".cache").join("kernelab")))?;
    Some(base.join(sub))
}

/// The program `$<env>` names, else `name` on `PATH`, when there is one.
pub(crate) fn find(name: &str, env: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The longest a conversion may take: `$<env>` seconds, default 600.
pub(crate) fn deadline(env: &str) -> Duration {
    let secs = std::env::var(env)
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&s| s > 0)
        .unwrap_or(600);
    Duration::from_secs(secs)
}

/// Sends SIGKILL to the process group `pgid` (the tool and what it started).
fn kill_group(pgid: u32) {
    let Ok(pgid) = libc::pid_t::try_from(pgid) else {
        return;
    };
    if pgid > 1 {
        #[allow(unsafe_code)]
        // SAFETY: kill(2) has no memory-safety preconditions; a negative pid names a group.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// Runs `program args` in its own process group, its standard output into `work/<out>` and
/// its errors into `work/<program>.err`: `Some(status)`, or `None` when it ran past `limit`
/// (then it and its group were killed). What it left running goes with it either way.
pub(crate) fn run(
    program: &Path,
    args: &[&OsStr],
    work: &TempDir,
    out: &str,
    limit: Duration,
) -> Result<Option<ExitStatus>> {
    let io = |e| Error::new(Location::default(), ErrorKind::Io(e));
    let stem = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut child = std::process::Command::new(program)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(work.create(out).map_err(io)?)
        .stderr(work.create(&format!("{stem}.err")).map_err(io)?)
        .process_group(0)
        .spawn()
        .map_err(io)?;
    let pgid = child.id();
    let status = child.wait_timeout(limit).map_err(io)?;
    kill_group(pgid);
    if status.is_none() {
        let _ = child.wait();
    }
    Ok(status)
}

/// The last line `program` wrote to its errors in `work` (at most 300 characters).
pub(crate) fn last_error(program: &Path, work: &TempDir) -> String {
    let stem = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let err = work
        .read(&format!("{stem}.err"), 1 << 20)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    err.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(300)
        .collect()
}
