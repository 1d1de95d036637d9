//! Host-side intervals by thread, and the sweep that gives each query time the innermost
//! interval holding it: the one tool of phases, graph operators and shapes.

use std::collections::HashMap;

/// Intervals `(start, end, value)` per host thread `(pid, tid)`.
pub(super) type ByThread<T> = HashMap<(i64, i64), Vec<(i64, i64, T)>>;

/// Host-side intervals grouped by thread, from (pid, tid, start, duration, value).
pub(super) fn by_thread<T>(
    items: impl IntoIterator<
        Item = (
            i64,
            i64,
            kernelab_model::Timestamp,
            kernelab_model::Nanos,
            T,
        ),
    >,
) -> ByThread<T> {
    let mut out: ByThread<T> = HashMap::new();
    for (pid, tid, start, duration, value) in items {
        out.entry((pid, tid))
            .or_default()
            .push((start.ns(), start.plus(duration).ns(), value));
    }
    out
}

/// Sweeps sorted query times over intervals `(start, end, value)` with a stack of open
/// intervals; the top of the stack is the innermost open interval, whose value each query
/// still without one gets.
pub(super) fn sweep<T: Copy>(
    anns: &mut [(i64, i64, T)],
    mut queries: Vec<(i64, usize)>,
    out: &mut [Option<T>],
) {
    // Earlier start first; for equal starts the longer (outer) range first.
    anns.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    queries.sort_unstable();
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0;
    for (t, idx) in queries {
        while next < anns.len() && anns[next].0 <= t {
            while stack.last().is_some_and(|&top| anns[top].1 <= anns[next].0) {
                stack.pop();
            }
            stack.push(next);
            next += 1;
        }
        while stack.last().is_some_and(|&top| anns[top].1 <= t) {
            stack.pop();
        }
        if out[idx].is_none() {
            out[idx] = stack.last().map(|&top| anns[top].2);
        }
    }
}
