//! What a record kind gives the report ([`RecordKind`]: where its blocks go, its blocks and
//! headline, its summary row, whether it passed, the figures a note may quote) and the small
//! helpers the kinds share. Imports nothing above the table, the formatting and the figures.

use crate::sink::Sink;
use crate::table::Block;
use kernelab_stats::{Analysis, Change, Verdict};

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
    /// The record's rows as CSV, when the kind has a CSV view.
    fn csv(&self) -> Option<crate::Result<String>> {
        None
    }
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

/// An interval as the `(low, high)` pair the plots take.
pub(crate) fn ends(ci: Option<kernelab_stats::Interval>) -> Option<(f64, f64)> {
    ci.map(|i| (i.low, i.high))
}

/// A check record's part: its lines and the pass/fail headline.
pub(crate) fn check_part<T>(
    what: &str,
    r: &T,
    pass: bool,
    lines: fn(&T) -> Vec<String>,
) -> Rendered {
    Rendered {
        blocks: vec![Block::Lines(lines(r))],
        headline: format!("{what}: {}", if pass { "pass" } else { "FAIL" }),
    }
}
