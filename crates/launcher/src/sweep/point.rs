//! Runs one sweep point: the `kernel run` gates (and timing) through the launcher, or a tensor
//! gate over the point's two files on the CPU.

use super::{Mode, Point, Sweep, TensorGate, TensorPoints};
use crate::error::{Error, Result};
use crate::spec::Spec;
use kernelab_model::kernel_run::Gate;
use kernelab_model::sweep::{PointResult, PointVerdict};
use kernelab_model::Change;
use kernelab_tensor::{
    bitwise_files, close_files, open, BitwiseOptions, DType, ReadSpec, Tolerance,
};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The error and its causes on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cur = c.source();
    }
    s
}

/// Runs `point` of `sweep` on this machine's device (`worker` says where, for the record);
/// timed samples go to `out/samples/<id>.jsonl`. A point that cannot run gets the `error`
/// verdict with the reason, never a panic or an early exit.
pub fn run_point(sweep: &Sweep, point: &Point, worker: &str, out: &Path) -> PointResult {
    let start = Instant::now();
    let mut r = unfinished(point, worker, 0, None);
    let done = match &sweep.mode {
        Mode::Kernel(spec) => kernel_point(spec, sweep.timing, point, out, &mut r),
        Mode::Tensor(t) => tensor_point(t, &sweep.path, point, &mut r),
    };
    match done {
        Ok(()) => {
            let pass = r.gates.iter().all(|g| g.passed) && !r.gates.is_empty();
            r.verdict = if pass {
                PointVerdict::Pass
            } else {
                PointVerdict::Fail
            };
        }
        Err(e) => r.error = Some(chain(&e)),
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
    }
}

/// The workspace's median (`kernelab_stats`) of the finite values.
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.retain(|x| x.is_finite());
    kernelab_stats::rank::median(&v)
}

fn kernel_point(
    spec: &Spec,
    timed: bool,
    point: &Point,
    out: &Path,
    r: &mut PointResult,
) -> Result<()> {
    let spec = spec.with_overrides(&point.overrides())?;
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

/// `template` with `{name}` replaced by the point's coordinates and `{build}` by its key.
fn fill(template: &str, point: &Point) -> String {
    let mut s = template.to_string();
    if let Some(b) = &point.build {
        s = s.replace("{build}", &b.key);
    }
    for (k, v) in point.params() {
        s = s.replace(&format!("{{{k}}}"), &v);
    }
    s
}

fn tensor_point(t: &TensorPoints, sweep: &Path, point: &Point, r: &mut PointResult) -> Result<()> {
    r.device = "cpu".into();
    let dir = sweep.parent().unwrap_or(Path::new("."));
    let read = ReadSpec {
        dtype: t.dtype.as_deref().and_then(DType::parse),
        shape: None,
        max_decompressed: None,
    };
    let load = |template: &str| -> Result<kernelab_tensor::TensorFile> {
        let f = open(&dir.join(fill(template, point)), &read)?;
        f.check_comparable()?;
        Ok(f)
    };
    let (a, b) = (load(&t.baseline)?, load(&t.candidate)?);
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
    r.gates.push(Gate {
        name: "baseline vs candidate bitwise".into(),
        passed: bw.pass,
        detail: format!(
            "{differing} of {elements} elements differ{}",
            first.unwrap_or_default()
        ),
    });
    if t.gate == TensorGate::Close {
        let tol = Tolerance::requested(
            a.tensors.first().map(|x| x.dtype),
            t.rtol,
            t.atol,
            None,
            false,
        );
        let c = close_files(&b, &a, tol, false);
        let worst = c
            .tensors
            .iter()
            .filter_map(|x| x.result.as_ref().and_then(|y| y.max_abs_err))
            .fold(0.0f64, f64::max);
        // Close is the gate; the bitwise comparison above is reported, not required.
        r.gates = vec![Gate {
            name: "candidate close to baseline".into(),
            passed: c.pass,
            detail: format!("largest max abs error {worst:.3e}; {differing} of {elements} elements differ bitwise"),
        }];
    }
    Ok(())
}
