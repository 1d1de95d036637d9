//! The kernel points of a sweep: the sweep engine (`kernelab_runner::sweep`) asks the launcher
//! to run each point's `kernel run` gates (and timing) with the point's sizes, values and builds.

use crate::error::{Error, Result};
use crate::spec::{Overrides, Spec};
use kernelab_model::sweep::PointResult;
use kernelab_model::Location;
use kernelab_runner::sweep::{KernelPoints, Mode, Point, Sweep};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A kernel sweep's spec, read once, and whether its points are timed.
#[derive(Clone, Debug)]
pub struct KernelSweep {
    spec: Spec,
    timing: bool,
}

impl KernelSweep {
    /// The spec of a kernel sweep, read and checked (`rounds` in range); `None` for a tensor
    /// sweep.
    pub fn new(sweep: &Sweep) -> Result<Option<KernelSweep>> {
        let Mode::Kernel(k) = &sweep.mode else {
            return Ok(None);
        };
        let mut spec = Spec::read(&k.spec)?;
        if let Some((r, line)) = k.rounds {
            if !(2..=crate::spec::MAX_ROUNDS).contains(&r) {
                return Err(Error::Spec {
                    location: Location {
                        line,
                        ..Location::default()
                    }
                    .with_path(&sweep.path),
                    message: format!(
                        "`rounds` = {r}: expected 2 to {} rounds",
                        crate::spec::MAX_ROUNDS
                    ),
                });
            }
            spec.timing.rounds = r;
        }
        Ok(Some(KernelSweep {
            spec,
            timing: k.timing,
        }))
    }

    /// The spec (its backend, for the runtime check before any worker starts).
    pub fn spec(&self) -> &Spec {
        &self.spec
    }
}

/// The spec overrides of a point.
fn overrides(point: &Point) -> Overrides {
    Overrides {
        sizes: point.sizes.clone(),
        values: point.values.clone(),
        baseline: point.build.as_ref().and_then(|b| b.baseline.clone()),
        candidate: point.build.as_ref().and_then(|b| b.candidate.clone()),
    }
}

/// The workspace's median (`kernelab_stats`) of the finite values.
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    kernelab_stats::rank::median(&v)
}

impl KernelPoints for KernelSweep {
    fn run(
        &self,
        point: &Point,
        out: &Path,
        r: &mut PointResult,
    ) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>> {
        kernel_point(&self.spec, self.timing, point, out, r).map_err(Into::into)
    }
}

/// Runs one point on this machine's device; timed samples go to `out/samples/<id>.jsonl`.
fn kernel_point(
    spec: &Spec,
    timed: bool,
    point: &Point,
    out: &Path,
    r: &mut PointResult,
) -> Result<()> {
    let spec = spec.with_overrides(&overrides(point))?;
    let mut gpu = crate::open(&spec)?;
    r.device = gpu.device_name();
    let dir = out.join("samples");
    let path = dir.join(format!("{}.jsonl", point.id));
    let werr = |path: &PathBuf| {
        let path = path.clone();
        move |source| Error::Write { path, source }
    };
    let mut writer = None;
    if timed {
        std::fs::create_dir_all(&dir).map_err(werr(&dir))?;
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(werr(&path))?;
        writer = Some(std::io::BufWriter::new(f));
    }
    let run = crate::run::run_timed(
        gpu.as_mut(),
        &spec,
        timed,
        &mut |s| match writer.as_mut() {
            Some(w) => {
                let line = serde_json::json!({"point": point.id, "sample": s});
                writeln!(w, "{line}").map_err(werr(&path))
            }
            None => Ok(()),
        },
        &mut |_, _| {},
    );
    if let Some(w) = writer.as_mut() {
        w.flush().map_err(werr(&path))?;
    }
    let run = run?;
    r.bitwise = run
        .gates
        .iter()
        .find(|g| g.name == "baseline vs candidate bitwise")
        .map(|g| g.passed);
    if let Some(a) = &run.analysis {
        r.change = a.change.clone();
        r.baseline_ns = median(run.rounds.iter().map(|x| x.baseline_ns).collect());
        r.candidate_ns = median(run.rounds.iter().map(|x| x.candidate_ns).collect());
    }
    r.gates = run.gates;
    Ok(())
}
