//! `roofline`: where each family's achieved rate sits under its roof.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::sink::{Kind as FigureKind, Sink};
use kernelab_model::roofline::Roofline as RooflineBody;

pub(crate) mod view;

impl RecordKind for RooflineBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Roofline]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::kinds::roofline::view::roofline_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        plain(
            crate::kinds::roofline::view::roofline_part(self).1,
            Mark::Good,
        )
    }
    fn csv(&self) -> Option<crate::Result<String>> {
        Some(view::roofline_csv(self))
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        if let Some(b) = self.bandwidth.value() {
            sink.add(FigureKind::ByteRate, b, "DRAM bandwidth used", None);
        }
        for p in &self.peaks {
            if let Some(v) = p.peak.value() {
                sink.add(FigureKind::FlopRate, v, &format!("{:?} peak", p.roof), None);
            }
        }
        for f in &self.families {
            let s = Some(f.family.as_str());
            let n = &f.family;
            sink.add(FigureKind::Count, f.calls as f64, &format!("{n} calls"), s);
            sink.add(FigureKind::Time, f.total_ns as f64, &format!("{n} time"), s);
            if let Some(x) = f.placement.byte_per_s.value() {
                sink.add(
                    FigureKind::ByteRate,
                    x,
                    &format!("{n} DRAM bytes per second"),
                    s,
                );
            }
            if let Some(x) = f.placement.flop_per_s.value() {
                sink.add(FigureKind::FlopRate, x, &format!("{n} FLOP per second"), s);
            }
            // The table's work columns: GFLOP and MB per launch, FLOP per byte.
            for (v, what) in [
                (f.flops_per_launch.value(), "FLOP per launch"),
                (f.bytes_per_launch.value(), "bytes per launch"),
                (f.placement.intensity.value(), "FLOP per byte"),
            ] {
                if let Some(v) = v {
                    sink.add(FigureKind::Work, v, &format!("{n} {what}"), s);
                }
            }
            if let Some(x) = f.placement.fraction.value() {
                sink.add(
                    FigureKind::Share,
                    x,
                    &format!("{n} fraction of its roof"),
                    s,
                );
            }
        }
    }
}
