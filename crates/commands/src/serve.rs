//! `serve`: request-level A/B of two inference servers (the engine lives in
//! kernelab-runner's `serve`); the samples file's analysis as the `serve` document.

use crate::{Hooks, Outcome};
use anyhow::{anyhow, bail, Context, Result};
use kernelab_runner::preflight::{require, Tool};
use kernelab_runner::run::{RunKind, RunState};
use kernelab_runner::serve::analysis::analyse;
use kernelab_runner::serve::rounds::{run_rounds, RoundsLimits, RunEnd};
use kernelab_runner::serve::samples::{self, SampleWriter, ServeRecord, SCHEMA};
use kernelab_runner::serve::spec::Spec;
use std::path::PathBuf;

use kernelab_model::Document;
use std::path::Path;

/// The `serve` document of the samples file `samples` analysed as `result`: it passes only
/// when every compared output is identical, something was compared, no request failed and
/// every point gave successful requests.
pub fn serve_doc(
    samples: &Path,
    spec_sha256: String,
    result: kernelab_model::serve::ServeResult,
) -> Document<kernelab_report::documents::ServeBody> {
    // Nothing compared is no evidence of identity.
    let pass = result.identity.identical == result.identity.compared
        && result.identity.compared > 0
        && result.request_failures == 0
        && result.failed_points == 0;
    Document::of(kernelab_report::documents::ServeBody {
        samples: samples.display().to_string(),
        spec_sha256,
        pass,
        result,
    })
}

/// The outcome of a `serve` document: recorded with its samples file as input, shown as the
/// serve tables and CSV rows; failing unless the document passes.
pub fn outcome(
    doc: Document<kernelab_report::documents::ServeBody>,
) -> anyhow::Result<crate::Outcome> {
    let samples = std::path::PathBuf::from(&doc.body.samples);
    let record = crate::Recordable::of(&doc, std::slice::from_ref(&samples), None)?;
    let pass = doc.body.pass;
    let view = crate::View::shared_with_csv(
        doc,
        |d, _| kernelab_report::serve_sections(&d.body.result),
        |d| {
            Ok(kernelab_report::csv_rows(
                &kernelab_report::serve_csv_rows(&d.body.result),
            )?)
        },
    );
    Ok(crate::Outcome::new(view, crate::Status::of(pass)).recording(record))
}

/// Each server's program, found before any server starts (a relative path from the server's
/// folder; a bare name on PATH, unless the server's environment sets its own PATH).
fn preflight(spec: &Spec, spec_dir: &std::path::Path) -> Result<()> {
    let mut tools = Vec::new();
    for (name, s) in [("baseline", &spec.baseline), ("candidate", &spec.candidate)] {
        let Some(prog) = s.argv.first() else { continue };
        let prog = std::path::Path::new(prog);
        let install = format!("it, or give its path in the spec's [{name}] argv");
        if prog.components().count() > 1 {
            let cwd = spec_dir.join(s.cwd.as_deref().unwrap_or(std::path::Path::new(".")));
            tools.push(Tool::new(cwd.join(prog), &install, None));
        } else if !s.env.contains_key("PATH") {
            tools.push(Tool::new(prog, &install, None));
        }
    }
    require(&tools)?;
    Ok(())
}

/// What one run of rounds needs.
struct Rounds<'a> {
    spec: &'a Spec,
    spec_sha256: &'a str,
    spec_dir: &'a std::path::Path,
    start: kernelab_stats::Order,
    done: &'a [ServeRecord],
    budget: Option<std::time::Duration>,
}

/// Runs (or continues) the rounds of `run`, writing its samples and its state.
fn execute(r: &Rounds<'_>, run: &kernelab_runner::run::Run, hooks: &dyn Hooks) -> Result<()> {
    let path = run.samples.clone();
    let mut w = SampleWriter::append(&path).map_err(|e| anyhow!(e))?;
    if r.done.is_empty() {
        w.write(&ServeRecord::Header {
            schema_version: SCHEMA,
            spec: Box::new(r.spec.clone()),
            spec_sha256: r.spec_sha256.to_string(),
            spec_dir: r.spec_dir.to_path_buf(),
            start: r.start,
            run: run.identity.clone(),
        })
        .map_err(|e| anyhow!(e))?;
    }
    hooks.say(&format!(
        "kernelab serve: run {}, samples in {}, server logs in {}",
        run.id,
        path.display(),
        run.dir.join("logs").display()
    ));
    let logs = run.subdir("logs").map_err(|e| anyhow!(e))?;
    let mut progress = |s: &kernelab_runner::Step<'_>| hooks.step(s);
    let limits = RoundsLimits {
        logs: &logs,
        budget: r.budget,
    };
    let end = run_rounds(
        r.spec,
        r.spec_dir,
        r.start,
        r.done,
        &mut w,
        limits,
        &mut progress,
    )
    .map_err(|e| anyhow!(e))
    .with_context(|| {
        format!(
            "samples so far are in {} (--resume {} continues)",
            path.display(),
            run.id
        )
    });
    // Stopped early by the budget: analysed as it is, and `--resume` may go on.
    let end = run.conclude(end, |e| match e {
        Ok(RunEnd::Complete) => RunState::Complete,
        Ok(RunEnd::Budget(_) | RunEnd::Stopped(_)) => RunState::Stopped,
        Err(_) => RunState::Failed,
    })?;
    if let RunEnd::Stopped(why) = end {
        bail!(
            "stopped at a failed round: {why}\nsamples so far are in {} (--resume {} continues)",
            path.display(),
            run.id
        )
    }
    Ok(())
}

/// What is checked against `spec` before any run folder is made or server starts: `--budget`
/// needs planned looks, and the A/A control's identity (`--aa-samples`) is read and checked.
fn precheck(
    args: &ServeSettings,
    spec: &Spec,
) -> Result<Option<kernelab_model::serve::AaIdentity>> {
    if args.budget.is_some() && spec.analysis.primary.is_empty() {
        bail!(
            "--budget stops planned looks, which need `[analysis] primary` metrics in the spec; a run without them is a fixed design of `[rounds] count` rounds"
        );
    }
    let Some(aa) = &args.aa_samples else {
        return Ok(None);
    };
    let records = samples::read(aa).map_err(|e| anyhow!(e))?;
    kernelab_runner::serve::analysis::aa_identity(spec, aa, &records)
        .map(Some)
        .map_err(|e| anyhow!(e))
}

/// `serve` as a user asks for it.
#[derive(Clone, Debug, Default)]
pub struct ServeSettings {
    /// The serve spec (not needed with `resume`).
    pub spec: Option<PathBuf>,
    /// Where the samples go.
    pub samples: Option<PathBuf>,
    /// A run (folder, samples file or id) to continue, or to analyse.
    pub resume: Option<PathBuf>,
    /// Analyse the samples only; start no server.
    pub analyze: bool,
    /// Stop at the first planned look after this much time.
    pub budget: Option<std::time::Duration>,
    /// An A/A control's samples whose identity verdict goes into this run's.
    pub aa_samples: Option<PathBuf>,
    /// Run the A/A control first (the baseline on both sides).
    pub with_aa: bool,
}

/// `serve`: the rounds of a serving A/B (fresh servers, alternated order, the same requests
/// to both) run or continued, then the samples analysed. Failed requests or points make the
/// outcome incomplete (the analysis leaves them out; the notes name the first).
pub fn run(args: &ServeSettings, hooks: &dyn Hooks) -> Result<Outcome> {
    let (spec, spec_sha256, spec_dir, start, run, done, aa) = match &args.resume {
        Some(p) => {
            let run =
                kernelab_runner::run::resume(p, RunKind::Serve, SCHEMA).map_err(|e| anyhow!(e))?;
            let records = samples::read(&run.samples).map_err(|e| anyhow!(e))?;
            let Some(ServeRecord::Header {
                spec,
                spec_sha256,
                spec_dir,
                start,
                ..
            }) = records.first().cloned()
            else {
                bail!("{}: no header record", run.samples.display());
            };
            let aa = precheck(args, &spec)?;
            (*spec, spec_sha256, spec_dir, start, run, records, aa)
        }
        None => {
            let spec_path = args
                .spec
                .as_ref()
                .ok_or_else(|| anyhow!("SPEC is required (or --resume FILE)"))?;
            let spec = Spec::read(spec_path).map_err(|e| anyhow!(e))?;
            let bytes = kernelab_model::read_regular(
                spec_path,
                kernelab_runner::serve::spec::MAX_SPEC_BYTES,
            )
            .with_context(|| format!("{}: cannot read", spec_path.display()))?;
            let dir = spec_path
                .parent()
                .map(|d| {
                    if d.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        d.to_path_buf()
                    }
                })
                .unwrap_or_else(|| PathBuf::from("."));
            let dir = std::fs::canonicalize(&dir)
                .with_context(|| format!("{}: cannot resolve", dir.display()))?;
            preflight(&spec, &dir)?;
            // A coin flip for the order of round 0, recorded in the header.
            let start = kernelab_runner::run::coin_flip();
            let label = spec_path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let aa = precheck(args, &spec)?;
            let path =
                kernelab_runner::run::create(RunKind::Serve, &label, args.samples.as_deref())
                    .map_err(|e| anyhow!(e))?;
            (
                spec,
                kernelab_model::sha256_hex(&bytes),
                dir,
                start,
                path,
                Vec::new(),
                aa,
            )
        }
    };
    let aa = match (args.with_aa, &args.resume) {
        (true, None) => {
            // The A/A control: the baseline on both sides, everything else as the spec says.
            let mut control = spec.clone();
            control.candidate = control.baseline.clone();
            let label = format!(
                "{} A/A",
                args.spec
                    .as_ref()
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            );
            let aa_run = kernelab_runner::run::create(RunKind::Serve, &label, None)
                .map_err(|e| anyhow!(e))?;
            hooks.say(&format!(
                "kernelab serve: the A/A control first (run {})",
                aa_run.id
            ));
            let rounds = Rounds {
                spec: &control,
                spec_sha256: &spec_sha256,
                spec_dir: &spec_dir,
                start: kernelab_runner::run::coin_flip(),
                done: &[],
                budget: args.budget,
            };
            execute(&rounds, &aa_run, hooks)?;
            let records = samples::read(&aa_run.samples).map_err(|e| anyhow!(e))?;
            Some(
                kernelab_runner::serve::analysis::aa_identity(&spec, &aa_run.samples, &records)
                    .map_err(|e| anyhow!(e))?,
            )
        }
        _ => aa,
    };
    if !args.analyze {
        if args.resume.is_some() {
            preflight(&spec, &spec_dir)?;
        }
        let rounds = Rounds {
            spec: &spec,
            spec_sha256: &spec_sha256,
            spec_dir: &spec_dir,
            start,
            done: &done,
            budget: args.budget,
        };
        execute(&rounds, &run, hooks)?;
    }
    let path = run.samples.clone();
    let records = samples::read(&path).map_err(|e| anyhow!(e))?;
    let mut result = analyse(&spec, start, &records);
    result.aa_identity = aa;
    let failures = result.request_failures;
    let failed_points = result.failed_points;
    let first_failure = result.failure_examples.first().cloned();
    let mut outcome = outcome(serve_doc(&path, spec_sha256, result))?;
    if failures > 0 {
        outcome.status = crate::Status::Incomplete;
        outcome.late_notes.push(format!(
            "error: {failures} requests failed (their points are left out of the analysis); the first: {}",
            first_failure.clone().unwrap_or_default()
        ));
    } else if failed_points > 0 {
        outcome.status = crate::Status::Incomplete;
        outcome.late_notes.push(format!(
            "error: {failed_points} point(s) gave no successful request; the first: {}",
            first_failure.unwrap_or_default()
        ));
    }
    Ok(outcome)
}

/// The `serve` document of the samples file `samples` as it stands (`serve --analyze`, the
/// Python module's `serve_analyze`).
pub fn analyze_samples(samples: &Path) -> Result<Document<kernelab_report::documents::ServeBody>> {
    let records = samples::read(samples).map_err(|e| anyhow!(e))?;
    let Some(ServeRecord::Header {
        spec,
        spec_sha256,
        start,
        ..
    }) = records.first().cloned()
    else {
        bail!("{}: no header record", samples.display());
    };
    let result = analyse(&spec, start, &records);
    Ok(serve_doc(samples, spec_sha256, result))
}
