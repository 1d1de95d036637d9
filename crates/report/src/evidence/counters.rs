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
            "{}: {} kernel metric(s) over {} repeat(s)",
            r.run.profiler,
            r.run.stats.len(),
            r.run.repeats
        )
    } else {
        format!(
            "{}: {} of {} metric change(s) beyond the repeat spread",
            r.run.profiler,
            flagged,
            r.run.changes.len()
        )
    };
    let head = if failed > 0 {
        format!(
            "{head}; {failed} of {} profiler process(es) failed",
            r.run.processes.len()
        )
    } else {
        head
    };
    (blocks, head)
}
