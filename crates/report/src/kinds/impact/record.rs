//! `impact`: the predicted request impact of a kernel change, with the measurements set
//! against it (`kernelab impact --record`).

use crate::evidence::Block;
use crate::format::percent;
use crate::kinds::impact::{impact_lines, measured_table, Impact};
use crate::kinds::{plain, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::sink::{Kind as FigureKind, Sink};

impl RecordKind for Impact {
    fn places(&self) -> &'static [Place] {
        &[Place::Request]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        let mut blocks = vec![Block::Lines(impact_lines(self))];
        blocks.extend(measured_table(self).map(Block::Table));
        Rendered {
            blocks,
            headline: self.headline(),
        }
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let bad = self.measured.iter().any(|m| m.consistent == Some(false));
        plain(self.headline(), if bad { Mark::Warn } else { Mark::Good })
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        let s = Some(self.family.as_str());
        let f = &self.family;
        sink.add(FigureKind::Share, self.share, &format!("{f} share"), s);
        sink.add(
            FigureKind::Time,
            self.family_ns as f64,
            &format!("{f} total"),
            s,
        );
        sink.add(
            FigureKind::Count,
            self.calls as f64,
            &format!("{f} calls"),
            s,
        );
        sink.add(
            FigureKind::Time,
            self.kernel_time_ns as f64,
            "request kernel time",
            None,
        );
        sink.ratio(&self.kernel_run, "kernel run ratio");
        for (what, e) in [
            ("kernel time change", Some(self.kernel)),
            ("predicted request kernel time change", Some(self.request)),
            ("bound on GPU busy time change", self.busy_bound),
            ("bound on wall time change", self.wall_bound),
        ] {
            if let Some(e) = e {
                sink.add(FigureKind::Change, e.value, what, None);
                if let Some(i) = e.interval {
                    sink.add(
                        FigureKind::Change,
                        i.low,
                        &format!("{what} interval low"),
                        None,
                    );
                    sink.add(
                        FigureKind::Change,
                        i.high,
                        &format!("{what} interval high"),
                        None,
                    );
                }
            }
        }
        for m in &self.measured {
            sink.add(
                FigureKind::Change,
                m.change.value,
                &format!("measured {}", m.figure),
                None,
            );
            for x in [m.predicted.low, m.predicted.high] {
                sink.add(
                    FigureKind::Change,
                    x,
                    &format!("predicted {}", m.figure),
                    None,
                );
            }
        }
    }
}

impl Impact {
    /// The one-line finding: the predicted change of request kernel time.
    fn headline(&self) -> String {
        format!(
            "{}: predicted request kernel time change {}",
            self.family,
            percent(self.request.value, true)
        )
    }
}
