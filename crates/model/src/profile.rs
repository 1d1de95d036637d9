//! A profile: everything one or more input files say about where GPU time went.

use crate::dispatch::{
    ActivityAggregate, Annotation, GraphCapture, GraphLaunch, KernelAggregate, KernelDispatch,
    Launch, LaunchConfig, OpShape, Transfer,
};
use crate::intern::Interner;
use crate::store::Dispatches;
use std::path::PathBuf;

/// What was read from one input file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceInfo {
    /// The file.
    pub path: PathBuf,
    /// The detected format, e.g. "kineto", "rocprofv3-kernel-trace".
    pub format: String,
    /// Facts about the writer (version, device) as `key = value` pairs.
    pub facts: Vec<(String, String)>,
    /// Things the reader noticed that the user should know (skipped rows, unit caveats).
    pub notes: Vec<String>,
    /// The indexes of the profile's dispatches this file added.
    pub dispatches: std::ops::Range<usize>,
    /// The file holds no record of copies or fills (a rocprof-compute `timestamps.csv`, a rocpd
    /// database without copies, a rocprof-compute analysis database): their time is unknown,
    /// not zero.
    pub copies_unrecorded: bool,
}

/// Everything the inputs say about GPU work: per-dispatch records, transfers, annotations, or
/// per-kernel aggregates for inputs that only have those.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// Interned kernel and range names.
    pub names: Interner<String>,
    /// Interned launch shapes and resources.
    pub launches: Interner<LaunchConfig>,
    /// Kernel executions (12 bytes each; see [`Dispatches`]).
    pub dispatches: Dispatches,
    /// Copies and fills.
    pub transfers: Vec<Transfer>,
    /// Annotated ranges (phases).
    pub annotations: Vec<Annotation>,
    /// Host launch calls, collected only when phases are requested.
    pub host_launches: Vec<Launch>,
    /// Interned operator input shapes (`Input Dims`), collected only when asked for.
    pub shapes: Interner<Vec<Vec<i64>>>,
    /// Host operators with their input shapes, collected only when asked for.
    pub op_shapes: Vec<OpShape>,
    /// Graph replay calls, collected only when asked for.
    pub graph_launches: Vec<GraphLaunch>,
    /// Stream captures seen on host threads, collected with the graph launches.
    pub graph_captures: Vec<GraphCapture>,
    /// Kernel launch calls, collected with the graph launches (those inside a capture are its
    /// graph's kernel nodes).
    pub kernel_launch_calls: Vec<crate::KernelLaunchCall>,
    /// Host operators, collected with the graph launches.
    pub host_ops: Vec<crate::HostOp>,
    /// The graph node of each replayed dispatch that carries one, collected with the graph
    /// launches (Nsight Systems with `--cuda-graph-trace=node`).
    pub graph_nodes: Vec<crate::DispatchGraphNode>,
    /// Graph node creations (captured, and cloned at instantiation), collected with the graph
    /// launches.
    pub graph_node_creations: Vec<crate::GraphNodeCreation>,
    /// Per-kernel aggregates from stats-only inputs.
    pub aggregates: Vec<KernelAggregate>,
    /// Host API, copy and domain totals from stats files that do not hold kernels.
    pub activities: Vec<ActivityAggregate>,
    /// One entry per input file.
    pub sources: Vec<SourceInfo>,
    /// True when dispatch start times are not known (Nsight Compute replays kernels one by
    /// one): busy time, wall time and gaps are then unavailable.
    pub untimed: bool,
    /// Per-launch hardware metrics (Nsight Compute).
    pub launch_metrics: Vec<crate::LaunchMetrics>,
    /// Sub-nanosecond remainders of dispatch and transfer times read from decimal text
    /// (rocprof-compute averages); empty when every time is a whole nanosecond.
    pub remainders: crate::exact::Remainders,
    /// FLOPs and bytes the inputs record for their dispatches and aggregates, in the order
    /// read (empty for inputs that record none).
    pub recorded_work: Vec<crate::RecordedWork>,
    /// Work recorded on host events (Kineto), kept only while a file is read: the reader gives
    /// each to the kernel it links to, then empties this.
    pub host_work: Vec<crate::HostWork>,
    /// (correlation, `External id`) of the kernels and launch calls of the Kineto file being
    /// read, kept only while host work is wanted (emptied when the file is read).
    pub external_ids: Vec<(u64, u64)>,
}

impl Profile {
    /// The launch config behind a dispatch.
    pub fn launch(&self, d: &KernelDispatch) -> LaunchConfig {
        self.launches.get(d.launch).copied().unwrap_or_default()
    }
    /// True when the profile holds per-dispatch records (not only aggregates).
    pub fn has_dispatches(&self) -> bool {
        !self.dispatches.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interner_returns_same_id() {
        let mut names = Interner::<String>::default();
        let a = names.intern_str("k");
        let b = names.intern_str("j");
        assert_eq!(names.intern_str("k"), a);
        assert_ne!(a, b);
        assert_eq!(names.name(b), "j");
        assert_eq!(names.len(), 2);
    }
}
