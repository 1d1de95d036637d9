//! `check_close` and `check_oracle`: outputs within a tolerance (of each other, or of a
//! higher-precision reference).

use crate::format::UNAVAILABLE;
use crate::kinds::{check_part, count, gate_summary, Ctx, Place, RecordKind, Rendered, Summary};
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

pub(crate) fn close_lines(r: &FileComparison<CloseReport>) -> Vec<String> {
    r.tensors
        .iter()
        .map(|t| match (&t.problem, &t.result) {
            (Some(p), _) => format!("{}: FAIL ({p})", t.name),
            (None, Some(res)) => {
                let e = |x: Option<f64>| {
                    x.map_or_else(|| UNAVAILABLE.to_string(), |x| format!("{x:.3e}"))
                };
                format!(
                    "{}: max abs error {}, max rel error {}, rel L2 {}, {} mismatches",
                    t.name,
                    e(res.max_abs_err),
                    e(res.max_rel_err),
                    e(res.rel_l2_err),
                    res.mismatches
                )
            }
            (None, None) => format!("{}: FAIL (not compared)", t.name),
        })
        .collect()
}
