//! `check_repeat`: repeated runs give identical outputs.

use crate::kinds::{check_part, gate_summary, Ctx, Place, RecordKind, Rendered, Summary};
use kernelab_tensor::RepeatReport;

impl RecordKind for RepeatReport {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        check_part("repeat", self, self.pass, repeat_lines)
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        gate_summary((usize::from(self.pass), 1), self.pass)
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
}

pub(crate) fn repeat_lines(r: &RepeatReport) -> Vec<String> {
    vec![if r.pass {
        format!("{} runs bit-identical", r.files.len())
    } else {
        format!("runs differ: {}", r.differing.join("; "))
    }]
}
