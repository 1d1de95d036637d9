//! `kernelab kernel run`.

use crate::cli::{FormatArg, KernelCommand, KernelRunArgs};
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{anyhow, bail, Context, Result};
use kernelab_launcher::plan::plan;
use kernelab_launcher::{self, Spec};
use kernelab_model::Document;
use kernelab_report::documents::KernelRunBody;
use kernelab_report::{kernel_plan_sections, kernel_sections};
use kernelab_runner::run::{RunKind, RunState};

/// The watchdog's verdict on a GPU wait that did not end: said once, then exit 2 (the wait cannot
/// be cancelled; the driver releases the context when the process ends).
fn gpu_wait_expired(what: &str, timeout: std::time::Duration) {
    crate::output::to_stderr(&format!(
        "kernelab: error: {what} did not finish within {:.1} s; stopping (a kernel that never returns? raise --timeout if it is this slow)",
        timeout.as_secs_f64()
    ));
    std::process::exit(2);
}

/// Runs a `kernel` subcommand.
pub fn run(cmd: KernelCommand, session: &mut Session) -> Result<ExitStatus> {
    match cmd {
        KernelCommand::Run(a) => run_spec(a, session),
        KernelCommand::LaunchOnce(a) => launch_once(a),
    }
}

/// Launches one build once (under a profiler started by `kernelab counters`); prints nothing.
fn launch_once(a: crate::cli_counters::LaunchOnceArgs) -> Result<ExitStatus> {
    let spec = Spec::read(&a.spec)?;
    kernelab_launcher::watchdog::install(
        kernelab_model::duration_clamped(a.timeout.clamp(0.001, 86_400.0)),
        gpu_wait_expired,
    );
    let mut gpu = kernelab_launcher::open(&spec)?;
    kernelab_launcher::launch_once(gpu.as_mut(), &spec, &a.build)?;
    Ok(ExitStatus::Success)
}

fn dry_run(a: &KernelRunArgs, spec: &Spec) -> Result<ExitStatus> {
    let p = plan(spec)?;
    let title = format!("{}: both builds resolved (no GPU opened)", a.spec.display());
    let text = match output::sections_text(&a.output, |_| kernel_plan_sections(&p, &title)) {
        Some(t) => t,
        None if a.output.format == FormatArg::Json => {
            output::json(&Document::new("kernel_dry_run", &p))?
        }
        None => bail!("--format csv is not offered for kernel run; use json"),
    };
    output::write(&a.output, &text)?;
    Ok(ExitStatus::Success)
}

fn run_spec(a: KernelRunArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    if a.output.format == FormatArg::Csv {
        bail!("--format csv is not offered for kernel run; use json (every sample is in the --samples JSONL)");
    }
    let mut spec = Spec::read(&a.spec)?;
    if let Some(r) = a.rounds {
        spec.timing.rounds = r.max(2);
    }
    if a.dry_run {
        return dry_run(&a, &spec);
    }
    kernelab_launcher::watchdog::install(
        kernelab_model::duration_clamped(a.timeout),
        gpu_wait_expired,
    );
    let mut gpu = kernelab_launcher::open(&spec)?;
    let label = a
        .spec
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let run = kernelab_runner::run::create(RunKind::KernelRun, &label, a.samples.as_deref())
        .map_err(|e| anyhow!(e))?;
    let samples_path = run.samples.clone();
    let spec_bytes = kernelab_model::read_regular(&a.spec, 16 << 20)
        .with_context(|| format!("{}: cannot read", a.spec.display()))?;
    let plan =
        serde_json::json!({"spec": a.spec.display().to_string(), "rounds": spec.timing.rounds});
    let mut w = run
        .write_header(
            kernelab_model::SCHEMA_VERSION,
            Some(&kernelab_model::sha256_hex(&spec_bytes)),
            &plan,
        )
        .map_err(|e| anyhow!(e))?;
    output::to_stderr(&format!(
        "kernelab kernel run: run {}, samples in {}",
        run.id,
        samples_path.display()
    ));
    let bar = crate::progress::count_bar(
        spec.timing.rounds as u64,
        "timing {bar:30} round {pos}/{len} eta {eta}",
        "rounds",
    );
    let spec_name = a.spec.display().to_string();
    let result = kernelab_launcher::run(
        gpu.as_mut(),
        &spec,
        &mut |s| {
            let line = serde_json::json!({"kind": "sample", "spec": spec_name, "sample": s});
            w.write(&line)
                .map_err(|source| kernelab_launcher::Error::Write {
                    path: samples_path.clone(),
                    source,
                })
        },
        &mut |done, _| bar.set_position(done as u64),
    );
    bar.finish_and_clear();
    let state = if result.is_ok() {
        RunState::Complete
    } else {
        RunState::Failed
    };
    run.finish(state).map_err(|e| anyhow!(e))?;
    let mut r = result?;
    let pass = r.gates_passed();
    check_roof(&mut r, &spec, a.ceilings.as_deref())?;
    let beats_roof = !r.above_roof.is_empty();
    let doc = Document::new(
        "kernel_run",
        KernelRunBody {
            pass,
            samples: samples_path.display().to_string(),
            run: r,
        },
    );
    let r = &doc.body.run;
    // The record hashes everything the result depends on: the spec and the files it names.
    let mut inputs = vec![
        a.spec.clone(),
        spec.resolve(&spec.baseline.code),
        spec.resolve(&spec.candidate.code),
    ];
    inputs.extend(spec.gates.oracle.as_ref().map(|o| spec.resolve(o)));
    session.record(&doc, &inputs, None)?;
    let text = match output::sections_text(&a.output, |_| kernel_sections(r)) {
        Some(t) => t,
        None => output::json(&doc)?,
    };
    output::write(&a.output, &text)?;
    Ok(if pass && !beats_roof {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// Checks the achieved rates of `r` against the device's roofs (the ceilings file, else the
/// datasheet entry of the device): a build above them is flagged in `r.above_roof`.
fn check_roof(
    r: &mut kernelab_model::kernel_run::KernelRun,
    spec: &Spec,
    ceilings: Option<&std::path::Path>,
) -> Result<()> {
    let Some(w) = &r.work else { return Ok(()) };
    let (c, source) = match ceilings {
        Some(p) => (
            kernelab_commands::roofline::read_ceilings(p)?,
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
