//! `serve`: fresh-server serving of baseline and candidate, paired by round.

use super::{gate_mark, pair, verdict_mark, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use kernelab_model::serve::ServeResult;
use serde::{Deserialize, Serialize};

impl RecordKind for ServeBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Serving]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        let (blocks, headline, _) = crate::evidence::serve_part(self);
        Rendered { blocks, headline }
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let id = &self.result.identity;
        let g = (id.identical, id.compared);
        let called = self
            .result
            .metrics
            .iter()
            .filter(|m| m.metric == "e2e_mean_s" || m.metric == "tpot_mean_s")
            .find_map(|m| Some((m, m.analysis.as_ref()?)));
        match called {
            Some((m, a)) => Summary {
                gates: Some(g),
                verdict: format!(
                    "{} ({} at concurrency {})",
                    a.verdict.name(),
                    m.metric,
                    m.concurrency
                ),
                ratio: pair(&a.change),
                mark: gate_mark(g.0, g.1).max(verdict_mark(a.verdict)),
            },
            None => Summary {
                gates: Some(g),
                verdict: "no metric analysed".into(),
                ratio: None,
                mark: Mark::Warn,
            },
        }
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
}

/// `kernelab serve` (`kind: "serve"`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServeBody {
    /// The samples file.
    pub samples: String,
    /// SHA-256 of the spec file.
    pub spec_sha256: String,
    /// Whether the output-identity gate passed and no request failed.
    pub pass: bool,
    /// What the run found.
    #[serde(flatten)]
    pub result: ServeResult,
}
