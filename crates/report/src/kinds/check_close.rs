//! `check_close` and `check_oracle`: outputs within a tolerance (of each other, or of a
//! higher-precision reference).

use super::{count, gate_summary, Ctx, Place, RecordKind, Rendered, Summary};
use crate::evidence::parts::{check_part, close_lines};
use kernelab_tensor::{CloseReport, FileComparison, Oracle};

/// The summary row of a close comparison: the tensors with no mismatch.
fn close_summary(c: &FileComparison<CloseReport>) -> Summary {
    let g = count(&c.tensors, |t| {
        t.problem.is_none() && t.result.as_ref().is_some_and(|r| r.mismatches == 0)
    });
    gate_summary(g, c.pass)
}

impl RecordKind for FileComparison<CloseReport> {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        check_part("close", self, self.pass, close_lines)
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        close_summary(self)
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
}

impl RecordKind for Oracle {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        check_part("oracle", &self.0, self.0.pass, close_lines)
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        close_summary(&self.0)
    }
    fn pass(&self) -> Option<bool> {
        Some(self.0.pass)
    }
}
