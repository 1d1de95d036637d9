//! `kernelab report`: one evidence document from a bundle of records, in the order a reviewer
//! reads a performance pull request: a summary of every label's verdict first, then why this
//! kernel (its share of the request), correctness, code evidence, kernel timing, request impact,
//! serving, and how to reproduce. Records are grouped by label within each section.

use crate::bundle::Entry;
use crate::documents::Evidence;
use crate::kinds::impact::{self, Impact};
use crate::kinds::{Ctx, Place};
pub use crate::table::Block;
use crate::table::Table;
use serde::Serialize;

mod repro;
mod status;
mod summary;

pub use crate::svg::Verdicts;
pub use status::{Headline as Status, State};
pub(crate) use summary::gates;
pub(crate) use summary::verdicts;

/// A titled part of the report.
#[derive(Clone, Debug)]
pub struct Part {
    /// Heading.
    pub title: String,
    /// Content.
    pub blocks: Vec<Block>,
}

/// One line of the JSON summary per record.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Headline {
    /// Record file.
    pub file: String,
    /// The record's label.
    pub label: String,
    /// Record kind.
    pub kind: String,
    /// The one-line finding.
    pub headline: String,
    /// Whether a gate passed (check records).
    pub pass: Option<bool>,
}

/// The report: the summary table, the verdicts for the forest plot, the parts in reading
/// order, and one headline per record.
#[derive(Clone, Debug)]
pub struct Report {
    /// The status line, the table of changes and the disagreements between records.
    pub headline: status::Headline,
    /// The author's motivation and modifications (`--intro`), above the evidence.
    pub intro: Option<String>,
    /// Record files that could not be read, and why (the rest renders).
    pub unreadable: Vec<crate::bundle::Unreadable>,
    /// One row per label and kind.
    pub summary: Table,
    /// Every timed verdict with its interval.
    pub verdicts: Vec<Verdicts>,
    /// The sections.
    pub parts: Vec<Part>,
    /// One headline per record, in record order.
    pub heads: Vec<Headline>,
    /// The request impacts the bundle supports.
    pub impacts: Vec<Impact>,
}

/// The record's kind, input file names (or, without inputs, its command), and for timing
/// records the host and GPU that measured it, introducing its blocks.
fn intro(e: &Entry) -> Block {
    let p = &e.record.provenance;
    let timed = matches!(
        e.evidence,
        Evidence::KernelRun(_) | Evidence::Ab(_) | Evidence::Serve(_) | Evidence::Counters(_)
    );
    let measured = timed.then(|| {
        format!(
            "; recorded on host {}, GPU {}",
            p.host
                .as_deref()
                .map(crate::format::md_code)
                .unwrap_or_else(|| "unrecorded".into()),
            p.gpu
                .as_deref()
                .map(crate::format::md_code)
                .unwrap_or_else(|| "unrecorded".into())
        )
    });
    let inputs: Vec<String> = e
        .record
        .provenance
        .inputs
        .iter()
        .map(|i| crate::format::shorten(i.path.rsplit('/').next().unwrap_or(&i.path), 50))
        .collect();
    let command = || {
        let argv: Vec<&str> = p.argv.iter().skip(1).map(String::as_str).take(6).collect();
        if argv.is_empty() {
            "no input files".to_string()
        } else {
            format!(
                "no input files: {}",
                crate::format::md_code(&argv.join(" "))
            )
        }
    };
    Block::Lines(vec![format!(
        "**{}** ({}){}",
        e.record.kind,
        if inputs.is_empty() {
            command()
        } else {
            inputs
                .iter()
                .map(|i| crate::format::md_code(i))
                .collect::<Vec<_>>()
                .join(", ")
        },
        measured.unwrap_or_default()
    )])
}

/// Whether an `ab` record measures a request: its label is a profile's label.
fn request_ab(e: &Entry, entries: &[Entry]) -> bool {
    matches!(e.evidence, Evidence::Ab(_))
        && entries
            .iter()
            .any(|p| matches!(p.evidence, Evidence::Profile(_)) && p.record.label == e.record.label)
}

/// Whether a kernel run times one build against itself (an A/A run): no change to predict.
fn self_pair(run: &crate::documents::KernelRunBody) -> bool {
    matches!(&run.run.builds[..], [a, b] if a.code == b.code && a.symbol == b.symbol)
}

/// Whether every input of the profile record `p` is an input of the record `m` (same content):
/// then `m` measured the profiled request.
fn same_inputs(p: &Entry, m: &Entry) -> bool {
    let ins = &p.record.provenance.inputs;
    !ins.is_empty()
        && ins.iter().all(|i| {
            m.record
                .provenance
                .inputs
                .iter()
                .any(|j| match (&i.sha256, &j.sha256) {
                    (Some(a), Some(b)) => a == b,
                    _ => i.path == j.path,
                })
        })
}

/// Every (profile, kernel run) pair whose kernel is a family of the profile (A/A runs left
/// out), with the request measurements of the bundle set against it: `compare` records with
/// the kernel run's label, and `ab` records with the profile's label. (A serving record kind
/// adds one more `impact::from_*` here.)
pub(crate) fn impacts(entries: &[Entry]) -> Vec<(String, String, Impact)> {
    let mut out = Vec::new();
    for p in entries {
        let Evidence::Profile(profile) = &p.evidence else {
            continue;
        };
        for k in entries {
            let Evidence::KernelRun(run) = &k.evidence else {
                continue;
            };
            if self_pair(run) {
                continue;
            }
            let Ok(mut i) = impact::predict(profile, run, None) else {
                continue;
            };
            for m in entries {
                let source = format!("{} {}", m.record.kind, m.record.label);
                match &m.evidence {
                    Evidence::Compare(c) if m.record.label == k.record.label => {
                        let same = same_inputs(p, m);
                        i.measured
                            .extend(impact::from_compare(&i, &source, c, same));
                    }
                    Evidence::Ab(a) if m.record.label == p.record.label => {
                        i.measured.extend(impact::from_ab(&i, &source, a));
                    }
                    _ => {}
                }
            }
            out.push((p.record.label.clone(), k.record.label.clone(), i));
        }
    }
    out
}

/// The "why" line of each changed family of a profile: its share of the request.
fn why_lines(found: &[(String, String, Impact)], label: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    for (_, _, i) in found.iter().filter(|(p, _, _)| p == label) {
        if done.contains(&i.family.as_str()) {
            continue;
        }
        done.push(&i.family);
        let by: Vec<&str> = found
            .iter()
            .filter(|(p, _, j)| p == label && j.family == i.family)
            .map(|(_, k, _)| k.as_str())
            .collect();
        lines.push(format!(
            "{} (changed by {}) takes {} of the request's kernel time: {} over {} calls",
            crate::format::md_code(&i.family),
            by.join(", "),
            crate::format::percent(i.share, false),
            crate::format::duration_ns(i.family_ns as f64),
            crate::format::thousands(i.calls)
        ));
    }
    lines
}

/// Builds the report.
pub fn evidence(entries: &[Entry]) -> Report {
    let found = impacts(entries);
    let mut labels: Vec<&str> = Vec::new();
    for e in entries {
        if !labels.contains(&e.record.label.as_str()) {
            labels.push(&e.record.label);
        }
    }
    let mut parts = Vec::new();
    let mut heads: Vec<Option<Headline>> = vec![None; entries.len()];
    for place in Place::ALL {
        let title = place.title();
        let mut blocks = Vec::new();
        if place == Place::Request {
            for (profile, kernel, i) in &found {
                blocks.push(Block::Heading(format!(
                    "{kernel}: impact on the request {profile}"
                )));
                blocks.push(Block::Lines(impact::impact_lines(i)));
                blocks.extend(impact::measured_table(i).map(Block::Table));
            }
        }
        for label in &labels {
            let mut group = Vec::new();
            for (n, e) in entries.iter().enumerate() {
                let kind = e.evidence.kind();
                if e.record.label != *label || !kind.places().contains(&place) {
                    continue;
                }
                // An `ab` of the request belongs to the request impact, others to timing.
                if matches!(e.evidence, Evidence::Ab(_))
                    && (place == Place::Request) != request_ab(e, entries)
                {
                    continue;
                }
                let marked: Vec<String> = found
                    .iter()
                    .filter(|(p, _, _)| p == label)
                    .map(|(_, _, i)| i.family.clone())
                    .collect();
                let ctx = Ctx {
                    label,
                    marked: &marked,
                };
                let r = kind.render(place, &ctx);
                let (b, head, pass) = (r.blocks, r.headline, kind.pass());
                if place == Place::Why {
                    let why = why_lines(&found, label);
                    if !why.is_empty() {
                        group.push(Block::Lines(why));
                    }
                }
                group.push(intro(e));
                group.extend(b);
                heads[n].get_or_insert(Headline {
                    file: e.path.display().to_string(),
                    label: e.record.label.clone(),
                    kind: e.record.kind.clone(),
                    headline: head,
                    pass,
                });
            }
            if !group.is_empty() {
                blocks.push(Block::Heading(label.to_string()));
                blocks.extend(group);
            }
        }
        if !blocks.is_empty() {
            parts.push(Part {
                title: title.to_string(),
                blocks,
            });
        }
    }
    if !entries.is_empty() {
        parts.push(repro::reproduction(entries));
    }
    Report {
        headline: status::headline(entries, &found),
        intro: None,
        unreadable: Vec::new(),
        summary: summary::summary_table(entries),
        verdicts: verdicts(entries),
        parts,
        heads: heads.into_iter().flatten().collect(),
        impacts: found.into_iter().map(|(_, _, i)| i).collect(),
    }
}
