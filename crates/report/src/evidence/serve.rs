//! The bundle part of a `serve` record: the headline metrics and the identity gate.

use super::Block;
use crate::documents::ServeBody;
use crate::serve::{identity_line, serve_sections};
use crate::table::Section;

/// The blocks, headline and gate result of a `serve` record.
pub(super) fn serve_part(r: &ServeBody) -> (Vec<Block>, String, Option<bool>) {
    let mut blocks = Vec::new();
    for s in serve_sections(&r.result) {
        match s {
            Section::Table(t) => blocks.push(Block::Table(t)),
            Section::Lines { lines, .. } => blocks.push(Block::Lines(lines)),
        }
    }
    let called: Vec<String> = r
        .result
        .metrics
        .iter()
        .filter(|m| m.metric == "tpot_mean_s" || m.metric == "e2e_mean_s")
        .filter_map(|m| {
            let a = m.analysis.as_ref()?;
            Some(format!(
                "{} at concurrency {}: {:+.1}% ({:?})",
                m.metric,
                m.concurrency,
                (a.ratio - 1.0) * 100.0,
                a.verdict
            ))
        })
        .take(3)
        .collect();
    let headline = if called.is_empty() {
        identity_line(&r.result)
    } else {
        format!("{}; {}", called.join(", "), identity_line(&r.result))
    };
    blocks.push(Block::Lines(vec![format!("samples: {}", r.samples)]));
    (blocks, headline, Some(r.pass))
}
