//! `kernel_run`: two builds of a kernel launched on a GPU: gates (correctness) and paired
//! rounds (timing).

use super::{count, gate_mark, pair, verdict_mark, Ctx, Place, RecordKind, Rendered, Summary};
use crate::format::duration_ns;
use crate::kinds::ends;
use crate::sink::{Kind as FigureKind, Sink};
use crate::svg;
use crate::table::Align;
use crate::table::Block;
use crate::table::Table;
use kernelab_model::kernel_run::KernelRun;
use kernelab_stats::rank::median;
use kernelab_stats::Analysis;
use serde::{Deserialize, Serialize};

pub(crate) mod view;

impl RecordKind for KernelRunBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness, Place::Timing]
    }
    fn render(&self, place: Place, ctx: &Ctx<'_>) -> Rendered {
        let (headline, _) = kernel_head(self);
        let blocks = match place {
            Place::Timing => kernel_timing(self, ctx.label),
            _ => {
                let mut blocks = kernel_gates(self);
                blocks.extend(view::launched_sections(&self.run));
                blocks
            }
        };
        Rendered { blocks, headline }
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let g = count(&self.run.gates, |g| g.passed);
        match &self.run.analysis {
            Some(a) => Summary {
                gates: Some(g),
                verdict: a.verdict.name().into(),
                ratio: pair(&a.change),
                mark: gate_mark(g.0, g.1).max(verdict_mark(a.verdict)),
            },
            None => Summary {
                gates: Some(g),
                verdict: "not timed".into(),
                ratio: None,
                mark: gate_mark(g.0, g.1),
            },
        }
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
    fn analysis(&self) -> Option<&Analysis> {
        self.run.analysis.as_ref()
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        let run = &self.run;
        if let Some(a) = &run.analysis {
            sink.analysis(a, "");
        }
        if let Some(f) = &run.noise_floor {
            sink.add(FigureKind::Change, f.largest_change, "noise floor", None);
            sink.add(
                FigureKind::Count,
                f.controls as f64,
                "identical-code runs of the noise floor",
                None,
            );
        }
        for (build, pick) in [
            (
                "baseline",
                (|r| r.baseline_ns) as fn(&kernelab_model::kernel_run::Round) -> f64,
            ),
            ("candidate", |r| r.candidate_ns),
        ] {
            let v: Vec<f64> = run.rounds.iter().map(pick).collect();
            if let Some(m) = kernelab_stats::rank::median(&v) {
                sink.add(FigureKind::Time, m, &format!("median round, {build}"), None);
            }
        }
        for x in &run.rounds {
            let what = format!("round {}", x.round);
            sink.add(
                FigureKind::Time,
                x.baseline_ns,
                &format!("{what}, baseline"),
                None,
            );
            sink.add(
                FigureKind::Time,
                x.candidate_ns,
                &format!("{what}, candidate"),
                None,
            );
            if let Some(r) = x.change.ratio() {
                sink.add(FigureKind::Ratio, r, &format!("{what}, ratio"), None);
            }
            let t = &x.telemetry;
            if let Some(v) = t.sm_mhz {
                sink.add(
                    FigureKind::Frequency,
                    f64::from(v) * 1e6,
                    &format!("{what}, SM clock"),
                    None,
                );
            }
            if let Some(v) = t.temp_c {
                sink.add(
                    FigureKind::Temperature,
                    f64::from(v),
                    &format!("{what}, temperature"),
                    None,
                );
            }
            if let Some(v) = t.power_w {
                sink.add(FigureKind::Power, v, &format!("{what}, power"), None);
            }
        }
        for g in &run.gates {
            if let Some((part, total)) = elements_of(&g.detail) {
                sink.count_of(part, total, &format!("{}: elements", g.name));
            }
        }
        if let Some(l) = &run.launched {
            for (side, ns) in ["baseline", "candidate"].iter().zip(l.call_ns) {
                if let Some(ns) = ns {
                    sink.add(
                        FigureKind::Time,
                        ns,
                        &format!("GPU time per call, {side}"),
                        None,
                    );
                }
            }
            for k in &l.kernels {
                let what = format!("{} kernel {}", k.side, k.name);
                sink.add(
                    FigureKind::Count,
                    k.launches,
                    &format!("launches, {what}"),
                    None,
                );
                if let Some(ns) = k.ns {
                    sink.add(
                        FigureKind::Time,
                        ns,
                        &format!("GPU time per call, {what}"),
                        None,
                    );
                }
                if let Some(s) = k.share {
                    sink.add(
                        FigureKind::Share,
                        s,
                        &format!("share of the call, {what}"),
                        None,
                    );
                }
            }
        }
    }
    fn consistent(&self) -> Result<(), String> {
        match &self.run.analysis {
            Some(a) => super::within(a.pairs, a.pairs_available, "pairs used"),
            None => Ok(()),
        }
    }
}

/// `K of N elements` in a gate's detail (`0 of 67108864 elements differ`), as drawn.
fn elements_of(detail: &str) -> Option<(usize, usize)> {
    let (head, tail) = detail.split_once(" of ")?;
    let part = head.rsplit(' ').next()?.parse().ok()?;
    let (total, rest) = tail.split_once(' ')?;
    rest.starts_with("element").then_some(())?;
    Some((part, total.parse().ok()?))
}

/// `kernelab kernel run` (`kind: "kernel_run"`).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelRunBody {
    /// Whether every gate passed.
    pub pass: bool,
    /// The JSONL file with every timed sample.
    pub samples: String,
    /// What the run found.
    #[serde(flatten)]
    pub run: KernelRun,
    /// The conditions the rounds ran under (schema version 8 on: absent where none were
    /// taken): when `changed` is not empty the verdict is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<kernelab_model::fingerprint::Conditions>,
}

impl kernelab_model::Body for KernelRunBody {
    const KIND: &'static str = "kernel_run";
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
        crate::format::ratio_text(&a.change),
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
            ("baseline µs", Align::Right),
            ("candidate µs", Align::Right),
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
