//! The two sides of a gate: revisions resolved with the git command line, each checked out in
//! a temporary work tree of its own (removed afterwards, even on error), and built there.
//!
//! Git runs with the repository's hooks and file-system monitor turned off
//! (`core.hooksPath=/dev/null`, `core.fsmonitor=false`) and never prompts: checking out a
//! revision runs no hook (filter drivers of git's own configuration, such as Git LFS, run as in
//! any checkout). The build command is the one program the configuration adds.

use anyhow::{anyhow, bail, Context, Result};
use kernelab_runner::process::{permitted, Keep, PipeReader, Tracked};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The most bytes of a build's output kept for its error message (its end).
const BUILD_TAIL: usize = 16 << 10;
/// The most lines of a failed build's output quoted.
const BUILD_LINES: usize = 20;

/// `git ARGS` in `repo`, its standard output trimmed; an error quotes git's message.
pub fn git(repo: &Path, args: &[&str]) -> Result<String> {
    permitted("git")?;
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
        ])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .output()
        .context("running git (is it installed?)")?;
    if !out.status.success() {
        bail!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// The commit `rev` names in `repo` (full hex).
pub fn commit(repo: &Path, rev: &str) -> Result<String> {
    git(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .with_context(|| format!("{rev:?} names no commit"))
}

/// The branch the default base is the merge base with: `target` (a CI's target branch, as
/// `origin/NAME` or `NAME`), else `origin/HEAD`, else a local `main` or `master`.
pub fn default_branch(repo: &Path, target: Option<&str>) -> Result<String> {
    let exists = |r: &str| commit(repo, r).is_ok();
    if let Some(t) = target.filter(|t| !t.is_empty()) {
        for cand in [format!("origin/{t}"), t.to_string()] {
            if exists(&cand) {
                return Ok(cand);
            }
        }
    }
    if let Ok(r) = git(
        repo,
        &[
            "symbolic-ref",
            "--quiet",
            "--short",
            "refs/remotes/origin/HEAD",
        ],
    ) {
        if !r.is_empty() && exists(&r) {
            return Ok(r);
        }
    }
    for cand in ["main", "master"] {
        if exists(cand) {
            return Ok(cand.to_string());
        }
    }
    Err(anyhow!(
        "no default branch found (no origin/HEAD, main or master): give --base REV"
    ))
}

/// The temporary work trees of one gate, removed (with git's record of them) when dropped.
pub struct Worktrees {
    repo: PathBuf,
    dir: tempfile::TempDir,
    made: Vec<PathBuf>,
}

impl Worktrees {
    /// A place for the work trees of `repo`, in the temporary folder.
    pub fn new(repo: &Path) -> Result<Worktrees> {
        let dir = tempfile::Builder::new()
            .prefix("kernelab-gate-")
            .tempdir()
            .context("creating a temporary folder for the work trees")?;
        Ok(Worktrees {
            repo: repo.to_path_buf(),
            dir,
            made: Vec::new(),
        })
    }

    /// `commit` checked out (detached) in a new work tree named `name`.
    pub fn add(&mut self, name: &str, commit: &str) -> Result<PathBuf> {
        let path = self.dir.path().join(name);
        let p = path
            .to_str()
            .ok_or_else(|| anyhow!("{}: not UTF-8", path.display()))?;
        git(
            &self.repo,
            &["worktree", "add", "--detach", "--quiet", p, commit],
        )?;
        self.made.push(path.clone());
        Ok(path)
    }
}

impl Drop for Worktrees {
    fn drop(&mut self) {
        for p in &self.made {
            if let Some(p) = p.to_str() {
                let _ = git(&self.repo, &["worktree", "remove", "--force", p]);
            }
        }
        if !self.made.is_empty() {
            let _ = git(&self.repo, &["worktree", "prune"]);
        }
    }
}

/// Runs `command` through `sh -c` in `dir` (the `side`'s work tree); a failure names the side
/// and quotes the end of its output.
pub fn build(dir: &Path, command: &str, side: &str) -> Result<()> {
    permitted("sh")?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut tracked = Tracked::prepare(&mut cmd, false);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting the build of {side}"))?;
    tracked.started(child.id());
    // Both pipes read at once (a build filling one never blocks), their ends kept.
    let tail = |p| PipeReader::spawn(p, Keep::Tail(BUILD_TAIL));
    let readers = (
        child.stdout.take().map(tail),
        child
            .stderr
            .take()
            .map(|e| PipeReader::spawn(e, Keep::Tail(BUILD_TAIL))),
    );
    let status = child.wait();
    tracked.kill_all();
    let mut output = Vec::new();
    for r in [readers.0, readers.1].into_iter().flatten() {
        output.extend(r.finish().0);
    }
    let status = status.with_context(|| format!("waiting for the build of {side}"))?;
    if status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&output);
    let lines: Vec<&str> = text.lines().collect();
    let tail = lines[lines.len().saturating_sub(BUILD_LINES)..].join("\n");
    let how = status
        .code()
        .map_or("was killed by a signal".to_string(), |c| {
            format!("exited with {c}")
        });
    bail!("the build of {side} ({command:?}) {how}; its output ends:\n{tail}")
}
