//! The figures of a bundle that a note may quote, per label: what each record kind stores (and
//! what the report derives from it once), in base units (ns, fractions, candidate / baseline).

use super::number::numbers;
use crate::bundle::Entry;
use crate::evidence::{gates, impacts};
use crate::format::{duration_ns, percent};
use crate::impact::Estimate;
use kernelab_stats::Analysis;
use kernelab_trace::KernelRow;
use std::collections::BTreeMap;

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
            Kind::ByteRate => format!("{:.1} GB/s", self.value / 1e9),
            Kind::FlopRate => format!("{:.2} TFLOP/s", self.value / 1e12),
            Kind::TokenRate => format!("{} tok/s", self.value),
            Kind::RequestRate => format!("{} req/s", self.value),
        }
    }
}

/// Collects figures of one record (each record kind adds its own through
/// [`crate::kinds::RecordKind::figures`]).
pub struct Sink<'a> {
    out: &'a mut Vec<Figure>,
    source: String,
}

impl Sink<'_> {
    /// One figure of `kind`, about `subject` when it is about one kernel or family.
    pub fn add(&mut self, kind: Kind, value: f64, what: &str, subject: Option<&str>) {
        if value.is_finite() {
            self.out.push(Figure {
                kind,
                value,
                total: 0.0,
                what: format!("{}: {what}", self.source),
                subject: subject.map(str::to_string),
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
            if n.unit == super::number::Unit::Percent {
                self.add(Kind::Share, n.value(), &format!("{name}verdict"), None);
            }
        }
    }

    fn estimate(&mut self, kind: Kind, e: Estimate, what: &str) {
        self.add(kind, e.value, what, None);
        if let Some(i) = e.interval {
            self.add(kind, i.low, &format!("{what} interval low"), None);
            self.add(kind, i.high, &format!("{what} interval high"), None);
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

/// Every quotable figure of the bundle, by label.
pub fn figures(entries: &[Entry]) -> BTreeMap<String, Vec<Figure>> {
    let mut map: BTreeMap<String, Vec<Figure>> = BTreeMap::new();
    for e in entries {
        let label = &e.record.label;
        let out = map.entry(label.clone()).or_default();
        let mut sink = Sink {
            out,
            source: format!("{} {label}", e.record.kind),
        };
        if let Some((p, t)) = gates(e) {
            sink.out.push(Figure {
                kind: Kind::Gates,
                value: p as f64,
                total: t as f64,
                what: format!("{} {label}: gates passed", e.record.kind),
                subject: None,
            });
        }
        e.evidence.kind().figures(&mut sink);
    }
    // The gates of a label in total, as the report's table of changes shows them.
    let mut totals: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for e in entries {
        if let Some((p, t)) = gates(e) {
            let x = totals.entry(&e.record.label).or_default();
            *x = (x.0 + p, x.1 + t);
        }
    }
    for (label, (p, t)) in totals {
        map.entry(label.to_string()).or_default().push(Figure {
            kind: Kind::Gates,
            value: p as f64,
            total: t as f64,
            what: format!("{label}: gates passed, every gate record"),
            subject: None,
        });
    }
    for (profile, run, i) in impacts(entries) {
        for label in [&profile, &run] {
            let out = map.entry(label.clone()).or_default();
            let mut sink = Sink {
                out,
                source: format!("impact of {run} on {profile}"),
            };
            let s = Some(i.family.as_str());
            let f = &i.family;
            sink.add(Kind::Share, i.share, &format!("{f} share"), s);
            if let Some(b) = i.busy_share {
                sink.add(Kind::Share, b, &format!("{f} share of GPU busy time"), s);
            }
            sink.add(Kind::Time, i.family_ns as f64, &format!("{f} total"), s);
            sink.add(Kind::Count, i.calls as f64, &format!("{f} calls"), s);
            sink.add(
                Kind::Time,
                i.kernel_time_ns as f64,
                "request kernel time",
                None,
            );
            sink.estimate(Kind::Change, i.kernel, "kernel time change");
            sink.estimate(
                Kind::Change,
                i.request,
                "predicted request kernel time change",
            );
            sink.estimate(
                Kind::Time,
                i.delta_ns,
                "predicted request kernel time change",
            );
            if let Some(b) = i.busy_bound {
                sink.estimate(Kind::Change, b, "bound on GPU busy time change");
            }
            if let Some(w) = i.wall_bound {
                sink.estimate(Kind::Change, w, "bound on wall time change");
            }
            for m in &i.measured {
                sink.estimate(
                    Kind::Change,
                    m.change,
                    &format!("measured {} ({})", m.figure, m.source),
                );
                let p = Estimate {
                    value: m.predicted.low,
                    interval: Some(m.predicted),
                };
                sink.estimate(Kind::Change, p, &format!("predicted {}", m.figure));
            }
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::number::Unit;
    use crate::kinds::RecordKind;

    /// Goodput is a rate of requests for the audit (from the metric table): its figures are
    /// `RequestRate`s in requests per second, and a note's `12.50 req/s` is read as one.
    #[test]
    fn the_audit_reads_goodput_as_a_rate_of_requests() {
        let body = crate::documents::ServeBody {
            samples: "s.jsonl".into(),
            spec_sha256: String::new(),
            pass: true,
            result: crate::serve::goodput_result(),
        };
        let mut out = Vec::new();
        let mut sink = Sink {
            out: &mut out,
            source: "serve a".into(),
        };
        body.figures(&mut sink);
        let goodput: Vec<&Figure> = out
            .iter()
            .filter(|f| f.what.contains("goodput_req_s") && !f.what.contains("ratio"))
            .filter(|f| !f.what.contains("change"))
            .collect();
        assert_eq!(goodput.len(), 6, "{goodput:?}");
        assert!(
            goodput.iter().all(|f| f.kind == Kind::RequestRate),
            "{goodput:?}"
        );
        assert!(goodput
            .iter()
            .any(|f| f.value == 12.5 && f.text() == "12.5 req/s"));
        let tpot = out
            .iter()
            .find(|f| f.what.contains("tpot_mean_s") && f.what.ends_with("baseline median"))
            .expect("tpot");
        assert_eq!((tpot.kind, tpot.value), (Kind::Time, 0.014 * 1e9));
        let n = &numbers("goodput rose from 12.50 req/s")[0];
        assert_eq!(n.unit, Unit::RequestRate);
        assert!(n.matches(12.5) && !n.matches(12.5e9));
        assert_eq!(numbers("at 1,234.5 tok/s")[0].unit, Unit::TokenRate);
    }
}
