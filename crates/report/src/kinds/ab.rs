//! `ab`: a paired A/B run of two commands (kernel timing, or a request when its label is a
//! profile's).

use super::{pair, plain, rendered, verdict_mark, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::figure::Sink;
use kernelab_model::ab::AbResult;
use kernelab_stats::Analysis;
use serde::{Deserialize, Serialize};

impl RecordKind for AbBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Timing, Place::Request]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::evidence::parts::ab_part(self))
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
}

impl kernelab_model::Body for AbBody {
    const KIND: &'static str = "ab";
}
