//! The bundle part of a `serve` record: the headline metrics and the identity gate.

use super::Block;
use crate::documents::ServeBody;
use crate::serve::{identity_line, serve_sections};

/// The forest rows of a serve record: TTFT, TPOT, E2E and throughput per case and concurrency
/// that have a paired analysis (ratios oriented so that below 1 is better for every metric).
fn serving_rows(r: &ServeBody) -> Vec<super::Verdicts> {
    const SHOWN: [&str; 4] = [
        "ttft_mean_s",
        "tpot_mean_s",
        "e2e_mean_s",
        "throughput_tok_s",
    ];
    let cases = r
        .result
        .metrics
        .iter()
        .map(|m| m.case)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    r.result
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
            Some(super::Verdicts {
                name: format!("{case}{} @ {}", m.metric, m.concurrency),
                ratio: a.ratio()?,
                ci: super::parts::ends(a.interval()),
                threshold: Some(a.threshold),
                verdict: a.verdict.name().to_string(),
            })
        })
        .collect()
}

/// The blocks, headline and gate result of a `serve` record.
pub(crate) fn serve_part(r: &ServeBody) -> (Vec<Block>, String, Option<bool>) {
    let mut blocks = Vec::new();
    for s in serve_sections(&r.result) {
        match s {
            // The record's own heading says what the notes are about.
            Block::List { lines, .. } => blocks.push(Block::Lines(lines)),
            other => blocks.push(other),
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
        identity_line(&r.result)
    } else {
        format!("{}; {}", called.join(", "), identity_line(&r.result))
    };
    let rows = serving_rows(r);
    if !rows.is_empty() {
        blocks.push(Block::Chart(crate::svg::forest(
            "Serving: candidate / baseline per metric and concurrency (paired by round)",
            &rows,
        )));
    }
    blocks.push(Block::Lines(vec![format!("samples: {}", r.samples)]));
    (blocks, headline, Some(r.pass))
}
