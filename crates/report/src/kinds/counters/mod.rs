//! `counters`: hardware counters, one group per fresh profiler process, diffed.

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::sink::{Kind as FigureKind, Sink};
use crate::table::Block;
use kernelab_model::counters::CountersRun;
use serde::{Deserialize, Serialize};

pub(crate) mod view;

impl RecordKind for CountersBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Counters]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        rendered(counters_part(self))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        let flagged = self.run.changes.iter().filter(|x| x.flagged).count();
        let failed = self.run.failures().count();
        plain(
            format!(
                "{} beyond the repeat spread; {failed} of {} failed",
                crate::format::count(flagged, "counter change", "counter changes"),
                crate::format::count(
                    self.run.processes.len(),
                    "profiler process",
                    "profiler processes"
                )
            ),
            if failed > 0 { Mark::Warn } else { Mark::Good },
        )
    }
    fn csv(&self) -> Option<crate::Result<String>> {
        Some(view::counters_csv(&self.run))
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        let r = &self.run;
        for c in &r.changes {
            let s = Some(c.kernel.as_str());
            let what = format!("{} {}", c.kernel, c.metric);
            for (side, v) in [("baseline", c.baseline), ("candidate", c.candidate)] {
                if let Some(v) = v {
                    value_figure(sink, &c.unit, v, &format!("{what}, {side}"), s);
                }
            }
            if let Some(x) = c.change.change() {
                sink.add(FigureKind::Change, x, &format!("{what}, change"), s);
            }
        }
        for st in &r.stats {
            let s = Some(st.kernel.as_str());
            let what = format!("{} {} {}", st.side, st.kernel, st.metric);
            for (which, v) in [("median", st.median), ("min", st.min), ("max", st.max)] {
                if let Some(v) = v {
                    value_figure(sink, &st.unit, v, &format!("{what}, {which}"), s);
                }
            }
            let n = st.values.len() as f64;
            sink.add(FigureKind::Count, n, &format!("{what}, values"), s);
        }
        for (n, what) in [
            (r.metrics.len(), "metrics"),
            (r.group_size, "metrics per process"),
            (r.repeats, "repeats"),
            (r.processes.len(), "profiler processes"),
            (r.failures().count(), "failed profiler processes"),
        ] {
            sink.add(FigureKind::Count, n as f64, what, None);
        }
        let failed = r.failures().count();
        sink.count_of(failed, r.processes.len(), "profiler processes failed");
        sink.add(
            FigureKind::Count,
            r.changes.iter().filter(|c| c.flagged).count() as f64,
            "counter changes beyond the repeat spread",
            None,
        );
    }
}

/// A counter's value as the figure of its unit, as the view draws it: nanoseconds as a time,
/// a percentage as a share, bytes per second as a rate, anything else as a count.
fn value_figure(sink: &mut Sink<'_>, unit: &str, v: f64, what: &str, subject: Option<&str>) {
    let (kind, x) = match unit {
        "ns" => (FigureKind::Time, v),
        "%" => (FigureKind::Share, v / 100.0),
        "byte/second" => (FigureKind::ByteRate, v),
        _ => (FigureKind::Count, v),
    };
    sink.add(kind, x, what, subject);
}

/// `kernelab counters` (`kind: "counters"`).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CountersBody {
    /// The folder that keeps every profiler process's output and stderr.
    pub work_dir: String,
    /// What the run found.
    #[serde(flatten)]
    pub run: CountersRun,
}

impl kernelab_model::Body for CountersBody {
    const KIND: &'static str = "counters";
}

/// The blocks and headline of a `counters` record.
pub(crate) fn counters_part(r: &CountersBody) -> (Vec<Block>, String) {
    let blocks = crate::kinds::counters::view::counters_tables(&r.run, 80)
        .into_iter()
        .map(|s| match s {
            // The notes fold under their title: the tables are what a reviewer reads.
            Block::List { title, lines } => Block::Details {
                summary: title,
                blocks: vec![Block::Lines(lines)],
            },
            other => other,
        })
        .collect();
    let flagged = r.run.changes.iter().filter(|c| c.flagged).count();
    let failed = r.run.failures().count();
    let head = if r.run.changes.is_empty() {
        format!(
            "{}: {} over {}",
            r.run.profiler,
            crate::format::count(r.run.stats.len(), "kernel metric", "kernel metrics"),
            crate::format::count(r.run.repeats, "repeat", "repeats")
        )
    } else {
        format!(
            "{}: {flagged} of {} beyond the repeat spread",
            r.run.profiler,
            crate::format::count(r.run.changes.len(), "metric change", "metric changes")
        )
    };
    let head = if failed > 0 {
        format!(
            "{head}; {failed} of {} failed",
            crate::format::count(
                r.run.processes.len(),
                "profiler process",
                "profiler processes"
            )
        )
    } else {
        head
    };
    (blocks, head)
}
