//! The report part of a `counters` record: the comparison and per-side tables, the notes and
//! the failed profiler processes.

use super::Block;
use crate::documents::CountersBody;

/// The blocks and headline of a `counters` record.
pub(crate) fn counters_part(r: &CountersBody) -> (Vec<Block>, String) {
    let blocks = crate::counters::counters_tables(&r.run, 80)
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
