//! Building one report part per record kind from the record's typed result.

use super::Block;
use crate::documents::{
    AbBody, CodeShowBody, CompareBody, FiniteFiles, KernelRunBody, MetricsBody, ProfileBody,
};
use crate::format::{duration_ns, fixed, opt_duration_ns, percent, share, thousands, UNAVAILABLE};
use crate::svg;
use crate::table::{Align, Table};
use kernelab_code::{Matrix, ObjectDiff};
use kernelab_model::MetricValue;
use kernelab_stats::rank::median;
use kernelab_tensor::{BitwiseReport, CloseReport, FileComparison, RepeatReport};
use kernelab_trace::Status;

/// A count that may be a median over runs: whole numbers without decimals.
fn count(x: f64) -> String {
    if x.fract() == 0.0 && x >= 0.0 {
        thousands(x as u64)
    } else {
        format!("{x:.1}")
    }
}

/// A confidence interval of ratios, `[lo, hi]`.
fn interval(ci: Option<kernelab_stats::Interval>) -> String {
    ci.map(|i| format!("[{}, {}]", fixed(i.low, 4), fixed(i.high, 4)))
        .unwrap_or_else(|| UNAVAILABLE.into())
}

/// A ratio interval as percent changes.
fn pct_interval(ci: Option<kernelab_stats::Interval>) -> Option<(f64, f64)> {
    ci.map(|i| ((i.low - 1.0) * 100.0, (i.high - 1.0) * 100.0))
}

/// An interval as the `(low, high)` pair the plots take.
pub(crate) fn ends(ci: Option<kernelab_stats::Interval>) -> Option<(f64, f64)> {
    ci.map(|i| (i.low, i.high))
}

pub(crate) fn short(name: &str, n: usize) -> String {
    if name.chars().count() <= n {
        name.to_string()
    } else {
        format!("{}…", name.chars().take(n - 1).collect::<String>())
    }
}

fn ns_u64(x: Option<u64>) -> String {
    opt_duration_ns(x.map(|v| v as f64))
}

/// A profile record: the whole-trace line, the top kernels (the changed families marked) and
/// the share chart.
pub(crate) fn profile_part(r: &ProfileBody, marked: &[String]) -> (Vec<Block>, String) {
    let sm = &r.summary;
    let mut t = Table::new(
        "Top kernels by GPU time",
        &[
            ("#", Align::Right),
            ("kernel / family", Align::Left),
            ("calls", Align::Right),
            ("total", Align::Right),
            ("share", Align::Right),
        ],
    );
    let mut bars = Vec::new();
    for row in r.kernels.iter().take(10) {
        let changed = marked.contains(&row.name) || marked.contains(&row.family);
        let name = short(&row.name, 70);
        t.push(vec![
            row.rank.to_string(),
            if changed {
                format!("**{name}** (changed)")
            } else {
                name.clone()
            },
            thousands(row.calls),
            duration_ns(row.total_ns as f64),
            share(row.share),
        ]);
        bars.push(svg::ShareBar {
            label: name,
            share: row.share,
            marked: changed,
        });
    }
    let lines = vec![format!(
        "kernel GPU time {} over {}; GPU busy {}; trace wall {}; launch gaps {}",
        duration_ns(sm.kernel_time_ns as f64),
        crate::format::count(sm.kernel_count as usize, "kernel", "kernels"),
        ns_u64(sm.busy_ns),
        ns_u64(sm.wall_ns),
        ns_u64(sm.gap_ns)
    )];
    let head = r
        .kernels
        .first()
        .map(|row| {
            format!(
                "{} takes {} of kernel time",
                short(&row.name, 60),
                share(row.share)
            )
        })
        .unwrap_or_else(|| "no kernels".into());
    (
        vec![
            Block::Lines(lines),
            Block::Table(t),
            Block::Chart(svg::share_bars(
                "Share of request kernel GPU time, top 10 (changed family marked)",
                &bars,
            )),
        ],
        head,
    )
}

fn status_text(s: Status) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(|x| x.replace('_', " ")))
        .unwrap_or_default()
}

/// A family's change (candidate / baseline − 1), as stored in the comparison.
fn change_text(c: &kernelab_stats::Change) -> String {
    c.change()
        .map(|x| percent(x, true))
        .unwrap_or_else(|| "–".into())
}

pub(crate) fn compare_part(r: &CompareBody) -> (Vec<Block>, String) {
    let fams = &r.comparison.families;
    let mut t = Table::new(
        "Per-family change (baseline → candidate; change = candidate / baseline − 1)",
        &[
            ("family", Align::Left),
            ("calls", Align::Left),
            ("baseline", Align::Right),
            ("candidate", Align::Right),
            ("change", Align::Right),
            ("verdict", Align::Left),
        ],
    );
    for f in fams.iter().take(12) {
        t.push(vec![
            short(&f.family, 60),
            format!("{} → {}", count(f.base.calls), count(f.cand.calls)),
            duration_ns(f.base.total_ns),
            duration_ns(f.cand.total_ns),
            change_text(&f.change),
            status_text(f.status),
        ]);
    }
    let changed = fams
        .iter()
        .find(|f| matches!(f.status, Status::Faster | Status::Slower | Status::Changed));
    let head = match changed {
        Some(f) => format!(
            "{} {} {} → {} ({})",
            f.family,
            status_text(f.status),
            duration_ns(f.base.total_ns),
            duration_ns(f.cand.total_ns),
            change_text(&f.change)
        ),
        None => "no family changed beyond the noise".into(),
    };
    let mut whole = Table::new(
        "Whole trace (medians over runs; change = candidate / baseline − 1)",
        &[
            ("figure", Align::Left),
            ("baseline", Align::Right),
            ("candidate", Align::Right),
            ("delta", Align::Right),
            ("change", Align::Right),
        ],
    );
    for f in &r.comparison.summary {
        let (Some(b), Some(c)) = (f.baseline, f.candidate) else {
            continue;
        };
        if f.figure == "kernel_count" || (b == 0.0 && c == 0.0) {
            continue;
        }
        whole.push(vec![
            f.figure.trim_end_matches("_ns").replace('_', " "),
            duration_ns(b),
            duration_ns(c),
            crate::format::signed_duration_ns(c - b),
            change_text(&f.change),
        ]);
    }
    let mut blocks = vec![Block::Table(t)];
    if !whole.rows.is_empty() {
        blocks.push(Block::Table(whole));
    }
    if let Some(g) = r.comparison.graphs.as_ref().filter(|g| !g.rows.is_empty()) {
        blocks.push(Block::Table(crate::compare::graph_table(g)));
    }
    (blocks, head)
}

fn shape_text(shape: &[usize]) -> String {
    format!(
        "[{}]",
        shape
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

pub(crate) fn bitwise_lines(r: &FileComparison<BitwiseReport>) -> Vec<String> {
    r.tensors
        .iter()
        .map(|t| match (&t.problem, &t.result) {
            (Some(p), _) => format!("{}: FAIL ({p})", t.name),
            (None, Some(res)) if res.differing == 0 => format!(
                "{} ({} {}): bit-exact",
                t.name,
                t.dtype,
                shape_text(&t.shape)
            ),
            (None, Some(res)) => format!(
                "{}: {} of {} elements differ",
                t.name,
                thousands(res.differing),
                thousands(res.elements)
            ),
            (None, None) => format!("{}: FAIL (not compared)", t.name),
        })
        .collect()
}

pub(crate) fn close_lines(r: &FileComparison<CloseReport>) -> Vec<String> {
    r.tensors
        .iter()
        .map(|t| match (&t.problem, &t.result) {
            (Some(p), _) => format!("{}: FAIL ({p})", t.name),
            (None, Some(res)) => {
                let e = |x: Option<f64>| {
                    x.map_or_else(|| UNAVAILABLE.to_string(), |x| format!("{x:.3e}"))
                };
                format!(
                    "{}: max abs error {}, max rel error {}, rel L2 {}, {} mismatches",
                    t.name,
                    e(res.max_abs_err),
                    e(res.max_rel_err),
                    e(res.rel_l2_err),
                    res.mismatches
                )
            }
            (None, None) => format!("{}: FAIL (not compared)", t.name),
        })
        .collect()
}

pub(crate) fn finite_lines(r: &FiniteFiles) -> Vec<String> {
    r.files
        .iter()
        .flat_map(|f| {
            f.tensors.iter().map(move |t| {
                format!(
                    "{} {}: {} NaN, {} +inf, {} −inf",
                    f.path, t.name, t.report.nan, t.report.pos_inf, t.report.neg_inf
                )
            })
        })
        .collect()
}

pub(crate) fn repeat_lines(r: &RepeatReport) -> Vec<String> {
    vec![if r.pass {
        format!("{} runs bit-identical", r.files.len())
    } else {
        format!("runs differ: {}", r.differing.join("; "))
    }]
}

/// A check record's part: its lines and the pass/fail headline.
pub(crate) fn check_part<T>(
    what: &str,
    r: &T,
    pass: bool,
    lines: fn(&T) -> Vec<String>,
) -> crate::kinds::Rendered {
    crate::kinds::Rendered {
        blocks: vec![Block::Lines(lines(r))],
        headline: format!("{what}: {}", if pass { "pass" } else { "FAIL" }),
    }
}

pub(crate) fn code_diff_part(r: &ObjectDiff) -> (Vec<Block>, String) {
    let mut blocks = Vec::new();
    let mut head = String::new();
    for k in &r.kernels {
        let name = short(&k.symbol, 60);
        let table = |what: &str| {
            Table::new(
                format!("{what}: {name}"),
                &[
                    ("item", Align::Left),
                    ("baseline", Align::Right),
                    ("candidate", Align::Right),
                    ("change", Align::Right),
                ],
            )
        };
        let mut bars = Vec::new();
        let mut fill = |t: &mut Table, rows: &[kernelab_code::ChangeRow], bar: bool| {
            for row in rows {
                let (b, c) = (row.base, row.cand);
                if b == c {
                    continue;
                }
                let cr = crate::code::change(row);
                t.push(vec![
                    row.item.clone(),
                    b.map(thousands).unwrap_or_else(|| "–".into()),
                    c.map(thousands).unwrap_or_else(|| "–".into()),
                    cr.clone(),
                ]);
                if let (Some(b), Some(c), true) = (b, c, bar) {
                    if !row.item.contains("bytes") {
                        bars.push((row.item.clone(), c as f64 - b as f64, cr.clone()));
                    }
                }
            }
        };
        let (mut classes, mut mnemonics, mut resources) = (
            table("Instruction classes"),
            table("Mnemonics"),
            table("Resources"),
        );
        fill(&mut classes, &k.classes, true);
        fill(&mut mnemonics, &k.mnemonics, false);
        fill(&mut resources, &k.resources, true);
        for t in [&classes, &resources] {
            if let (true, Some(row)) = (head.is_empty(), t.rows.first()) {
                head = format!("{} {} → {}", row[0], row[1], row[2]);
            }
        }
        if k.classes.is_empty() && k.mnemonics.is_empty() {
            blocks.push(Block::Lines(vec![format!(
                "{}: instructions not compared (no disassembly)",
                crate::format::md_code(&k.symbol)
            )]));
        } else if classes.rows.is_empty() && mnemonics.rows.is_empty() {
            blocks.push(Block::Lines(vec![format!(
                "{}: no instruction class or mnemonic changed",
                crate::format::md_code(&k.symbol)
            )]));
        }
        for t in [classes, mnemonics] {
            if !t.rows.is_empty() {
                blocks.push(Block::Table(t));
            }
        }
        if resources.rows.is_empty() {
            let compared: Vec<&str> = k.resources.iter().map(|r| r.item.as_str()).collect();
            blocks.push(Block::Lines(vec![if compared.is_empty() {
                format!(
                    "{}: no resource figures to compare",
                    crate::format::md_code(&k.symbol)
                )
            } else {
                format!(
                    "{}: resources unchanged ({})",
                    crate::format::md_code(&k.symbol),
                    compared.join(", ")
                )
            }]));
        } else {
            blocks.push(Block::Table(resources));
        }
        if !bars.is_empty() {
            blocks.push(Block::Chart(svg::bars(
                "Instruction-class and resource changes (candidate − baseline)",
                &bars,
            )));
        }
    }
    let changed = r
        .kernels
        .iter()
        .filter(|k| k.code_changed.unwrap_or(true))
        .count();
    blocks.insert(
        0,
        Block::Lines(vec![format!(
            "{changed} of {} kernels changed{}",
            r.kernels.len(),
            if r.only_base.is_empty() && r.only_cand.is_empty() {
                String::new()
            } else {
                format!(
                    "; only in the baseline: {}; only in the candidate: {}",
                    r.only_base.len(),
                    r.only_cand.len()
                )
            }
        )]),
    );
    blocks.push(callouts(&r.callouts));
    if head.is_empty() {
        head = "machine code unchanged in every compared class".into();
    }
    (blocks, head)
}

/// Spill and scratch callouts, each marked; or the line saying there are none.
fn callouts(c: &[String]) -> Block {
    Block::Lines(if c.is_empty() {
        vec!["no spills, no scratch or stack growth".into()]
    } else {
        c.iter().map(|x| format!("⚠ **{x}**")).collect()
    })
}

pub(crate) fn code_matrix_part(r: &Matrix) -> (Vec<Block>, String) {
    let head = format!(
        "{} of {} builds changed; {} distinct kernel symbols",
        r.changed, r.total, r.distinct_symbols
    );
    let mut t = Table::new(
        "Changed builds",
        &[("build", Align::Left), ("kernels changed", Align::Left)],
    );
    for p in r.pairs.iter().filter(|p| p.changed) {
        t.push(vec![
            p.key.clone(),
            short(&p.changed_kernels.join(", "), 100),
        ]);
    }
    let mut blocks = vec![Block::Lines(vec![head.clone()])];
    if !t.rows.is_empty() {
        blocks.push(Block::Table(t));
    }
    blocks.push(callouts(&r.callouts));
    (blocks, head)
}

pub(crate) fn code_show_part(r: &CodeShowBody) -> (Vec<Block>, String) {
    let n: usize = r.objects.iter().map(|o| o.kernels.len()).sum();
    let head = format!("{} read", crate::format::count(n, "kernel", "kernels"));
    (vec![Block::Lines(vec![head.clone()])], head)
}

fn percents(log_ratios: &[f64]) -> Vec<f64> {
    log_ratios.iter().map(|d| d.exp_m1() * 100.0).collect()
}

pub(crate) fn ab_part(r: &AbBody) -> (Vec<Block>, String) {
    let Some(primary) = r.result.analyses.first() else {
        return (
            vec![Block::Lines(vec!["no metric was analysed".into()])],
            "no metric was analysed".into(),
        );
    };
    let a = &primary.analysis;
    let mut lines = vec![
        a.verdict_text(),
        format!(
            "ratio candidate / baseline {}, {:.1}% CI {}, resolution {}, {} pairs ({})",
            crate::format::ratio(a.ratio()),
            a.level * 100.0,
            interval(a.interval()),
            a.resolution
                .map(|x| format!("±{}", percent(x, false)))
                .unwrap_or_else(|| UNAVAILABLE.into()),
            a.pairs,
            a.stopped_by
        ),
    ];
    if let Some(aa) = &r.result.aa {
        lines.push(format!(
            "A/A pre-flight ratio {}: {}",
            crate::format::ratio(aa.analysis.ratio()),
            if aa.harness_bias {
                "HARNESS BIAS"
            } else {
                "ok"
            }
        ));
    }
    let chart = svg::strip(
        "Per-pair change, candidate vs baseline",
        &percents(&r.log_ratios),
        pct_interval(a.interval()),
        &percents(&r.aa_log_ratios),
    );
    (
        vec![Block::Lines(lines), Block::Chart(chart)],
        a.verdict_text(),
    )
}

/// A `kernel run` record's headline: gates passed and the verdict.
pub(crate) fn kernel_head(r: &KernelRunBody) -> (String, Option<bool>) {
    let run = &r.run;
    let passed = run.gates.iter().filter(|g| g.passed).count();
    let head = match &run.analysis {
        Some(a) => format!(
            "{passed} of {} gates passed; {}",
            run.gates.len(),
            a.verdict_text()
        ),
        None => format!(
            "{passed} of {} gates passed; timing not run",
            run.gates.len()
        ),
    };
    (head, Some(passed == run.gates.len()))
}

/// A `kernel run` record's gates, as a table.
pub(crate) fn kernel_gates(r: &KernelRunBody) -> Vec<Block> {
    let run = &r.run;
    let mut t = Table::new(
        format!(
            "Gates on {} ({} of {} passed)",
            run.device,
            run.gates.iter().filter(|g| g.passed).count(),
            run.gates.len()
        ),
        &[
            ("gate", Align::Left),
            ("result", Align::Left),
            ("detail", Align::Left),
        ],
    );
    for g in &run.gates {
        t.push(vec![
            g.name.clone(),
            if g.passed { "pass" } else { "FAIL" }.into(),
            g.detail.clone(),
        ]);
    }
    vec![Block::Table(t)]
}

/// A `kernel run` record's timing: the verdict, the median round, the per-round ratios over
/// time, and every round inside a details block.
pub(crate) fn kernel_timing(r: &KernelRunBody, name: &str) -> Vec<Block> {
    let run = &r.run;
    let Some(a) = &run.analysis else {
        return vec![Block::Lines(vec!["timing not run: a gate failed".into()])];
    };
    let base: Vec<f64> = run.rounds.iter().map(|x| x.baseline_ns).collect();
    let cand: Vec<f64> = run.rounds.iter().map(|x| x.candidate_ns).collect();
    let mut lines = vec![format!(
        "{}: ratio candidate / baseline {} ({:.1}% interval), {} rounds of batch {}{}",
        a.verdict_text(),
        super::summary::ratio_text(&a.change),
        a.level * 100.0,
        a.pairs,
        run.batch,
        if run.l2_flush {
            ", L2 flushed before each launch"
        } else {
            ""
        }
    )];
    if let (Some(b), Some(c)) = (median(&base), median(&cand)) {
        lines.push(format!(
            "median round: baseline {} → candidate {} per launch",
            duration_ns(b),
            duration_ns(c)
        ));
    }
    let mut blocks = vec![Block::Lines(lines)];
    let ratios: Vec<f64> = run.rounds.iter().filter_map(|x| x.change.ratio()).collect();
    if !ratios.is_empty() {
        blocks.push(Block::Chart(svg::rounds(
            &format!("{name}: candidate / baseline per round"),
            &ratios,
            ends(a.interval()),
            Some(a.threshold),
        )));
    }
    let mut t = Table::new(
        "Rounds (µs per launch, medians of each round's samples)",
        &[
            ("round", Align::Right),
            ("order", Align::Left),
            ("baseline", Align::Right),
            ("candidate", Align::Right),
            ("cand / base", Align::Right),
            ("SM MHz", Align::Right),
            ("°C", Align::Right),
            ("W", Align::Right),
        ],
    );
    let opt = |x: Option<String>| x.unwrap_or_else(|| "–".into());
    for x in &run.rounds {
        t.push(vec![
            x.round.to_string(),
            format!("{:?}", x.order),
            format!("{:.3}", x.baseline_ns / 1e3),
            format!("{:.3}", x.candidate_ns / 1e3),
            crate::format::ratio(x.change.ratio()),
            opt(x.telemetry.sm_mhz.map(|v| v.to_string())),
            opt(x.telemetry.temp_c.map(|v| v.to_string())),
            opt(x.telemetry.power_w.map(|v| format!("{v:.1}"))),
        ]);
    }
    blocks.push(Block::Details {
        summary: format!("{name}: raw rounds ({})", run.rounds.len()),
        blocks: vec![Block::Table(t)],
    });
    blocks
}

pub(crate) fn metrics_part(r: &MetricsBody) -> (Vec<Block>, String) {
    let mut t = Table::new(
        "Per-launch counters",
        &[
            ("ID", Align::Right),
            ("kernel", Align::Left),
            ("duration", Align::Right),
            ("DRAM bytes", Align::Right),
        ],
    );
    let number = |l: &kernelab_model::LaunchMetrics, keys: &[&str]| {
        keys.iter().find_map(|k| match l.metrics.get(*k)?.value {
            MetricValue::Number(x) => Some(x),
            MetricValue::Text(_) => None,
        })
    };
    for l in &r.launches {
        let dur = number(l, &["gpu__time_duration.sum", "Duration"]);
        let dram = number(l, &["dram__bytes.sum", "dram__bytes_read.sum"])
            .map(|x| thousands(x as u64))
            .unwrap_or_else(|| "–".into());
        t.push(vec![
            l.id.clone(),
            short(&l.kernel, 60),
            opt_duration_ns(dur),
            dram,
        ]);
    }
    (
        vec![Block::Table(t)],
        crate::format::count(r.launches.len(), "profiled launch", "profiled launches"),
    )
}
