//! `code_matrix`: which builds of a sweep changed their machine code.

use super::callouts;
use crate::kinds::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::sink::Sink;
use crate::table::Align;
use crate::table::Block;
use crate::table::Table;
use kernelab_code::Matrix;

impl RecordKind for Matrix {
    fn places(&self) -> &'static [Place] {
        &[Place::Code]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(code_matrix_part(self))
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
        crate::kinds::within(self.changed, self.total, "builds changed")
    }
}

pub(crate) fn code_matrix_part(r: &Matrix) -> (Vec<Block>, String) {
    let head = format!(
        "{} of {} builds changed; {} distinct kernel symbols",
        r.changed, r.total, r.distinct_symbols
    );
    let mut t = Table::new(
        "Changed builds",
        &[("build", Align::Left), ("kernels changed", Align::Left)],
    );
    for p in r.pairs.iter().filter(|p| p.changed) {
        t.push(vec![
            p.key.clone(),
            crate::format::shorten(&p.changed_kernels.join(", "), 100),
        ]);
    }
    let mut blocks = vec![Block::Lines(vec![head.clone()])];
    if !t.rows.is_empty() {
        blocks.push(Block::Table(t));
    }
    blocks.push(callouts(&r.callouts));
    (blocks, head)
}
