//! `ab`: a paired A/B run of two commands (kernel timing, or a request when its label is a
//! profile's).

use super::{pair, plain, rendered, verdict_mark, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::format::{fixed, percent, UNAVAILABLE};
use crate::sink::Sink;
use crate::svg;
use crate::table::Block;
use kernelab_model::ab::AbResult;
use kernelab_stats::Analysis;
use serde::{Deserialize, Serialize};

pub(crate) mod view;

impl RecordKind for AbBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Timing, Place::Request]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(ab_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        match self.result.analyses.first() {
            Some(m) => Summary {
                gates: None,
                verdict: format!("{} ({})", m.analysis.verdict.name(), m.metric),
                ratio: pair(&m.analysis.change),
                mark: verdict_mark(m.analysis.verdict),
            },
            None => plain("no metric analysed".into(), Mark::Warn),
        }
    }
    fn analysis(&self) -> Option<&Analysis> {
        self.result.analyses.first().map(|m| &m.analysis)
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        for m in &self.result.analyses {
            sink.analysis(&m.analysis, &format!("{} ", m.metric));
        }
        if let Some(aa) = &self.result.aa {
            sink.ratio(&aa.analysis.change, "A/A ratio");
        }
    }
}

/// `kernelab ab` and `ab analyze` (`kind: "ab"`).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AbBody {
    /// The samples file, when there is one.
    pub samples: Option<String>,
    /// Per-pair log ratios of the primary metric (the pairs used), for plots.
    pub log_ratios: Vec<f64>,
    /// Per-pair log ratios of the A/A pre-flight.
    pub aa_log_ratios: Vec<f64>,
    /// The analyses.
    #[serde(flatten)]
    pub result: AbResult,
    /// The conditions the pairs ran under (schema version 8 on: absent for samples without
    /// fingerprints): when `changed` is not empty the verdict is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<kernelab_model::fingerprint::Conditions>,
}

impl kernelab_model::Body for AbBody {
    const KIND: &'static str = "ab";
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
            view::aa_verdict(aa)
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
