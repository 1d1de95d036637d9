//! CUDA graphs in an Nsight Systems export, read for `profile --by-graph`: graph launch calls,
//! stream captures and kernel launch calls (`CUPTI_ACTIVITY_KIND_RUNTIME`, by name), the graph
//! node of each replayed kernel (`graphNodeId`, written with `--cuda-graph-trace=node`), the
//! node creations of `CUDA_GRAPH_NODE_EVENTS` (captured nodes, and the executable graph's nodes
//! cloned from them at instantiation) and, for the operator of each node, the NVTX ranges as
//! host operators. See docs/formats.md (Nsight Systems SQLite, graphs).

use crate::error::Result;
use crate::graph_calls::{capture_edge, is_graph_launch, is_kernel_launch};
use crate::sqlite::{columns, span, sql_err};
use kernelab_model::{
    AnnotationScope, DispatchGraphNode, GraphCapture, GraphLaunch, GraphNodeCreation, HostOp,
    KernelLaunchCall, NameId, Profile, SourceInfo, Timestamp,
};
use rusqlite::Connection;
use std::collections::HashMap;

/// Thread ids: globalTid = (pid << 24) | tid within the low 48 bits (docs/formats/nvidia.md §2.1).
pub(super) fn split_tid(gtid: i64) -> (i64, i64) {
    ((gtid >> 24) & 0xFF_FFFF, gtid & 0xFF_FFFF)
}

/// Whether the table has every one of `names` among its `cols`.
fn has_columns(cols: &[String], names: &[&str]) -> bool {
    names.iter().all(|n| cols.iter().any(|c| c == n))
}

/// The operator an NVTX range names: `torch.autograd.profiler.emit_nvtx` writes
/// `aten::mm, seq = 0, op_id = 6` (and `, sizes = […]` with shapes); the name is what comes
/// before those fields, so that one operator's ranges sum together.
fn operator_name(text: &str) -> &str {
    [", seq = ", ", op_id = ", ", sizes = "]
        .iter()
        .filter_map(|f| text.find(f))
        .min()
        .map_or(text, |i| &text[..i])
}

/// Reads what `--by-graph` needs from the export into `p`; the dispatches this file added
/// start at `first`, its NVTX ranges (annotations) at `ranges_from`. `operators`: also take
/// those ranges as host operators.
pub(super) fn read(
    conn: &Connection,
    objs: &[String],
    names: &HashMap<i64, String>,
    (first, ranges_from): (usize, usize),
    operators: bool,
    p: &mut Profile,
) -> Result<()> {
    let has = |t: &str| objs.iter().any(|o| o == t);
    if has("CUPTI_ACTIVITY_KIND_RUNTIME") {
        runtime_calls(conn, names, p)?;
    }
    if has("CUPTI_ACTIVITY_KIND_KERNEL") {
        kernel_nodes(conn, first, p)?;
    }
    if has("CUDA_GRAPH_NODE_EVENTS") {
        let t = "CUDA_GRAPH_NODE_EVENTS";
        let cols = columns(conn, t)?;
        if has_columns(
            &cols,
            &["start", "globalTid", "graphNodeId", "originalGraphNodeId"],
        ) {
            let mut st = conn
                .prepare("SELECT graphNodeId, originalGraphNodeId, globalTid, start FROM CUDA_GRAPH_NODE_EVENTS WHERE graphNodeId IS NOT NULL AND start IS NOT NULL")
                .map_err(sql_err(t))?;
            let mut rows = st.query([]).map_err(sql_err(t))?;
            while let Some(r) = rows.next().map_err(sql_err(t))? {
                let node: i64 = r.get(0).map_err(sql_err(t))?;
                let original: Option<i64> = r.get(1).map_err(sql_err(t))?;
                let Ok(node) = u64::try_from(node) else {
                    continue;
                };
                let (pid, tid) =
                    split_tid(r.get::<_, Option<i64>>(2).map_err(sql_err(t))?.unwrap_or(0));
                let at: i64 = r.get(3).map_err(sql_err(t))?;
                p.graph_node_creations.push(GraphNodeCreation {
                    node,
                    original: original.and_then(|o| u64::try_from(o).ok()),
                    pid,
                    tid,
                    at: Timestamp::from_ns(at),
                });
            }
        }
    }
    if operators {
        // The NVTX ranges this file added as annotations (from `ranges_from`), as operators by
        // the name they give: each distinct range name cut once.
        let mut ops: HashMap<NameId, NameId> = HashMap::new();
        for i in ranges_from..p.annotations.len() {
            let a = p.annotations[i];
            let AnnotationScope::Cpu { pid, tid } = a.scope else {
                continue;
            };
            let name = match ops.get(&a.name) {
                Some(&n) => n,
                None => {
                    let cut = operator_name(p.names.name(a.name)).to_string();
                    let n = p.names.intern_str(&cut);
                    ops.insert(a.name, n);
                    n
                }
            };
            p.host_ops.push(HostOp {
                pid,
                tid,
                start: a.start,
                duration: a.duration,
                name,
            });
        }
    }
    Ok(())
}

/// Graph launches, kernel launch calls and stream captures, by the name of each runtime or
/// driver call.
fn runtime_calls(conn: &Connection, names: &HashMap<i64, String>, p: &mut Profile) -> Result<()> {
    let t = "CUPTI_ACTIVITY_KIND_RUNTIME";
    let cols = columns(conn, t)?;
    if !has_columns(
        &cols,
        &["start", "end", "globalTid", "correlationId", "nameId"],
    ) {
        return Ok(());
    }
    let mut st = conn
        .prepare("SELECT nameId, start, \"end\", globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start")
        .map_err(sql_err(t))?;
    let mut rows = st.query([]).map_err(sql_err(t))?;
    let mut open: HashMap<(i64, i64), Timestamp> = HashMap::new();
    while let Some(r) = rows.next().map_err(sql_err(t))? {
        let id: Option<i64> = r.get(0).map_err(sql_err(t))?;
        let Some(name) = id.and_then(|i| names.get(&i)) else {
            continue;
        };
        let (launch, kernel, edge) = (
            is_graph_launch(name),
            is_kernel_launch(name),
            capture_edge(name),
        );
        if !launch && !kernel && edge.is_none() {
            continue;
        }
        let start: i64 = r.get(1).map_err(sql_err(t))?;
        let end: i64 = r.get(2).map_err(sql_err(t))?;
        let (pid, tid) = split_tid(r.get::<_, Option<i64>>(3).map_err(sql_err(t))?.unwrap_or(0));
        let correlation: Option<i64> = r.get(4).map_err(sql_err(t))?;
        let at = Timestamp::from_ns(start);
        if launch {
            if let Some(c) = correlation.and_then(|c| u64::try_from(c).ok()) {
                p.graph_launches.push(GraphLaunch {
                    correlation: c,
                    pid,
                    tid,
                    start: at,
                    duration: span(start, end, t)?,
                });
            }
        } else if kernel {
            p.kernel_launch_calls.push(KernelLaunchCall {
                pid,
                tid,
                start: at,
            });
        } else if edge == Some(true) {
            open.insert((pid, tid), at);
        } else if let Some(begin) = open.remove(&(pid, tid)) {
            p.graph_captures.push(GraphCapture {
                pid,
                tid,
                start: begin,
                end: Timestamp::from_ns(end),
            });
        }
    }
    Ok(())
}

/// The graph node of each kernel of this file that carries one, found by its correlation id
/// and start (the kernel table is read in another pass, possibly from its pages).
fn kernel_nodes(conn: &Connection, first: usize, p: &mut Profile) -> Result<()> {
    let t = "CUPTI_ACTIVITY_KIND_KERNEL";
    let cols = columns(conn, t)?;
    if !has_columns(&cols, &["graphNodeId", "correlationId", "start"]) {
        return Ok(());
    }
    let mut st = conn
        .prepare("SELECT correlationId, start, graphNodeId FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphNodeId IS NOT NULL AND correlationId IS NOT NULL")
        .map_err(sql_err(t))?;
    let mut rows = st.query([]).map_err(sql_err(t))?;
    let mut by_key: HashMap<(u64, i64), u64> = HashMap::new();
    while let Some(r) = rows.next().map_err(sql_err(t))? {
        let c: i64 = r.get(0).map_err(sql_err(t))?;
        let start: i64 = r.get(1).map_err(sql_err(t))?;
        let node: i64 = r.get(2).map_err(sql_err(t))?;
        if let (Ok(c), Ok(node)) = (u64::try_from(c), u64::try_from(node)) {
            by_key.insert((c, start), node);
        }
    }
    if by_key.is_empty() {
        return Ok(());
    }
    for i in first..p.dispatches.len() {
        let Some(d) = p.dispatches.get(i) else {
            continue;
        };
        if let Some(&node) = d.correlation.and_then(|c| by_key.get(&(c, d.start.ns()))) {
            p.graph_nodes.push(DispatchGraphNode { dispatch: i, node });
        }
    }
    Ok(())
}

/// Whole-graph executions (`--cuda-graph-trace=graph`, `CUPTI_ACTIVITY_KIND_GRAPH_TRACE`): their
/// kernels are not in the export, so their GPU time is not in the kernel table; a note says
/// how much.
pub(super) fn whole_graph_note(conn: &Connection, source: &mut SourceInfo) -> Result<()> {
    let t = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE";
    let cols = columns(conn, t)?;
    if !has_columns(&cols, &["start", "end"]) {
        return Ok(());
    }
    // `total` sums as a float: no overflow error on any input.
    let (n, ns): (i64, f64) = conn
        .query_row(
            "SELECT count(*), total(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(sql_err(t))?;
    if n > 0 {
        source.notes.push(format!(
            "{n} CUDA graph executions were traced as whole graphs (--cuda-graph-trace=graph), \
             {:.3} ms of GPU time: their kernels are not in the export, so that time is not in \
             the kernel figures; capture with --cuda-graph-trace=node to see them",
            ns / 1e6
        ));
        source
            .facts
            .push(("whole-graph executions".into(), n.to_string()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_emit_nvtx_range_names_its_operator() {
        assert_eq!(operator_name("aten::mm, seq = 0, op_id = 6"), "aten::mm");
        assert_eq!(
            operator_name("aten::add, op_id = 3, sizes = [[2, 2]]"),
            "aten::add"
        );
        assert_eq!(operator_name("decode loop"), "decode loop");
    }
}
