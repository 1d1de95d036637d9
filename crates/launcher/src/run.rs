//! The launcher: correctness gates on separate outputs, then ABBA-interleaved timing on shared
//! outputs, written once against the [`Gpu`] trait.

use crate::args::{self, Buffer, Param, Resolved};
use crate::error::{Error, Result};
use crate::gpu::{DevicePtr, Geometry, Gpu, KernelId};
use crate::spec::{Role, Spec};
use crate::watchdog::during;
use kernelab_model::kernel_run::{Achieved, BuildInfo, Gate, KernelRun, Round, Sample};
use kernelab_stats::rank::median;
use kernelab_stats::{abba_order, analyze, Change, Design, Order, Pair, StopRule};
use kernelab_tensor::Tensor;
use kernelab_tensor::{bitwise, close, finite, BitwiseOptions, Tolerance};

/// Byte written into outputs before each correctness run: 0xFF is a NaN in every float type
/// (and −1 in signed integers), so elements a kernel fails to write show up.
pub const POISON: u8 = 0xFF;

struct Loaded {
    build: Resolved,
    kernel: KernelId,
    scratch: Vec<DevicePtr>,
}

impl Loaded {
    fn geometry(&self) -> Geometry {
        Geometry {
            grid: self.build.grid,
            block: self.build.block,
            shared: self.build.shared,
        }
    }
}

fn load(gpu: &mut dyn Gpu, build: Resolved) -> Result<Loaded> {
    // A regular file (a FIFO is refused without blocking) of at most the code loader's cap.
    let image = kernelab_model::read_regular(&build.code, kernelab_code::MAX_FILE_BYTES).map_err(
        |source| Error::Read {
            path: build.code.clone(),
            source,
        },
    )?;
    let kernel = gpu
        .load(&image, &build.symbol, build.shared)
        .map_err(|e| Error::Load {
            path: build.code.clone(),
            source: Box::new(e),
        })?;
    if let Some(sizes) = gpu.param_sizes(kernel) {
        crate::plan::check_param_sizes(&build.code, &build.symbol, &build.params, &sizes)?;
    }
    let mut scratch = Vec::new();
    for p in &build.params {
        if let Param::Scratch(n) = p {
            scratch.push(gpu.alloc(*n)?);
        }
    }
    Ok(Loaded {
        build,
        kernel,
        scratch,
    })
}

/// Device copies of the buffers: inputs shared, outputs per slot.
struct Slot {
    ptrs: Vec<DevicePtr>,
}

fn slot(gpu: &mut dyn Gpu, bufs: &[Buffer], shared_inputs: Option<&Slot>) -> Result<Slot> {
    let mut ptrs = Vec::new();
    for (i, b) in bufs.iter().enumerate() {
        let p = match (shared_inputs, b.role) {
            (Some(s), Role::In) => s.ptrs[i],
            _ => {
                let p = gpu.alloc(b.bytes())?;
                if let Some(init) = &b.init {
                    gpu.upload(p, init)?;
                }
                p
            }
        };
        ptrs.push(p);
    }
    Ok(Slot { ptrs })
}

/// Poisons outputs and restores in/out buffers before a correctness run.
fn prepare(gpu: &mut dyn Gpu, bufs: &[Buffer], s: &Slot) -> Result<()> {
    for (b, &p) in bufs.iter().zip(&s.ptrs) {
        match (b.role, &b.init) {
            (Role::Out, _) => gpu.fill(p, POISON, b.bytes())?,
            (Role::Inout, Some(init)) => gpu.upload(p, init)?,
            _ => {}
        }
    }
    Ok(())
}

fn outputs(gpu: &mut dyn Gpu, bufs: &[Buffer], s: &Slot) -> Result<Vec<Tensor>> {
    let mut out = Vec::new();
    for (b, &p) in bufs.iter().zip(&s.ptrs) {
        if b.role != Role::In {
            let mut host = vec![0u8; b.bytes()];
            gpu.download(p, &mut host)?;
            out.push(Tensor::owned(
                b.name.clone(),
                b.dtype,
                b.shape.clone(),
                host,
            ));
        }
    }
    Ok(out)
}

fn params(l: &Loaded, s: &Slot) -> Result<Vec<Vec<u8>>> {
    args::pack(&l.build.params, &s.ptrs, &l.scratch)
}

/// A GPU error of build `l` during `phase`, named as such.
fn failed<'a>(l: &'a Loaded, phase: &'static str) -> impl FnOnce(Error) -> Error + 'a {
    move |e| Error::Kernel {
        label: l.build.label,
        symbol: l.build.symbol.clone(),
        phase,
        source: Box::new(e),
    }
}

fn run_once(gpu: &mut dyn Gpu, l: &Loaded, bufs: &[Buffer], s: &Slot) -> Result<Vec<Tensor>> {
    prepare(gpu, bufs, s)?;
    gpu.launch(l.kernel, l.geometry(), &params(l, s)?)?;
    during(
        || {
            format!(
                "{} kernel `{}` (correctness gates)",
                l.build.label, l.build.symbol
            )
        },
        || gpu.sync(),
    )
    .map_err(failed(l, "correctness gates"))?;
    outputs(gpu, bufs, s)
}

/// Compares two output sets bitwise; one gate line.
fn bitwise_gate(name: &str, a: &[Tensor], b: &[Tensor]) -> Gate {
    let mut differing = 0u64;
    let mut elements = 0u64;
    let mut first = None;
    for (x, y) in a.iter().zip(b) {
        let r = bitwise(
            x,
            y,
            BitwiseOptions {
                first: 1,
                ..Default::default()
            },
        );
        elements += r.elements;
        differing += r.differing;
        if first.is_none() {
            first = r
                .first
                .first()
                .map(|m| format!("; first at {}{:?}: {} vs {}", x.name, m.index, m.a, m.b));
        }
    }
    Gate {
        name: name.into(),
        passed: differing == 0,
        detail: format!(
            "{differing} of {elements} elements differ{}",
            first.unwrap_or_default()
        ),
    }
}

/// Runs the gates.
fn gates(
    gpu: &mut dyn Gpu,
    spec: &Spec,
    bufs: &[Buffer],
    a: &Loaded,
    b: &Loaded,
) -> Result<Vec<Gate>> {
    let sa = slot(gpu, bufs, None)?;
    let sb = slot(gpu, bufs, Some(&sa))?;
    let out_a = run_once(gpu, a, bufs, &sa)?;
    let out_b = run_once(gpu, b, bufs, &sb)?;
    let mut g = Vec::new();
    for (label, outs) in [("baseline", &out_a), ("candidate", &out_b)] {
        let (mut bad, mut n) = (0u64, 0u64);
        for t in outs.iter() {
            let f = finite(t);
            n += f.elements;
            bad += f.nan + f.pos_inf + f.neg_inf;
        }
        g.push(Gate {
            name: format!("{label} outputs all finite (poisoned with NaN before the run)"),
            passed: bad == 0,
            detail: format!("{bad} of {n} elements NaN or infinite"),
        });
    }
    if spec.gates.bitwise {
        g.push(bitwise_gate(
            "baseline vs candidate bitwise",
            &out_a,
            &out_b,
        ));
    }
    for r in 1..spec.gates.repeat.max(1) {
        let again = run_once(gpu, b, bufs, &sb)?;
        g.push(bitwise_gate(
            &format!("candidate repeat {} vs first run bitwise", r + 1),
            &out_b,
            &again,
        ));
    }
    if spec.gates.graph {
        prepare(gpu, bufs, &sb)?;
        let graph = gpu.capture(b.kernel, b.geometry(), &params(b, &sb)?)?;
        gpu.replay(graph)?;
        during(
            || format!("candidate kernel `{}` (graph replay gate)", b.build.symbol),
            || gpu.sync(),
        )
        .map_err(failed(b, "graph replay gate"))?;
        let replayed = outputs(gpu, bufs, &sb)?;
        g.push(bitwise_gate(
            "candidate graph replay vs eager bitwise",
            &out_b,
            &replayed,
        ));
    }
    if let Some(path) = &spec.gates.oracle {
        let path = spec.resolve(path);
        let f = kernelab_tensor::open(&path, &Default::default())?;
        for t in &out_b {
            let Some(o) = f.tensors.iter().find(|o| o.name == t.name) else {
                return Err(Error::spec_in(
                    &path,
                    format!("no tensor named `{}` (the output's name)", t.name),
                ));
            };
            let (rt, at) = t.dtype.default_tolerance();
            let tol = Tolerance {
                rtol: spec.gates.rtol.unwrap_or(rt),
                atol: spec.gates.atol.unwrap_or(at),
                ulp: None,
                nan_equal: false,
            };
            let r = close(t, o, tol);
            g.push(Gate {
                name: format!(
                    "candidate `{}` vs oracle (rtol {}, atol {})",
                    t.name, tol.rtol, tol.atol
                ),
                passed: r.mismatches == 0,
                detail: format!(
                    "{} of {} elements outside; max abs error {}",
                    r.mismatches,
                    r.elements,
                    r.max_abs_err
                        .map_or_else(|| "unavailable".to_string(), |x| x.to_string())
                ),
            });
        }
    }
    Ok(g)
}

/// Launches `n` times between two events; µs per launch.
fn timed(
    gpu: &mut dyn Gpu,
    l: &Loaded,
    p: &[Vec<u8>],
    n: usize,
    flush: Option<(DevicePtr, usize)>,
) -> Result<f64> {
    if let Some((ptr, bytes)) = flush {
        gpu.fill(ptr, 0, bytes)?;
    }
    let start = gpu.record()?;
    for _ in 0..n {
        gpu.launch(l.kernel, l.geometry(), p)?;
    }
    let end = gpu.record()?;
    let ms = during(
        || {
            format!(
                "{} kernel `{}` (timing, {n} launches)",
                l.build.label, l.build.symbol
            )
        },
        || gpu.elapsed_ms(start, end),
    )
    .map_err(failed(l, "timing"))?;
    Ok(ms * 1000.0 / n as f64)
}

/// Launches per timed sample for a kernel of `us` microseconds per launch: one from 20 µs up;
/// below, a batch long enough (≈ 200 µs) that the event resolution and launch overhead stop
/// mattering (at most 1000). Shared by `kernel run` and the Python callables' A/B.
pub fn batch_for(us: f64) -> usize {
    let us = if us.is_finite() { us.max(0.5) } else { 1.0 };
    if us >= 20.0 {
        1
    } else {
        ((200.0 / us).ceil() as usize).clamp(1, 1000)
    }
}

/// Round `k` (run in `order`) of the samples `baseline_ns` and `candidate_ns` (nanoseconds per
/// launch): each build's median, and their change.
pub fn round_of(
    k: usize,
    order: Order,
    baseline_ns: &[f64],
    candidate_ns: &[f64],
    telemetry: kernelab_model::kernel_run::Telemetry,
) -> Round {
    let (ma, mb) = (
        median(baseline_ns).unwrap_or(f64::NAN),
        median(candidate_ns).unwrap_or(f64::NAN),
    );
    Round {
        round: k,
        order,
        baseline_ns: ma,
        candidate_ns: mb,
        change: Change::between(ma, mb),
        telemetry,
    }
}

/// The verdict of `rounds` (a fixed design: every round is one pair) against the practical
/// threshold `threshold`: the one analysis of `kernel run` and of the Python callables' A/B.
pub fn analysis_of(rounds: &[Round], threshold: f64) -> kernelab_stats::Analysis {
    let pairs: Vec<Pair> = rounds
        .iter()
        .map(|r| Pair {
            order: r.order,
            a: r.baseline_ns,
            b: r.candidate_ns,
        })
        .collect();
    let design = Design {
        threshold,
        min_pairs: pairs.len(),
        max_pairs: pairs.len(),
        stop: StopRule::Fixed,
        ..Design::default()
    };
    analyze(&pairs, &design)
}

/// The whole run: gates, then (when they pass) timing.
pub fn run(
    gpu: &mut dyn Gpu,
    spec: &Spec,
    on_sample: &mut dyn FnMut(&Sample) -> Result<()>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<KernelRun> {
    run_timed(gpu, spec, true, on_sample, progress)
}

/// The gates only, as `run` checks them (no timing: `rounds` stays empty).
pub fn gates_only(gpu: &mut dyn Gpu, spec: &Spec) -> Result<KernelRun> {
    run_timed(gpu, spec, false, &mut |_| Ok(()), &mut |_, _| {})
}

/// Gates, then timing when `timing` and the gates pass.
pub fn run_timed(
    gpu: &mut dyn Gpu,
    spec: &Spec,
    timing: bool,
    on_sample: &mut dyn FnMut(&Sample) -> Result<()>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<KernelRun> {
    let bufs = args::buffers(spec)?;
    let a = load(gpu, args::resolve(spec, &spec.baseline, "baseline")?)?;
    let b = load(gpu, args::resolve(spec, &spec.candidate, "candidate")?)?;
    let builds = [&a, &b]
        .iter()
        .map(|l| BuildInfo {
            label: l.build.label.into(),
            code: l.build.code.display().to_string(),
            symbol: l.build.symbol.clone(),
            grid: l.build.grid,
            block: l.build.block,
            shared: l.build.shared,
            params: l.build.params.len(),
            triton: l.build.triton.as_ref().map(|p| p.display().to_string()),
        })
        .collect();
    let gates = gates(gpu, spec, &bufs, &a, &b)?;
    let mut out = KernelRun {
        device: gpu.device_name(),
        builds,
        gates,
        batch: 0,
        l2_flush: spec.timing.l2_flush,
        rounds: Vec::new(),
        analysis: None,
        work: None,
        above_roof: Vec::new(),
        roof_checked: None,
        launched: None,
        noise_floor: None,
    };
    if !timing || !out.gates_passed() {
        return Ok(out);
    }
    // Timing: one slot of outputs shared by both builds (the same addresses for both).
    let s = slot(gpu, &bufs, None)?;
    let (pa, pb) = (params(&a, &s)?, params(&b, &s)?);
    let t = &spec.timing;
    let flush = match (t.l2_flush, gpu.l2_bytes()) {
        (true, Some(l2)) => Some((gpu.alloc(4 * l2)?, 4 * l2)),
        (true, None) => {
            return Err(spec.locate(Error::spec(
                "timing.l2_flush: the device does not report its L2 size",
            )))
        }
        _ => None,
    };
    for _ in 0..t.warmup {
        gpu.launch(a.kernel, a.geometry(), &pa)?;
        gpu.launch(b.kernel, b.geometry(), &pb)?;
    }
    during(
        || {
            format!(
                "baseline kernel `{}` or candidate kernel `{}` (warm-up)",
                a.build.symbol, b.build.symbol
            )
        },
        || gpu.sync(),
    )?;
    let batch = if flush.is_some() {
        1
    } else if t.batch > 0 {
        t.batch
    } else {
        let one: Vec<f64> = (0..5)
            .map(|_| timed(gpu, &a, &pa, 1, None))
            .collect::<Result<_>>()?;
        batch_for(median(&one).unwrap_or(1.0))
    };
    out.batch = batch;
    for k in 0..t.rounds {
        let order = abba_order(k, Order::AB);
        let seq: [(&Loaded, &[Vec<u8>], &'static str); 2] = match order {
            Order::AB => [(&a, &pa, "baseline"), (&b, &pb, "candidate")],
            Order::BA => [(&b, &pb, "candidate"), (&a, &pa, "baseline")],
        };
        let (mut ta, mut tb) = (Vec::new(), Vec::new());
        for (l, p, label) in seq {
            for i in 0..t.samples.max(1) {
                let us = timed(gpu, l, p, batch, flush)?;
                on_sample(&Sample {
                    round: k,
                    build: label.to_string(),
                    sample: i,
                    batch,
                    ns_per_launch: us * 1e3,
                    telemetry: gpu.telemetry(),
                })?;
                if label == "baseline" {
                    ta.push(us)
                } else {
                    tb.push(us)
                }
            }
        }
        // Nanoseconds per launch: the unit of every duration in a document.
        let ns = |v: &[f64]| v.iter().map(|us| us * 1e3).collect::<Vec<f64>>();
        out.rounds
            .push(round_of(k, order, &ns(&ta), &ns(&tb), gpu.telemetry()));
        progress(k + 1, t.rounds);
    }
    out.analysis = Some(analysis_of(&out.rounds, t.threshold));
    let (flops, bytes) = spec.work_per_launch()?;
    if flops.is_some() || bytes.is_some() {
        let med = |f: fn(&Round) -> f64| {
            let v: Vec<f64> = out.rounds.iter().map(f).collect();
            median(&v).unwrap_or(f64::NAN)
        };
        out.work = Some(Achieved::at(
            flops,
            bytes,
            med(|r| r.baseline_ns),
            med(|r| r.candidate_ns),
        ));
    }
    Ok(out)
}

/// Loads one build (`baseline` or `candidate`), fills its inputs, poisons its outputs, launches
/// it once and waits: the launch a profiler in front of this process measures. Returns the
/// kernel's symbol.
pub fn launch_once(gpu: &mut dyn Gpu, spec: &Spec, which: &str) -> Result<String> {
    let (build, label) = match which {
        "baseline" => (&spec.baseline, "baseline"),
        "candidate" => (&spec.candidate, "candidate"),
        other => {
            return Err(Error::spec(format!(
                "--build {other:?}: expected baseline or candidate"
            )))
        }
    };
    let bufs = args::buffers(spec)?;
    let l = load(gpu, args::resolve(spec, build, label)?)?;
    let s = slot(gpu, &bufs, None)?;
    prepare(gpu, &bufs, &s)?;
    gpu.launch(l.kernel, l.geometry(), &params(&l, &s)?)?;
    during(
        || format!("{} kernel `{}` (one launch)", l.build.label, l.build.symbol),
        || gpu.sync(),
    )
    .map_err(failed(&l, "one launch"))?;
    Ok(l.build.symbol.clone())
}
