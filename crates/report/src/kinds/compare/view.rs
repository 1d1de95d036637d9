//! The `compare` view: per-family deltas and whole-trace figures side by side.

use crate::format::shorten;
use crate::format::{decimal, duration_ns, percent, share, thousands, UNAVAILABLE};
use crate::kinds::profile::view::InputDoc;
use crate::table::{Align, Block, Table};
use kernelab_trace::{Comparison, FamilyDelta, Status};
use serde::Serialize;

use crate::format::signed_duration_ns as signed_duration;

fn calls(x: f64) -> String {
    if x.fract() == 0.0 {
        thousands(x as u64)
    } else {
        decimal(x, 1)
    }
}

fn verdict(f: &FamilyDelta) -> String {
    let s = match f.status {
        Status::Faster => "faster",
        Status::Slower => "slower",
        Status::WithinNoise => "within noise",
        Status::Changed => "changed (noise unknown)",
        Status::Same => "same",
        Status::OnlyBase => "only in baseline",
        Status::OnlyCandidate => "only in candidate",
        _ => "–",
    };
    if f.control {
        format!("{s} (control)")
    } else {
        s.to_string()
    }
}

fn row(f: &FamilyDelta, name_width: usize) -> Vec<String> {
    let total = |present: usize, ns: f64| {
        if present == 0 {
            "–".to_string()
        } else {
            duration_ns(ns)
        }
    };
    vec![
        shorten(&f.family, name_width),
        format!("{} → {}", calls(f.base.calls), calls(f.cand.calls)),
        total(f.base.present_runs, f.base.total_ns),
        total(f.cand.present_runs, f.cand.total_ns),
        signed_duration(f.delta_ns),
        f.change
            .ratio()
            .map(|r| crate::format::fixed(r, 4))
            .unwrap_or_else(|| "–".into()),
        f.change
            .change()
            .map(|x| percent(x, true))
            .unwrap_or_else(|| "–".into()),
        share(f.base.share),
        share(f.cand.share),
        verdict(f),
    ]
}

/// Builds the sections of the compare view.
pub fn compare_tables(
    c: &Comparison,
    base: &[InputDoc],
    cand: &[InputDoc],
    name_width: usize,
) -> Vec<Block> {
    let inputs = base
        .iter()
        .map(|i| format!("baseline: {} ({})", i.path, i.format))
        .chain(
            cand.iter()
                .map(|i| format!("candidate: {} ({})", i.path, i.format)),
        )
        .collect();
    // Shares are medians over runs when a side has several: they need not add up to 100%.
    let runs = c.base_runs > 1 || c.cand_runs > 1;
    let (share_base, share_cand) = if runs {
        ("median share base", "median share cand")
    } else {
        ("share base", "share cand")
    };
    let mut t = Table::new(
        "Per-family change (baseline → candidate; ratio = candidate / baseline, change = ratio − 1)",
        &[
            ("family", Align::Left),
            ("calls", Align::Right),
            ("baseline", Align::Right),
            ("candidate", Align::Right),
            ("delta", Align::Right),
            ("ratio", Align::Right),
            ("change", Align::Right),
            (share_base, Align::Right),
            (share_cand, Align::Right),
            ("verdict", Align::Left),
        ],
    )
    .giving_way(&[share_base, share_cand, "delta", "ratio", "calls"]);
    for f in c.families.iter().chain(&c.other) {
        t.push(row(f, name_width));
    }
    let mut s = Table::new(
        "Whole trace (change = candidate / baseline − 1)",
        &[
            ("figure", Align::Left),
            ("baseline", Align::Right),
            ("candidate", Align::Right),
            ("delta", Align::Right),
            ("change", Align::Right),
        ],
    );
    for f in &c.summary {
        let fmt = |v: Option<f64>| match v {
            None => UNAVAILABLE.to_string(),
            Some(x) if f.figure == "kernel_count" => calls(x),
            Some(x) => duration_ns(x),
        };
        let delta = match (f.baseline, f.candidate) {
            (Some(b), Some(c)) if f.figure == "kernel_count" => format!("{:+}", c - b),
            (Some(b), Some(c)) => signed_duration(c - b),
            _ => UNAVAILABLE.to_string(),
        };
        s.push(vec![
            f.figure.trim_end_matches("_ns").replace('_', " "),
            fmt(f.baseline),
            fmt(f.candidate),
            delta,
            f.change
                .change()
                .map(|x| percent(x, true))
                .unwrap_or_else(|| UNAVAILABLE.to_string()),
        ]);
    }
    let mut notes: Vec<String> = Vec::new();
    if let Some(n) = c.control_noise {
        notes.push(format!(
            "noise floor from the control families: ±{}",
            share(n)
        ));
    }
    let list = |names: &[String]| {
        names
            .iter()
            .take(10)
            .map(|n| shorten(n, name_width))
            .collect::<Vec<_>>()
            .join("; ")
    };
    if !c.only_base_names.is_empty() {
        notes.push(format!(
            "{} kernel names only in the baseline: {}",
            c.only_base_names.len(),
            list(&c.only_base_names)
        ));
    }
    if !c.only_cand_names.is_empty() {
        notes.push(format!(
            "{} kernel names only in the candidate: {}",
            c.only_cand_names.len(),
            list(&c.only_cand_names)
        ));
    }
    notes.extend(c.notes.iter().cloned());
    let mut out = vec![
        Block::List {
            title: "Inputs".into(),
            lines: inputs,
        },
        Block::Table(s),
        Block::Table(t),
    ];
    if let Some(g) = &c.graphs {
        out.push(Block::Table(graph_table(g)));
        if !g.only_baseline.is_empty() {
            notes.push(format!(
                "graphs only in the baseline: {}",
                g.only_baseline.join(", ")
            ));
        }
        if !g.only_candidate.is_empty() {
            notes.push(format!(
                "graphs only in the candidate: {}",
                g.only_candidate.join(", ")
            ));
        }
        notes.extend(g.notes.iter().cloned());
    }
    out.push(Block::List {
        title: "Notes".into(),
        lines: notes,
    });
    out
}

/// Per graph: replays, kernels and GPU kernel time per replay on each side, and the ratio.
pub(crate) fn graph_table(g: &kernelab_trace::GraphComparison) -> Table {
    let mut t = Table::new(
        "Per-graph change (GPU kernel time of one replay, median; ratio = candidate / baseline)",
        &[
            ("graph", Align::Left),
            ("matched by", Align::Left),
            ("replays", Align::Right),
            ("kernels/replay", Align::Right),
            ("baseline", Align::Right),
            ("candidate", Align::Right),
            ("ratio", Align::Right),
            ("change", Align::Right),
        ],
    );
    for r in &g.rows {
        t.push(vec![
            if r.baseline_graph == r.candidate_graph {
                r.baseline_graph.clone()
            } else {
                format!("{} → {}", r.baseline_graph, r.candidate_graph)
            },
            match &r.site {
                Some(s) => format!("site {s}"),
                None => r.matched_by.clone(),
            },
            format!("{} → {}", r.replays[0], r.replays[1]),
            format!("{} → {}", r.kernels_per_replay[0], r.kernels_per_replay[1]),
            duration_ns(r.kernel_ns_per_replay[0] as f64),
            duration_ns(r.kernel_ns_per_replay[1] as f64),
            r.change
                .ratio()
                .map(|x| crate::format::fixed(x, 4))
                .unwrap_or_else(|| UNAVAILABLE.into()),
            r.change
                .change()
                .map(|x| percent(x, true))
                .unwrap_or_else(|| UNAVAILABLE.into()),
        ]);
    }
    t
}

/// A flat CSV row per family.
#[derive(Serialize, schemars::JsonSchema)]
struct CompareCsvRow<'a> {
    family: &'a str,
    status: Status,
    control: bool,
    baseline_calls: f64,
    candidate_calls: f64,
    baseline_total_ns: f64,
    candidate_total_ns: f64,
    delta_ns: f64,
    ratio: Option<f64>,
    change: Option<f64>,
    baseline_share: f64,
    candidate_share: f64,
    baseline_total_min_ns: f64,
    baseline_total_max_ns: f64,
    candidate_total_min_ns: f64,
    candidate_total_max_ns: f64,
}

/// The CSV of a comparison.
pub fn compare_csv(c: &Comparison) -> crate::Result<String> {
    let rows: Vec<CompareCsvRow<'_>> = c
        .families
        .iter()
        .chain(&c.other)
        .map(|f| CompareCsvRow {
            family: &f.family,
            status: f.status,
            control: f.control,
            baseline_calls: f.base.calls,
            candidate_calls: f.cand.calls,
            baseline_total_ns: f.base.total_ns,
            candidate_total_ns: f.cand.total_ns,
            delta_ns: f.delta_ns,
            ratio: f.change.ratio(),
            change: f.change.change(),
            baseline_share: f.base.share,
            candidate_share: f.cand.share,
            baseline_total_min_ns: f.base.total_min_ns,
            baseline_total_max_ns: f.base.total_max_ns,
            candidate_total_min_ns: f.cand.total_min_ns,
            candidate_total_max_ns: f.cand.total_max_ns,
        })
        .collect();
    crate::render::csv_rows(&rows)
}
