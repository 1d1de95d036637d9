//! `kernel_run`: two builds of a kernel launched on a GPU: gates (correctness) and paired
//! rounds (timing).

use super::{count, gate_mark, pair, verdict_mark, Ctx, Place, RecordKind, Rendered, Summary};
use crate::evidence::parts::{kernel_gates, kernel_head, kernel_timing};
use crate::figure::{Kind as FigureKind, Sink};
use kernelab_model::kernel_run::KernelRun;
use kernelab_stats::Analysis;
use serde::{Deserialize, Serialize};

impl RecordKind for KernelRunBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness, Place::Timing]
    }
    fn render(&self, place: Place, ctx: &Ctx<'_>) -> Rendered {
        let (headline, _) = kernel_head(self);
        let blocks = match place {
            Place::Timing => kernel_timing(self, ctx.label),
            _ => kernel_gates(self),
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
    }
    fn consistent(&self) -> Result<(), String> {
        match &self.run.analysis {
            Some(a) => super::within(a.pairs, a.pairs_available, "pairs used"),
            None => Ok(()),
        }
    }
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
}

impl kernelab_model::Body for KernelRunBody {
    const KIND: &'static str = "kernel_run";
}
