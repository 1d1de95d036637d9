//! The bundle part of a `serve` record: the headline metrics and the identity gate.

use super::view::{identity_line, serve_sections};
use crate::svg::Verdicts;
use crate::table::Block;
use kernelab_model::serve::ServeResult;

/// The forest rows of a serve record: TTFT, TPOT, E2E and throughput per case and concurrency
/// that have a paired analysis (ratios oriented so that below 1 is better for every metric).
fn serving_rows(result: &ServeResult) -> Vec<Verdicts> {
    const SHOWN: [&str; 4] = [
        "ttft_mean_s",
        "tpot_mean_s",
        "e2e_mean_s",
        "throughput_tok_s",
    ];
    let cases = result
        .metrics
        .iter()
        .map(|m| m.case)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    result
        .metrics
        .iter()
        .filter(|m| SHOWN.contains(&m.metric.as_str()))
        .filter_map(|m| {
            let a = m.analysis.as_ref()?;
            let case = if cases > 1 {
                format!("case {} ", m.case)
            } else {
                String::new()
            };
            Some(Verdicts {
                name: format!("{case}{} @ {}", m.metric, m.concurrency),
                ratio: a.ratio()?,
                ci: crate::kinds::ends(a.interval()),
                threshold: Some(a.threshold),
                verdict: a.verdict.name().to_string(),
            })
        })
        .collect()
}

/// The blocks, headline and gate result of a `serve` record.
pub(crate) fn serve_part(
    result: &ServeResult,
    samples: &str,
    pass: bool,
) -> (Vec<Block>, String, Option<bool>) {
    let mut blocks = Vec::new();
    for s in serve_sections(result) {
        match s {
            // The record's own heading says what the notes are about.
            Block::List { lines, .. } => blocks.push(Block::Lines(lines)),
            other => blocks.push(other),
        }
    }
    let called: Vec<String> = result
        .metrics
        .iter()
        .filter(|m| m.metric == "tpot_mean_s" || m.metric == "e2e_mean_s")
        .filter_map(|m| {
            let a = m.analysis.as_ref()?;
            Some(format!(
                "{} at concurrency {}: {:+.1}% ({})",
                m.metric,
                m.concurrency,
                a.change.change()? * 100.0,
                a.verdict.name()
            ))
        })
        .take(3)
        .collect();
    let headline = if called.is_empty() {
        identity_line(result)
    } else {
        format!("{}; {}", called.join(", "), identity_line(result))
    };
    let rows = serving_rows(result);
    if !rows.is_empty() {
        blocks.push(Block::Chart(crate::svg::forest(
            "Serving: candidate / baseline per metric and concurrency (paired by round)",
            &rows,
        )));
    }
    blocks.push(Block::Lines(vec![format!("samples: {}", samples)]));
    (blocks, headline, Some(pass))
}
