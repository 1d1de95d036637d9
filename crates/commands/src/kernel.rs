//! `kernel run`: a launch spec's plan (`--dry-run`) and the `kernel_run` document of a timed
//! run, with its achieved rates checked against the device's roofs.

use crate::{Outcome, Recordable, Status, View};
use anyhow::Result;
use kernelab_launcher::plan::plan;
use kernelab_launcher::Spec;
use kernelab_model::kernel_run::KernelRun;
use kernelab_model::Document;
use kernelab_report::documents::KernelRunBody;
use kernelab_report::{kernel_plan_sections, kernel_sections};
use std::path::{Path, PathBuf};

/// `kernel run --dry-run`: both builds of the spec `path` resolved, no GPU opened.
pub fn dry_run(path: &Path, spec: &Spec) -> Result<Outcome> {
    let p = plan(spec)?;
    let title = format!("{}: both builds resolved (no GPU opened)", path.display());
    let view = View::shared(Document::of(p), move |doc, _| {
        kernel_plan_sections(&doc.body, &title)
    })
    .without_csv("--format csv is not offered for kernel run; use json");
    Ok(Outcome::new(view, Status::Pass))
}

/// Checks the achieved rates of `r` against the device's roofs (the ceilings file, else the
/// datasheet entry of the device): a build above them is flagged in `r.above_roof`.
pub fn check_roof(r: &mut KernelRun, spec: &Spec, ceilings: Option<&Path>) -> Result<()> {
    let Some(w) = &r.work else { return Ok(()) };
    let (c, source) = match ceilings {
        Some(p) => (
            crate::roofline::read_ceilings(p)?,
            format!("the ceilings in {}", p.display()),
        ),
        None => match kernelab_model::roofline::Ceilings::from_datasheet(&r.device) {
            Some(c) => (c, format!("the datasheet figures of {}", r.device)),
            None => return Ok(()),
        },
    };
    let roof = spec.work.as_ref().and_then(|w| w.roof);
    r.above_roof = kernelab_model::kernel_run::above_roof(w, &c, roof, &source);
    r.roof_checked = Some(source);
    Ok(())
}

/// The outcome of the timed run `r` of the spec `path` (samples in `samples`): checked against
/// the roofs of `ceilings` (else the datasheet), recorded with the spec and the files it names;
/// failing when a gate failed or a build ran above a roof.
pub fn outcome(
    mut r: KernelRun,
    path: &Path,
    spec: &Spec,
    samples: &Path,
    ceilings: Option<&Path>,
) -> Result<Outcome> {
    let pass = r.gates_passed();
    check_roof(&mut r, spec, ceilings)?;
    let beats_roof = !r.above_roof.is_empty();
    let doc = Document::of(KernelRunBody {
        pass,
        samples: samples.display().to_string(),
        run: r,
    });
    // The record hashes everything the result depends on: the spec and the files it names.
    let mut inputs: Vec<PathBuf> = vec![
        path.to_path_buf(),
        spec.resolve(&spec.baseline.code),
        spec.resolve(&spec.candidate.code),
    ];
    inputs.extend(spec.gates.oracle.as_ref().map(|o| spec.resolve(o)));
    let record = Recordable::of(&doc, &inputs, None)?;
    let view = View::shared(doc, |doc, _| kernel_sections(&doc.body.run)).without_csv(
        "--format csv is not offered for kernel run; use json (every sample is in the --samples JSONL)",
    );
    Ok(Outcome::new(view, Status::of(pass && !beats_roof)).recording(record))
}

/// A launch spec read for `kernel run`, with `rounds` (at least 2) in place of its own.
pub fn read_spec(path: &Path, rounds: Option<usize>) -> Result<Spec> {
    let mut spec = Spec::read(path)?;
    if let Some(r) = rounds {
        spec.timing.rounds = r.max(2);
    }
    Ok(spec)
}

/// `kernel run`: both builds of `spec` (read from `path`) gated and timed on its GPU, every
/// sample written to a run's samples file (`samples`, else one in the state folder); the
/// achieved rates checked against the roofs of `ceilings`. The caller installs the watchdog
/// that ends a GPU wait that never returns.
pub fn run(
    path: &Path,
    spec: &Spec,
    samples: Option<&Path>,
    ceilings: Option<&Path>,
    hooks: &dyn crate::Hooks,
) -> Result<Outcome> {
    use anyhow::{anyhow, Context};
    use kernelab_runner::run::{New, OwnPlan, Plan, RunKind, RunState, SampleLine, Session};
    let mut gpu = kernelab_launcher::open(spec)?;
    let label = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let spec_bytes = kernelab_model::read_regular(path, 16 << 20)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let spec_name = path.display().to_string();
    let spec_sha256 = kernelab_model::sha256_hex(&spec_bytes);
    let session = Session::create(
        RunKind::KernelRun,
        kernelab_model::SCHEMA_VERSION,
        New::labelled(&label, samples),
        OwnPlan {
            spec_sha256: Some(&spec_sha256),
            plan: Plan::KernelRun {
                rounds: spec.timing.rounds,
                spec: &spec_name,
            },
        },
    )
    .map_err(|e| anyhow!(e))?;
    let samples_path = session.run.samples.clone();
    hooks.say(&format!(
        "kernelab kernel run: run {}, samples in {}",
        session.run.id,
        samples_path.display()
    ));
    let bar = hooks.counter(
        spec.timing.rounds as u64,
        "timing {bar:30} round {pos}/{len} eta {eta}",
        "rounds",
    );
    let body = |s: &mut Session<OwnPlan<'_>>| {
        let result = kernelab_launcher::run(
            gpu.as_mut(),
            spec,
            &mut |sample| {
                let line = SampleLine::Sample {
                    point: None,
                    sample,
                    spec: &spec_name,
                };
                s.writer
                    .write(&line)
                    .map_err(|source| kernelab_launcher::Error::Write {
                        path: samples_path.clone(),
                        source,
                    })
            },
            &mut |done, _| bar.set_position(done as u64),
        );
        bar.finish();
        result.map_err(anyhow::Error::from)
    };
    let (_, result) = session.drive(body, |r| match r {
        Ok(_) => RunState::Complete,
        Err(_) => RunState::Failed,
    })?;
    outcome(result, path, spec, &samples_path, ceilings)
}
