//! Slurm: submits a job array with `sbatch --array` (each array task runs one chunk of points)
//! and reads back its job id. The cluster does the scheduling; kernelab writes the batch
//! script and the per-task command.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A job array to submit.
#[derive(Clone, Debug)]
pub struct ArrayJob {
    /// Where the batch script is written.
    pub script: PathBuf,
    /// Where each task's log goes (`%A_%a.log` is appended).
    pub log_dir: PathBuf,
    /// Job name.
    pub name: String,
    /// Array tasks (indices `0..tasks`).
    pub tasks: usize,
    /// Most tasks running at once (`%N`), when limited.
    pub throttle: Option<usize>,
    /// The command each task runs; `$SLURM_ARRAY_TASK_ID` is appended as its last argument.
    pub argv: Vec<String>,
    /// More `sbatch` options (`--partition=gpu`, `--gres=gpu:1`, `--hold`).
    pub sbatch_args: Vec<String>,
}

/// Why a submission failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SlurmError {
    /// The batch script could not be written.
    #[error("{}: cannot write the batch script", path.display())]
    Write {
        /// The script.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// `sbatch` could not be started.
    #[error("cannot run sbatch (is Slurm installed and on PATH?)")]
    Start(#[source] std::io::Error),
    /// A value cannot be written into the batch script safely (a control character).
    #[error("unsafe batch script: {0}")]
    Unsafe(String),
    /// `sbatch` refused the job.
    #[error("sbatch failed: {0}")]
    Refused(String),
}

/// A control character (a newline would start a line of its own in the script) in `s`.
fn control(s: &str) -> Option<char> {
    s.chars().find(|c| c.is_control())
}

/// Quotes an argument for the batch script (POSIX shell quoting, `shlex`).
fn quote(s: &str) -> Result<String, SlurmError> {
    if let Some(c) = control(s) {
        return Err(SlurmError::Unsafe(format!(
            "{s:?}: {c:?} cannot be written into the batch script"
        )));
    }
    shlex::try_quote(s)
        .map(|q| q.into_owned())
        .map_err(|e| SlurmError::Unsafe(format!("{s:?}: {e}")))
}

/// Whether `s` can stand unquoted as an `#SBATCH` value (sbatch reads those lines itself).
fn plain(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._/%=+-,:@".contains(c))
}

/// The `--job-name` and `--output` values of `job`, refused when they hold a control character.
fn options(job: &ArrayJob) -> Result<[(&'static str, String); 2], SlurmError> {
    let out = job.log_dir.join("%A_%a.log");
    let out = out
        .to_str()
        .ok_or_else(|| SlurmError::Unsafe(format!("{}: not UTF-8", out.display())))?
        .to_string();
    for v in [&job.name, &out] {
        if let Some(c) = control(v) {
            return Err(SlurmError::Unsafe(format!(
                "{v:?}: {c:?} cannot be written into the batch script"
            )));
        }
    }
    Ok([("--job-name", job.name.clone()), ("--output", out)])
}

/// The batch script of `job`. Every argument is shell-quoted; a control character anywhere is
/// refused; an option value that is not plain text is left to `sbatch`'s command line rather
/// than an `#SBATCH` line.
pub fn script_text(job: &ArrayJob) -> Result<String, SlurmError> {
    let cmd = job
        .argv
        .iter()
        .map(|a| quote(a))
        .collect::<Result<Vec<String>, SlurmError>>()?;
    let mut text = String::from("#!/bin/sh\n");
    for (k, v) in options(job)? {
        if plain(&v) {
            text.push_str(&format!("#SBATCH {k}={v}\n"));
        }
    }
    text.push_str(&format!(
        "exec {} \"$SLURM_ARRAY_TASK_ID\"\n",
        cmd.join(" ")
    ));
    Ok(text)
}

/// Writes the batch script and submits the array; returns the job id.
pub fn submit(job: &ArrayJob) -> Result<String, SlurmError> {
    let werr = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SlurmError::Write { path, source }
    };
    crate::process::permitted("sbatch").map_err(werr(&job.script))?;
    std::fs::create_dir_all(&job.log_dir).map_err(werr(&job.log_dir))?;
    let text = script_text(job)?;
    kernelab_model::write_file(&job.script, text.as_bytes(), false).map_err(werr(&job.script))?;
    let mut array = format!("--array=0-{}", job.tasks.saturating_sub(1));
    if let Some(t) = job.throttle {
        array.push_str(&format!("%{t}"));
    }
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(array)
        .args(options(job)?.iter().map(|(k, v)| format!("{k}={v}")))
        .args(&job.sbatch_args)
        .arg(&job.script)
        .output()
        .map_err(SlurmError::Start)?;
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || stdout.is_empty() {
        return Err(SlurmError::Refused(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    // `--parsable` prints `jobid` or `jobid;cluster`.
    Ok(stdout.split(';').next().unwrap_or_default().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_quotes_arguments() {
        let job = ArrayJob {
            script: "/b/s.sh".into(),
            log_dir: "/b/logs".into(),
            name: "kernelab-sweep".into(),
            tasks: 3,
            throttle: None,
            argv: vec!["/bin/kernelab".into(), "it's".into()],
            sbatch_args: Vec::new(),
        };
        let s = script_text(&job).expect("script");
        assert!(s.contains("#SBATCH --output=/b/logs/%A_%a.log"));
        assert!(
            s.contains("exec /bin/kernelab \"it's\" \"$SLURM_ARRAY_TASK_ID\""),
            "{s}"
        );
        // A newline in a path cannot start a line of its own.
        let mut bad = job.clone();
        bad.log_dir = "/b/x\nrm -rf ~\n".into();
        assert!(matches!(script_text(&bad), Err(SlurmError::Unsafe(_))));
        let mut bad = job.clone();
        bad.argv.push("a\nb".into());
        assert!(matches!(script_text(&bad), Err(SlurmError::Unsafe(_))));
        // A path with a space is quoted in the command, kept off the #SBATCH lines.
        let mut spaced = job;
        spaced.log_dir = "/b/my logs".into();
        spaced.argv.push("/b/my sweep.toml".into());
        let s = script_text(&spaced).expect("script");
        assert!(!s.contains("--output"), "{s}");
        assert!(s.contains("'/b/my sweep.toml'"), "{s}");
    }
}
