//! One kernel dispatch, one copy or fill, one annotated range, one launch call.

use crate::intern::NameId;
use crate::units::{Nanos, Timestamp};
use serde::{Deserialize, Serialize};

/// Per-kernel resources as the input reports them. Every field is `None` when the input does
/// not carry it; see `granules` for how to read the AMD register figures.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Resources {
    /// Registers per thread (NVIDIA) or architectural VGPRs (AMD).
    pub registers: Option<u32>,
    /// AMD accumulation VGPRs (AGPRs).
    pub agprs: Option<u32>,
    /// AMD scalar registers.
    pub sgprs: Option<u32>,
    /// Shared memory (NVIDIA, static + dynamic) or LDS (AMD) in bytes per block/work-group.
    pub shared_bytes: Option<u32>,
    /// Scratch / local memory in bytes per thread (work-item).
    pub scratch_bytes: Option<u32>,
    /// True when the register figures are allocation granules from the AMD kernel descriptor
    /// (rocprofv3), not the compiler's exact counts.
    pub granules: bool,
}

/// The launch shape and resources of a dispatch, interned per profile.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct LaunchConfig {
    /// Grid in blocks (NVIDIA/Kineto) or work-items (rocprofv3), as the input writes it.
    pub grid: Option<[u32; 3]>,
    /// Block / work-group size in threads.
    pub block: Option<[u32; 3]>,
    /// Resources of the kernel.
    pub resources: Resources,
}

/// One kernel execution on a GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelDispatch {
    /// Kernel name as the input writes it (interned).
    pub name: NameId,
    /// Device (GPU index or agent id).
    pub device: u32,
    /// Stream or queue.
    pub stream: u64,
    /// Start on the device.
    pub start: Timestamp,
    /// Duration on the device.
    pub duration: Nanos,
    /// Index into the profile's launch-config interner.
    pub launch: u32,
    /// Correlation id linking the dispatch to its host launch call, when known.
    pub correlation: Option<u64>,
    /// Sub-nanosecond remainders of `start` and `duration` (a handle into
    /// `Profile::remainders`; 0 when both are whole nanoseconds, as in most formats).
    pub sub_ns: u32,
}

impl KernelDispatch {
    /// End of the dispatch on the device.
    pub fn end(&self) -> Timestamp {
        self.start.plus(self.duration)
    }
}

/// What kind of non-kernel GPU operation a transfer is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TransferKind {
    /// A memory copy.
    Memcpy,
    /// A memory fill.
    Memset,
}

/// A memcpy or memset on a GPU, kept apart from kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transfer {
    /// Copy or fill.
    pub kind: TransferKind,
    /// Device.
    pub device: u32,
    /// Stream or queue.
    pub stream: u64,
    /// Start.
    pub start: Timestamp,
    /// Duration.
    pub duration: Nanos,
    /// Bytes moved, when the input says.
    pub bytes: Option<u64>,
    /// Sub-nanosecond remainders of `start` and `duration` (a handle into
    /// `Profile::remainders`; 0 when both are whole nanoseconds).
    pub sub_ns: u32,
}

/// Where an annotated range lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AnnotationScope {
    /// A range on a GPU's timeline (Kineto `gpu_user_annotation`): encloses kernels by device
    /// time on its own stream.
    Gpu {
        /// Device.
        device: u32,
        /// The stream the range was recorded on (Kineto's `tid`); `None` encloses every stream
        /// of the device.
        stream: Option<u64>,
    },
    /// A range on a host thread (Kineto `user_annotation`, rocprofv3 markers): encloses kernels
    /// whose launch call on that thread falls inside it.
    Cpu {
        /// Process id.
        pid: i64,
        /// Thread id.
        tid: i64,
    },
}

/// A named, annotated time range (a phase).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Annotation {
    /// Range name (interned).
    pub name: NameId,
    /// Where it lives.
    pub scope: AnnotationScope,
    /// Start.
    pub start: Timestamp,
    /// Duration.
    pub duration: Nanos,
}

/// A host-side launch call (runtime API event) that carries a correlation id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    /// Correlation id shared with the dispatch.
    pub correlation: u64,
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// When the call started.
    pub start: Timestamp,
}

/// A host-side operator with the shapes of its inputs (Kineto `cpu_op` `Input Dims`): the
/// launching op of the kernels whose launch calls it encloses on its thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpShape {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// When the op started.
    pub start: Timestamp,
    /// How long it ran on the host.
    pub duration: Nanos,
    /// Its `Input Dims`, an index into `Profile::shapes`.
    pub dims: u32,
}

/// A host call that replays a graph (`cudaGraphLaunch`, `hipGraphLaunch`): every kernel of one
/// replay carries its correlation id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphLaunch {
    /// Correlation id shared with the replayed kernels.
    pub correlation: u64,
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// When the call started.
    pub start: Timestamp,
    /// How long the call ran on the host.
    pub duration: Nanos,
}

/// A host call that launches one kernel (`cudaLaunchKernel`, `cuLaunchKernel`,
/// `hipLaunchKernel`, …), kept with the graph launches: inside a stream capture it adds a
/// kernel node to the graph being captured instead of running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelLaunchCall {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// When the call started.
    pub start: Timestamp,
}

/// A replayed kernel's graph node, as the trace writes it (Nsight Systems `graphNodeId` with
/// `--cuda-graph-trace=node`), kept with the graph launches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DispatchGraphNode {
    /// Index of the dispatch in the profile.
    pub dispatch: usize,
    /// Its node of the instantiated (executable) graph.
    pub node: u64,
}

/// The creation of a graph node on a host thread (Nsight Systems `CUDA_GRAPH_NODE_EVENTS`): a
/// node captured from a launch call, or a node of an executable graph cloned from its
/// original at instantiation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphNodeCreation {
    /// The node created.
    pub node: u64,
    /// The node it was cloned from (`originalGraphNodeId`), when it was cloned.
    pub original: Option<u64>,
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// When it was created (inside the host call that created it).
    pub at: Timestamp,
}

/// A host operator (Kineto `cpu_op`, such as `aten::mm`), kept with the graph launches to name
/// the operator a captured launch was made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostOp {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// When the op started.
    pub start: Timestamp,
    /// How long it ran on the host.
    pub duration: Nanos,
    /// Its name.
    pub name: NameId,
}

/// A stream capture on a host thread (`cudaStreamBeginCapture` … `cudaStreamEndCapture`, or
/// the HIP calls): the launches inside it build a graph instead of running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GraphCapture {
    /// Process id.
    pub pid: i64,
    /// Thread id.
    pub tid: i64,
    /// Start of the begin call.
    pub start: Timestamp,
    /// End of the end call.
    pub end: Timestamp,
}

/// Per-kernel aggregates from an input that has no per-dispatch records (`kernel_stats.csv`,
/// legacy `results.stats.csv`). Figures the input lacks are `None`.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelAggregate {
    /// Kernel name (interned).
    pub name: NameId,
    /// Number of calls.
    pub calls: u64,
    /// Total duration, rounded once from `total_e9`.
    pub total: Nanos,
    /// Total duration in units of 10⁻⁹ ns: exact for fractional inputs (rocprof-compute averages
    /// its passes), so sums over kernels are rounded once, not line by line.
    pub total_e9: u128,
    /// Shortest call.
    pub min: Option<Nanos>,
    /// Longest call.
    pub max: Option<Nanos>,
    /// Standard deviation in nanoseconds, as the tool computed it.
    pub stddev_ns: Option<f64>,
    /// Median in nanoseconds, where the tool reports one.
    pub median_ns: Option<f64>,
}

/// What a statistics line that is not a kernel counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ActivityKind {
    /// Host API calls (rocprof `results.hip_stats.csv`, rocprofv3 `hip_api_stats.csv`): CPU time.
    HostApi,
    /// Copies and fills (rocprof `results.copy_stats.csv`, rocprofv3 `memory_copy_stats.csv`).
    Copy,
    /// Whole tracing domains (rocprofv3 `domain_stats.csv`: `KERNEL_DISPATCH`, `HIP_RUNTIME_API`).
    Domain,
    /// Barrier and marker packets on a GPU queue (legacy rocprof `<barrier packet>` rows): queue
    /// activity, not kernel executions.
    Queue,
}

/// Per-name totals of host API calls, copies, tracing domains or queue packets: shown apart from
/// kernel time.
#[derive(Clone, Debug, PartialEq)]
pub struct ActivityAggregate {
    /// What the line counts.
    pub kind: ActivityKind,
    /// API function, copy direction or domain name.
    pub name: String,
    /// Number of calls or operations.
    pub calls: u64,
    /// Total duration, rounded once from `total_e9`.
    pub total: Nanos,
    /// Total duration in units of 10⁻⁹ ns, exact, so totals over lines are rounded once.
    pub total_e9: u128,
}

/// What a [`RecordedWork`] is the work of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkOf {
    /// One dispatch: an index into `Profile::dispatches`.
    Dispatch(usize),
    /// Every call of one aggregate: an index into `Profile::aggregates`.
    Aggregate(usize),
}

/// The FLOP count's kind where the input says it (Proton's `flops8` … `flops64`), which picks
/// the roof a kernel is placed under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlopWidth {
    /// The width is not said (PyTorch Inductor's `kernel_flop`, Proton's `flops`).
    Unsaid,
    /// 8-bit floating point.
    Fp8,
    /// 16-bit floating point (FP16 or BF16: the input does not tell them apart).
    Fp16,
    /// 32-bit floating point.
    Fp32,
    /// 64-bit floating point.
    Fp64,
}

/// How work recorded on a host event finds its kernel (Kineto).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkLink {
    /// The event's `correlation`: a runtime or driver launch call, whose correlation id is its
    /// kernel's.
    Correlation(u64),
    /// The event's `External id`: an operator (`cpu_op`), whose id its launch calls and
    /// kernels carry too.
    External(u64),
}

/// FLOPs and bytes a Kineto trace records on a host event (PyTorch Inductor's launch
/// `cpu_op` with `benchmark_kernel`), kept while the file is read and then given to the one
/// kernel the event links to (see `docs/formats.md`, Kineto).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HostWork {
    /// The link to the kernel.
    pub link: WorkLink,
    /// FLOPs, when recorded.
    pub flops: Option<f64>,
    /// Bytes moved, when recorded.
    pub bytes: Option<f64>,
}

/// FLOPs and bytes an input records for its kernels (PyTorch Inductor's `kernel_flop` and
/// `kernel_num_gb` in a Kineto kernel's args; Proton's `flops*` and `bytes` metrics), with the
/// keys they were read from: the work a roofline needs without a work model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RecordedWork {
    /// The dispatch or aggregate the figures are of.
    pub of: WorkOf,
    /// FLOPs, when recorded.
    pub flops: Option<f64>,
    /// The FLOP count's kind.
    pub width: FlopWidth,
    /// Bytes moved, when recorded.
    pub bytes: Option<f64>,
    /// The key the FLOPs were read from (`kernel_flop`, `flops16`).
    pub flops_key: &'static str,
    /// The key the bytes were read from (`kernel_num_gb`, `bytes`).
    pub bytes_key: &'static str,
}
