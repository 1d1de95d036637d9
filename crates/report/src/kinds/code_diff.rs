//! `code_diff`: what changed in the machine code of two builds.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::figure::{Kind as FigureKind, Sink};
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
    fn figures(&self, sink: &mut Sink<'_>) {
        let changed = self
            .kernels
            .iter()
            .filter(|k| k.code_changed.unwrap_or(true))
            .count();
        sink.count_of(changed, self.kernels.len(), "kernels changed");
        for k in &self.kernels {
            let s = Some(k.symbol.as_str());
            for r in k.classes.iter().chain(&k.mnemonics).chain(&k.resources) {
                let what = format!("{} {}", k.symbol, r.item);
                for (side, v) in [("baseline", r.base), ("candidate", r.cand)] {
                    if let Some(v) = v {
                        sink.add(FigureKind::Count, v as f64, &format!("{what}, {side}"), s);
                    }
                }
                if let (Some(b), Some(c)) = (r.base, r.cand) {
                    sink.add(
                        FigureKind::Count,
                        c as f64 - b as f64,
                        &format!("{what}, difference"),
                        s,
                    );
                    if b > 0 {
                        sink.add(
                            FigureKind::Change,
                            c as f64 / b as f64 - 1.0,
                            &format!("{what}, change"),
                            s,
                        );
                    }
                }
            }
        }
    }
}
