//! Record kinds: one file per kind, each implementing [`RecordKind`] once (where it goes in the
//! report, its blocks and headline, its summary row, whether it passed, and the figures a note
//! may quote), and one registry ([`registry!`] below) that names every kind. Adding a kind is
//! one file and one line of the registry.

use crate::evidence::Block;
use crate::figure::Sink;
use kernelab_stats::{Analysis, Change, Verdict};

pub mod ab;
mod ceilings;
mod check_bitwise;
mod check_close;
pub mod check_finite;
mod check_repeat;
mod code_diff;
mod code_matrix;
pub mod code_show;
pub mod compare;
pub mod counters;
mod impact;
pub mod kernel_run;
pub mod metrics;
pub mod profile;
mod roofline;
pub mod serve;
mod sweep;

/// The report section a record's blocks go in, in reading order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Place {
    /// Why this kernel: the request's profile.
    Why,
    /// Correctness gates.
    Correctness,
    /// Code evidence.
    Code,
    /// Hardware counters.
    Counters,
    /// Kernel timing.
    Timing,
    /// Ceilings and rooflines.
    Roofline,
    /// Request impact.
    Request,
    /// Serving.
    Serving,
}

impl Place {
    /// Every section, in reading order.
    pub const ALL: [Place; 8] = [
        Place::Why,
        Place::Correctness,
        Place::Code,
        Place::Counters,
        Place::Timing,
        Place::Roofline,
        Place::Request,
        Place::Serving,
    ];
    /// The section's heading.
    pub fn title(self) -> &'static str {
        match self {
            Place::Why => "Why this kernel",
            Place::Correctness => "Correctness",
            Place::Code => "Code evidence",
            Place::Counters => "Counters",
            Place::Timing => "Kernel timing",
            Place::Roofline => "Roofline",
            Place::Request => "Request impact",
            Place::Serving => "Serving",
        }
    }
}

/// How a summary row reads at a glance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mark {
    /// Gates passed, no slower verdict.
    Good,
    /// Slower, or no decision.
    Warn,
    /// A gate failed.
    Fail,
}

impl Mark {
    /// The mark's symbol.
    pub fn text(self) -> &'static str {
        match self {
            Mark::Good => "✔",
            Mark::Warn => "⚠",
            Mark::Fail => "✘",
        }
    }
}

/// A record's row of the summary table.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Gates (passed, run), for gate records.
    pub gates: Option<(usize, usize)>,
    /// The verdict in a few words.
    pub verdict: String,
    /// The ratio with its interval, when the record has one.
    pub ratio: Option<(f64, Option<(f64, f64)>)>,
    /// The mark.
    pub mark: Mark,
}

/// What a kind's blocks may depend on beyond the record itself.
pub struct Ctx<'a> {
    /// The record's kind name (`check_close` and `check_oracle` share one body).
    pub kind: &'a str,
    /// The record's label.
    pub label: &'a str,
    /// Families a kernel run of the bundle changes (marked in profiles).
    pub marked: &'a [String],
}

/// A record's blocks for one section, and its one-line headline.
pub struct Rendered {
    /// The blocks.
    pub blocks: Vec<Block>,
    /// The headline.
    pub headline: String,
}

/// One record kind, implemented once in its own file.
pub trait RecordKind {
    /// The sections this kind's blocks go in (a kernel run: correctness and timing; an `ab`:
    /// timing, or request impact when it measures a profiled request).
    fn places(&self) -> &'static [Place];
    /// The blocks for `place` and the headline.
    fn render(&self, place: Place, ctx: &Ctx<'_>) -> Rendered;
    /// The summary row.
    fn summary(&self, ctx: &Ctx<'_>) -> Summary;
    /// Whether the record is a gate, and if so whether it passed.
    fn pass(&self) -> Option<bool> {
        None
    }
    /// The paired analysis the forest plot draws, when the kind has one.
    fn analysis(&self) -> Option<&Analysis> {
        None
    }
    /// Every figure a note may quote from this record.
    fn figures(&self, _sink: &mut Sink<'_>) {}
    /// Whether the record's own counts agree with each other (`9 of 4 identical` does not): a
    /// record that contradicts itself is refused when the bundle is read, naming what.
    fn consistent(&self) -> Result<(), String> {
        Ok(())
    }
}

/// `part` of `total` must not exceed it.
pub(crate) fn within(part: usize, total: usize, what: &str) -> Result<(), String> {
    if part > total {
        Err(format!("{what}: {part} of {total} is more than the total"))
    } else {
        Ok(())
    }
}

/// The registry: every record kind, its variant of [`crate::documents::Evidence`] and its body
/// type, whose [`kernelab_model::Body::KIND`] is the `kind` name that reads into it.
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident($ty:ty);)*) => {
        /// A bundle record's result, read into the type its kind names.
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum Evidence {
            $($(#[$doc])* $variant($ty),)*
        }

        impl Evidence {
            /// Reads `result` as the body of a `kind` document; `None` for a kind this kernelab
            /// does not know.
            pub fn read(
                kind: &str,
                result: &serde_json::Value,
            ) -> Option<serde_json::Result<Evidence>> {
                $(if kind == <$ty as Body>::KIND {
                    return Some(<$ty as serde::Deserialize>::deserialize(result).map(Evidence::$variant));
                })*
                None
            }
            /// Reads the JSON text `result` as the body of a `kind` document (straight into its
            /// type, no JSON tree); `None` for a kind this kernelab does not know.
            pub fn read_str(kind: &str, result: &str) -> Option<serde_json::Result<Evidence>> {
                $(if kind == <$ty as Body>::KIND {
                    return Some(serde_json::from_str::<$ty>(result).map(Evidence::$variant));
                })*
                None
            }
            /// Every kind name this kernelab reads.
            pub const KINDS: &'static [&'static str] = &[$(<$ty as Body>::KIND),*];
            /// The record's kind name, from its body's type.
            pub fn name(&self) -> &'static str {
                match self {
                    $(Evidence::$variant(_) => <$ty as Body>::KIND,)*
                }
            }
            /// The body written back as JSON: reading a record and writing it again gives the
            /// same JSON.
            pub fn to_value(&self) -> serde_json::Result<serde_json::Value> {
                match self {
                    $(Evidence::$variant(b) => serde_json::to_value(b),)*
                }
            }
            /// The body as a document of its kind, written by this kernelab.
            pub fn document(&self) -> serde_json::Result<kernelab_model::Document<serde_json::Value>> {
                Ok(kernelab_model::Document::new(self.name(), self.to_value()?))
            }
            /// The record kind's one implementation.
            pub fn kind(&self) -> &dyn $crate::kinds::RecordKind {
                match self {
                    $(Evidence::$variant(b) => b,)*
                }
            }
            /// Whether the record is a gate, and if so whether it passed.
            pub fn pass(&self) -> Option<bool> {
                self.kind().pass()
            }
            /// The document and record schemas of every kind name (docs/schema/).
            pub fn schemas() -> Vec<$crate::schema::KindSchemas> {
                vec![$($crate::schema::kind_schemas::<$ty>()),*]
            }
        }
    };
}

use crate::documents::{
    AbBody, CeilingsBody, CodeShowBody, CompareBody, CountersBody, FiniteFiles, KernelRunBody,
    MetricsBody, ProfileBody, RooflineBody, ServeBody, SweepBody,
};
use kernelab_code::{Matrix, ObjectDiff};
use kernelab_model::Body;
use kernelab_tensor::{BitwiseReport, CloseReport, FileComparison, Oracle, RepeatReport};

registry! {
    /// `profile`.
    Profile(ProfileBody);
    /// `compare`.
    Compare(CompareBody);
    /// `metrics`.
    Metrics(MetricsBody);
    /// `code_show`.
    CodeShow(CodeShowBody);
    /// `code_diff`.
    CodeDiff(ObjectDiff);
    /// `code_matrix`.
    CodeMatrix(Matrix);
    /// `check_bitwise`.
    CheckBitwise(FileComparison<BitwiseReport>);
    /// `check_close`.
    CheckClose(FileComparison<CloseReport>);
    /// `check_oracle` (a `check_close` against a higher-precision reference).
    CheckOracle(Oracle);
    /// `check_finite`.
    CheckFinite(FiniteFiles);
    /// `check_repeat`.
    CheckRepeat(RepeatReport);
    /// `ab`.
    Ab(AbBody);
    /// `kernel_run`.
    KernelRun(KernelRunBody);
    /// `serve`.
    Serve(ServeBody);
    /// `ceilings`.
    Ceilings(CeilingsBody);
    /// `roofline`.
    Roofline(RooflineBody);
    /// `counters`.
    Counters(CountersBody);
    /// `sweep` (`kernelab sweep` and `kernelab check sweep`).
    Sweep(SweepBody);
    /// `impact`.
    Impact(crate::impact::Impact);
}

/// A change as the summary's (ratio, interval) pair; `None` when unavailable.
pub(crate) fn pair(c: &Change) -> Option<(f64, Option<(f64, f64)>)> {
    Some((c.ratio()?, c.interval().map(|i| (i.low, i.high))))
}

/// The mark of a verdict.
pub(crate) fn verdict_mark(v: Verdict) -> Mark {
    match v {
        Verdict::Faster | Verdict::Same => Mark::Good,
        Verdict::Slower | Verdict::Inconclusive => Mark::Warn,
    }
}

/// The mark of `passed` gates of `total`.
pub(crate) fn gate_mark(passed: usize, total: usize) -> Mark {
    if passed == total {
        Mark::Good
    } else {
        Mark::Fail
    }
}

/// (items for which `ok` holds, items).
pub(crate) fn count<T>(items: &[T], ok: impl Fn(&T) -> bool) -> (usize, usize) {
    (items.iter().filter(|t| ok(t)).count(), items.len())
}

/// `pass` or `FAIL`.
pub(crate) fn pass_word(pass: bool) -> String {
    if pass { "pass" } else { "FAIL" }.into()
}

/// The mark of a gate's result.
pub(crate) fn pass_mark(pass: bool) -> Mark {
    if pass {
        Mark::Good
    } else {
        Mark::Fail
    }
}

/// The summary row of a gate record: `passed` of its tensors or files, pass or FAIL.
pub(crate) fn gate_summary(passed: (usize, usize), pass: bool) -> Summary {
    Summary {
        gates: Some(passed),
        verdict: pass_word(pass),
        ratio: None,
        mark: pass_mark(pass),
    }
}

/// A summary row with no gates and no ratio.
pub(crate) fn plain(verdict: String, mark: Mark) -> Summary {
    Summary {
        gates: None,
        verdict,
        ratio: None,
        mark,
    }
}

/// Blocks and headline from a `(blocks, headline)` pair of the part builders.
pub(crate) fn rendered((blocks, headline): (Vec<Block>, String)) -> Rendered {
    Rendered { blocks, headline }
}
