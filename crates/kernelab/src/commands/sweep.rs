//! `kernelab sweep`: run a grid's points on local workers (one per GPU) or as a Slurm job
//! array, resume from the per-point result files, and render the merged matrix.

use crate::cli::{FormatArg, OutputArgs};
use crate::cli_sweep::{RunChunkArgs, RunPointArgs, SubmitArgs, SweepArgs, SweepCommand};
use crate::output;
use crate::record::Session;
use crate::ExitStatus;
use anyhow::{bail, Context, Result};
use kernelab_launcher::sweep::KernelSweep;
use kernelab_runner::pool::{run_pool, Slot};
use kernelab_runner::slurm::{submit, ArrayJob};
use kernelab_runner::sweep::{
    done_ids, read_results, run_point, unfinished, write_result, KernelPoints, Mode, Point, Sweep,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Runs `kernelab sweep` or one of its subcommands.
pub fn run(a: SweepArgs, session: &mut Session) -> Result<ExitStatus> {
    match a.command {
        Some(SweepCommand::RunPoint(p)) => run_point_cmd(p),
        Some(SweepCommand::RunChunk(c)) => run_chunk(c),
        Some(SweepCommand::Submit(s)) => submit_cmd(s),
        Some(SweepCommand::Collect(c)) => {
            let dir = results_dir(&c.at.sweep, c.at.dir.as_deref())?;
            collect(&c.at.sweep, &dir, &c.output, session)
        }
        None => local(a, session),
    }
}

/// The results folder: given, or (never beside the sweep file, which may be in a source tree)
/// `sweeps/NAME-HASH/` in the state folder, HASH from the sweep file's absolute path, so that a
/// rerun of the same file resumes it.
fn results_dir(sweep: &Path, dir: Option<&Path>) -> Result<PathBuf> {
    if let Some(d) = dir {
        return Ok(d.to_path_buf());
    }
    let abs = absolute(sweep)?;
    let hash = kernelab_model::sha256_hex(abs.as_os_str().as_encoded_bytes());
    let stem = sweep
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let runs = kernelab_runner::run::state_dir().map_err(|e| anyhow::anyhow!(e))?;
    let d = runs
        .with_file_name("sweeps")
        .join(format!("{stem}-{}", hash.get(..12).unwrap_or(&hash)));
    output::to_stderr(&format!("kernelab sweep: results in {}", d.display()));
    Ok(d)
}

/// An absolute path (children and Slurm tasks may start elsewhere).
fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p)
        .with_context(|| format!("{}: cannot make the path absolute", p.display()))
}

fn stop_gpu_wait(what: &str, timeout: std::time::Duration) {
    crate::output::to_stderr(&format!(
        "kernelab: error: {what} did not finish within {:.1} s; stopping",
        timeout.as_secs_f64()
    ));
    std::process::exit(2);
}

fn watchdog(sweep: &Sweep, seconds: f64) {
    if matches!(sweep.mode, Mode::Kernel(_)) {
        kernelab_launcher::watchdog::install(
            kernelab_model::duration_clamped(seconds),
            stop_gpu_wait,
        );
    }
}

/// The launcher's kernel points of a kernel sweep (its spec read once); none for tensor sweeps.
fn kernel_points(sweep: &Sweep) -> Result<Option<KernelSweep>> {
    Ok(KernelSweep::new(sweep)?)
}

fn run_point_cmd(a: RunPointArgs) -> Result<ExitStatus> {
    let sweep = Sweep::read(&a.at.sweep, None)?;
    let dir = results_dir(&a.at.sweep, a.at.dir.as_deref())?;
    let point = sweep.point(&a.point)?;
    watchdog(&sweep, a.timeout);
    // The worker pool names each worker in the child's environment.
    let worker = std::env::var("KERNELAB_SWEEP_WORKER").unwrap_or(a.worker);
    let kernel = kernel_points(&sweep)?;
    run_and_write(&sweep, point, &worker, &dir, kernel.as_ref())?;
    Ok(ExitStatus::Success)
}

/// Runs one point where this process is (a pool worker or a Slurm task) and writes its
/// result file.
fn run_and_write(
    sweep: &Sweep,
    point: &Point,
    worker: &str,
    dir: &Path,
    kernel: Option<&KernelSweep>,
) -> Result<()> {
    let r = run_point(
        sweep,
        point,
        worker,
        dir,
        kernel.map(|k| k as &dyn KernelPoints),
    );
    write_result(dir, &r)?;
    Ok(())
}

fn host() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "host".into())
}

fn run_chunk(a: RunChunkArgs) -> Result<ExitStatus> {
    let sweep = Sweep::read(&a.at.sweep, None)?;
    let kernel = kernel_points(&sweep)?;
    let dir = results_dir(&a.at.sweep, a.at.dir.as_deref())?;
    let text = std::fs::read_to_string(&a.list)
        .with_context(|| format!("{}: cannot read the point list", a.list.display()))?;
    let ids: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let size = a.chunk_size.max(1);
    let chunk = ids.iter().skip(a.index * size).take(size);
    let done = done_ids(&dir)?;
    let job = std::env::var("SLURM_ARRAY_JOB_ID").unwrap_or_default();
    let worker = format!("{} slurm {job}_{}", host(), a.index);
    watchdog(&sweep, a.timeout);
    for id in chunk {
        if done.contains(*id) {
            continue;
        }
        run_and_write(&sweep, sweep.point(id)?, &worker, &dir, kernel.as_ref())?;
    }
    Ok(ExitStatus::Success)
}

/// Ids not done yet, in grid order.
fn pending(sweep: &Sweep, dir: &Path) -> Result<Vec<String>> {
    let done = done_ids(dir)?;
    Ok(sweep
        .ids()
        .into_iter()
        .filter(|id| !done.contains(id))
        .collect())
}

fn submit_cmd(a: SubmitArgs) -> Result<ExitStatus> {
    let sweep_path = absolute(&a.at.sweep)?;
    let sweep = Sweep::read(&sweep_path, None)?;
    let dir = absolute(&results_dir(&a.at.sweep, a.at.dir.as_deref())?)?;
    let todo = pending(&sweep, &dir)?;
    kernelab_runner::preflight::require(&[kernelab_runner::preflight::Tool::new(
        "sbatch",
        "Slurm (its sbatch on PATH), or run the sweep locally with `kernelab sweep SWEEP.toml`",
        None,
    )])?;
    let total = sweep.points.len();
    if todo.is_empty() {
        println!("all {total} points are done; run `kernelab sweep collect`");
        return Ok(ExitStatus::Success);
    }
    let slurm = dir.join("slurm");
    std::fs::create_dir_all(&slurm)
        .with_context(|| format!("{}: cannot create", slurm.display()))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let list = slurm.join(format!("points-{stamp}.txt"));
    output::write_file(&list, (todo.join("\n") + "\n").as_bytes(), false)
        .with_context(|| format!("{}: cannot write", list.display()))?;
    let size = a.chunk_size.max(1);
    let exe = crate::self_exe()?;
    let s = |p: &Path| p.display().to_string();
    let job = ArrayJob {
        script: slurm.join(format!("job-{stamp}.sh")),
        log_dir: slurm.clone(),
        name: "kernelab-sweep".into(),
        tasks: todo.len().div_ceil(size),
        throttle: a.throttle,
        argv: vec![
            s(&exe),
            "sweep".into(),
            "run-chunk".into(),
            s(&sweep_path),
            "--dir".into(),
            s(&dir),
            "--list".into(),
            s(&list),
            "--chunk-size".into(),
            size.to_string(),
        ],
        sbatch_args: a.sbatch_args.clone(),
    };
    let id = submit(&job)?;
    println!(
        "submitted job {id}: {} array tasks, {} of {total} points ({} already done); results in {}",
        job.tasks,
        todo.len(),
        total - todo.len(),
        dir.display()
    );
    Ok(ExitStatus::Success)
}

fn local(a: SweepArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(&a.output)?;
    let Some(path) = &a.sweep else {
        bail!("give the sweep file: kernelab sweep SWEEP.toml");
    };
    let sweep = Sweep::read(path, None)?;
    let dir = absolute(&results_dir(path, a.dir.as_deref())?)?;
    let todo = pending(&sweep, &dir)?;
    // A GPU sweep on a machine without the GPU's runtime is one error, before any worker.
    if let Some(k) = kernel_points(&sweep)? {
        if !todo.is_empty() {
            kernelab_launcher::runtime_present(k.spec().backend)?;
        }
    }
    let mut slots: Vec<Slot> = if a.gpus.is_empty() {
        (0..a.jobs.max(1))
            .map(|i| Slot {
                name: format!("{} worker{i}", host()),
                env: Vec::new(),
            })
            .collect()
    } else {
        a.gpus
            .iter()
            .map(|&g| {
                let mut s = Slot::gpu(g);
                s.name = format!("{} gpu{g}", host());
                s
            })
            .collect()
    };
    for s in &mut slots {
        s.env.push(("KERNELAB_SWEEP_WORKER".into(), s.name.clone()));
    }
    let exe = crate::self_exe()?;
    let sweep_abs = absolute(path)?.display().to_string();
    let tasks: Vec<Vec<String>> = todo
        .iter()
        .map(|id| {
            vec![
                "sweep".into(),
                "run-point".into(),
                sweep_abs.clone(),
                "--dir".into(),
                dir.display().to_string(),
                "--point".into(),
                id.clone(),
                "--timeout".into(),
                a.timeout.to_string(),
            ]
        })
        .collect();
    let start = Instant::now();
    let bar = crate::progress::count_bar(
        todo.len() as u64,
        "sweep {bar:30} point {pos}/{len} eta {eta}",
        "points",
    );
    let mut problems = Vec::new();
    let outcomes = run_pool(&exe, &slots, &tasks, &["KERNELAB_BUNDLE"], &mut |o| {
        bar.inc(1);
        if o.exit_code != Some(0) {
            problems.push(o.clone());
        }
    });
    bar.finish_and_clear();
    // A worker that died without a result (a crash, the watchdog) leaves an error result, so
    // the matrix says why; a rerun tries the point again.
    for o in &problems {
        let id = &todo[o.task];
        let point = sweep.point(id)?;
        let r = unfinished(
            point,
            &o.slot,
            kernelab_model::seconds_to_ns(o.seconds),
            Some(format!(
                "worker exited with {}: {}",
                o.exit_code
                    .map_or("a signal".into(), |c| format!("status {c}")),
                o.stderr_tail
            )),
        );
        write_result(&dir, &r)?;
    }
    if !outcomes.is_empty() {
        let _ = writeln!(
            std::io::stderr(),
            "kernelab: ran {} in {:.1} s on {} ({} skipped: already done)",
            kernelab_report::format::count(outcomes.len(), "point", "points"),
            start.elapsed().as_secs_f64(),
            kernelab_report::format::count(slots.len(), "worker", "workers"),
            sweep.points.len() - todo.len()
        );
    }
    collect(path, &dir, &a.output, session)
}

/// Merges the results into the matrix, writes `matrix.json` in the folder, records and renders.
fn collect(path: &Path, dir: &Path, out: &OutputArgs, session: &mut Session) -> Result<ExitStatus> {
    output::check_target(out)?;
    let sweep = Sweep::read(path, None)?;
    let results = read_results(dir)?;
    emit(&sweep, results, Some(dir), out, session)
}

/// `check sweep`: every point of a tensor sweep (a `[[config]]` manifest or a tensor grid) run
/// here, in this process, then merged, recorded and rendered as `kernelab sweep` does; no
/// results folder is kept.
pub fn check(
    path: &Path,
    max_decompressed: Option<u64>,
    out: &OutputArgs,
    session: &mut Session,
) -> Result<ExitStatus> {
    output::check_target(out)?;
    let sweep = Sweep::read(path, max_decompressed)?;
    if let Mode::Kernel(_) = sweep.mode {
        bail!(
            "{}: a kernel sweep runs on the GPU, one process per point: run it with `kernelab sweep {}`",
            path.display(),
            path.display()
        );
    }
    let bar = crate::progress::count_bar(
        sweep.points.len() as u64,
        "check sweep {bar:30} point {pos}/{len} eta {eta}",
        "points",
    );
    // In this process: the record's provenance names the host.
    let worker = "local";
    let results = sweep
        .points
        .iter()
        .map(|p| {
            let r = run_point(&sweep, p, worker, Path::new(""), None);
            bar.inc(1);
            r
        })
        .collect();
    bar.finish_and_clear();
    emit(&sweep, results, None, out, session)
}

/// Merges `results` into the sweep's matrix and emits it.
fn emit(
    sweep: &Sweep,
    results: Vec<kernelab_model::sweep::PointResult>,
    dir: Option<&Path>,
    out: &OutputArgs,
    session: &mut Session,
) -> Result<ExitStatus> {
    if out.format == FormatArg::Csv {
        bail!("--format csv is not offered for sweep; use json, or `kernelab export --parquet`");
    }
    let outcome = kernelab_commands::sweep::outcome(sweep, results, dir)?;
    crate::emit::emit(outcome, out, session)
}
