//! `check_bitwise`: baseline and candidate outputs bit for bit.

use super::{count, gate_summary, Ctx, Place, RecordKind, Rendered, Summary};
use crate::evidence::parts::{bitwise_lines, check_part};
use kernelab_tensor::{BitwiseReport, FileComparison};

impl RecordKind for FileComparison<BitwiseReport> {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        check_part("bitwise", self, self.pass, bitwise_lines)
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let g = count(&self.tensors, |t| {
            t.problem.is_none() && t.result.as_ref().is_some_and(|r| r.differing == 0)
        });
        gate_summary(g, self.pass)
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
}
