//! `roofline`: where each family's achieved rate sits under its roof.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::documents::RooflineBody;

impl RecordKind for RooflineBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Roofline]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::roofline::roofline_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        plain(crate::roofline::roofline_part(self).1, Mark::Good)
    }
}
