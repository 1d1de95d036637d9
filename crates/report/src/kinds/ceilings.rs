//! `ceilings`: measured (or datasheet) peaks of a device.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::sink::{Kind as FigureKind, Sink};
use kernelab_model::roofline::Ceilings as CeilingsBody;

impl RecordKind for CeilingsBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Roofline]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::kinds::roofline::view::ceilings_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        plain(
            crate::kinds::roofline::view::ceilings_part(self).1,
            Mark::Good,
        )
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        for c in &self.ceilings {
            let kind = match c.kind.unit() {
                "byte/second" => FigureKind::ByteRate,
                "flop/second" => FigureKind::FlopRate,
                _ => FigureKind::Time,
            };
            let scale = if kind == FigureKind::Time { 1e9 } else { 1.0 };
            let what = format!("{:?}", c.kind);
            if let Some(m) = &c.measured {
                sink.add(kind, m.value * scale, &format!("{what} measured"), None);
            }
            if let Some(q) = &c.datasheet {
                sink.add(kind, q.value * scale, &format!("{what} datasheet"), None);
                if let Some(m) = &c.measured {
                    if q.value > 0.0 {
                        sink.add(
                            FigureKind::Share,
                            m.value / q.value,
                            &format!("{what} measured of datasheet"),
                            None,
                        );
                    }
                }
            }
        }
    }
}
