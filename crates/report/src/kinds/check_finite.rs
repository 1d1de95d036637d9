//! `check_finite`: no NaN or infinity in the outputs.

use super::{count, pass_mark, pass_word, Ctx, Place, RecordKind, Rendered, Summary};
use crate::evidence::parts::{check_part, finite_lines};
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
        Summary {
            gates: Some(count(&all, |t| t.report.all_finite())),
            verdict: pass_word(self.pass),
            ratio: None,
            mark: pass_mark(self.pass),
        }
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
}

/// The result of `kernelab check finite`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FiniteFiles {
    /// Whether every tensor of every file is all finite.
    pub pass: bool,
    /// One entry per file.
    pub files: Vec<FileFinite>,
}
