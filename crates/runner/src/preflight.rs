//! Preflight: every program a command needs is found once, before any process starts, so a
//! missing tool is one clear error (exit 2) naming it, what to install, and the option that
//! points to it, instead of a failure per run.
//!
//! ```
//! use kernelab_runner::preflight::{require, Tool};
//! let e = require(&[Tool::new("kernelab-no-such-program", "a test tool", None)]).unwrap_err();
//! assert!(e.to_string().starts_with("kernelab-no-such-program: not found on PATH"));
//! ```

use std::path::{Path, PathBuf};

/// A program a command needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tool {
    /// The program: a name looked up on PATH, or a path.
    pub program: PathBuf,
    /// What it is and where it comes from ("Nsight Compute (CUDA toolkit)").
    pub install: String,
    /// The option that names another program or path (`--profiler-path`), if there is one.
    pub option: Option<String>,
}

impl Tool {
    /// A tool `program`, installed with `install`, pointed to by `option`.
    pub fn new(program: impl Into<PathBuf>, install: &str, option: Option<&str>) -> Tool {
        Tool {
            program: program.into(),
            install: install.to_string(),
            option: option.map(str::to_string),
        }
    }
}

/// A program that is not there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {}; install {}{}", tool.program.display(), where_, tool.install, tool.option.as_ref().map(|o| format!(", or name it with {o}")).unwrap_or_default())]
pub struct Missing {
    /// The tool.
    pub tool: Tool,
    /// Where it was looked for, in words.
    pub where_: String,
}

fn executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The path of `program`: itself when it names a path (has a `/`), else the first executable
/// file of that name on PATH.
pub fn find(program: &Path) -> Option<PathBuf> {
    if program.as_os_str().is_empty() {
        return None;
    }
    if program.components().count() > 1 || program.is_absolute() {
        return executable(program).then(|| program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| executable(p))
}

/// Finds every tool (each once), or names the first one missing.
pub fn require(tools: &[Tool]) -> Result<Vec<PathBuf>, Missing> {
    let mut out = Vec::new();
    for t in tools {
        match find(&t.program) {
            Some(p) => out.push(p),
            None => {
                let where_ = if t.program.components().count() > 1 {
                    "not an executable file".to_string()
                } else {
                    "not found on PATH".to_string()
                };
                return Err(Missing {
                    tool: t.clone(),
                    where_,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_sh_and_names_what_is_missing() {
        assert!(find(Path::new("sh")).is_some());
        let e = require(&[
            Tool::new("sh", "a shell", None),
            Tool::new(
                "/nonexistent/ncu",
                "NVIDIA Nsight Compute",
                Some("--profiler-path"),
            ),
        ])
        .expect_err("missing");
        assert_eq!(
            e.to_string(),
            "/nonexistent/ncu: not an executable file; install NVIDIA Nsight Compute, or name it with --profiler-path"
        );
        assert!(find(Path::new("")).is_none());
    }
}
