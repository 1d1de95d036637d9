//! The `profile --by-graph` view (one row per replayed graph) and the `--by-rank` view (one row
//! per input).

use crate::format::{duration_ns, share};
use crate::table::{Align, Block, Table};
use kernelab_trace::{Graphs, NsSpread, OperatorsFrom, RankRow};

fn spread(s: &NsSpread, show: fn(f64) -> String) -> String {
    if s.min == s.max {
        show(s.median as f64)
    } else {
        format!(
            "{} ({}–{})",
            show(s.median as f64),
            show(s.min as f64),
            show(s.max as f64)
        )
    }
}

/// The sections of a graph attribution: the table, then what the inputs lack.
pub fn graph_sections(g: &Graphs) -> Vec<Block> {
    let mut t = Table::new(
        "Graph replays (GPU kernel time per graph)",
        &[
            ("graph", Align::Left),
            ("site", Align::Left),
            ("replays", Align::Right),
            ("kernels/replay", Align::Right),
            ("kernel time/replay (median, range)", Align::Right),
            ("total", Align::Right),
            ("span/replay", Align::Right),
            ("launch latency", Align::Right),
        ],
    );
    for r in &g.rows {
        t.push(vec![
            r.graph.clone(),
            r.site.clone().unwrap_or_else(|| "–".into()),
            r.replays.to_string(),
            r.kernels_per_replay.to_string(),
            spread(&r.kernel_ns_per_replay, duration_ns),
            duration_ns(r.kernel_ns_total as f64),
            spread(&r.span_ns_per_replay, duration_ns),
            spread(&r.launch_latency_ns, duration_ns),
        ]);
    }
    let replays: u64 = g.rows.iter().map(|r| r.replays).sum();
    let mut lines = vec![format!(
        "{} graph{}, {replays} replays of {} graph launch calls: {} of {} kernel time ({})",
        g.rows.len(),
        if g.rows.len() == 1 { "" } else { "s" },
        g.launch_calls,
        duration_ns(g.replayed_kernel_ns as f64),
        duration_ns(g.all_kernel_ns as f64),
        if g.all_kernel_ns > 0 {
            share(g.replayed_kernel_ns as f64 / g.all_kernel_ns as f64)
        } else {
            "–".into()
        }
    )];
    for r in &g.rows {
        let top: Vec<String> = r
            .top_kernels
            .iter()
            .map(|k| {
                format!(
                    "{} ×{} ({})",
                    kernelab_model::family_key(&k.name),
                    k.per_replay,
                    duration_ns(k.total_ns as f64)
                )
            })
            .collect();
        lines.push(format!("{}: {}", r.graph, top.join("; ")));
        if !r.operators.is_empty() {
            let ops: Vec<String> = r
                .operators
                .iter()
                .map(|o| {
                    format!(
                        "{} ×{} ({})",
                        o.name,
                        o.kernels_per_replay,
                        duration_ns(o.total_ns as f64)
                    )
                })
                .collect();
            let how = match r.operators_from {
                Some(OperatorsFrom::GraphNodeIds) => " (from graph node ids)",
                Some(OperatorsFrom::CaptureOrder) => " (by capture order)",
                Some(OperatorsFrom::Both) => " (from graph node ids and by capture order)",
                None => "",
            };
            lines.push(format!(
                "{} by the operator that captured each kernel{how}: {}",
                r.graph,
                ops.join("; ")
            ));
        }
    }
    lines.extend(g.missing.iter().map(|m| format!("missing: {m}")));
    vec![
        Block::Table(t),
        Block::List {
            title: "Graphs".into(),
            lines,
        },
    ]
}

/// The per-input table of `--by-rank`.
pub fn rank_sections(rows: &[RankRow]) -> Vec<Block> {
    let mut t = Table::new(
        "Per input (rank)",
        &[
            ("input", Align::Left),
            ("rank", Align::Left),
            ("kernels", Align::Right),
            ("kernel time", Align::Right),
            ("share", Align::Right),
            ("longest families", Align::Left),
        ],
    );
    for r in rows {
        let top: Vec<String> = r
            .top
            .iter()
            .map(|(f, ns)| format!("{f} ({})", duration_ns(*ns as f64)))
            .collect();
        t.push(vec![
            r.input.clone(),
            r.rank.clone().unwrap_or_else(|| "–".into()),
            r.kernels.to_string(),
            duration_ns(r.kernel_ns as f64),
            share(r.share),
            top.join("; "),
        ]);
    }
    vec![Block::Table(t)]
}
