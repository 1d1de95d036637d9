//! `serve`: request-level A/B of two inference servers (the engine lives in
//! kernelab-runner's `serve`); the samples file's analysis as the `serve` document.

use crate::{Hooks, Outcome};
use anyhow::{anyhow, bail, Context, Result};
use kernelab_runner::preflight::{require, Tool};
use kernelab_runner::run::{read_header, New, Run, RunKind, RunState, Session};
use kernelab_runner::serve::analysis::analyse;
use kernelab_runner::serve::rounds::{run_rounds, RoundsLimits, RunEnd};
use kernelab_runner::serve::samples::{self, SampleWriter, ServePlan, ServeRecord, SCHEMA};
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

/// What one run of rounds needs beside its session.
struct Rounds<'a> {
    done: &'a [ServeRecord],
    budget: Option<std::time::Duration>,
}

/// Runs (or continues) the rounds of the run `session` began, writing its samples and its
/// state; returns the run.
fn execute(r: &Rounds<'_>, session: Session<ServePlan>, hooks: &dyn Hooks) -> Result<Run> {
    let run = &session.run;
    let path = run.samples.clone();
    let id = run.id.clone();
    hooks.say(&format!(
        "kernelab serve: run {id}, samples in {}, server logs in {}",
        path.display(),
        run.dir.join("logs").display()
    ));
    let logs = run.subdir("logs").map_err(|e| anyhow!(e))?;
    let mut progress = |s: &kernelab_runner::Step<'_>| hooks.step(s);
    let body = |s: &mut Session<ServePlan>| {
        let limits = RoundsLimits {
            logs: &logs,
            budget: r.budget,
        };
        let plan = s.header.plan.clone();
        run_rounds(
            &plan.spec,
            &plan.spec_dir,
            plan.start,
            r.done,
            &mut SampleWriter::new(&mut s.writer),
            limits,
            &mut progress,
        )
        .map_err(|e| anyhow!(e))
        .with_context(|| {
            format!(
                "samples so far are in {} (--resume {id} continues)",
                path.display()
            )
        })
    };
    // Stopped early by the budget: analysed as it is, and `--resume` may go on.
    let (run, end) = session.drive(body, |e| match e {
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
    Ok(run)
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
    let (session, aa) = match &args.resume {
        Some(p) if args.analyze => {
            let run =
                kernelab_runner::run::resume(p, RunKind::Serve, SCHEMA).map_err(|e| anyhow!(e))?;
            let header = read_header::<ServePlan>(&run.samples).map_err(|e| anyhow!(e))?;
            let aa = precheck(args, &header.plan.spec)?;
            return analyzed(&run.samples, aa);
        }
        Some(p) => {
            let session = Session::<ServePlan>::resume(RunKind::Serve, SCHEMA, p, None)
                .map_err(|e| anyhow!(e))?;
            let aa = precheck(args, &session.header.plan.spec)?;
            preflight(&session.header.plan.spec, &session.header.plan.spec_dir)?;
            (session, aa)
        }
        None => {
            let spec_path = args
                .spec
                .as_ref()
                .ok_or_else(|| anyhow!("SPEC is required (or --resume FILE)"))?;
            let plan = read_plan(spec_path)?;
            let label = spec_path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let aa = precheck(args, &plan.spec)?;
            let aa = match args.with_aa {
                true => Some(control(&plan, &label, hooks, args.budget)?),
                false => aa,
            };
            let new = New::labelled(&label, args.samples.as_deref());
            let session =
                Session::create(RunKind::Serve, SCHEMA, new, plan).map_err(|e| anyhow!(e))?;
            (session, aa)
        }
    };
    let done = match session.resumed {
        true => samples::read(&session.run.samples).map_err(|e| anyhow!(e))?,
        false => Vec::new(),
    };
    let rounds = Rounds {
        done: &done,
        budget: args.budget,
    };
    let run = execute(&rounds, session, hooks)?;
    analyzed(&run.samples, aa)
}

/// The outcome of the samples file `path` as it stands, with the A/A control's identity `aa`:
/// failed requests or points make it incomplete (the analysis leaves them out; the notes name
/// the first).
fn analyzed(path: &Path, aa: Option<kernelab_model::serve::AaIdentity>) -> Result<Outcome> {
    let records = samples::read(path).map_err(|e| anyhow!(e))?;
    let Some(ServeRecord::Header(header)) = records.first() else {
        bail!("{}: no header record", path.display());
    };
    let mut result = analyse(&header.plan.spec, header.plan.start, &records);
    result.aa_identity = aa;
    let failures = result.request_failures;
    let failed_points = result.failed_points;
    let first_failure = result.failure_examples.first().cloned();
    let mut outcome = outcome(serve_doc(path, header.plan.spec_sha256.clone(), result))?;
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

/// The plan of a new run of the spec at `spec_path`: the spec, its hash, its folder and a
/// coin flip for the order of round 0; every server's program found first.
fn read_plan(spec_path: &Path) -> Result<ServePlan> {
    let spec = Spec::read(spec_path).map_err(|e| anyhow!(e))?;
    let bytes =
        kernelab_model::read_regular(spec_path, kernelab_runner::serve::spec::MAX_SPEC_BYTES)
            .with_context(|| format!("{}: cannot read", spec_path.display()))?;
    let dir = match spec_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let dir = std::fs::canonicalize(&dir)
        .with_context(|| format!("{}: cannot resolve", dir.display()))?;
    preflight(&spec, &dir)?;
    Ok(ServePlan {
        spec: Box::new(spec),
        spec_sha256: kernelab_model::sha256_hex(&bytes),
        spec_dir: dir,
        start: kernelab_runner::run::coin_flip(),
    })
}

/// The A/A control of `plan`, run first: the baseline on both sides, everything else as the
/// spec says; its identity verdict.
fn control(
    plan: &ServePlan,
    label: &str,
    hooks: &dyn Hooks,
    budget: Option<std::time::Duration>,
) -> Result<kernelab_model::serve::AaIdentity> {
    let mut spec = plan.spec.clone();
    spec.candidate = spec.baseline.clone();
    let control = ServePlan {
        spec,
        start: kernelab_runner::run::coin_flip(),
        ..plan.clone()
    };
    let label = format!("{label} A/A");
    let session = Session::create(RunKind::Serve, SCHEMA, New::labelled(&label, None), control)
        .map_err(|e| anyhow!(e))?;
    hooks.say(&format!(
        "kernelab serve: the A/A control first (run {})",
        session.run.id
    ));
    let run = execute(&Rounds { done: &[], budget }, session, hooks)?;
    let records = samples::read(&run.samples).map_err(|e| anyhow!(e))?;
    kernelab_runner::serve::analysis::aa_identity(&plan.spec, &run.samples, &records)
        .map_err(|e| anyhow!(e))
}

/// The `serve` document of the samples file `samples` as it stands (`serve --analyze`, the
/// Python module's `serve_analyze`).
pub fn analyze_samples(samples: &Path) -> Result<Document<kernelab_report::documents::ServeBody>> {
    let records = samples::read(samples).map_err(|e| anyhow!(e))?;
    let Some(ServeRecord::Header(header)) = records.first() else {
        bail!("{}: no header record", samples.display());
    };
    let result = analyse(&header.plan.spec, header.plan.start, &records);
    Ok(serve_doc(samples, header.plan.spec_sha256.clone(), result))
}
