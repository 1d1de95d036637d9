//! `ceilings`: measured (or datasheet) peaks of a device.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::documents::CeilingsBody;

impl RecordKind for CeilingsBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Roofline]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::roofline::ceilings_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        plain(crate::roofline::ceilings_part(self).1, Mark::Good)
    }
}
