//! Runs one sweep point: a tensor point's gates over its files, here on the CPU, or a kernel
//! point through the GPU launcher's [`KernelPoints`].

use super::error::{Error, Result};
use super::{Mode, Point, Sweep, TensorFiles, TensorGate, TensorGates};
use kernelab_model::fingerprint::{Conditions, Fingerprint};
use kernelab_model::kernel_run::Gate;
use kernelab_model::sweep::{PointResult, PointVerdict};
use kernelab_model::Change;
use kernelab_tensor::{
    bitwise_files, close_files, finite_file, non_finite_totals, open, repeat, BitwiseOptions,
    ReadSpec, TensorFile, Tolerance,
};
use std::path::Path;
use std::time::Instant;

/// Runs the kernel points of a sweep: the GPU launcher supplies it.
pub trait KernelPoints {
    /// Runs `point` (the `kernel run` gates, and timing when asked), filling `r`'s gates,
    /// bitwise verdict, change and device; timed samples go under `out`.
    fn run(
        &self,
        point: &Point,
        out: &Path,
        r: &mut PointResult,
    ) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>>;

    /// The machine's environment fingerprint, taken before and after each point (the GPUs'
    /// identity, clocks, power cap, … as `nvidia-smi` or `rocm-smi` report them).
    fn fingerprint(&self) -> Fingerprint {
        crate::provenance::fingerprint::read(None)
    }
}

/// Runs `point` of `sweep` (`worker` says where, for the record): a tensor point here, a kernel
/// point through `kernel` (timed samples go under `out`). A point that cannot run gets the
/// `error` verdict with the reason, never a panic or an early exit.
pub fn run_point(
    sweep: &Sweep,
    point: &Point,
    worker: &str,
    out: &Path,
    kernel: Option<&dyn KernelPoints>,
) -> PointResult {
    let start = Instant::now();
    let mut r = unfinished(point, worker, 0, None);
    let done = match (&sweep.mode, &point.files) {
        (Mode::Kernel(_), _) => match kernel {
            Some(k) => {
                // The conditions of the point: a timing under changed conditions is refused.
                let before = k.fingerprint();
                let done = k.run(point, out, &mut r).map_err(Error::Kernel);
                let after = k.fingerprint();
                r.conditions = Conditions::of([
                    (&before, "before the point".to_string()),
                    (&after, "after the point".to_string()),
                ]);
                r.refuse_if_conditions_changed();
                done
            }
            None => Err(Error::Internal(
                "a kernel point was run without a GPU launcher".into(),
            )),
        },
        (Mode::Tensor(g), Some(files)) => tensor_point(g, files, sweep.path.parent(), &mut r),
        (Mode::Tensor(_), None) => Err(Error::Internal(format!(
            "tensor point `{}` has no files",
            point.id
        ))),
    };
    match done {
        Ok(()) => r.verdict = super::store::verdict_of(&r.gates),
        Err(e) => r.error = Some(kernelab_model::error_chain(&e)),
    }
    r.wall_ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
    r
}

/// The result of a point before (or without) a run: an error verdict with `error` as the reason.
pub fn unfinished(point: &Point, worker: &str, wall_ns: u64, error: Option<String>) -> PointResult {
    PointResult {
        id: point.id.clone(),
        build: point.build.as_ref().map(|b| b.key.clone()),
        params: point.params(),
        verdict: PointVerdict::Error,
        gates: Vec::new(),
        bitwise: None,
        change: Change::unavailable("not timed"),
        baseline_ns: None,
        candidate_ns: None,
        device: String::new(),
        worker: worker.to_string(),
        wall_ns,
        error,
        run: None,
        conditions: None,
        noise_floor: None,
    }
}

/// The gates of one tensor point, in order: baseline vs candidate (bitwise, or close with
/// bitwise equality reported), repeats bit-identical, candidate finite, candidate vs oracle.
/// Files in details are named relative to `dir` (the sweep file's folder).
fn tensor_point(
    g: &TensorGates,
    files: &TensorFiles,
    dir: Option<&Path>,
    r: &mut PointResult,
) -> Result<()> {
    r.device = "cpu".into();
    let read = ReadSpec {
        dtype: g.dtype,
        shape: None,
        max_decompressed: g.max_decompressed,
    };
    let load = |p: &Path| -> Result<TensorFile> {
        let f = open(p, &read)?;
        f.check_comparable()?;
        Ok(f)
    };
    let (a, b) = (load(&files.baseline)?, load(&files.candidate)?);
    let repeats = files
        .repeats
        .iter()
        .map(|p| load(p))
        .collect::<Result<Vec<_>>>()?;
    let oracle = files.oracle.as_deref().map(load).transpose()?;
    let bw = bitwise_files(
        &a,
        &b,
        BitwiseOptions {
            first: 1,
            ..BitwiseOptions::default()
        },
    );
    let (differing, elements) = bw
        .tensors
        .iter()
        .filter_map(|x| x.result.as_ref())
        .fold((0, 0), |(d, n), x| (d + x.differing, n + x.elements));
    r.bitwise = Some(bw.pass);
    // The first differing element, as the kernel run's bitwise gate names it.
    let first = bw.tensors.iter().find_map(|x| {
        let m = x.result.as_ref()?.first.first()?;
        Some(format!(
            "; first at {}{:?}: {} vs {}",
            x.name, m.index, m.a, m.b
        ))
    });
    let tol = Tolerance::requested(
        a.tensors.first().map(|x| x.dtype),
        g.rtol,
        g.atol,
        None,
        false,
    );
    let worst = |c: &kernelab_tensor::FileComparison<kernelab_tensor::CloseReport>| {
        c.tensors
            .iter()
            .filter_map(|x| x.result.as_ref().and_then(|y| y.max_abs_err))
            .fold(0.0f64, f64::max)
    };
    match g.gate {
        TensorGate::Bitwise => r.gates.push(Gate {
            name: "baseline vs candidate bitwise".into(),
            passed: bw.pass,
            detail: format!(
                "{differing} of {elements} elements differ{}",
                first.unwrap_or_default()
            ),
        }),
        // Close is the gate; the bitwise comparison above is reported, not required.
        TensorGate::Close => {
            let c = close_files(&b, &a, tol, false);
            r.gates.push(Gate {
                name: "candidate close to baseline".into(),
                passed: c.pass,
                detail: format!(
                    "largest max abs error {:.3e}; {differing} of {elements} elements differ bitwise",
                    worst(&c)
                ),
            });
        }
    }
    if !repeats.is_empty() {
        let mut all = vec![b.clone()];
        all.extend(repeats);
        let rep = repeat(&all);
        r.gates.push(Gate {
            name: "repeated candidate runs bit-identical".into(),
            passed: rep.pass,
            detail: if rep.pass {
                format!("{} runs identical", all.len())
            } else {
                let prefix = dir
                    .filter(|d| !d.as_os_str().is_empty())
                    .map(|d| format!("{}/", d.display()));
                let names: Vec<&str> = rep
                    .differing
                    .iter()
                    .map(|x| {
                        prefix
                            .as_deref()
                            .and_then(|p| x.strip_prefix(p))
                            .unwrap_or(x)
                    })
                    .collect();
                format!(
                    "{} runs; differing from the first: {}",
                    all.len(),
                    names.join(", ")
                )
            },
        });
    }
    let fin = finite_file(&b);
    let (nan, inf) = non_finite_totals(&fin.tensors);
    let n: u64 = fin.tensors.iter().map(|t| t.report.elements).sum();
    r.gates.push(Gate::candidate_finite(nan, inf, n));
    if let Some(o) = &oracle {
        let c = close_files(&b, o, tol, false);
        r.gates.push(Gate {
            name: "candidate within tolerance of the oracle".into(),
            passed: c.pass,
            detail: format!("largest max abs error {:.3e}", worst(&c)),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelab_model::fingerprint::GpuState;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A launcher that "times" every point at +2% and reports the SM clocks it is given, one
    /// per fingerprint taken.
    struct Fake {
        clocks: Vec<&'static str>,
        taken: AtomicU32,
    }

    impl KernelPoints for Fake {
        fn run(
            &self,
            _: &Point,
            _: &Path,
            r: &mut PointResult,
        ) -> std::result::Result<(), Box<dyn std::error::Error + Send + Sync>> {
            r.gates = vec![Gate::candidate_finite(0, 0, 64)];
            r.change = Change::from_ratio(
                1.02,
                Some(kernelab_stats::Interval {
                    low: 1.01,
                    high: 1.03,
                }),
            );
            Ok(())
        }
        fn fingerprint(&self) -> Fingerprint {
            let i = self.taken.fetch_add(1, Ordering::SeqCst) as usize;
            Fingerprint {
                tool: Some("nvidia-smi".into()),
                gpus: vec![GpuState {
                    sm_clock_mhz: self.clocks.get(i).map(|c| c.to_string()),
                    ..GpuState::default()
                }],
                ..Fingerprint::default()
            }
        }
    }

    /// Issue 43, item 4, for sweeps: each kernel point's conditions are taken before and
    /// after it; a timing under a clock that moved is refused, naming the field, and one under
    /// steady conditions is kept with its fingerprint.
    #[test]
    fn a_kernel_point_keeps_its_conditions_and_a_changed_clock_refuses_its_timing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("s.toml");
        std::fs::write(
            &file,
            "spec = \"k.toml\"\ntiming = true\n[grid.sizes]\nT = [64]\n",
        )
        .expect("write");
        let sweep = Sweep::read(&file, None).expect("sweep");
        let point = sweep.points.first().expect("a point");
        for (clocks, kept) in [(vec!["1980", "1980"], true), (vec!["1980", "1755"], false)] {
            let fake = Fake {
                clocks,
                taken: AtomicU32::new(0),
            };
            let r = run_point(&sweep, point, "gpu 0", dir.path(), Some(&fake));
            let c = r.conditions.as_ref().expect("conditions");
            assert_eq!(c.fingerprint.gpus[0].sm_clock_mhz.as_deref(), Some("1980"));
            assert_eq!(r.verdict, PointVerdict::Pass);
            if kept {
                assert!(c.changed.is_empty(), "{c:?}");
                assert_eq!(r.change.ratio(), Some(1.02));
            } else {
                assert_eq!(c.changed.len(), 1, "{c:?}");
                assert_eq!(r.change.ratio(), None);
                let why = r.change.unavailable_reason().expect("refused");
                assert!(
                    why.contains("gpu 0 sm_clock_mhz: 1980 → 1755 (after the point)"),
                    "{why}"
                );
            }
        }
    }
}
