//! `kernelab report`: one evidence document from a bundle of records, in the order a
//! performance pull request argues: why (profile), correct (gates), why faster (machine code),
//! counters, how much (timing), what it does to the request (compare), how to reproduce.

use crate::bundle::{Entry, Record};
use crate::documents::Evidence;
use crate::format::UNAVAILABLE;
use crate::table::Table;
use serde::Serialize;

mod parts;
mod serve;

use serve::serve_part;

use parts::{
    ab_part, bitwise_lines, check_part, close_lines, code_diff_part, code_matrix_part,
    code_show_part, compare_part, finite_lines, kernel_part, metrics_part, profile_part,
    repeat_lines, short, sweep_lines,
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

/// One record's blocks, headline and gate result.
fn part(e: &Evidence) -> (Vec<Block>, String, Option<bool>) {
    let plain = |(b, h): (Vec<Block>, String)| (b, h, None);
    match e {
        Evidence::Profile(r) => plain(profile_part(r)),
        Evidence::Compare(r) => plain(compare_part(r)),
        Evidence::Metrics(r) => plain(metrics_part(r)),
        Evidence::Ab(r) => plain(ab_part(r)),
        Evidence::KernelRun(r) => kernel_part(r),
        Evidence::Serve(r) => serve_part(r),
        Evidence::CodeDiff(r) => plain(code_diff_part(r)),
        Evidence::CodeMatrix(r) => plain(code_matrix_part(r)),
        Evidence::CodeShow(r) => plain(code_show_part(r)),
        Evidence::CheckBitwise(r) => check_part("bitwise", r, r.pass, bitwise_lines),
        Evidence::CheckClose(r, oracle) => check_part(
            if *oracle { "oracle" } else { "close" },
            r,
            r.pass,
            close_lines,
        ),
        Evidence::CheckFinite(r) => check_part("finite", r, r.pass, finite_lines),
        Evidence::CheckRepeat(r) => check_part("repeat", r, r.pass, repeat_lines),
        Evidence::CheckSweep(r) => check_part("sweep", r, r.pass, sweep_lines),
    }
}

/// Builds the report's parts and the per-record headlines.
pub fn evidence(entries: &[Entry]) -> (Vec<Part>, Vec<Headline>) {
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
        ("Request-level impact", &["serve", "compare"][..]),
    ];
    let mut parts = Vec::new();
    let mut heads = Vec::new();
    for (title, kinds) in order {
        let mut blocks = Vec::new();
        for entry in entries
            .iter()
            .filter(|e| kinds.contains(&e.record.kind.as_str()))
        {
            let rec = &entry.record;
            let (b, head, pass) = part(&entry.evidence);
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
                file: entry.path.display().to_string(),
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
    let records: Vec<&Record> = entries.iter().map(|e| &e.record).collect();
    let mut repro = String::new();
    let mut inputs = Vec::new();
    for r in &records {
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
    let first = records.first().map(|r| &r.provenance);
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
                .map(|r| r.provenance.finished.clone())
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
