//! A profile: everything one or more input files say about where GPU time went.

use crate::dispatch::{
    ActivityAggregate, Annotation, GraphCapture, GraphLaunch, KernelAggregate, KernelDispatch,
    Launch, LaunchConfig, OpShape, Transfer,
};
use crate::store::Dispatches;
use std::collections::HashMap;
use std::hash::Hash;
use std::path::PathBuf;

/// A handle to an interned kernel or range name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NameId(pub u32);

/// Interns values so a trace that repeats one long name thousands of times stores it once.
#[derive(Clone, Debug)]
pub struct Interner<T> {
    values: Vec<T>,
    index: HashMap<T, u32>,
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner {
            values: Vec::new(),
            index: HashMap::new(),
        }
    }
}

impl<T: Clone + Eq + Hash> Interner<T> {
    /// The id of `value`, adding it if new.
    pub fn intern(&mut self, value: T) -> u32 {
        if let Some(&id) = self.index.get(&value) {
            return id;
        }
        let id = u32::try_from(self.values.len()).unwrap_or(u32::MAX);
        self.values.push(value.clone());
        self.index.insert(value, id);
        id
    }
    /// Replaces each value from id `from` on by `f` of it, keeping its id (a value that becomes
    /// equal to another keeps both ids; a new value equal to either interns to the first).
    pub fn map_from(&mut self, from: usize, mut f: impl FnMut(&T) -> T) {
        let mut changed = false;
        for v in self.values.iter_mut().skip(from) {
            let new = f(v);
            if new != *v {
                *v = new;
                changed = true;
            }
        }
        if changed {
            self.index.clear();
            for (id, v) in self.values.iter().enumerate().rev() {
                self.index
                    .insert(v.clone(), u32::try_from(id).unwrap_or(u32::MAX));
            }
        }
    }
    /// The value behind an id.
    pub fn get(&self, id: u32) -> Option<&T> {
        self.values.get(id as usize)
    }
    /// Number of distinct values.
    pub fn len(&self) -> usize {
        self.values.len()
    }
    /// True when nothing has been interned.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl Interner<String> {
    /// The id of a string, allocating only when it is new.
    pub fn intern_str(&mut self, value: &str) -> NameId {
        if let Some(&id) = self.index.get(value) {
            return NameId(id);
        }
        NameId(self.intern(value.to_string()))
    }
    /// The string behind an id (empty when unknown).
    pub fn name(&self, id: NameId) -> &str {
        self.get(id.0).map(String::as_str).unwrap_or("")
    }
}

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
