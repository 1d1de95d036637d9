//! `profile`: where the GPU time of a request goes (why this kernel).

use super::{plain, rendered, Ctx, Mark, Place, RecordKind, Rendered, Summary};
use crate::format::duration_ns;
use crate::format::opt_duration_ns;
use crate::format::percent;
use crate::format::share;
use crate::format::thousands;
use crate::kinds::profile::view::InputDoc;
use crate::sink::{Kind as FigureKind, Sink};
use crate::svg;
use crate::table::Align;
use crate::table::Block;
use crate::table::Table;
use kernelab_trace::{ActivityRow, KernelRow, Outlier, PhaseRow, Summary as TraceSummary};
use serde::{Deserialize, Serialize};

pub(crate) mod graphs;
pub(crate) mod view;

impl RecordKind for ProfileBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Why]
    }
    fn render(&self, _: Place, ctx: &Ctx<'_>) -> Rendered {
        rendered(profile_part(self, ctx.marked))
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        plain(
            self.kernels
                .first()
                .map(|r| format!("top: {} {}", r.name, percent(r.share, false)))
                .unwrap_or_else(|| "no kernels".into()),
            Mark::Good,
        )
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        let s = &self.summary;
        sink.add(
            FigureKind::Time,
            s.kernel_time_ns as f64,
            "kernel time",
            None,
        );
        for (name, v) in [("GPU busy", s.busy_ns), ("trace wall", s.wall_ns)] {
            if let Some(v) = v {
                sink.add(FigureKind::Time, v as f64, name, None);
            }
        }
        if let Some(g) = s.gap_ns {
            sink.add(FigureKind::Time, g as f64, "launch gaps", None);
        }
        if let Some(w) = s.wall_ns.filter(|&w| w > 0) {
            for (name, v) in [("GPU busy", s.busy_ns), ("launch gaps", s.gap_ns)] {
                if let Some(v) = v {
                    sink.add(
                        FigureKind::Share,
                        v as f64 / w as f64,
                        &format!("{name} of the trace wall"),
                        None,
                    );
                }
            }
        }
        sink.add(
            FigureKind::Count,
            s.kernel_count as f64,
            "kernels executed",
            None,
        );
        for (name, ns, n) in [
            ("memcpy", s.memcpy_ns, s.memcpy_count),
            ("memset", s.memset_ns, s.memset_count),
        ] {
            if let Some(ns) = ns {
                sink.add(FigureKind::Time, ns as f64, name, None);
            }
            if let Some(n) = n {
                sink.add(
                    FigureKind::Count,
                    n as f64,
                    &format!("{name} operations"),
                    None,
                );
            }
        }
        if let Some(c) = s.gap_count {
            sink.add(FigureKind::Count, c as f64, "launch gaps", None);
        }
        // About the rows that show them: a kernel's calls are not held against them.
        let names = Some("distinct kernel names");
        sink.add(
            FigureKind::Count,
            s.distinct_kernels as f64,
            "distinct kernel names",
            names,
        );
        sink.add(FigureKind::Count, s.groups as f64, "kernel families", names);
        if let Some(n) = s.streams {
            sink.add(
                FigureKind::Count,
                n as f64,
                "streams",
                Some("devices / streams"),
            );
        }
        for r in self.kernels.iter().chain(&self.other) {
            sink.profile_row(r);
        }
    }
}

/// `kernelab profile` (`kind: "profile"`).
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProfileBody {
    /// `family` or `none`.
    pub grouping: String,
    /// The inputs.
    pub inputs: Vec<InputDoc>,
    /// Whole-trace figures.
    pub summary: TraceSummary,
    /// Ranked rows.
    pub kernels: Vec<KernelRow>,
    /// The rest, as one row.
    pub other: Option<KernelRow>,
    /// Extreme slow calls.
    pub outliers: Vec<Outlier>,
    /// Per-phase attribution.
    pub phases: Option<Vec<PhaseRow>>,
    /// Notes about the figures.
    pub notes: Vec<String>,
    /// Host API calls, copies, queue packets and domains (not kernel GPU time).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub activities: Vec<ActivityRow>,
    /// Graph replays (with `--by-graph`; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graphs: Option<kernelab_trace::Graphs>,
    /// Each input's part of the kernel time (with `--by-rank`; absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Vec<kernelab_trace::RankRow>>,
}

impl kernelab_model::Body for ProfileBody {
    const KIND: &'static str = "profile";
}

fn ns_u64(x: Option<u64>) -> String {
    opt_duration_ns(x.map(|v| v as f64))
}

/// A profile record: the whole-trace line, the top kernels (the changed families marked) and
/// the share chart.
pub(crate) fn profile_part(r: &ProfileBody, marked: &[String]) -> (Vec<Block>, String) {
    let sm = &r.summary;
    let mut t = Table::new(
        "Top kernels by GPU time",
        &[
            ("#", Align::Right),
            ("kernel / family", Align::Left),
            ("calls", Align::Right),
            ("total", Align::Right),
            ("share", Align::Right),
        ],
    );
    let mut bars = Vec::new();
    for row in r.kernels.iter().take(10) {
        let changed = marked.contains(&row.name) || marked.contains(&row.family);
        let name = crate::format::shorten(&row.name, 70);
        t.push(vec![
            row.rank.to_string(),
            if changed {
                format!("**{name}** (changed)")
            } else {
                name.clone()
            },
            thousands(row.calls),
            duration_ns(row.total_ns as f64),
            share(row.share),
        ]);
        bars.push(svg::ShareBar {
            label: name,
            share: row.share,
            marked: changed,
        });
    }
    let lines = vec![format!(
        "kernel GPU time {} over {}; GPU busy {}; trace wall {}; launch gaps {}",
        duration_ns(sm.kernel_time_ns as f64),
        crate::format::count(sm.kernel_count as usize, "kernel", "kernels"),
        ns_u64(sm.busy_ns),
        ns_u64(sm.wall_ns),
        ns_u64(sm.gap_ns)
    )];
    let head = r
        .kernels
        .first()
        .map(|row| {
            format!(
                "{} takes {} of kernel time",
                crate::format::shorten(&row.name, 60),
                share(row.share)
            )
        })
        .unwrap_or_else(|| "no kernels".into());
    (
        vec![
            Block::Lines(lines),
            Block::Table(t),
            Block::Chart(svg::share_bars(
                "Share of request kernel GPU time, top 10 (changed family marked)",
                &bars,
            )),
        ],
        head,
    )
}
