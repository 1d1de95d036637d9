//! `check_sweep`: every gate over a sweep of configurations of saved outputs.

use super::{pass_mark, pass_word, Ctx, Place, RecordKind, Rendered, Summary};
use crate::audit::Sink;
use crate::evidence::parts::{check_part, sweep_lines};
use kernelab_tensor::SweepReport;

impl RecordKind for SweepReport {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        check_part("sweep", self, self.pass, sweep_lines)
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        Summary {
            gates: Some(
                self.gates
                    .iter()
                    .fold((0, 0), |(p, t), g| (p + g.passed, t + g.total)),
            ),
            verdict: pass_word(self.pass),
            ratio: None,
            mark: pass_mark(self.pass),
        }
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        for g in &self.gates {
            sink.count_of(g.passed, g.total, &format!("configs passing {}", g.gate));
        }
    }
}
