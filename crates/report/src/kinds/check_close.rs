//! `check_close` and `check_oracle`: outputs within a tolerance (of each other, or of a
//! higher-precision reference).

use super::{count, gate_summary, Ctx, Place, RecordKind, Rendered, Summary};
use crate::evidence::parts::{check_part, close_lines};
use kernelab_tensor::{CloseReport, FileComparison};

impl RecordKind for FileComparison<CloseReport> {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness]
    }
    fn render(&self, _: Place, ctx: &Ctx<'_>) -> Rendered {
        let what = if ctx.kind == "check_oracle" {
            "oracle"
        } else {
            "close"
        };
        check_part(what, self, self.pass, close_lines)
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let g = count(&self.tensors, |t| {
            t.problem.is_none() && t.result.as_ref().is_some_and(|r| r.mismatches == 0)
        });
        gate_summary(g, self.pass)
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
}
