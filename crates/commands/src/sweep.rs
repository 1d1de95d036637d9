//! `sweep` and `check sweep`: a grid's points run on local workers (one per GPU) or as a
//! Slurm job array, resumed from the per-point result files, and merged into the matrix.

use crate::{Hooks, Outcome, OutputFile, Recordable, Status, View};
use anyhow::{bail, Context, Result};
use kernelab_launcher::sweep::KernelSweep;
use kernelab_model::sweep::{PointResult, SweepMatrix};
use kernelab_model::Document;
use kernelab_report::sweep_matrix_sections;
use kernelab_runner::pool::{run_pool, Slot};
use kernelab_runner::slurm::{submit, ArrayJob};
use kernelab_runner::sweep::{
    done_ids, read_results, run_point, unfinished, write_result, KernelPoints, Mode, Point, Sweep,
};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A sweep file and its results folder, as a user names them.
#[derive(Clone, Debug, Default)]
pub struct SweepDir {
    /// The sweep file.
    pub sweep: PathBuf,
    /// The results folder (default: one in the state folder for this sweep file).
    pub dir: Option<PathBuf>,
}

/// The results folder: given, or (never beside the sweep file, which may be in a source tree)
/// `sweeps/NAME-HASH/` in the state folder, HASH from the sweep file's absolute path, so that a
/// rerun of the same file resumes it.
pub fn results_dir(sweep: &Path, dir: Option<&Path>, hooks: &dyn Hooks) -> Result<PathBuf> {
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
    hooks.say(&format!("kernelab sweep: results in {}", d.display()));
    Ok(d)
}

/// An absolute path (children and Slurm tasks may start elsewhere).
pub fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p)
        .with_context(|| format!("{}: cannot make the path absolute", p.display()))
}

/// The launcher's kernel points of a kernel sweep (its spec read once); none for tensor sweeps.
pub fn kernel_points(sweep: &Sweep) -> Result<Option<KernelSweep>> {
    Ok(KernelSweep::new(sweep)?)
}

/// Runs one point where this process is (a pool worker or a Slurm task) and writes its
/// result file.
pub fn run_and_write(
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

/// This machine's name, naming its workers.
pub fn host() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "host".into())
}

/// `sweep run-chunk`: one Slurm array task's points of the list `list` (chunk `index` of
/// `chunk_size` ids), those not done yet, run here. `ready` runs once the sweep is read (the
/// caller installs its watchdog there).
pub fn run_chunk(
    at: &SweepDir,
    list: &Path,
    chunk_size: usize,
    index: usize,
    hooks: &dyn Hooks,
    ready: &dyn Fn(&Sweep),
) -> Result<()> {
    let sweep = Sweep::read(&at.sweep, None)?;
    let kernel = kernel_points(&sweep)?;
    let dir = results_dir(&at.sweep, at.dir.as_deref(), hooks)?;
    let text = std::fs::read_to_string(list)
        .with_context(|| format!("{}: cannot read the point list", list.display()))?;
    let ids: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let size = chunk_size.max(1);
    let chunk = ids.iter().skip(index * size).take(size);
    let done = done_ids(&dir)?;
    let job = std::env::var("SLURM_ARRAY_JOB_ID").unwrap_or_default();
    let worker = format!("{} slurm {job}_{}", host(), index);
    ready(&sweep);
    for id in chunk {
        if done.contains(*id) {
            continue;
        }
        run_and_write(&sweep, sweep.point(id)?, &worker, &dir, kernel.as_ref())?;
    }
    Ok(())
}

/// Ids not done yet, in grid order.
pub fn pending(sweep: &Sweep, dir: &Path) -> Result<Vec<String>> {
    let done = done_ids(dir)?;
    Ok(sweep
        .ids()
        .into_iter()
        .filter(|id| !done.contains(id))
        .collect())
}

/// `sweep submit` as a user asks for it.
#[derive(Clone, Debug, Default)]
pub struct SubmitSettings {
    /// Points per array task.
    pub chunk_size: usize,
    /// Array tasks running at once.
    pub throttle: Option<usize>,
    /// More arguments for sbatch.
    pub sbatch_args: Vec<String>,
}

/// `sweep submit`: the points not done yet as a Slurm job array of `exe` (this program);
/// returns the line that says what was submitted.
pub fn submit_array(
    at: &SweepDir,
    a: &SubmitSettings,
    exe: &Path,
    hooks: &dyn Hooks,
) -> Result<String> {
    let sweep_path = absolute(&at.sweep)?;
    let sweep = Sweep::read(&sweep_path, None)?;
    let dir = absolute(&results_dir(&at.sweep, at.dir.as_deref(), hooks)?)?;
    let todo = pending(&sweep, &dir)?;
    kernelab_runner::preflight::require(&[kernelab_runner::preflight::Tool::new(
        "sbatch",
        "Slurm (its sbatch on PATH), or run the sweep locally with `kernelab sweep SWEEP.toml`",
        None,
    )])?;
    let total = sweep.points.len();
    if todo.is_empty() {
        return Ok(format!(
            "all {total} points are done; run `kernelab sweep collect`"
        ));
    }
    let slurm = dir.join("slurm");
    std::fs::create_dir_all(&slurm)
        .with_context(|| format!("{}: cannot create", slurm.display()))?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    let list = slurm.join(format!("points-{stamp}.txt"));
    kernelab_model::write_file(&list, (todo.join("\n") + "\n").as_bytes(), false)
        .with_context(|| format!("{}: cannot write", list.display()))?;
    let size = a.chunk_size.max(1);
    let s = |p: &Path| p.display().to_string();
    let job = ArrayJob {
        script: slurm.join(format!("job-{stamp}.sh")),
        log_dir: slurm.clone(),
        name: "kernelab-sweep".into(),
        tasks: todo.len().div_ceil(size),
        throttle: a.throttle,
        argv: vec![
            s(exe),
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
    Ok(format!(
        "submitted job {id}: {} array tasks, {} of {total} points ({} already done); results in {}",
        job.tasks,
        todo.len(),
        total - todo.len(),
        dir.display()
    ))
}

/// `sweep` as a user asks for it (run here, on local workers).
#[derive(Clone, Debug, Default)]
pub struct LocalSettings {
    /// The sweep file.
    pub sweep: PathBuf,
    /// The results folder (default: one in the state folder for this sweep file).
    pub dir: Option<PathBuf>,
    /// One worker per GPU.
    pub gpus: Vec<u32>,
    /// Workers when no GPU is named.
    pub jobs: usize,
    /// Seconds one point may take.
    pub timeout: f64,
    /// The ledger of identical-code runs (`--controls`): timed points of builds with identical
    /// machine code join it; a point whose key has enough controls states their noise floor.
    pub controls: Option<PathBuf>,
    /// Where the baseline's files are resolved, when not beside the sweep file
    /// ([`Sweep::read_sides`]: the gate's base work tree).
    pub baseline_dir: Option<PathBuf>,
}

/// `sweep`: every point not done yet run by a pool of `exe` workers (one per GPU, or `jobs`),
/// then the results merged into the matrix.
pub fn local(a: &LocalSettings, exe: &Path, hooks: &dyn Hooks) -> Result<Outcome> {
    let path = &a.sweep;
    let sweep = Sweep::read_sides(path, None, a.baseline_dir.as_deref())?;
    let dir = absolute(&results_dir(path, a.dir.as_deref(), hooks)?)?;
    let todo = pending(&sweep, &dir)?;
    // A GPU sweep on a machine without the GPU's runtime is one error, before any worker.
    let kernel = kernel_points(&sweep)?;
    // A ledger that cannot be read, or that a sweep could not add to, is refused before any
    // point runs.
    if let Some(l) = &a.controls {
        if kernel.is_none() {
            bail!(
                "--controls {}: a ledger of identical-code timings needs a kernel sweep; {} is a \
                 tensor sweep (its points are not timed)",
                l.display(),
                path.display()
            );
        }
        crate::controls::read_all(l)?;
    }
    if let Some(k) = &kernel {
        if !todo.is_empty() {
            kernelab_launcher::runtime_present(k.spec().backend)?;
        }
    }
    let sides: Vec<String> = match &sweep.baseline_dir {
        Some(b) => vec!["--baseline-dir".into(), absolute(b)?.display().to_string()],
        None => Vec::new(),
    };
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
            .into_iter()
            .chain(sides.iter().cloned())
            .collect()
        })
        .collect();
    let start = Instant::now();
    let bar = hooks.counter(
        todo.len() as u64,
        "sweep {bar:30} point {pos}/{len} eta {eta}",
        "points",
    );
    let mut problems = Vec::new();
    let outcomes = run_pool(exe, &slots, &tasks, &["KERNELAB_BUNDLE"], &mut |o| {
        bar.inc(1);
        if o.exit_code != Some(0) {
            problems.push(o.clone());
        }
    });
    bar.finish();
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
        hooks.say(&format!(
            "kernelab: ran {} in {:.1} s on {} ({} skipped: already done)",
            kernelab_report::format::count(outcomes.len(), "point", "points"),
            start.elapsed().as_secs_f64(),
            kernelab_report::format::count(slots.len(), "worker", "workers"),
            sweep.points.len() - todo.len()
        ));
    }
    let mut results = read_results(&dir)?;
    // The code objects are loaded and compared once, for the ledger and the matrix.
    let builds = sweep.code_changes()?;
    if let (Some(ledger), Some(kernel)) = (&a.controls, &kernel) {
        let ran: std::collections::BTreeSet<&String> = todo.iter().collect();
        let mine: Vec<&mut PointResult> =
            results.iter_mut().filter(|r| ran.contains(&r.id)).collect();
        for r in crate::controls::sweep_points(&sweep, kernel, &builds, mine, ledger)? {
            write_result(&dir, r)?;
        }
    }
    outcome_of(&sweep, results, Some(&dir), builds)
}

/// `sweep collect`: the results in `dir` merged into the matrix of the sweep `path`.
pub fn collect(path: &Path, dir: &Path) -> Result<Outcome> {
    let sweep = Sweep::read(path, None)?;
    let results = read_results(dir)?;
    outcome(&sweep, results, Some(dir))
}

/// `check sweep`: every point of a tensor sweep (a `[[config]]` manifest or a tensor grid) run
/// here, in this process, then merged, recorded and rendered as `kernelab sweep` does; no
/// results folder is kept.
pub fn check(path: &Path, max_decompressed: Option<u64>, hooks: &dyn Hooks) -> Result<Outcome> {
    let sweep = Sweep::read(path, max_decompressed)?;
    if let Mode::Kernel(_) = sweep.mode {
        bail!(
            "{}: a kernel sweep runs on the GPU, one process per point: run it with `kernelab sweep {}`",
            path.display(),
            path.display()
        );
    }
    let bar = hooks.counter(
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
    bar.finish();
    outcome(&sweep, results, None)
}

/// The outcome of `sweep`'s `results` merged into its matrix, with `matrix.json` written in
/// the results folder `dir` when there is one. It fails when a point failed a gate, and is
/// incomplete (with a note saying why) when a point could not run or has not run: the sweep's
/// answer is not known yet, even where another point failed.
pub fn outcome(sweep: &Sweep, results: Vec<PointResult>, dir: Option<&Path>) -> Result<Outcome> {
    outcome_of(sweep, results, dir, sweep.code_changes()?)
}

/// [`outcome`] with the builds' code comparison already made (`builds`).
fn outcome_of(
    sweep: &Sweep,
    results: Vec<PointResult>,
    dir: Option<&Path>,
    builds: Vec<kernelab_model::sweep::BuildChange>,
) -> Result<Outcome> {
    let m = SweepMatrix::merge(
        &sweep.path.display().to_string(),
        sweep.mode_name(),
        &sweep.ids(),
        results,
        builds,
    );
    let doc = Document::of(m);
    let record = Recordable::of(&doc, &sweep.inputs(), None)?;
    let matrix = match dir.filter(|d| d.is_dir()) {
        Some(dir) => Some(OutputFile {
            option: "the results folder",
            path: dir.join("matrix.json"),
            text: crate::json(&doc)?,
            replace: true,
        }),
        None => None,
    };
    let m = &doc.body;
    let (status, note) = if !m.pending.is_empty() || m.errors > 0 {
        let note = format!(
            "the matrix is incomplete: {} points not run, {} could not run{}",
            m.pending.len(),
            m.errors,
            if dir.is_some() {
                "; rerun to resume"
            } else {
                " (see their errors)"
            }
        );
        (Status::Incomplete, Some(note))
    } else {
        (Status::of(m.failed == 0), None)
    };
    let view = View::shared(doc, |doc, _| sweep_matrix_sections(&doc.body)).without_csv(
        "--format csv is not offered for sweep; use json, or `kernelab export --parquet`",
    );
    let mut outcome = Outcome::new(view, status).recording(record);
    outcome.files.extend(matrix);
    outcome.late_notes.extend(note);
    Ok(outcome)
}
