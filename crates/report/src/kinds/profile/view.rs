//! The `profile` view: tables and the JSON document of a ranking.

use crate::format::shorten;
use crate::format::{bytes, duration_ns, opt_duration_ns, share, thousands, UNAVAILABLE};
use crate::kinds::profile::ProfileBody;
use crate::table::{Align, Block, Table};
use kernelab_model::Document;
use kernelab_model::{ActivityKind, SourceInfo};
use kernelab_trace::{KernelRow, Ranking, ValueRange};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One input as written to JSON.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InputDoc {
    /// Path as given.
    pub path: String,
    /// Detected format.
    pub format: String,
    /// Facts about the writer: snake_case keys, numbers where the text is a number.
    pub facts: BTreeMap<String, kernelab_model::FactValue>,
    /// Reader notes.
    pub notes: Vec<String>,
}

/// The inputs as written to JSON.
pub fn input_docs(sources: &[SourceInfo]) -> Vec<InputDoc> {
    sources
        .iter()
        .map(|s| InputDoc {
            path: s.path.display().to_string(),
            format: s.format.clone(),
            facts: kernelab_model::typed_facts(
                s.facts.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            ),
            notes: s.notes.clone(),
        })
        .collect()
}

/// Builds the JSON document (schema in `docs/json.md`).
pub fn profile_document(
    ranking: &Ranking,
    sources: &[SourceInfo],
    grouping: &str,
) -> Document<ProfileBody> {
    Document::of(ProfileBody {
        grouping: grouping.to_string(),
        inputs: input_docs(sources),
        summary: ranking.summary.clone(),
        kernels: ranking.rows.clone(),
        other: ranking.other.clone(),
        outliers: ranking.outliers.clone(),
        phases: ranking.phases.clone(),
        notes: notes(ranking, sources),
        activities: ranking.activities.clone(),
        graphs: None,
        ranks: None,
    })
}

fn notes(ranking: &Ranking, sources: &[SourceInfo]) -> Vec<String> {
    let mut out = Vec::new();
    for s in sources {
        for n in &s.notes {
            let line = format!("{}: {n}", s.path.display());
            if !out.contains(&line) {
                out.push(line);
            }
        }
    }
    out.extend(ranking.notes.iter().cloned());
    out
}

/// A resource's range over a row's launches; `unavailable` where the input does not have it.
fn range(r: Option<ValueRange>, fmt: fn(u64) -> String) -> String {
    match r {
        None => UNAVAILABLE.into(),
        Some(v) if v.min == v.max => fmt(u64::from(v.min)),
        Some(v) => format!("{}–{}", fmt(u64::from(v.min)), fmt(u64::from(v.max))),
    }
}

fn plain(n: u64) -> String {
    n.to_string()
}

fn kernel_table(
    title: &str,
    rows: &[KernelRow],
    other: Option<&KernelRow>,
    name_width: usize,
    family: bool,
) -> Table {
    let label = if family { "family" } else { "kernel" };
    let mut t = Table::new(
        title,
        &[
            ("#", Align::Right),
            (label, Align::Left),
            ("calls", Align::Right),
            ("total", Align::Right),
            ("mean", Align::Right),
            ("median", Align::Right),
            ("min", Align::Right),
            ("max", Align::Right),
            ("share", Align::Right),
            ("grid", Align::Left),
            ("block", Align::Left),
            ("regs", Align::Right),
            ("shared/LDS", Align::Right),
            ("scratch", Align::Right),
        ],
    )
    .giving_way(&[
        "grid",
        "block",
        "scratch",
        "shared/LDS",
        "regs",
        "min",
        "max",
        "median",
    ]);
    for r in rows.iter().chain(other) {
        let mut name = shorten(&r.name, name_width);
        if family && r.variants > 1 && r.rank > 0 {
            name = format!("{name} ({} variants)", r.variants);
        }
        let regs = match r.registers {
            None => UNAVAILABLE.to_string(),
            Some(_) => {
                let mut s = range(r.registers, plain);
                if r.register_granules {
                    s.push('*');
                }
                s
            }
        };
        t.push(vec![
            if r.rank == 0 {
                String::new()
            } else {
                r.rank.to_string()
            },
            name,
            thousands(r.calls),
            duration_ns(r.total_ns as f64),
            duration_ns(r.mean_ns),
            opt_duration_ns(r.median_ns),
            opt_duration_ns(r.min_ns.map(|x| x as f64)),
            opt_duration_ns(r.max_ns.map(|x| x as f64)),
            share(r.share),
            r.grid.map_or_else(|| UNAVAILABLE.into(), |g| g.to_string()),
            r.block
                .map_or_else(|| UNAVAILABLE.into(), |g| g.to_string()),
            regs,
            range(r.shared_bytes, bytes),
            range(r.scratch_bytes, bytes),
        ]);
    }
    t
}

fn opt(ns: Option<u64>) -> String {
    ns.map(|x| duration_ns(x as f64))
        .unwrap_or_else(|| UNAVAILABLE.to_string())
}

/// A reader's fact as the Inputs line shows it, `key value`, and what it means where the key
/// alone does not say.
fn fact_text(key: &str, value: &str) -> String {
    match key {
        "events skipped" => format!(
            "{key} {value} (CPU-side and other events that hold no kernel, copy or memset time)"
        ),
        _ => format!("{key} {value}"),
    }
}

/// Builds the sections of the profile view. `name_width` shortens names (0: never).
pub fn profile_tables(
    ranking: &Ranking,
    sources: &[SourceInfo],
    family: bool,
    name_width: usize,
) -> Vec<Block> {
    let s = &ranking.summary;
    let mut inputs = Vec::new();
    for src in sources {
        let facts: Vec<String> = src.facts.iter().map(|(k, v)| fact_text(k, v)).collect();
        inputs.push(format!(
            "{} ({}{}{})",
            src.path.display(),
            src.format,
            if facts.is_empty() { "" } else { "; " },
            facts.join("; ")
        ));
    }
    let mut summary = Table::new(
        "Whole trace",
        &[("figure", Align::Left), ("value", Align::Right)],
    );
    let pct_of_wall = |x: Option<u64>| match (x, s.wall_ns) {
        (Some(v), Some(w)) if w > 0 => format!(" ({} of wall)", share(v as f64 / w as f64)),
        _ => String::new(),
    };
    summary.push(vec![
        "kernel GPU time (sum of durations)".into(),
        duration_ns(s.kernel_time_ns as f64),
    ]);
    summary.push(vec![
        "GPU busy (union over streams)".into(),
        format!("{}{}", opt(s.busy_ns), pct_of_wall(s.busy_ns)),
    ]);
    summary.push(vec![
        "trace wall (first kernel start to last end)".into(),
        opt(s.wall_ns),
    ]);
    summary.push(vec![
        "launch gaps (idle time on the busy timeline)".into(),
        match (s.gap_ns, s.gap_count) {
            (Some(g), Some(n)) => format!(
                "{} in {} gaps{}",
                duration_ns(g as f64),
                thousands(n),
                pct_of_wall(Some(g))
            ),
            _ => UNAVAILABLE.into(),
        },
    ]);
    summary.push(vec!["kernels executed".into(), thousands(s.kernel_count)]);
    summary.push(if family {
        vec![
            "distinct kernel names / families".into(),
            format!(
                "{} / {}",
                thousands(s.distinct_kernels as u64),
                thousands(s.groups as u64)
            ),
        ]
    } else {
        vec![
            "distinct kernel names".into(),
            thousands(s.distinct_kernels as u64),
        ]
    });
    let transfer = |ns: Option<u64>, n: Option<u64>| match (ns, n) {
        (Some(t), Some(c)) => format!("{} in {} ops", duration_ns(t as f64), thousands(c)),
        _ => UNAVAILABLE.into(),
    };
    summary.push(vec![
        "memcpy (not in kernel time)".into(),
        transfer(s.memcpy_ns, s.memcpy_count),
    ]);
    summary.push(vec![
        "memset (not in kernel time)".into(),
        transfer(s.memset_ns, s.memset_count),
    ]);
    if !s.devices.is_empty() {
        // "GPU 0 / 1 stream": the device numbers (as --device selects them), then the count.
        let ids: Vec<String> = s.devices.iter().map(u32::to_string).collect();
        let gpus = format!(
            "{} {}",
            if ids.len() == 1 { "GPU" } else { "GPUs" },
            ids.join(",")
        );
        let streams = match s.streams {
            Some(1) => "1 stream".to_string(),
            Some(n) => format!("{n} streams"),
            None => format!("streams {UNAVAILABLE}"),
        };
        summary.push(vec![
            "devices / streams".into(),
            format!("{gpus} / {streams}"),
        ]);
    }
    let title = format!(
        "Top {} {} by total GPU time",
        ranking.rows.len(),
        if family { "kernel families" } else { "kernels" }
    );
    let mut sections = vec![
        Block::List {
            title: "Inputs".into(),
            lines: inputs,
        },
        Block::Table(summary),
        Block::Table(kernel_table(
            &title,
            &ranking.rows,
            ranking.other.as_ref(),
            name_width,
            family,
        )),
    ];
    let outliers: Vec<String> = ranking
        .outliers
        .iter()
        .map(|o| {
            if o.calls_over == 1 {
                format!(
                    "one call of {} is {} ({:.0}x its median of {})",
                    shorten(&o.name, name_width),
                    duration_ns(o.max_ns as f64),
                    o.max_ns as f64 / o.median_ns,
                    duration_ns(o.median_ns)
                )
            } else {
                format!(
                    "{} calls of {} exceed {}x its median of {}; the slowest is {}",
                    o.calls_over,
                    shorten(&o.name, name_width),
                    o.factor,
                    duration_ns(o.median_ns),
                    duration_ns(o.max_ns as f64)
                )
            }
        })
        .collect();
    sections.push(Block::List {
        title: "Outliers (slowest call > 10x median)".into(),
        lines: outliers,
    });
    if let Some(phases) = &ranking.phases {
        let mut t = Table::new(
            "Kernel time by phase (innermost annotated range)",
            &[
                ("phase", Align::Left),
                ("calls", Align::Right),
                ("total", Align::Right),
                ("share", Align::Right),
                ("top row", Align::Left),
            ],
        );
        for p in phases {
            let top = p.kernels.first().map(|k| {
                format!(
                    "{} ({})",
                    shorten(&k.name, name_width),
                    duration_ns(k.total_ns as f64)
                )
            });
            t.push(vec![
                shorten(&p.phase, name_width),
                thousands(p.calls),
                duration_ns(p.total_ns as f64),
                share(p.share),
                top.unwrap_or_else(|| "–".into()),
            ]);
        }
        sections.push(Block::Table(t));
    }
    if !ranking.activities.is_empty() {
        let mut t = Table::new(
            "Host API calls, copies, queue packets and domains (not kernel GPU time)",
            &[
                ("kind", Align::Left),
                ("name", Align::Left),
                ("calls", Align::Right),
                ("total", Align::Right),
            ],
        );
        for a in &ranking.activities {
            t.push(vec![
                match a.kind {
                    ActivityKind::HostApi => "host API",
                    ActivityKind::Copy => "copy",
                    ActivityKind::Queue => "queue",
                    _ => "domain",
                }
                .into(),
                shorten(&a.name, name_width),
                thousands(a.calls),
                duration_ns(a.total_ns as f64),
            ]);
        }
        sections.push(Block::Table(t));
    }
    let mut n = notes(ranking, sources);
    if ranking.rows.iter().any(|r| r.register_granules) {
        n.push("regs marked * are allocation granules (rocprofv3 kernel descriptor), not exact compiler counts".into());
    }
    sections.push(Block::List {
        title: "Notes".into(),
        lines: n,
    });
    sections
}

/// A flat CSV row (one per kernel row, plus the "other" row).
#[derive(Serialize, schemars::JsonSchema)]
pub struct CsvRow<'a> {
    rank: usize,
    name: &'a str,
    family: &'a str,
    variants: usize,
    calls: u64,
    total_ns: u64,
    mean_ns: f64,
    median_ns: Option<f64>,
    min_ns: Option<u64>,
    max_ns: Option<u64>,
    stddev_ns: Option<f64>,
    share: f64,
    grid: Option<String>,
    block: Option<String>,
    registers_min: Option<u32>,
    registers_max: Option<u32>,
    agprs_max: Option<u32>,
    sgprs_max: Option<u32>,
    shared_bytes_max: Option<u32>,
    scratch_bytes_max: Option<u32>,
    register_granules: bool,
}

impl<'a> From<&'a KernelRow> for CsvRow<'a> {
    fn from(r: &'a KernelRow) -> Self {
        CsvRow {
            rank: r.rank,
            name: &r.name,
            family: &r.family,
            variants: r.variants,
            calls: r.calls,
            total_ns: r.total_ns,
            mean_ns: r.mean_ns,
            median_ns: r.median_ns,
            min_ns: r.min_ns,
            max_ns: r.max_ns,
            stddev_ns: r.stddev_ns,
            share: r.share,
            grid: r.grid.map(|g| g.to_string()),
            block: r.block.map(|g| g.to_string()),
            registers_min: r.registers.map(|v| v.min),
            registers_max: r.registers.map(|v| v.max),
            agprs_max: r.agprs.map(|v| v.max),
            sgprs_max: r.sgprs.map(|v| v.max),
            shared_bytes_max: r.shared_bytes.map(|v| v.max),
            scratch_bytes_max: r.scratch_bytes.map(|v| v.max),
            register_granules: r.register_granules,
        }
    }
}

/// The CSV text of a ranking: every row, then the "other" row (rank 0).
pub fn profile_csv(ranking: &Ranking) -> crate::Result<String> {
    let rows: Vec<CsvRow<'_>> = ranking
        .rows
        .iter()
        .chain(ranking.other.as_ref())
        .map(CsvRow::from)
        .collect();
    crate::render::csv_rows(&rows)
}
