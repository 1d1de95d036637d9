//! What `kernelab kernel run` finds (gates, builds, timed rounds) and what a spec resolves to
//! without a GPU: plain result types, so that renderers need no GPU crate.

use kernelab_stats::{Analysis, Change, Order};
use serde::{Deserialize, Serialize};

/// Clock, temperature and power at one moment (each unavailable when the API has no answer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Telemetry {
    /// SM clock, MHz.
    pub sm_mhz: Option<u32>,
    /// GPU temperature, °C.
    pub temp_c: Option<u32>,
    /// Board power, W.
    pub power_w: Option<f64>,
}

/// One gate's outcome.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub struct Gate {
    /// What was checked.
    pub name: String,
    /// Whether it held.
    pub passed: bool,
    /// Numbers behind it.
    pub detail: String,
}

impl Gate {
    /// The tensor sweep's finiteness gate of the candidate: `nan` NaN and `inf` infinite
    /// values among `elements`.
    pub fn candidate_finite(nan: u64, inf: u64, elements: u64) -> Gate {
        Gate {
            name: "candidate finite".into(),
            passed: nan + inf == 0,
            detail: if nan + inf == 0 {
                format!("all {elements} elements finite")
            } else {
                format!("{nan} NaN and {inf} Inf of {elements} elements")
            },
        }
    }
}

/// One build as launched.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BuildInfo {
    /// `baseline` or `candidate`.
    pub label: String,
    /// Code object.
    pub code: String,
    /// Symbol.
    pub symbol: String,
    /// Grid.
    pub grid: [u32; 3],
    /// Block.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub shared: u32,
    /// Parameters passed.
    pub params: usize,
    /// Triton metadata used.
    pub triton: Option<String>,
}

/// One timed sample.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sample {
    /// Round.
    pub round: usize,
    /// `baseline` or `candidate`.
    pub build: String,
    /// Sample within the round.
    pub sample: usize,
    /// Launches between the two events.
    pub batch: usize,
    /// Event time divided by the batch, nanoseconds.
    pub ns_per_launch: f64,
    /// Telemetry at the end of the sample.
    #[serde(flatten)]
    pub telemetry: Telemetry,
}

/// One round: a pair.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Round {
    /// Index.
    pub round: usize,
    /// Which ran first.
    pub order: Order,
    /// Median baseline nanoseconds per launch.
    pub baseline_ns: f64,
    /// Median candidate nanoseconds per launch.
    pub candidate_ns: f64,
    /// Candidate / baseline of the two medians (`ratio`, `change`; no interval per round).
    #[serde(flatten)]
    pub change: Change,
    /// Telemetry at the end of the round.
    #[serde(flatten)]
    pub telemetry: Telemetry,
}

/// Everything `kernelab kernel run` found.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelRun {
    /// Device name.
    pub device: String,
    /// The two builds.
    pub builds: Vec<BuildInfo>,
    /// Gates, in order.
    pub gates: Vec<Gate>,
    /// Launches per timed sample.
    pub batch: usize,
    /// Whether an L2 flush ran before each timed launch.
    pub l2_flush: bool,
    /// Rounds.
    pub rounds: Vec<Round>,
    /// Candidate/baseline analysis (absent when a gate failed and timing was skipped).
    pub analysis: Option<Analysis>,
    /// The work of one launch and the rates it reaches, when the spec gives a work model.
    #[serde(default)]
    pub work: Option<Achieved>,
    /// Each build whose achieved rate beats the device's roof: a timing or work-model error,
    /// not a speedup (see [`above_roof`]); empty when none does or nothing was checked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub above_roof: Vec<String>,
    /// The ceilings the achieved rates were checked against, when they were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roof_checked: Option<String>,
    /// The kernels each Python callable launched, when they were captured (Triton).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launched: Option<Launched>,
    /// This kernel's noise floor on this GPU, from earlier identical-code runs kept in a
    /// controls ledger (`--controls`), when it holds enough of them (schema version 9 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise_floor: Option<NoiseFloor>,
}

/// A kernel's noise floor on one GPU: what earlier runs of identical machine code on both
/// sides (free A/A controls) showed, kept in a ledger the user names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NoiseFloor {
    /// The kernel, its sizes and the GPU the controls were measured on (the ledger's key).
    pub key: String,
    /// Identical-code runs of that key in the ledger (before this run).
    pub controls: usize,
    /// The largest |candidate / baseline − 1| among them: a change this small is within what
    /// identical code showed on this GPU.
    pub largest_change: f64,
    /// The ledger file.
    pub ledger: String,
}

/// What two Python callables launched (`kernelab.kernel.compare` captures Triton launches):
/// each side's kernels with their share of its GPU time, and the kernels paired across sides
/// with their machine code compared.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Launched {
    /// Each captured kernel of each side.
    pub kernels: Vec<LaunchedKernel>,
    /// GPU time per call of each side's callable (nanoseconds, the median of the capture
    /// calls): `[baseline, candidate]`, null when not measured (host callables).
    pub call_ns: [Option<f64>; 2],
    /// Kernels paired across the sides (same name, else the same position).
    pub pairs: Vec<LaunchedPair>,
    /// The folder the code objects, inputs and launch specs were written to (`capture=`).
    pub capture: Option<String>,
    /// What could not be captured or reproduced, and why.
    pub notes: Vec<String>,
}

/// One kernel a callable launched.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaunchedKernel {
    /// `baseline` or `candidate`.
    pub side: String,
    /// The kernel's symbol (Triton's metadata `name`).
    pub name: String,
    /// The Python function that launched it (`module:qualname` of the `@triton.jit` function).
    pub function: String,
    /// Launches per call of the callable.
    pub launches: f64,
    /// Grid of its first launch.
    pub grid: [u32; 3],
    /// Block of its first launch.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub shared: u32,
    /// GPU time of its launches per call, nanoseconds (median of the capture calls).
    pub ns: Option<f64>,
    /// Its part of the callable's GPU time (ns / call_ns), a fraction.
    pub share: Option<f64>,
    /// SHA-256 of its code object.
    pub code_sha256: String,
    /// The code object written, relative to the capture folder.
    pub code: Option<String>,
}

/// A kernel of the baseline and its counterpart in the candidate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaunchedPair {
    /// The baseline kernel's name.
    pub baseline: String,
    /// The candidate kernel's name.
    pub candidate: String,
    /// Whether their machine code is identical once what does not execute is set aside.
    pub identical: bool,
    /// What the machine code comparison found (`identical machine code: …`, `machine code
    /// differs: …`).
    pub machine_code: String,
    /// Registers per thread: `[baseline, candidate]`.
    pub registers: [Option<u32>; 2],
    /// Stack frame bytes per thread, where spills land: `[baseline, candidate]`.
    pub frame_bytes: [Option<u64>; 2],
    /// The launch spec that reproduces this pair without Python, relative to the capture
    /// folder, when one was written.
    pub spec: Option<String>,
}

/// Each build of `w` whose FLOP/s beats the peak of `roof` (without one, the highest peak of
/// the ceilings) or whose byte/s beats the DRAM bandwidth: a rate the device was measured not
/// to reach means the timing missed work (skipped, replayed, not waited for) or the work model
/// overcounts. `source` names the ceilings.
pub fn above_roof(
    w: &Achieved,
    ceilings: &crate::roofline::Ceilings,
    roof: Option<crate::roofline::Roof>,
    source: &str,
) -> Vec<String> {
    use crate::roofline::ROOFS;
    let peak = match roof {
        Some(r) => ceilings
            .used(r.ceiling())
            .value()
            .map(|p| (p, r.ceiling().label())),
        None => ROOFS
            .iter()
            .filter_map(|r| Some((ceilings.used(r.ceiling()).value()?, r.ceiling().label())))
            .max_by(|a, b| a.0.total_cmp(&b.0)),
    };
    let bandwidth = ceilings.bandwidth().value();
    let mut out = Vec::new();
    for (build, flop_s, byte_s) in [
        ("baseline", w.baseline_flop_per_s, w.baseline_byte_per_s),
        ("candidate", w.candidate_flop_per_s, w.candidate_byte_per_s),
    ] {
        let mut over = Vec::new();
        if let (Some(f), Some((p, label))) = (flop_s, peak) {
            if f > p {
                over.push(format!(
                    "{:.1} TFLOP/s is above the {label} peak {:.1} TFLOP/s ({:.1}%)",
                    f / 1e12,
                    p / 1e12,
                    100.0 * f / p
                ));
            }
        }
        if let (Some(b), Some(bw)) = (byte_s, bandwidth) {
            if b > bw {
                over.push(format!(
                    "{:.1} GB/s is above the DRAM bandwidth {:.1} GB/s ({:.1}%)",
                    b / 1e9,
                    bw / 1e9,
                    100.0 * b / bw
                ));
            }
        }
        if !over.is_empty() {
            out.push(format!(
                "{build}: {} of {source}: a timing error (work skipped, results replayed, a \
                 launch not waited for) or a work-model error (work of one launch overcounted), \
                 not a speedup",
                over.join("; ")
            ));
        }
    }
    out
}

/// The work of one launch (the spec's `[work]` model) and the rates the median round reaches.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Achieved {
    /// Floating-point operations per launch, when the model gives them.
    pub flops: Option<f64>,
    /// Bytes moved per launch, when the model gives them.
    pub bytes: Option<f64>,
    /// Baseline: FLOP/s at its median time per launch over rounds.
    pub baseline_flop_per_s: Option<f64>,
    /// Baseline: bytes/s.
    pub baseline_byte_per_s: Option<f64>,
    /// Candidate: FLOP/s.
    pub candidate_flop_per_s: Option<f64>,
    /// Candidate: bytes/s.
    pub candidate_byte_per_s: Option<f64>,
}

impl Achieved {
    /// The rates of `flops` and `bytes` per launch at median launch times `base_ns`, `cand_ns`
    /// (nanoseconds).
    pub fn at(flops: Option<f64>, bytes: Option<f64>, base_ns: f64, cand_ns: f64) -> Achieved {
        let rate = |work: Option<f64>, ns: f64| {
            work.filter(|_| ns > 0.0 && ns.is_finite())
                .map(|w| w / (ns * 1e-9))
        };
        Achieved {
            flops,
            bytes,
            baseline_flop_per_s: rate(flops, base_ns),
            baseline_byte_per_s: rate(bytes, base_ns),
            candidate_flop_per_s: rate(flops, cand_ns),
            candidate_byte_per_s: rate(bytes, cand_ns),
        }
    }
}

impl KernelRun {
    /// True when every gate held.
    pub fn gates_passed(&self) -> bool {
        self.gates.iter().all(|g| g.passed)
    }
}

/// One build as it would launch.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedBuild {
    /// `baseline` or `candidate`.
    pub label: String,
    /// Kernel symbol.
    pub symbol: String,
    /// Grid.
    pub grid: [u32; 3],
    /// Block.
    pub block: [u32; 3],
    /// Dynamic shared memory, bytes.
    pub shared: u32,
    /// Parameters in order: buffer names, `N-byte scalar`, `null`, `scratch N B`.
    pub params: Vec<String>,
    /// Triton metadata used.
    pub triton: Option<String>,
}

/// One buffer.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlannedBuffer {
    /// Argument name.
    pub name: String,
    /// Element type.
    pub dtype: String,
    /// Shape.
    pub shape: Vec<usize>,
    /// Size in bytes.
    pub bytes: usize,
}

/// A resolved spec.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Plan {
    /// Baseline and candidate.
    pub builds: Vec<PlannedBuild>,
    /// Buffers in argument order.
    pub buffers: Vec<PlannedBuffer>,
}

impl crate::Body for Plan {
    const KIND: &'static str = "kernel_dry_run";
}
