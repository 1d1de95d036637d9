//! Graph replay attribution: every kernel a `cudaGraphLaunch` / `hipGraphLaunch` replayed
//! carries that call's correlation id, so each replay's kernels, GPU time, span and launch
//! latency are known, and replays of one graph (the same kernels in the same order) are
//! summed together.

use super::intervals::{by_thread, sweep};
use kernelab_model::{AnnotationScope, NameId, Profile};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Median, least and greatest of a per-replay figure, in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NsSpread {
    /// Median (of an even count, the mean of the two middle values, rounded down).
    pub median: i64,
    /// Least.
    pub min: i64,
    /// Greatest.
    pub max: i64,
}

impl NsSpread {
    fn of(mut v: Vec<i64>) -> Option<NsSpread> {
        v.sort_unstable();
        let n = v.len();
        let (min, max) = (*v.first()?, *v.last()?);
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2
        };
        Some(NsSpread { median, min, max })
    }
}

/// One kernel of a graph, with its GPU time per replay.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GraphKernel {
    /// Kernel name.
    pub name: String,
    /// Launches of it in one replay.
    pub per_replay: u64,
    /// Its GPU time over all replays, ns.
    pub total_ns: u64,
}

/// A host operator that captured kernels of a graph, with their GPU time over its replays.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GraphOperator {
    /// The operator around the captured launch calls (Kineto `cpu_op`, e.g. `aten::mm`), or
    /// `(no host operator)`.
    pub name: String,
    /// Its kernels in one replay.
    pub kernels_per_replay: u64,
    /// Their GPU time over all replays, ns.
    pub total_ns: u64,
}

/// One graph: every replay of the same kernels in the same order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GraphRow {
    /// `graph 1`, `graph 2`, … in the order of first replay.
    pub graph: String,
    /// Where it is replayed from: the innermost host-side annotated range around most of its
    /// launch calls (`None`: no range encloses them).
    pub site: Option<String>,
    /// Replays (graph launch calls whose kernels are in the profile).
    pub replays: u64,
    /// Kernels of one replay.
    pub kernels_per_replay: u64,
    /// GPU kernel time of one replay (sum of its kernels' durations), ns.
    pub kernel_ns_per_replay: NsSpread,
    /// GPU kernel time of every replay, ns.
    pub kernel_ns_total: u64,
    /// First kernel start to last kernel end of one replay, ns.
    pub span_ns_per_replay: NsSpread,
    /// Launch call start to first kernel start, ns (host and device clocks as the trace
    /// writes them).
    pub launch_latency_ns: NsSpread,
    /// Its kernels by GPU time, the longest first (at most 5).
    pub top_kernels: Vec<GraphKernel>,
    /// Its GPU time by the host operator that captured each kernel, the longest first: the
    /// k-th kernel of a replay (in order of start) is the k-th kernel launch of the stream
    /// capture that built the graph. Empty when that capture is not in the inputs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operators: Vec<GraphOperator>,
    /// How `operators` was found (absent when it is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operators_from: Option<OperatorsFrom>,
}

/// How replayed kernels were given the operators that made their graph nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OperatorsFrom {
    /// Each kernel's graph node, traced back to the creation of the node it was cloned from
    /// (exact: Nsight Systems with `--cuda-graph-trace=node`).
    GraphNodeIds,
    /// The k-th kernel of a replay, in order of start, is the k-th kernel launch of the
    /// stream capture that built the graph (a capture matched by its launch count).
    CaptureOrder,
    /// Some kernels each way.
    Both,
}

/// Graph replays of a profile (`kernelab profile --by-graph`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Graphs {
    /// One row per graph, by total GPU kernel time.
    pub rows: Vec<GraphRow>,
    /// Graph launch calls read.
    pub launch_calls: u64,
    /// GPU kernel time of replayed kernels, ns.
    pub replayed_kernel_ns: u64,
    /// GPU kernel time of every kernel, ns.
    pub all_kernel_ns: u64,
    /// Stream captures seen in the inputs.
    pub captures: u64,
    /// What the inputs lack for a fuller attribution.
    pub missing: Vec<String>,
}

/// A replayed kernel: start, end, name, dispatch index.
type Replayed = (i64, i64, NameId, usize);

/// Per graph launch call, its kernels in order of start; and (GPU kernel time of every
/// kernel, of replayed kernels), ns.
fn replays(profile: &Profile) -> (Vec<Vec<Replayed>>, u64, u64) {
    let calls: HashMap<u64, usize> = profile
        .graph_launches
        .iter()
        .enumerate()
        .map(|(i, g)| (g.correlation, i))
        .collect();
    let mut replays: Vec<Vec<Replayed>> = vec![Vec::new(); profile.graph_launches.len()];
    let (mut all, mut replayed) = (0, 0);
    for (index, d) in profile.dispatches.iter().enumerate() {
        let ns = d.duration.ns();
        all += ns;
        if let Some(&i) = d.correlation.and_then(|c| calls.get(&c)) {
            replayed += ns;
            replays[i].push((d.start.ns(), d.end().ns(), d.name, index));
        }
    }
    for r in &mut replays {
        r.sort_unstable();
    }
    (replays, all, replayed)
}

/// A stream capture's kernel nodes: the kernel launch calls inside it on its thread, in
/// order, each with the host operator around it.
struct Captured {
    pid: i64,
    tid: i64,
    end: i64,
    /// Start of each captured launch call.
    launches: Vec<i64>,
    /// The innermost host operator around each (`None`: none).
    ops: Vec<Option<NameId>>,
}

/// Most captured kernel launches attributed over all captures, and most steps spent matching
/// graphs to captures: past either, the rest is left unattributed, saying so (bounded work on
/// a trace of overlapping or countless captures).
const MAX_CAPTURE_WORK: usize = 1 << 24;

/// Every stream capture with its captured kernel launches (all of them empty once their
/// count passes [`MAX_CAPTURE_WORK`]; the second value says so).
fn captured(profile: &Profile) -> (Vec<Captured>, bool) {
    let mut calls: HashMap<(i64, i64), Vec<i64>> = HashMap::new();
    for c in &profile.kernel_launch_calls {
        calls.entry((c.pid, c.tid)).or_default().push(c.start.ns());
    }
    for v in calls.values_mut() {
        v.sort_unstable();
    }
    let ranges: Vec<&[i64]> = profile
        .graph_captures
        .iter()
        .map(|g| {
            let (from, to) = (g.start.ns(), g.end.ns());
            calls.get(&(g.pid, g.tid)).map_or(&[][..], |v| {
                let lo = v.partition_point(|&t| t < from);
                let hi = v.partition_point(|&t| t <= to).max(lo);
                &v[lo..hi]
            })
        })
        .collect();
    let total = ranges
        .iter()
        .map(|r| r.len())
        .fold(0usize, usize::saturating_add);
    let too_many = total > MAX_CAPTURE_WORK;
    let mut out: Vec<Captured> = profile
        .graph_captures
        .iter()
        .zip(&ranges)
        .map(|(g, r)| Captured {
            pid: g.pid,
            tid: g.tid,
            end: g.end.ns(),
            launches: if too_many { Vec::new() } else { r.to_vec() },
            ops: Vec::new(),
        })
        .collect();
    if too_many {
        return (out, true);
    }
    // The operator of each captured launch: one sweep per thread over all its captures.
    let mut ops = by_thread(
        profile
            .host_ops
            .iter()
            .map(|o| (o.pid, o.tid, o.start, o.duration, o.name)),
    );
    let mut slots: Vec<(usize, usize)> = Vec::with_capacity(total);
    let mut queries: HashMap<(i64, i64), Vec<(i64, usize)>> = HashMap::new();
    for (c, cap) in out.iter().enumerate() {
        for (k, &t) in cap.launches.iter().enumerate() {
            queries
                .entry((cap.pid, cap.tid))
                .or_default()
                .push((t, slots.len()));
            slots.push((c, k));
        }
    }
    let mut names = vec![None; slots.len()];
    for (thread, q) in queries {
        if let Some(r) = ops.get_mut(&thread) {
            sweep(r, q, &mut names);
        }
    }
    for c in &mut out {
        c.ops = vec![None; c.launches.len()];
    }
    for ((c, k), name) in slots.into_iter().zip(names) {
        out[c].ops[k] = name;
    }
    (out, false)
}

/// Where a graph node was created, (pid, tid, time), and the host operator around it.
type NodeOrigin = ((i64, i64, i64), Option<NameId>);

/// Clones followed from an executable graph's node back to the node it was made from, at most.
const MAX_CLONE_DEPTH: usize = 16;

/// Where each replayed dispatch that carries a graph node was put in its graph: dispatch index
/// → (pid, tid, time) of the creation of the node its executable graph's node was cloned
/// from (a captured launch call, or a node added by the graph API), with the host operator
/// around it. Exact where the trace writes node ids and node creations (Nsight Systems with
/// `--cuda-graph-trace=node`); no capture order is assumed.
fn node_origins(profile: &Profile) -> HashMap<usize, NodeOrigin> {
    let mut out = HashMap::new();
    if profile.graph_nodes.is_empty() || profile.graph_node_creations.is_empty() {
        return out;
    }
    let mut clone_of: HashMap<u64, u64> = HashMap::new();
    let mut created: HashMap<u64, (i64, i64, i64)> = HashMap::new();
    for c in &profile.graph_node_creations {
        match c.original {
            Some(o) if o != c.node => {
                clone_of.insert(c.node, o);
            }
            _ => {
                created.entry(c.node).or_insert((c.pid, c.tid, c.at.ns()));
            }
        }
    }
    let origin = |mut node: u64| {
        for _ in 0..MAX_CLONE_DEPTH {
            match clone_of.get(&node) {
                Some(&o) => node = o,
                None => break,
            }
        }
        created.get(&node).copied()
    };
    let found: Vec<(usize, (i64, i64, i64))> = profile
        .graph_nodes
        .iter()
        .filter_map(|g| origin(g.node).map(|o| (g.dispatch, o)))
        .collect();
    let mut ops = by_thread(
        profile
            .host_ops
            .iter()
            .map(|o| (o.pid, o.tid, o.start, o.duration, o.name)),
    );
    let mut queries: HashMap<(i64, i64), Vec<(i64, usize)>> = HashMap::new();
    for (k, (_, (pid, tid, at))) in found.iter().enumerate() {
        queries.entry((*pid, *tid)).or_default().push((*at, k));
    }
    let mut names = vec![None; found.len()];
    for (thread, q) in queries {
        if let Some(r) = ops.get_mut(&thread) {
            sweep(r, q, &mut names);
        }
    }
    for ((dispatch, at), name) in found.into_iter().zip(names) {
        out.insert(dispatch, (at, name));
    }
    out
}

/// Which capture built each graph (keyed by its kernels in order): a capture ended before
/// the graph's first replay with as many kernel launches as a replay has kernels, when
/// exactly one such capture is left; and a note on each graph that could not be told.
fn graph_captures(
    profile: &Profile,
    replays: &[Vec<Replayed>],
    captures: &[Captured],
) -> (HashMap<Vec<NameId>, usize>, Vec<String>) {
    let mut out: HashMap<Vec<NameId>, usize> = HashMap::new();
    let mut taken = vec![false; captures.len()];
    let mut by_count: HashMap<usize, Vec<usize>> = HashMap::new();
    for (c, cap) in captures.iter().enumerate() {
        by_count.entry(cap.launches.len()).or_default().push(c);
    }
    let (mut ambiguous, mut unmatched, mut work, mut cut) = (0u64, 0u64, 0usize, false);
    for (i, kernels) in replays.iter().enumerate() {
        let signature: Vec<NameId> = kernels.iter().map(|k| k.2).collect();
        if kernels.is_empty() || out.contains_key(&signature) {
            continue;
        }
        let first = profile.graph_launches.get(i).map_or(0, |g| g.start.ns());
        let bucket = by_count.get(&kernels.len()).map_or(&[][..], Vec::as_slice);
        work = work.saturating_add(bucket.len());
        if work > MAX_CAPTURE_WORK {
            cut = true;
            break;
        }
        let mut fits = bucket
            .iter()
            .copied()
            .filter(|&c| !taken[c] && captures[c].end <= first);
        match (fits.next(), fits.next()) {
            (Some(c), None) => {
                taken[c] = true;
                out.insert(signature, c);
            }
            (None, _) => unmatched += 1,
            (Some(_), Some(_)) => {
                ambiguous += 1;
                // Marked so that a later graph of the same kernels is not retried.
                out.insert(signature, usize::MAX);
            }
        }
    }
    out.retain(|_, c| *c != usize::MAX);
    let mut notes = Vec::new();
    if cut {
        notes.push(format!(
            "graphs past the first {} matched were not attributed to operators: matching them \
             to their captures would take more than {MAX_CAPTURE_WORK} steps",
            out.len()
        ));
    }
    if ambiguous > 0 {
        notes.push(format!(
            "{ambiguous} graph(s) not attributed to operators: more than one earlier stream \
             capture has as many kernel launches as a replay has kernels (captures carry no \
             kernel names to tell them apart; graph-node tool ids, cudaGraphNodeGetToolsId, \
             would)"
        ));
    }
    if unmatched > 0 && !captures.is_empty() {
        notes.push(format!(
            "{unmatched} graph(s) not attributed to operators: no earlier stream capture in the \
             inputs has as many kernel launches as a replay has kernels"
        ));
    }
    (out, notes)
}

/// For each replayed kernel whose graph's capture is in the inputs, where its launch was
/// captured: dispatch index → (pid, tid, start of the captured launch call). The k-th kernel
/// of a replay (in order of start) is the k-th launch of the capture.
pub(crate) fn replay_origins(profile: &Profile) -> HashMap<usize, (i64, i64, i64)> {
    let mut out: HashMap<usize, (i64, i64, i64)> = node_origins(profile)
        .into_iter()
        .map(|(d, (at, _))| (d, at))
        .collect();
    if profile.graph_captures.is_empty() {
        return out;
    }
    let (replays, ..) = replays(profile);
    let (captures, _) = captured(profile);
    let (by_graph, _) = graph_captures(profile, &replays, &captures);
    for kernels in &replays {
        let signature: Vec<NameId> = kernels.iter().map(|k| k.2).collect();
        if let Some(c) = by_graph.get(&signature).and_then(|&c| captures.get(c)) {
            for (k, &at) in kernels.iter().zip(&c.launches) {
                out.entry(k.3).or_insert((c.pid, c.tid, at));
            }
        }
    }
    out
}

/// What makes two replays one graph: the graph nodes of their kernels when every kernel
/// carries one (the same executable graph, whatever order its branches ran in), else their
/// kernel names in order of start.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum GraphKey {
    /// Sorted node ids.
    Nodes(Vec<u64>),
    /// Names in order of start.
    Names(Vec<NameId>),
}

impl GraphKey {
    /// Kernels of one replay.
    fn len(&self) -> usize {
        match self {
            GraphKey::Nodes(v) => v.len(),
            GraphKey::Names(v) => v.len(),
        }
    }
}

/// The key of a replay of `kernels` (named `signature` in order of start).
fn graph_key(
    kernels: &[Replayed],
    signature: Vec<NameId>,
    node_of: &HashMap<usize, u64>,
) -> GraphKey {
    let nodes: Option<Vec<u64>> = kernels.iter().map(|k| node_of.get(&k.3).copied()).collect();
    match nodes {
        Some(mut n) if !n.is_empty() => {
            n.sort_unstable();
            GraphKey::Nodes(n)
        }
        _ => GraphKey::Names(signature),
    }
}

/// Kernels of each replayed graph, from `profile.graph_launches` (read with
/// `ReadOptions::graphs`) and the dispatches' correlation ids; with the stream capture that
/// built a graph in the inputs, its GPU time by the host operator that captured each kernel.
pub fn graphs(profile: &Profile) -> Graphs {
    let (replays, all, replayed) = replays(profile);
    let mut out = Graphs {
        launch_calls: profile.graph_launches.len() as u64,
        captures: profile.graph_captures.len() as u64,
        all_kernel_ns: all,
        replayed_kernel_ns: replayed,
        ..Graphs::default()
    };
    let (captures, too_many) = captured(profile);
    let (by_capture, mut capture_notes) = graph_captures(profile, &replays, &captures);
    if too_many {
        capture_notes.insert(
            0,
            format!(
                "the stream captures hold more than {MAX_CAPTURE_WORK} kernel launch calls: \
                 replayed kernels are not attributed to operators"
            ),
        );
    }
    let sites = launch_sites(profile);
    let nodes = node_origins(profile);
    struct Acc {
        first: usize,
        kernel_ns: Vec<i64>,
        span: Vec<i64>,
        latency: Vec<i64>,
        sites: HashMap<Option<NameId>, u64>,
        per_kernel: HashMap<NameId, (u64, u64)>,
        /// Per captured operator (`None`: no operator around the launch): kernels, ns.
        per_op: HashMap<Option<NameId>, (u64, u64)>,
        /// Kernels given their operator by graph node ids, and by capture order.
        by_nodes: u64,
        by_capture: u64,
    }
    let mut by_graph: HashMap<GraphKey, Acc> = HashMap::new();
    let node_of: HashMap<usize, u64> = profile
        .graph_nodes
        .iter()
        .map(|g| (g.dispatch, g.node))
        .collect();
    for (i, kernels) in replays.into_iter().enumerate() {
        if kernels.is_empty() {
            continue;
        }
        let signature: Vec<NameId> = kernels.iter().map(|k| k.2).collect();
        let n = by_graph.len();
        let capture = by_capture.get(&signature).and_then(|&c| captures.get(c));
        let key = graph_key(&kernels, signature, &node_of);
        let acc = by_graph.entry(key).or_insert_with(|| Acc {
            first: n,
            kernel_ns: Vec::new(),
            span: Vec::new(),
            latency: Vec::new(),
            sites: HashMap::new(),
            per_kernel: HashMap::new(),
            per_op: HashMap::new(),
            by_nodes: 0,
            by_capture: 0,
        });
        let start = kernels.first().map_or(0, |k| k.0);
        let end = kernels.iter().map(|k| k.1).max().unwrap_or(start);
        acc.kernel_ns
            .push(kernels.iter().map(|k| k.1 - k.0).sum::<i64>());
        acc.span.push(end - start);
        if let Some(call) = profile.graph_launches.get(i) {
            acc.latency.push(start - call.start.ns());
        }
        *acc.sites
            .entry(sites.get(i).copied().flatten())
            .or_default() += 1;
        for k in &kernels {
            let e = acc.per_kernel.entry(k.2).or_default();
            e.0 += 1;
            e.1 += u64::try_from(k.1 - k.0).unwrap_or(0);
        }
        for (j, k) in kernels.iter().enumerate() {
            let op = match nodes.get(&k.3) {
                Some((_, op)) => {
                    acc.by_nodes += 1;
                    Some(*op)
                }
                None => capture.and_then(|c| c.ops.get(j).copied()).inspect(|_| {
                    acc.by_capture += 1;
                }),
            };
            if let Some(op) = op {
                let e = acc.per_op.entry(op).or_default();
                e.0 += 1;
                e.1 += u64::try_from(k.1 - k.0).unwrap_or(0);
            }
        }
    }
    let mut rows: Vec<(usize, GraphRow)> = by_graph
        .into_iter()
        .map(|(key, a)| {
            let replays = a.kernel_ns.len() as u64;
            let site = a
                .sites
                .iter()
                .max_by_key(|(s, n)| (**n, std::cmp::Reverse(**s)))
                .and_then(|(s, _)| *s)
                .map(|s| profile.names.name(s).to_string());
            let mut top: Vec<GraphKernel> = a
                .per_kernel
                .iter()
                .map(|(name, (n, ns))| GraphKernel {
                    name: profile.names.name(*name).to_string(),
                    per_replay: n / replays.max(1),
                    total_ns: *ns,
                })
                .collect();
            top.sort_by(|x, y| y.total_ns.cmp(&x.total_ns).then(x.name.cmp(&y.name)));
            top.truncate(5);
            let mut operators: Vec<GraphOperator> = a
                .per_op
                .iter()
                .map(|(op, (n, ns))| GraphOperator {
                    name: op.map_or_else(
                        || "(no host operator)".to_string(),
                        |o| profile.names.name(o).to_string(),
                    ),
                    kernels_per_replay: n / replays.max(1),
                    total_ns: *ns,
                })
                .collect();
            operators.sort_by(|x, y| y.total_ns.cmp(&x.total_ns).then(x.name.cmp(&y.name)));
            let zero = NsSpread {
                median: 0,
                min: 0,
                max: 0,
            };
            let total = a.kernel_ns.iter().sum::<i64>();
            (
                a.first,
                GraphRow {
                    graph: String::new(),
                    site,
                    replays,
                    kernels_per_replay: key.len() as u64,
                    kernel_ns_per_replay: NsSpread::of(a.kernel_ns).unwrap_or(zero),
                    kernel_ns_total: u64::try_from(total).unwrap_or(0),
                    span_ns_per_replay: NsSpread::of(a.span).unwrap_or(zero),
                    launch_latency_ns: NsSpread::of(a.latency).unwrap_or(zero),
                    top_kernels: top,
                    operators,
                    operators_from: match (a.by_nodes > 0, a.by_capture > 0) {
                        (true, false) => Some(OperatorsFrom::GraphNodeIds),
                        (false, true) => Some(OperatorsFrom::CaptureOrder),
                        (true, true) => Some(OperatorsFrom::Both),
                        (false, false) => None,
                    },
                },
            )
        })
        .collect();
    // Numbered by first replay, listed by total time.
    rows.sort_by_key(|(first, _)| *first);
    for (n, (_, r)) in rows.iter_mut().enumerate() {
        r.graph = format!("graph {}", n + 1);
    }
    rows.sort_by(|a, b| {
        b.1.kernel_ns_total
            .cmp(&a.1.kernel_ns_total)
            .then(a.0.cmp(&b.0))
    });
    out.rows = rows.into_iter().map(|(_, r)| r).collect();
    if profile.graph_launches.is_empty() {
        out.missing.push(
            "no graph launch calls (cudaGraphLaunch, hipGraphLaunch) with correlation ids in the \
             inputs: graph replays are read from Kineto traces with CPU activity (runtime events); \
             every kernel here is counted as launched eagerly"
                .into(),
        );
    } else if out.rows.is_empty() {
        let whole = profile
            .sources
            .iter()
            .any(|s| s.facts.iter().any(|(k, _)| k == "whole-graph executions"));
        out.missing.push(format!(
            "{} graph launch calls, but no kernel carries their correlation ids: {}",
            profile.graph_launches.len(),
            if whole {
                "the graphs were traced as whole graphs (Nsight Systems --cuda-graph-trace=graph), \
                 without their kernels; capture with --cuda-graph-trace=node"
            } else {
                "the trace lacks the replayed kernels (GPU activity off, or outside the profiled \
                 window)"
            }
        ));
    }
    let replayed_kernels: usize = out
        .rows
        .iter()
        .map(|r| (r.replays * r.kernels_per_replay) as usize)
        .sum();
    let noded = profile.graph_nodes.len();
    if noded > 0 && nodes.len() < noded {
        out.missing.push(format!(
            "{} of {noded} replayed kernels carry graph node ids whose creation is not in the \
             inputs (Nsight Systems CUDA_GRAPH_NODE_EVENTS): profile the capture and \
             instantiation as well",
            noded - nodes.len()
        ));
    }
    if nodes.len() >= replayed_kernels && replayed_kernels > 0 {
        // Every replayed kernel's operator is known from its graph node.
    } else if profile.graph_captures.is_empty() {
        out.missing.push(
            "no stream capture (cudaStreamBeginCapture … cudaStreamEndCapture) and no graph-node \
             tool ids (cudaGraphNodeGetToolsId) in the inputs: replayed kernels cannot be \
             attributed to the operators that captured them; profile the capture as well"
                .into(),
        );
    } else {
        out.missing.extend(capture_notes);
    }
    out
}

/// For each graph launch call, the innermost host-side annotated range around it on its thread.
fn launch_sites(profile: &Profile) -> Vec<Option<NameId>> {
    let mut out = vec![None; profile.graph_launches.len()];
    let mut ranges = by_thread(profile.annotations.iter().filter_map(|a| match a.scope {
        AnnotationScope::Cpu { pid, tid } => Some((pid, tid, a.start, a.duration, a.name)),
        _ => None,
    }));
    let mut queries: HashMap<(i64, i64), Vec<(i64, usize)>> = HashMap::new();
    for (i, g) in profile.graph_launches.iter().enumerate() {
        queries
            .entry((g.pid, g.tid))
            .or_default()
            .push((g.start.ns(), i));
    }
    for (thread, q) in queries {
        if let Some(r) = ranges.get_mut(&thread) {
            sweep(r, q, &mut out);
        }
    }
    out
}

/// One graph of the baseline matched with one of the candidate (`compare --by-graph`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GraphChange {
    /// The baseline's graph (`graph 1`, …, in its order of first replay).
    pub baseline_graph: String,
    /// The candidate's graph.
    pub candidate_graph: String,
    /// The launch site both were replayed from, when they were matched by it.
    pub site: Option<String>,
    /// How the two were matched: `site` (the same launch site) or `order` (the same place
    /// in the order of first replay).
    pub matched_by: String,
    /// Replays on each side (summed over runs).
    pub replays: [u64; 2],
    /// Kernels of one replay on each side.
    pub kernels_per_replay: [u64; 2],
    /// GPU kernel time of one replay on each side, ns: the median over replays (over runs,
    /// the median of the runs' medians).
    pub kernel_ns_per_replay: [i64; 2],
    /// Candidate ÷ baseline of the GPU kernel time per replay.
    #[serde(flatten)]
    pub change: kernelab_stats::Change,
}

/// The graphs of two sides compared (`compare --by-graph`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GraphComparison {
    /// Matched graphs, in the baseline's order.
    pub rows: Vec<GraphChange>,
    /// Baseline graphs with no candidate graph to match.
    pub only_baseline: Vec<String>,
    /// Candidate graphs with no baseline graph to match.
    pub only_candidate: Vec<String>,
    /// How to read the match.
    pub notes: Vec<String>,
}

/// Whether every row of every run has a launch site, and no site repeats within a run: then
/// graphs are matched by site.
fn sites_identify(sides: &[&[Graphs]]) -> bool {
    sides.iter().flat_map(|runs| runs.iter()).all(|g| {
        let mut seen = std::collections::HashSet::new();
        g.rows
            .iter()
            .all(|r| r.site.as_ref().is_some_and(|s| seen.insert(s.clone())))
    })
}

/// Per key (a site, or a graph's place in the order of first replay): (graph name of the
/// first run, replays summed, kernels per replay, the median of the runs' medians).
fn side_rows(runs: &[Graphs], by_site: bool) -> Vec<(String, String, u64, u64, i64)> {
    let mut keyed: Vec<(String, String, u64, u64, Vec<i64>)> = Vec::new();
    for g in runs {
        for (i, r) in g.rows.iter().enumerate() {
            let key = if by_site {
                r.site.clone().unwrap_or_default()
            } else {
                format!("{i}")
            };
            match keyed.iter_mut().find(|k| k.0 == key) {
                Some(k) => {
                    k.2 += r.replays;
                    k.4.push(r.kernel_ns_per_replay.median);
                }
                None => keyed.push((
                    key,
                    r.graph.clone(),
                    r.replays,
                    r.kernels_per_replay,
                    vec![r.kernel_ns_per_replay.median],
                )),
            }
        }
    }
    keyed
        .into_iter()
        .map(|(key, graph, replays, kernels, medians)| {
            let m = NsSpread::of(medians).map_or(0, |s| s.median);
            (key, graph, replays, kernels, m)
        })
        .collect()
}

/// The graphs of the baseline's runs against the candidate's: matched by launch site when
/// sites identify every graph on both sides, else by the order of first replay (said in the
/// notes: a change that adds or removes a graph then shifts the match).
pub fn compare_graphs(base: &[Graphs], cand: &[Graphs]) -> GraphComparison {
    let by_site = sites_identify(&[base, cand]);
    let (b, c) = (side_rows(base, by_site), side_rows(cand, by_site));
    let mut out = GraphComparison::default();
    for (key, graph, replays, kernels, ns) in &b {
        match c.iter().find(|x| &x.0 == key) {
            Some((_, cg, cr, ck, cns)) => out.rows.push(GraphChange {
                baseline_graph: graph.clone(),
                candidate_graph: cg.clone(),
                site: by_site.then(|| key.clone()),
                matched_by: if by_site { "site" } else { "order" }.into(),
                replays: [*replays, *cr],
                kernels_per_replay: [*kernels, *ck],
                kernel_ns_per_replay: [*ns, *cns],
                change: kernelab_stats::Change::between(*ns as f64, *cns as f64),
            }),
            None => out.only_baseline.push(graph.clone()),
        }
    }
    out.only_candidate = c
        .iter()
        .filter(|x| !b.iter().any(|y| y.0 == x.0))
        .map(|x| x.1.clone())
        .collect();
    if base.iter().chain(cand).all(|g| g.rows.is_empty()) {
        out.notes
            .push("no graph replays in either side's inputs (no cudaGraphLaunch / hipGraphLaunch whose kernels are in the trace)".into());
    } else if !by_site {
        out.notes.push(
            "graphs matched by their order of first replay: not every graph has a launch site of its own (an annotated range around its launches) on both sides; a change that adds or removes a graph shifts the match"
                .into(),
        );
    }
    for r in out
        .rows
        .iter()
        .filter(|r| r.kernels_per_replay[0] != r.kernels_per_replay[1])
    {
        out.notes.push(format!(
            "{} → {}: {} kernels per replay in the baseline, {} in the candidate",
            r.baseline_graph, r.candidate_graph, r.kernels_per_replay[0], r.kernels_per_replay[1]
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelab_model::{
        GraphCapture, GraphLaunch, HostOp, KernelDispatch, KernelLaunchCall, Nanos, Timestamp,
    };

    /// A profile of `captures` (each: start, end, launch call times) on one thread, an
    /// operator `op` around 0..1000, and replays (launch call time, kernels' starts).
    fn profile(captures: &[(i64, i64, &[i64])], replays: &[(i64, &[i64])]) -> Profile {
        let mut p = Profile::default();
        let op = p.names.intern_str("aten::mm");
        let k = p.names.intern_str("gemm");
        p.host_ops.push(HostOp {
            pid: 1,
            tid: 1,
            start: Timestamp::from_ns(0),
            duration: Nanos::from_ns(1000),
            name: op,
        });
        for &(s, e, calls) in captures {
            p.graph_captures.push(GraphCapture {
                pid: 1,
                tid: 1,
                start: Timestamp::from_ns(s),
                end: Timestamp::from_ns(e),
            });
            for &t in calls {
                p.kernel_launch_calls.push(KernelLaunchCall {
                    pid: 1,
                    tid: 1,
                    start: Timestamp::from_ns(t),
                });
            }
        }
        for (c, &(t, kernels)) in replays.iter().enumerate() {
            let correlation = c as u64 + 100;
            p.graph_launches.push(GraphLaunch {
                correlation,
                pid: 1,
                tid: 1,
                start: Timestamp::from_ns(t),
                duration: Nanos::from_ns(1),
            });
            for &s in kernels {
                p.dispatches.push(KernelDispatch {
                    name: k,
                    device: 0,
                    stream: 0,
                    start: Timestamp::from_ns(s),
                    duration: Nanos::from_ns(10),
                    launch: 0,
                    correlation: Some(correlation),
                    sub_ns: 0,
                });
            }
        }
        p
    }

    #[test]
    fn one_fitting_capture_attributes_and_two_are_said_to_be_ambiguous() {
        // One capture of two launches, replayed twice: 2 kernels × 2 replays under aten::mm.
        let g = graphs(&profile(
            &[(10, 50, &[20, 30])],
            &[(2000, &[3000, 3100]), (4000, &[5000, 5100])],
        ));
        assert_eq!(g.rows[0].operators.len(), 1);
        assert_eq!(g.rows[0].operators[0].name, "aten::mm");
        assert_eq!(g.rows[0].operators[0].kernels_per_replay, 2);
        assert_eq!(g.rows[0].operators[0].total_ns, 40);
        assert!(g.missing.is_empty(), "{:?}", g.missing);
        // Two captures of two launches each before the first replay: not told apart.
        let g = graphs(&profile(
            &[(10, 50, &[20, 30]), (60, 90, &[70, 80])],
            &[(2000, &[3000, 3100])],
        ));
        assert!(g.rows[0].operators.is_empty());
        assert!(
            g.missing[0].contains("more than one earlier stream capture"),
            "{:?}",
            g.missing
        );
        // A capture of another size: no capture fits, said so.
        let g = graphs(&profile(&[(10, 50, &[20])], &[(2000, &[3000, 3100])]));
        assert!(g.rows[0].operators.is_empty());
        assert!(
            g.missing[0].contains("no earlier stream capture"),
            "{:?}",
            g.missing
        );
        // The capture after the replay does not fit either.
        let g = graphs(&profile(
            &[(3000, 3500, &[3100, 3200])],
            &[(2000, &[2100, 2200])],
        ));
        assert!(g.rows[0].operators.is_empty());
    }

    #[test]
    fn overlapping_captures_past_the_cap_are_left_unattributed_in_bounded_work() {
        // 65 captures each spanning all 2^18 launch calls: past the cap of 2^24.
        let calls: Vec<i64> = (0..1 << 18).map(|i| 100 + i).collect();
        let mut p = profile(&[], &[(1 << 20, &[(1 << 20) + 1])]);
        for _ in 0..65 {
            p.graph_captures.push(GraphCapture {
                pid: 1,
                tid: 1,
                start: Timestamp::from_ns(0),
                end: Timestamp::from_ns(1 << 19),
            });
        }
        for &t in &calls {
            p.kernel_launch_calls.push(KernelLaunchCall {
                pid: 1,
                tid: 1,
                start: Timestamp::from_ns(t),
            });
        }
        let g = graphs(&p);
        assert!(
            g.missing[0].contains("more than 16777216 kernel launch calls"),
            "{:?}",
            g.missing
        );
        assert!(replay_origins(&p).is_empty());
    }
}
