//! `code_show`: the kernels of code objects.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use kernelab_code::CodeObject;
use serde::{Deserialize, Serialize};

impl RecordKind for CodeShowBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Code]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(crate::evidence::parts::code_show_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        plain(
            format!(
                "{} read",
                crate::format::count(
                    self.objects.iter().map(|o| o.kernels.len()).sum::<usize>(),
                    "kernel",
                    "kernels"
                )
            ),
            Mark::Good,
        )
    }
}

/// `kernelab code show` (`kind: "code_show"`).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CodeShowBody {
    /// Every code object read.
    pub objects: Vec<CodeObject>,
}

impl kernelab_model::Body for CodeShowBody {
    const KIND: &'static str = "code_show";
}
