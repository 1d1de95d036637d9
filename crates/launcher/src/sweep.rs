//! The kernel points of a sweep: the sweep engine (`kernelab_runner::sweep`) asks the launcher
//! to run each point's `kernel run` gates (and timing) with the point's sizes, values and builds.

use crate::error::{Error, Result};
use crate::spec::{Overrides, Spec};
use kernelab_model::sweep::PointResult;
use kernelab_model::Location;
use kernelab_runner::run::{New, OwnPlan, Plan, RunKind, RunState, SampleLine, Session};
use kernelab_runner::sweep::{KernelPoints, Mode, Point, Sweep};
use std::path::Path;

/// A kernel sweep's spec, read once, and whether its points are timed.
#[derive(Clone, Debug)]
pub struct KernelSweep {
    spec: Spec,
    timing: bool,
    /// The spec file's sha256, for the header of each timed point's run (read once).
    spec_sha256: Option<String>,
}

impl KernelSweep {
    /// The spec of a kernel sweep, read and checked (`rounds` in range); `None` for a tensor
    /// sweep.
    pub fn new(sweep: &Sweep) -> Result<Option<KernelSweep>> {
        let Mode::Kernel(k) = &sweep.mode else {
            return Ok(None);
        };
        let mut spec = Spec::read(&k.spec)?;
        if let Some(d) = &k.baseline_spec_dir {
            spec.baseline_in(d);
        }
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
        let spec_sha256 = match (&spec.path, k.timing) {
            (Some(p), true) => Some(kernelab_model::sha256_hex(
                &kernelab_model::read_regular(p, 16 << 20).map_err(|source| Error::Read {
                    path: p.clone(),
                    source,
                })?,
            )),
            _ => None,
        };
        Ok(Some(KernelSweep {
            spec,
            timing: k.timing,
            spec_sha256,
        }))
    }

    /// The spec (its backend, for the runtime check before any worker starts).
    pub fn spec(&self) -> &Spec {
        &self.spec
    }

    /// The baseline's kernel symbol and every size of `point` (the spec's, with the point's
    /// own): what names the point's kernel in a ledger of identical-code controls, as
    /// `kernel run` names its own. The symbol is resolved as the launch resolves it (the
    /// spec's, else the Triton metadata's).
    pub fn kernel_and_sizes(
        &self,
        point: &Point,
    ) -> Result<(String, std::collections::BTreeMap<String, i64>)> {
        let spec = self.spec.with_overrides(&overrides(point))?;
        let plan = crate::plan::plan(&spec)?;
        let symbol = plan
            .builds
            .first()
            .map(|b| b.symbol.clone())
            .unwrap_or_default();
        Ok((symbol, spec.sizes))
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
    /// Runs the point; a timed point is an experiment run of its own (`RunKind::SweepPoint`)
    /// in `out/runs/`: its samples file starts with the header (kind, schema version, the
    /// spec's hash, the plan) and holds one `{"kind": "sample", "spec", "point", "sample"}`
    /// line per sample, as `kernel run`'s does.
    fn run(
        &self,
        point: &Point,
        out: &Path,
        r: &mut PointResult,
    ) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let spec = self.spec.with_overrides(&overrides(point))?;
        let spec_name = spec
            .path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        if !self.timing {
            return Ok(kernel_point(&spec, false, r, &mut |_| Ok(()))?);
        }
        let plan = OwnPlan {
            spec_sha256: self.spec_sha256.as_deref(),
            plan: Plan::SweepPoint {
                build: point.build.as_ref().map(|b| b.key.clone()),
                params: point.params(),
                point: &point.id,
                rounds: spec.timing.rounds,
                spec: &spec_name,
            },
        };
        // The run starts with its first sample: a point whose gates fail is not timed and
        // leaves no run behind.
        let runs = out.join("runs");
        let write_error = |path: &Path, e: &dyn std::fmt::Display| Error::Write {
            path: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        };
        let mut open: Option<Session<OwnPlan<'_>>> = None;
        let result = kernel_point(&spec, true, r, &mut |s| {
            let session = match &mut open {
                Some(session) => session,
                None => {
                    let new = New {
                        label: &point.id,
                        samples: None,
                        root: Some(&runs),
                    };
                    let session = Session::create(
                        RunKind::SweepPoint,
                        kernelab_model::SCHEMA_VERSION,
                        new,
                        plan.clone(),
                    )
                    .map_err(|e| write_error(&runs, &e))?;
                    open.insert(session)
                }
            };
            let line = SampleLine::Sample {
                point: Some(&point.id),
                sample: s,
                spec: &spec_name,
            };
            session.writer.write(&line).map_err(|source| Error::Write {
                path: session.run.samples.clone(),
                source,
            })
        });
        if let Some(session) = open {
            r.run = Some(session.run.id.clone());
            type Failure = Box<dyn std::error::Error + Send + Sync>;
            session.drive(
                |_| result.map_err(Failure::from),
                |r| {
                    if r.is_ok() {
                        RunState::Complete
                    } else {
                        RunState::Failed
                    }
                },
            )?;
            return Ok(());
        }
        Ok(result?)
    }
}

/// Runs one point (its spec with the point's overrides) on this machine's device; each timed
/// sample goes to `sample`.
fn kernel_point(
    spec: &Spec,
    timed: bool,
    r: &mut PointResult,
    sample: &mut dyn FnMut(&kernelab_model::kernel_run::Sample) -> Result<()>,
) -> Result<()> {
    let mut gpu = crate::open(spec)?;
    r.device = gpu.device_name();
    let run = crate::run::run_timed(gpu.as_mut(), spec, timed, sample, &mut |_, _| {})?;
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
