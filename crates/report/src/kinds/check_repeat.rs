//! `check_repeat`: repeated runs give identical outputs.

use super::{pass_mark, pass_word, Ctx, Place, RecordKind, Rendered, Summary};
use crate::evidence::parts::{check_part, repeat_lines};
use kernelab_tensor::RepeatReport;

impl RecordKind for RepeatReport {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        check_part("repeat", self, self.pass, repeat_lines)
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        Summary {
            gates: Some((usize::from(self.pass), 1)),
            verdict: pass_word(self.pass),
            ratio: None,
            mark: pass_mark(self.pass),
        }
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
}
