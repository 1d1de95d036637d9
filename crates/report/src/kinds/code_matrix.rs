//! `code_matrix`: which builds of a sweep changed their machine code.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::figure::Sink;
use kernelab_code::Matrix;

impl RecordKind for Matrix {
    fn places(&self) -> &'static [Place] {
        &[Place::Code]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::evidence::parts::code_matrix_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        plain(
            format!("{} of {} builds changed", self.changed, self.total),
            if self.callouts.is_empty() {
                Mark::Good
            } else {
                Mark::Warn
            },
        )
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        sink.count_of(self.changed, self.total, "builds changed");
    }
    fn consistent(&self) -> Result<(), String> {
        super::within(self.changed, self.total, "builds changed")
    }
}
