//! `check_finite`: no NaN or infinity in the outputs.

use crate::kinds::{check_part, count, gate_summary, Ctx, Place, RecordKind, Rendered, Summary};
use kernelab_tensor::FileFinite;
use serde::{Deserialize, Serialize};

impl RecordKind for FiniteFiles {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        check_part("finite", self, self.pass, finite_lines)
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let all: Vec<_> = self.files.iter().flat_map(|f| &f.tensors).collect();
        gate_summary(count(&all, |t| t.report.all_finite()), self.pass)
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
}

/// The result of `kernelab check finite`.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FiniteFiles {
    /// Whether every tensor of every file is all finite.
    pub pass: bool,
    /// One entry per file.
    pub files: Vec<FileFinite>,
}

impl kernelab_model::Body for FiniteFiles {
    const KIND: &'static str = "check_finite";
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
