//! Graph replay attribution: every kernel a `cudaGraphLaunch` / `hipGraphLaunch` replayed
//! carries that call's correlation id, so each replay's kernels, GPU time, span and launch
//! latency are known, and replays of one graph (the same kernels in the same order) are
//! summed together.

use super::phase::{sweep, ByThread};
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

/// Kernels of each replayed graph, from `profile.graph_launches` (read with
/// `ReadOptions::graphs`) and the dispatches' correlation ids.
pub fn graphs(profile: &Profile) -> Graphs {
    let mut out = Graphs {
        launch_calls: profile.graph_launches.len() as u64,
        captures: profile.graph_captures.len() as u64,
        ..Graphs::default()
    };
    let calls: HashMap<u64, usize> = profile
        .graph_launches
        .iter()
        .enumerate()
        .map(|(i, g)| (g.correlation, i))
        .collect();
    // Per launch call: its kernels as (start, end, name).
    let mut replays: Vec<Vec<(i64, i64, NameId)>> = vec![Vec::new(); profile.graph_launches.len()];
    for d in profile.dispatches.iter() {
        let ns = d.duration.ns();
        out.all_kernel_ns += ns;
        if let Some(&i) = d.correlation.and_then(|c| calls.get(&c)) {
            out.replayed_kernel_ns += ns;
            replays[i].push((d.start.ns(), d.end().ns(), d.name));
        }
    }
    let sites = launch_sites(profile);
    struct Acc {
        first: usize,
        kernel_ns: Vec<i64>,
        span: Vec<i64>,
        latency: Vec<i64>,
        sites: HashMap<Option<NameId>, u64>,
        per_kernel: HashMap<NameId, (u64, u64)>,
    }
    let mut by_graph: HashMap<Vec<NameId>, Acc> = HashMap::new();
    for (i, mut kernels) in replays.into_iter().enumerate() {
        if kernels.is_empty() {
            continue;
        }
        kernels.sort_unstable();
        let signature: Vec<NameId> = kernels.iter().map(|k| k.2).collect();
        let n = by_graph.len();
        let acc = by_graph.entry(signature).or_insert_with(|| Acc {
            first: n,
            kernel_ns: Vec::new(),
            span: Vec::new(),
            latency: Vec::new(),
            sites: HashMap::new(),
            per_kernel: HashMap::new(),
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
    }
    let mut rows: Vec<(usize, GraphRow)> = by_graph
        .into_iter()
        .map(|(signature, a)| {
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
                    kernels_per_replay: signature.len() as u64,
                    kernel_ns_per_replay: NsSpread::of(a.kernel_ns).unwrap_or(zero),
                    kernel_ns_total: u64::try_from(total).unwrap_or(0),
                    span_ns_per_replay: NsSpread::of(a.span).unwrap_or(zero),
                    launch_latency_ns: NsSpread::of(a.latency).unwrap_or(zero),
                    top_kernels: top,
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
        out.missing.push(format!(
            "{} graph launch calls, but no kernel carries their correlation ids: the trace lacks \
             the replayed kernels (GPU activity off, or outside the profiled window)",
            profile.graph_launches.len()
        ));
    }
    if profile.graph_captures.is_empty() {
        out.missing.push(
            "no stream capture (cudaStreamBeginCapture … cudaStreamEndCapture) and no graph-node \
             tool ids (cudaGraphNodeGetToolsId) in the inputs: replayed kernels cannot be \
             attributed to the operators that captured them; profile the capture as well"
                .into(),
        );
    } else {
        out.missing.push(format!(
            "{} stream capture(s) in the inputs; replayed kernels are shown by name, not yet \
             attributed to the operators that captured them",
            profile.graph_captures.len()
        ));
    }
    out
}

/// For each graph launch call, the innermost host-side annotated range around it on its thread.
fn launch_sites(profile: &Profile) -> Vec<Option<NameId>> {
    let mut out = vec![None; profile.graph_launches.len()];
    let mut ranges: ByThread<NameId> = HashMap::new();
    for a in &profile.annotations {
        if let AnnotationScope::Cpu { pid, tid } = a.scope {
            ranges.entry((pid, tid)).or_default().push((
                a.start.ns(),
                a.start.plus(a.duration).ns(),
                a.name,
            ));
        }
    }
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
