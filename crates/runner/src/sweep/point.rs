//! Runs one sweep point: a tensor point's gates over its files, here on the CPU, or a kernel
//! point through the GPU launcher's [`KernelPoints`].

use super::error::{Error, Result};
use super::{Mode, Point, Sweep, TensorFiles, TensorGate, TensorGates};
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
            Some(k) => k.run(point, out, &mut r).map_err(Error::Kernel),
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
