//! Tables of a sweep matrix (`kernelab sweep`, `sweep collect`, `check sweep`).

use crate::table::{Align, Block, Table};
use kernelab_model::sweep::{PointVerdict, SweepMatrix};

/// `pass`, `FAIL` or `ERROR`.
pub fn verdict_text(v: PointVerdict) -> &'static str {
    match v {
        PointVerdict::Pass => "pass",
        PointVerdict::Fail => "FAIL",
        PointVerdict::Error => "ERROR",
    }
}

fn opt(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "—".into(), |v| format!("{v:.digits$}"))
}

/// The summary lines (the matrix's, then one per gate), the per-point matrix, the failures
/// and the builds whose code changed.
pub fn sweep_matrix_sections(m: &SweepMatrix) -> Vec<Block> {
    let mut lines = m.lines.clone();
    lines.extend(m.gates.iter().map(|g| g.line.clone()));
    let mut out = vec![Block::List {
        title: format!("Sweep {} ({} points, {} done)", m.sweep, m.total, m.done),
        lines,
    }];
    let names: Vec<String> = m
        .points
        .iter()
        .flat_map(|p| p.params.keys().cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let built = m.points.iter().any(|p| p.build.is_some());
    // Points with neither a build nor coordinates (`[[config]]` points) are named by their id.
    let named = !built && names.is_empty();
    let timed = m.points.iter().any(|p| p.change.ratio().is_some());
    let mut cols: Vec<(&str, Align)> = Vec::new();
    if named {
        cols.push(("point", Align::Left));
    }
    if built {
        cols.push(("build", Align::Left));
    }
    cols.extend(names.iter().map(|n| (n.as_str(), Align::Right)));
    cols.extend([
        ("verdict", Align::Left),
        ("gates", Align::Right),
        ("bitwise", Align::Left),
    ]);
    if built {
        cols.push(("code", Align::Left));
    }
    if timed {
        cols.extend([
            ("base µs", Align::Right),
            ("cand µs", Align::Right),
            ("ratio cand / base", Align::Right),
            ("change", Align::Right),
        ]);
    }
    cols.push(("where", Align::Left));
    let mut t = Table::new("Per point", &cols);
    for p in &m.points {
        let mut row = Vec::new();
        if named {
            row.push(p.id.clone());
        }
        if built {
            row.push(p.build.clone().unwrap_or_else(|| "—".into()));
        }
        row.extend(
            names
                .iter()
                .map(|n| p.params.get(n).cloned().unwrap_or_else(|| "—".into())),
        );
        row.extend([
            verdict_text(p.verdict).to_string(),
            if p.gates.is_empty() {
                "—".into()
            } else {
                format!(
                    "{} of {}",
                    p.gates.iter().filter(|g| g.passed).count(),
                    p.gates.len()
                )
            },
            match p.bitwise {
                Some(true) => "equal".into(),
                Some(false) => "DIFFER".into(),
                None => "—".into(),
            },
        ]);
        if built {
            let code = p
                .build
                .as_ref()
                .and_then(|b| m.builds.iter().find(|c| &c.key == b))
                .map_or("—", |c| if c.changed { "changed" } else { "same" });
            row.push(code.to_string());
        }
        if timed {
            row.extend([
                opt(p.baseline_ns.map(|ns| ns / 1e3), 2),
                opt(p.candidate_ns.map(|ns| ns / 1e3), 2),
                p.change
                    .ratio()
                    .map_or_else(|| "—".into(), |r| crate::format::fixed(r, 4)),
                p.change
                    .change()
                    .map_or_else(|| "—".into(), |x| crate::format::percent(x, true)),
            ]);
        }
        row.push(p.worker.clone());
        t.push(row);
    }
    out.push(Block::Table(t));
    let problems: Vec<String> = m
        .points
        .iter()
        .filter_map(|p| p.error.as_ref().map(|e| format!("{}: {e}", p.id)))
        .chain(m.points.iter().flat_map(|p| {
            p.gates
                .iter()
                .filter(|g| !g.passed)
                .map(move |g| format!("{}: {} — {}", p.id, g.name, g.detail))
        }))
        .collect();
    if !problems.is_empty() {
        out.push(Block::List {
            title: "Failures".into(),
            lines: problems,
        });
    }
    let changed: Vec<String> = m
        .builds
        .iter()
        .filter(|b| b.changed)
        .map(|b| format!("{}: {}", b.key, b.changed_kernels.join(", ")))
        .collect();
    if !changed.is_empty() {
        out.push(Block::List {
            title: "Builds whose code changed".into(),
            lines: changed,
        });
    }
    if !m.pending.is_empty() {
        out.push(Block::List {
            title: "Not run yet".into(),
            lines: m.pending.clone(),
        });
    }
    out
}
