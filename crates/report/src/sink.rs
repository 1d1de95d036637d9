//! A figure a note may quote, in base units (ns, fractions, candidate / baseline), and the
//! [`Sink`] each record kind writes its figures to. Imports nothing above the formatting and
//! number-reading floors, so record kinds and the audit both stand on it.

use crate::audit::number::{numbers, Unit};
use crate::format::{duration_ns, percent, with_unit, Unit as Shown};
use kernelab_stats::Analysis;
use kernelab_trace::KernelRow;

/// What a figure measures, which decides the numbers it can match.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A duration, ns (signed for changes of time).
    Time,
    /// A change, (candidate − baseline) / baseline.
    Change,
    /// A share, threshold, level or resolution: an unsigned fraction.
    Share,
    /// Candidate / baseline.
    Ratio,
    /// Calls.
    Count,
    /// Gates passed; `total` holds the gates run.
    Gates,
    /// Bytes per second.
    ByteRate,
    /// FLOP per second.
    FlopRate,
    /// Tokens per second.
    TokenRate,
    /// Requests per second.
    RequestRate,
    /// A clock, Hz.
    Frequency,
    /// A temperature, °C.
    Temperature,
    /// A power, W.
    Power,
    /// Work of one launch (FLOP, bytes) or per byte (FLOP/byte).
    Work,
}

/// One quotable figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// What it measures.
    pub kind: Kind,
    /// Its value in base units.
    pub value: f64,
    /// Gates run (for [`Kind::Gates`]).
    pub total: f64,
    /// What it is, in words: `kernel_run w8s2: ratio`.
    pub what: String,
    /// The kernel or family it is about, when it is about one.
    pub subject: Option<String>,
}

impl Figure {
    /// The figure as the report prints it.
    pub fn text(&self) -> String {
        match self.kind {
            Kind::Time => duration_ns(self.value),
            Kind::Change => percent(self.value, true),
            Kind::Share => percent(self.value, false),
            Kind::Ratio => crate::format::fixed(self.value, 4),
            Kind::Count => format!("{}", self.value),
            Kind::Gates => format!("{}/{}", self.value, self.total),
            Kind::ByteRate => with_unit(self.value, 1, Shown::GigaBytesPerS),
            Kind::FlopRate => with_unit(self.value, 2, Shown::TeraFlopPerS),
            Kind::TokenRate => format!("{} tok/s", self.value),
            Kind::RequestRate => format!("{} req/s", self.value),
            Kind::Frequency => format!("{} MHz", self.value / 1e6),
            Kind::Temperature => format!("{} °C", self.value),
            Kind::Power => format!("{} W", self.value),
            Kind::Work => format!("{}", self.value),
        }
    }
}

/// Collects figures of one record (each record kind adds its own through
/// [`crate::kinds::RecordKind::figures`]).
pub struct Sink<'a> {
    out: &'a mut Vec<Figure>,
    source: String,
    /// The subject of the figures added without one (see [`Sink::about`]).
    about: Option<String>,
}

impl<'a> Sink<'a> {
    /// A sink adding to `out` figures of `source` (`kernel_run w8s2`), which names each.
    pub fn new(out: &'a mut Vec<Figure>, source: String) -> Self {
        Sink {
            out,
            source,
            about: None,
        }
    }

    /// Figures added from now on without a subject are about `subject` (a serving metric's
    /// ratio and interval, say); `None` ends that.
    pub fn about(&mut self, subject: Option<&str>) {
        self.about = subject.map(str::to_string);
    }

    /// One figure of `kind`, about `subject` when it is about one kernel or family.
    pub fn add(&mut self, kind: Kind, value: f64, what: &str, subject: Option<&str>) {
        if value.is_finite() {
            self.out.push(Figure {
                kind,
                value,
                total: 0.0,
                what: format!("{}: {what}", self.source),
                subject: subject.map(str::to_string).or_else(|| self.about.clone()),
            });
        }
    }

    /// A count of a total ("3 of 4 configs", "6/6" gates).
    pub fn count_of(&mut self, part: usize, total: usize, what: &str) {
        self.out.push(Figure {
            kind: Kind::Gates,
            value: part as f64,
            total: total as f64,
            what: format!("{}: {what}", self.source),
            subject: None,
        });
    }

    /// A ratio with its interval, and the same as changes.
    pub fn ratio(&mut self, c: &kernelab_stats::Change, what: &str) {
        let Some(r) = c.ratio() else {
            return;
        };
        self.add(Kind::Ratio, r, what, None);
        self.add(Kind::Change, r - 1.0, &format!("{what} − 1"), None);
        if let Some(i) = c.interval() {
            for (x, end) in [(i.low, "low"), (i.high, "high")] {
                self.add(Kind::Ratio, x, &format!("{what} interval {end}"), None);
                self.add(
                    Kind::Change,
                    x - 1.0,
                    &format!("{what} interval {end} − 1"),
                    None,
                );
            }
        }
    }

    /// Every figure of a paired analysis (ratio, interval, level, threshold, resolution, the
    /// verdict sentence's percentages).
    pub fn analysis(&mut self, a: &Analysis, name: &str) {
        self.ratio(&a.change, &format!("{name}ratio"));
        self.add(
            Kind::Share,
            a.level,
            &format!("{name}confidence level"),
            None,
        );
        self.add(Kind::Share, a.threshold, &format!("{name}threshold"), None);
        if let Some(r) = a.resolution {
            self.add(Kind::Share, r, &format!("{name}resolution"), None);
        }
        // The verdict sentence's own percentages (its estimate is the Hodges–Lehmann one).
        for n in numbers(&a.verdict_text()) {
            if n.unit == Unit::Percent {
                self.add(Kind::Share, n.value(), &format!("{name}verdict"), None);
            }
        }
    }

    /// A profile row's total, mean, median, share and calls.
    pub fn profile_row(&mut self, r: &KernelRow) {
        let s = Some(r.name.as_str());
        self.add(
            Kind::Time,
            r.total_ns as f64,
            &format!("{} total", r.name),
            s,
        );
        self.add(Kind::Time, r.mean_ns, &format!("{} mean", r.name), s);
        if let Some(m) = r.median_ns {
            self.add(Kind::Time, m, &format!("{} median", r.name), s);
        }
        for (what, v) in [("min", r.min_ns), ("max", r.max_ns)] {
            if let Some(v) = v {
                self.add(Kind::Time, v as f64, &format!("{} {what}", r.name), s);
            }
        }
        if let Some(v) = r.stddev_ns {
            self.add(Kind::Time, v, &format!("{} standard deviation", r.name), s);
        }
        self.add(Kind::Share, r.share, &format!("{} share", r.name), s);
        self.add(Kind::Count, r.calls as f64, &format!("{} calls", r.name), s);
    }
}
