//! `sweep`: every gate (and timing) over a grid of configurations.

use super::{gate_mark, pass_word, Ctx, Place, RecordKind, Rendered, Summary};
use crate::sink::{Kind as FigureKind, Sink};
use crate::table::Align;
use crate::table::Block;
use crate::table::Table;
use kernelab_model::sweep::PointVerdict;
use kernelab_model::sweep::SweepMatrix as SweepBody;
use view::verdict_text;

pub(crate) mod view;

impl RecordKind for SweepBody {
    fn places(&self) -> &'static [Place] {
        &[Place::Correctness]
    }
    fn render(&self, _: Place, _: &Ctx<'_>) -> Rendered {
        let (blocks, headline, _) = sweep_part(self);
        Rendered { blocks, headline }
    }
    fn summary(&self, _: &Ctx<'_>) -> Summary {
        Summary {
            gates: Some((self.passed, self.total)),
            verdict: self
                .lines
                .first()
                .cloned()
                .unwrap_or_else(|| pass_word(self.pass)),
            ratio: None,
            mark: gate_mark(self.passed, self.total),
        }
    }
    fn pass(&self) -> Option<bool> {
        Some(self.pass)
    }
    fn figures(&self, sink: &mut Sink<'_>) {
        sink.count_of(self.passed, self.total, "configs passed every gate");
        sink.count_of(
            self.bitwise_equal,
            self.bitwise_checked,
            "configs bitwise equal",
        );
        let changed = self.builds.iter().filter(|b| b.changed).count();
        sink.count_of(changed, self.builds.len(), "builds change code");
        sink.count_of(
            self.code_changed_points,
            self.total,
            "configs with changed code",
        );
        for g in &self.gates {
            sink.count_of(g.passed, g.total, &format!("configs: {}", g.gate));
        }
        // The noise floors beside timed points (`sweep --controls`).
        for p in &self.points {
            if let Some(f) = &p.noise_floor {
                let id = &p.id;
                sink.add(
                    FigureKind::Change,
                    f.largest_change,
                    &format!("{id} noise floor"),
                    None,
                );
                sink.add(
                    FigureKind::Count,
                    f.controls as f64,
                    &format!("{id} identical-code runs of the noise floor"),
                    None,
                );
            }
        }
        // The counts a failed gate's detail records (`2 of 2048 elements differ`), as the
        // failed points' table and the first failure's line show them.
        for p in &self.points {
            for g in p.gates.iter().filter(|g| !g.passed) {
                for (part, total) in counts_of(&g.detail) {
                    sink.count_of(part, total, &format!("{} {}", p.id, g.name));
                }
            }
        }
    }
    fn consistent(&self) -> Result<(), String> {
        super::within(self.done, self.total, "points done")?;
        super::within(
            self.passed + self.failed + self.errors,
            self.done,
            "points passed, failed or in error",
        )?;
        super::within(
            self.bitwise_equal,
            self.bitwise_checked,
            "points bitwise equal",
        )?;
        for g in &self.gates {
            super::within(g.passed, g.total, &format!("points passing {}", g.gate))?;
            super::within(g.total, self.done, &format!("points {} ran on", g.gate))?;
        }
        Ok(())
    }
}

/// Every `K of N` a gate's detail writes, in order.
fn counts_of(detail: &str) -> Vec<(usize, usize)> {
    let words: Vec<&str> = detail.split_whitespace().collect();
    let int = |w: &str| {
        w.trim_end_matches([',', ';', ':', ')'])
            .replace(',', "")
            .parse::<usize>()
            .ok()
    };
    words
        .windows(3)
        .filter(|w| w[1] == "of")
        .filter_map(|w| Some((int(w[0])?, int(w[2])?)))
        .collect()
}

/// The part: the matrix's sentences, then a table of the points that failed or could not run.
pub(crate) fn sweep_part(r: &SweepBody) -> (Vec<Block>, String, Option<bool>) {
    let head = r
        .lines
        .first()
        .cloned()
        .unwrap_or_else(|| format!("{} of {} configs passed", r.passed, r.total));
    let mut lines = r.lines.clone();
    lines.extend(r.gates.iter().map(|g| g.line.clone()));
    if let Some(p) = r.points.iter().find(|p| p.verdict != PointVerdict::Pass) {
        let first = p.gates.iter().find(|g| !g.passed).map_or_else(
            || p.error.clone().unwrap_or_default(),
            |g| format!("{}: {}", g.name, g.detail),
        );
        lines.push(format!(
            "first config that did not pass: {} ({first})",
            crate::format::md_code(&p.id)
        ));
    }
    let mut blocks = vec![Block::Lines(lines)];
    let mut t = Table::new(
        "Points that did not pass",
        &[
            ("point", Align::Left),
            ("verdict", Align::Left),
            ("why", Align::Left),
        ],
    );
    for p in r.points.iter().filter(|p| p.verdict != PointVerdict::Pass) {
        let why = p.error.clone().unwrap_or_else(|| {
            p.gates
                .iter()
                .filter(|g| !g.passed)
                .map(|g| format!("{}: {}", g.name, g.detail))
                .collect::<Vec<_>>()
                .join("; ")
        });
        t.push(vec![
            p.id.clone(),
            verdict_text(p.verdict).into(),
            crate::format::shorten(&why, 160),
        ]);
    }
    if !t.rows.is_empty() {
        blocks.push(Block::Table(t));
    }
    (blocks, format!("sweep: {head}"), Some(r.pass))
}
