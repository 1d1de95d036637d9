//! `kernelab report`: one evidence document from a bundle of records, in the order a
//! performance pull request argues: why (profile), correct (gates), why faster (machine code),
//! counters, how much (timing), what it does to the request (compare), how to reproduce.

use crate::bundle::Record;
use crate::format::UNAVAILABLE;
use crate::table::Table;
use serde::Serialize;
use std::path::PathBuf;

mod parts;

use parts::{
    ab_part, check_part, code_part, compare_part, kernel_part, metrics_part, profile_part, short,
};

/// A piece of a part.
#[derive(Clone, Debug)]
pub enum Block {
    /// Bullet lines.
    Lines(Vec<String>),
    /// A table.
    Table(Table),
    /// An inline SVG chart (HTML only).
    Chart(String),
    /// A code block.
    Code(String),
}

/// A titled part of the report.
#[derive(Clone, Debug)]
pub struct Part {
    /// Heading.
    pub title: String,
    /// Content.
    pub blocks: Vec<Block>,
}

/// One line of the JSON summary per record.
#[derive(Clone, Debug, Serialize)]
pub struct Headline {
    /// Record file.
    pub file: String,
    /// Record kind.
    pub kind: String,
    /// The one-line finding.
    pub headline: String,
    /// Whether a gate passed (check records).
    pub pass: Option<bool>,
}

/// The reproduction command of a record (`kernelab …` with the program path normalized).
fn command(r: &Record) -> String {
    let mut argv = r.provenance.argv.clone();
    if let Some(first) = argv.first_mut() {
        *first = "kernelab".into();
    }
    argv.iter()
        .map(|a| {
            if a.contains([' ', '\'', '"', '$']) {
                format!("'{}'", a.replace('\'', "'\\''"))
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Builds the report's parts and the per-record headlines.
pub fn evidence(records: &[(PathBuf, Record)]) -> (Vec<Part>, Vec<Headline>) {
    let order = [
        ("Where the GPU time goes", &["profile"][..]),
        (
            "Correctness",
            &[
                "check_bitwise",
                "check_close",
                "check_oracle",
                "check_finite",
                "check_repeat",
                "check_sweep",
            ][..],
        ),
        (
            "Static code evidence",
            &["code_diff", "code_matrix", "code_show"][..],
        ),
        ("Counters", &["metrics"][..]),
        ("Timing", &["kernel_run", "ab"][..]),
        ("Request-level impact", &["compare"][..]),
    ];
    let mut parts = Vec::new();
    let mut heads = Vec::new();
    for (title, kinds) in order {
        let mut blocks = Vec::new();
        for (path, rec) in records
            .iter()
            .filter(|(_, r)| kinds.contains(&r.kind.as_str()))
        {
            let (b, head, pass) = match rec.kind.as_str() {
                "profile" => {
                    let (b, h) = profile_part(&rec.result);
                    (b, h, None)
                }
                "compare" => {
                    let (b, h) = compare_part(&rec.result);
                    (b, h, None)
                }
                "metrics" => {
                    let (b, h) = metrics_part(&rec.result);
                    (b, h, None)
                }
                "ab" => {
                    let (b, h) = ab_part(&rec.result);
                    (b, h, None)
                }
                "kernel_run" => kernel_part(&rec.result),
                k if k.starts_with("check_") => check_part(k, &rec.result),
                k => {
                    let (b, h) = code_part(k, &rec.result);
                    (b, h, None)
                }
            };
            let inputs: Vec<String> = rec
                .provenance
                .inputs
                .iter()
                .map(|i| short(i.path.rsplit('/').next().unwrap_or(&i.path), 50))
                .collect();
            blocks.push(Block::Lines(vec![format!(
                "**{}** ({})",
                rec.kind,
                inputs.join(", ")
            )]));
            blocks.extend(b);
            heads.push(Headline {
                file: path.display().to_string(),
                kind: rec.kind.clone(),
                headline: head,
                pass,
            });
        }
        if !blocks.is_empty() {
            parts.push(Part {
                title: title.to_string(),
                blocks,
            });
        }
    }
    let mut repro = String::new();
    let mut inputs = Vec::new();
    for (_, r) in records {
        repro += &command(r);
        repro.push('\n');
        for i in &r.provenance.inputs {
            let line = format!(
                "{}  sha256 {}",
                i.path,
                i.sha256
                    .as_deref()
                    .map(|h| &h[..16.min(h.len())])
                    .unwrap_or(UNAVAILABLE)
            );
            if !inputs.contains(&line) {
                inputs.push(line);
            }
        }
    }
    let first = records.first().map(|(_, r)| &r.provenance);
    let mut facts = Vec::new();
    if let Some(p) = first {
        facts.push(format!(
            "kernelab {}; host {}; {}",
            p.kernelab_version,
            p.host.as_deref().unwrap_or(UNAVAILABLE),
            p.gpu
                .as_deref()
                .map(|g| format!("GPU {g}"))
                .unwrap_or_else(|| "GPU not recorded".into())
        ));
        facts.push(match &p.git {
            Some(g) => format!(
                "git {}{}",
                &g.commit[..12.min(g.commit.len())],
                if g.dirty { " (dirty)" } else { "" }
            ),
            None => "not run in a git repository".into(),
        });
        facts.push(format!(
            "recorded {} to {}",
            p.started,
            records
                .last()
                .map(|(_, r)| r.provenance.finished.clone())
                .unwrap_or_default()
        ));
    }
    if !records.is_empty() {
        parts.push(Part {
            title: "Reproduction".into(),
            blocks: vec![
                Block::Code(repro),
                Block::Lines(inputs),
                Block::Lines(facts),
            ],
        });
    }
    (parts, heads)
}
