//! `sweep`: every gate (and timing) over a grid of configurations.

use super::{gate_mark, pass_word, Ctx, Place, RecordKind, Rendered, Summary};
use crate::documents::SweepBody;
use crate::figure::Sink;

impl RecordKind for SweepBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        let (blocks, headline, _) = crate::evidence::sweep_part(self);
        Rendered { blocks, headline }
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        Summary {
            gates: Some((self.passed, self.total)),
            verdict: self
                .lines
                .first()
                .cloned()
                .unwrap_or_else(|| pass_word(self.pass)),
            ratio: None,
            mark: gate_mark(self.passed, self.total),
        }
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        sink.count_of(self.passed, self.total, "configs passed every gate");
        sink.count_of(
            self.bitwise_equal,
            self.bitwise_checked,
            "configs bitwise equal",
        );
        let changed = self.builds.iter().filter(|b| b.changed).count();
        sink.count_of(changed, self.builds.len(), "builds change code");
        sink.count_of(
            self.code_changed_points,
            self.total,
            "configs with changed code",
        );
        for g in &self.gates {
            sink.count_of(g.passed, g.total, &format!("configs: {}", g.gate));
        }
    }
    fn consistent(&self) -> Result<(), String> {
        super::within(self.done, self.total, "points done")?;
        super::within(
            self.passed + self.failed + self.errors,
            self.done,
            "points passed, failed or in error",
        )?;
        super::within(
            self.bitwise_equal,
            self.bitwise_checked,
            "points bitwise equal",
        )?;
        for g in &self.gates {
            super::within(g.passed, g.total, &format!("points passing {}", g.gate))?;
            super::within(g.total, self.done, &format!("points {} ran on", g.gate))?;
        }
        Ok(())
    }
}
