//! `check_bitwise`: baseline and candidate outputs bit for bit.

use crate::format::thousands;
use crate::kinds::{check_part, count, gate_summary, Ctx, Place, RecordKind, Rendered, Summary};
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

fn shape_text(shape: &[usize]) -> String {
    format!(
        "[{}]",
        shape
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}

pub(crate) fn bitwise_lines(r: &FileComparison<BitwiseReport>) -> Vec<String> {
    r.tensors
        .iter()
        .map(|t| match (&t.problem, &t.result) {
            (Some(p), _) => format!("{}: FAIL ({p})", t.name),
            (None, Some(res)) if res.differing == 0 => format!(
                "{} ({} {}): bit-exact",
                t.name,
                t.dtype,
                shape_text(&t.shape)
            ),
            (None, Some(res)) => format!(
                "{}: {} of {} elements differ",
                t.name,
                thousands(res.differing),
                thousands(res.elements)
            ),
            (None, None) => format!("{}: FAIL (not compared)", t.name),
        })
        .collect()
}
