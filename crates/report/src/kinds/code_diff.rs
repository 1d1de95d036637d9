//! `code_diff`: what changed in the machine code of two builds.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use kernelab_code::ObjectDiff;

impl RecordKind for ObjectDiff {
    fn places(&self) -> &'static [Place] {
        &[Place::Code]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::evidence::parts::code_diff_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let changed = self
            .kernels
            .iter()
            .filter(|k| k.code_changed.unwrap_or(true))
            .count();
        let text = format!(
            "{changed} of {} kernels changed{}",
            self.kernels.len(),
            if self.callouts.is_empty() {
                ""
            } else {
                "; spills or scratch"
            }
        );
        let mark = if self.callouts.is_empty() {
            Mark::Good
        } else {
            Mark::Warn
        };
        plain(text, mark)
    }
}
