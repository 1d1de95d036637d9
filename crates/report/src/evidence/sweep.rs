//! The report part of a `sweep` record: its sentences and the points that did not pass.

use super::Block;
use crate::documents::SweepBody;
use crate::sweep::verdict_text;
use crate::table::{Align, Table};
use kernelab_model::sweep::PointVerdict;

/// The part: the matrix's sentences, then a table of the points that failed or could not run.
pub(crate) fn sweep_part(r: &SweepBody) -> (Vec<Block>, String, Option<bool>) {
    let head = r
        .lines
        .first()
        .cloned()
        .unwrap_or_else(|| format!("{} of {} configs passed", r.passed, r.total));
    let mut lines = r.lines.clone();
    lines.extend(r.gates.iter().map(|g| g.line.clone()));
    if let Some(p) = r.points.iter().find(|p| p.verdict != PointVerdict::Pass) {
        let first = p.gates.iter().find(|g| !g.passed).map_or_else(
            || p.error.clone().unwrap_or_default(),
            |g| format!("{}: {}", g.name, g.detail),
        );
        lines.push(format!(
            "first config that did not pass: {} ({first})",
            crate::format::md_code(&p.id)
        ));
    }
    let mut blocks = vec![Block::Lines(lines)];
    let mut t = Table::new(
        "Points that did not pass",
        &[
            ("point", Align::Left),
            ("verdict", Align::Left),
            ("why", Align::Left),
        ],
    );
    for p in r.points.iter().filter(|p| p.verdict != PointVerdict::Pass) {
        let why = p.error.clone().unwrap_or_else(|| {
            p.gates
                .iter()
                .filter(|g| !g.passed)
                .map(|g| format!("{}: {}", g.name, g.detail))
                .collect::<Vec<_>>()
                .join("; ")
        });
        t.push(vec![
            p.id.clone(),
            verdict_text(p.verdict).into(),
            super::parts::short(&why, 160),
        ]);
    }
    if !t.rows.is_empty() {
        blocks.push(Block::Table(t));
    }
    (blocks, format!("sweep: {head}"), Some(r.pass))
}
