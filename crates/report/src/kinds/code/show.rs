//! `code_show`: the kernels of code objects.

use crate::kinds::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::sink::{Kind as FigureKind, Sink};
use crate::table::Block;
use kernelab_code::CodeObject;
use serde::{Deserialize, Serialize};

impl RecordKind for CodeShowBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Code]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(code_show_part(self))
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
    fn figures(&self, sink: &mut Sink<'_>) {
        let n = self.objects.iter().map(|o| o.kernels.len()).sum::<usize>();
        // About the noun phrase the summary writes after the count (`1 kernel read`), so that
        // the count is held against this figure, not another count of the label.
        let phrase = if n == 1 {
            "kernel read"
        } else {
            "kernels read"
        };
        sink.add(FigureKind::Count, n as f64, "kernels read", Some(phrase));
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

pub(crate) fn code_show_part(r: &CodeShowBody) -> (Vec<Block>, String) {
    let n: usize = r.objects.iter().map(|o| o.kernels.len()).sum();
    let head = format!("{} read", crate::format::count(n, "kernel", "kernels"));
    (vec![Block::Lines(vec![head.clone()])], head)
}
