//! `kernelab gate`: the decision written where reviewers read it (the step summary, the
//! comment body, workflow-command annotations when `GITHUB_ACTIONS=true`) besides the usual
//! output and bundle. Exit status: 0 pass, 1 regression, 2 bad input or infrastructure, 3
//! inconclusive.

use crate::cli::gate::GateArgs;
use crate::emit::emit;
use crate::output;
use crate::progress::CliHooks;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{Context, Result};
use kernelab_commands::gate::{self, publish, publish::Publish};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A set, non-empty environment variable.
fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Whether this runs as a GitHub Actions step (workflow commands are read from stdout).
fn on_github() -> bool {
    std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true")
}

/// Appends `text` to the summary file `path` (GitHub's step summary is appended to).
fn append(path: &Path, text: &str) -> Result<()> {
    let mut f = kernelab_model::open_append_regular(path)
        .with_context(|| format!("--summary {}", path.display()))?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("--summary {}", path.display()))
}

/// Writes the workflow commands `lines` to standard output.
fn annotate(lines: &[String]) -> Result<()> {
    for l in lines {
        output::say(l)?;
    }
    Ok(())
}

/// Runs the command.
pub(crate) fn run(args: GateArgs, session: &mut Session) -> Result<ExitStatus> {
    let summary: Option<PathBuf> = args
        .summary
        .clone()
        .or_else(|| env("GITHUB_STEP_SUMMARY").map(PathBuf::from));
    output::check_target(&args.output)?;
    if let Some(c) = &args.comment {
        output::check_file("--comment", c, args.output.force)?;
    }
    if let Some(a) = &args.annotations {
        output::check_file("--annotations", a, args.output.force)?;
    }
    let settings = gate::GateSettings {
        repo: Some(args.repo.clone()),
        config: args.config.clone(),
        base: args.base.clone(),
        head: Some(args.head.clone()),
        target_branch: env("GITHUB_BASE_REF")
            .or_else(|| env("CI_MERGE_REQUEST_TARGET_BRANCH_NAME")),
        on_gpu_hang: Some(super::kernel::gpu_wait_expired),
        controls: args.controls.clone(),
        exe: Some(crate::self_exe()?),
    };
    let result = {
        let hooks = CliHooks::in_place();
        gate::run(&settings, &hooks)
    };
    let g = match result {
        Ok(g) => g,
        Err(e) => {
            // Reviewers read why no verdict came, where the verdict would be.
            let why = format!("{e:#}");
            let md = format!(
                "## ⚠️ kernelab gate: could not run (exit 2)\n\n```\n{}\n```\n",
                why.replace("```", "'''")
            );
            if let Some(s) = &summary {
                append(s, &md)?;
            }
            if let Some(c) = &args.comment {
                output::write_file(
                    c,
                    format!("{}\n{md}", publish::COMMENT_MARKER).as_bytes(),
                    args.output.force,
                )?;
            }
            if on_github() {
                annotate(&[publish::workflow_command(
                    "error",
                    "kernelab gate - could not run",
                    &why,
                )])?;
            }
            return Err(e);
        }
    };
    let mut commands = g.report.annotations();
    commands.extend(g.report.source_annotations(&g.changed));
    if on_github() {
        annotate(&commands)?;
    }
    if let Some(a) = &args.annotations {
        let text: String = commands.iter().map(|c| format!("{c}\n")).collect();
        output::write_file(a, text.as_bytes(), args.output.force).context("--annotations")?;
    }
    if let Some(s) = &summary {
        append(s, &g.summary_markdown())?;
    }
    if let Some(c) = &args.comment {
        output::write_file(c, g.comment().as_bytes(), args.output.force).context("--comment")?;
    }
    let code = g.report.exit_status;
    emit(g.outcome, &args.output, session)?;
    Ok(match code {
        0 => ExitStatus::Success,
        1 => ExitStatus::Failure,
        3 => ExitStatus::Inconclusive,
        _ => ExitStatus::Error,
    })
}
