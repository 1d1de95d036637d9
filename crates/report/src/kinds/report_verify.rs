//! `report_verify`: a bundle's records re-run on another day or machine, each reproduced,
//! moved or not re-runnable here (`kernelab report verify BUNDLE --record DIR`).

use super::{plain, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::sink::Sink;
use crate::verify::{verify_sections, Finding, Verification};

impl Verification {
    /// How many records found `f`.
    fn count(&self, f: Finding) -> usize {
        self.records.iter().filter(|r| r.finding == f).count()
    }

    /// `N of M records reproduced, K moved, J not re-runnable here`.
    fn headline(&self) -> String {
        format!(
            "{} of {} records reproduced, {} moved, {} not re-runnable here",
            self.count(Finding::Reproduced),
            self.records.len(),
            self.count(Finding::Moved),
            self.count(Finding::NotRerunnable)
        )
    }
}

impl RecordKind for Verification {
    fn places(&self) -> &'static [Place] {
        &[Place::Timing]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        Rendered {
            blocks: verify_sections(self),
            headline: self.headline(),
        }
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let mark = if self.count(Finding::Moved) > 0 {
            Mark::Fail
        } else if self.count(Finding::NotRerunnable) > 0 {
            Mark::Warn
        } else {
            Mark::Good
        };
        plain(self.headline(), mark)
    }
    fn pass(&self) -> Option<bool> {
        Some(self.reproduced())
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        for (f, what) in [
            (Finding::Reproduced, "records reproduced"),
            (Finding::Moved, "records moved"),
            (Finding::NotRerunnable, "records not re-runnable here"),
        ] {
            sink.count_of(self.count(f), self.records.len(), what);
        }
    }
}
