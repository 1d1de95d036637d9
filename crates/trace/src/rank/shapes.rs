//! Each kernel launch's own operator shapes: the kernel's correlation id gives its runtime or
//! driver launch call, and the innermost host operator with `Input Dims` enclosing that call on
//! the same thread is the launching op.

use super::intervals::{by_thread, sweep};
use kernelab_model::Profile;
use std::collections::HashMap;

/// For every dispatch of `profile`, in order, the `Input Dims` of its launching operator (an
/// index into `profile.shapes`), or `None` when the launch call or an enclosing operator with
/// shapes is not in the profile (read with `ReadOptions::op_shapes`). One sweep per thread over
/// the operators sorted by start: no search of every operator per launch.
pub fn launch_shapes(profile: &Profile) -> Vec<Option<u32>> {
    let mut out = vec![None; profile.dispatches.len()];
    if profile.op_shapes.is_empty() {
        return out;
    }
    let launches: HashMap<u64, (i64, i64, i64)> = profile
        .host_launches
        .iter()
        .map(|l| (l.correlation, (l.pid, l.tid, l.start.ns())))
        .collect();
    let mut ops = by_thread(
        profile
            .op_shapes
            .iter()
            .map(|o| (o.pid, o.tid, o.start, o.duration, o.dims)),
    );
    let mut queries: HashMap<(i64, i64), Vec<(i64, usize)>> = HashMap::new();
    for (i, d) in profile.dispatches.iter().enumerate() {
        if let Some(&(pid, tid, t)) = d.correlation.and_then(|c| launches.get(&c)) {
            queries.entry((pid, tid)).or_default().push((t, i));
        }
    }
    for (thread, q) in queries {
        if let Some(list) = ops.get_mut(&thread) {
            sweep(list, q, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelab_model::{KernelDispatch, Launch, NameId, Nanos, OpShape, Timestamp};

    #[test]
    fn each_launch_gets_its_own_innermost_op() {
        let mut p = Profile::default();
        let small = p.shapes.intern(vec![vec![64, 64], vec![64, 64]]);
        let big = p.shapes.intern(vec![vec![4096, 4096], vec![4096, 4096]]);
        let outer = p.shapes.intern(vec![vec![1]]);
        for (s, d, dims) in [(0, 1000, outer), (10, 20, small), (100, 20, big)] {
            p.op_shapes.push(OpShape {
                pid: 1,
                tid: 2,
                start: Timestamp::from_ns(s),
                duration: Nanos::from_ns(d),
                dims,
            });
        }
        // Launch calls inside the small op, the big op, the outer op only, another thread.
        for (c, t, tid) in [(1, 15, 2), (2, 105, 2), (3, 500, 2), (4, 15, 3)] {
            p.host_launches.push(Launch {
                correlation: c,
                pid: 1,
                tid,
                start: Timestamp::from_ns(t),
            });
        }
        for c in [2, 1, 3, 4, 9] {
            p.dispatches.push(KernelDispatch {
                name: NameId(0),
                device: 0,
                stream: 0,
                start: Timestamp::from_ns(2000),
                duration: Nanos::from_ns(5),
                launch: 0,
                correlation: Some(c),
                sub_ns: 0,
            });
        }
        assert_eq!(
            launch_shapes(&p),
            vec![Some(big), Some(small), Some(outer), None, None]
        );
    }
}
