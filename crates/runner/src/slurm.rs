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
    /// `sbatch` refused the job.
    #[error("sbatch failed: {0}")]
    Refused(String),
}

/// Quotes an argument for the batch script (POSIX shell single quotes).
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// The batch script of `job`.
pub fn script_text(job: &ArrayJob) -> String {
    let cmd: Vec<String> = job.argv.iter().map(|a| quote(a)).collect();
    format!(
        "#!/bin/sh\n#SBATCH --job-name={}\n#SBATCH --output={}\nexec {} \"$SLURM_ARRAY_TASK_ID\"\n",
        job.name,
        job.log_dir.join("%A_%a.log").display(),
        cmd.join(" ")
    )
}

/// Writes the batch script and submits the array; returns the job id.
pub fn submit(job: &ArrayJob) -> Result<String, SlurmError> {
    let werr = |path: &Path| {
        let path = path.to_path_buf();
        move |source| SlurmError::Write { path, source }
    };
    std::fs::create_dir_all(&job.log_dir).map_err(werr(&job.log_dir))?;
    std::fs::write(&job.script, script_text(job)).map_err(werr(&job.script))?;
    let mut array = format!("--array=0-{}", job.tasks.saturating_sub(1));
    if let Some(t) = job.throttle {
        array.push_str(&format!("%{t}"));
    }
    let out = Command::new("sbatch")
        .arg("--parsable")
        .arg(array)
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
        let s = script_text(&job);
        assert!(s.contains("#SBATCH --output=/b/logs/%A_%a.log"));
        assert!(s.contains("exec '/bin/kernelab' 'it'\\''s' \"$SLURM_ARRAY_TASK_ID\""));
    }
}
