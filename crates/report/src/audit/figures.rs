//! The figures of a bundle that a note may quote, per label: what each record kind stores (and
//! what the report derives from it once), in base units (ns, fractions, candidate / baseline).

use crate::bundle::Entry;
use crate::evidence::{gates, impacts};
use crate::kinds::impact::Estimate;
use crate::sink::{Figure, Kind, Sink};
use std::collections::BTreeMap;

/// An estimate and its interval's ends, as figures of `kind`.
fn estimate(sink: &mut Sink<'_>, kind: Kind, e: Estimate, what: &str) {
    sink.add(kind, e.value, what, None);
    if let Some(i) = e.interval {
        sink.add(kind, i.low, &format!("{what} interval low"), None);
        sink.add(kind, i.high, &format!("{what} interval high"), None);
    }
}

/// Every quotable figure of the bundle, by label.
pub(super) fn figures(entries: &[Entry]) -> BTreeMap<String, Vec<Figure>> {
    let mut map: BTreeMap<String, Vec<Figure>> = BTreeMap::new();
    for e in entries {
        let label = &e.record.label;
        let out = map.entry(label.clone()).or_default();
        let mut sink = Sink::new(out, format!("{} {label}", e.record.kind));
        if let Some((p, t)) = gates(e) {
            sink.count_of(p, t, "gates passed");
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
            let mut sink = Sink::new(out, format!("impact of {run} on {profile}"));
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
            estimate(&mut sink, Kind::Change, i.kernel, "kernel time change");
            estimate(
                &mut sink,
                Kind::Change,
                i.request,
                "predicted request kernel time change",
            );
            estimate(
                &mut sink,
                Kind::Time,
                i.delta_ns,
                "predicted request kernel time change",
            );
            if let Some(b) = i.busy_bound {
                estimate(&mut sink, Kind::Change, b, "bound on GPU busy time change");
            }
            if let Some(w) = i.wall_bound {
                estimate(&mut sink, Kind::Change, w, "bound on wall time change");
            }
            for m in &i.measured {
                estimate(
                    &mut sink,
                    Kind::Change,
                    m.change,
                    &format!("measured {} ({})", m.figure, m.source),
                );
                let p = Estimate {
                    value: m.predicted.low,
                    interval: Some(m.predicted),
                };
                estimate(
                    &mut sink,
                    Kind::Change,
                    p,
                    &format!("predicted {}", m.figure),
                );
            }
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::number::{numbers, Unit};
    use crate::kinds::RecordKind;

    /// Goodput is a rate of requests for the audit (from the metric table): its figures are
    /// `RequestRate`s in requests per second, and a note's `12.50 req/s` is read as one.
    #[test]
    fn the_audit_reads_goodput_as_a_rate_of_requests() {
        let body = crate::documents::ServeBody {
            samples: "s.jsonl".into(),
            spec_sha256: String::new(),
            pass: true,
            result: crate::kinds::serve::view::goodput_result(),
        };
        let mut out = Vec::new();
        let mut sink = Sink::new(&mut out, "serve a".into());
        body.figures(&mut sink);
        let goodput: Vec<&Figure> = out
            .iter()
            .filter(|f| f.what.contains("goodput_req_s") && !f.what.contains("ratio"))
            .filter(|f| !f.what.contains("change") && !f.what.ends_with("rounds"))
            .filter(|f| !f.what.ends_with(", concurrency"))
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
