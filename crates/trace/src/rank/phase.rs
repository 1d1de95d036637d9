//! Attributing each kernel to the innermost annotated range (phase) that encloses it.

use super::groups::Selection;
use super::intervals::sweep;
use kernelab_model::{AnnotationScope, KernelDispatch, NameId, Profile};
use std::collections::HashMap;

/// An annotated range: start, end, name.
type Range = (i64, i64, NameId);
/// A device and stream (`None`: every stream of the device).
type Track = (u32, Option<u64>);
/// Query times with their dispatch index.
type Queries = Vec<(i64, usize)>;

/// For every dispatch index in `selected`, the name of its innermost enclosing annotation, or
/// `None`. A GPU-side range (Kineto `gpu_user_annotation`) belongs to its own device and stream:
/// it encloses a kernel that starts inside it on that stream (a range with no stream, any
/// stream of the device). A kernel no GPU-side range encloses goes to the innermost host-side
/// range (`user_annotation`, NVTX, roctx markers) holding its launch call (matched by
/// correlation id) on the same thread; a kernel replayed by a graph whose stream capture is in
/// the inputs, the range that held its launch when it was captured. GPU-side ranges win.
pub(super) fn assign(profile: &Profile, selection: &Selection) -> Vec<Option<NameId>> {
    let (indices, selected): (Vec<usize>, Vec<KernelDispatch>) = selection
        .iter()
        .filter_map(|i| Some((i, profile.dispatches.get(i)?)))
        .unzip();
    let mut out = vec![None; selected.len()];
    // GPU scope, keyed by device and stream (`None`: the whole device).
    let mut gpu: HashMap<Track, Vec<Range>> = HashMap::new();
    let mut cpu: HashMap<(i64, i64), Vec<Range>> = HashMap::new();
    for a in &profile.annotations {
        let iv = (a.start.ns(), a.start.plus(a.duration).ns(), a.name);
        match a.scope {
            AnnotationScope::Gpu { device, stream } => {
                gpu.entry((device, stream)).or_default().push(iv)
            }
            AnnotationScope::Cpu { pid, tid } => cpu.entry((pid, tid)).or_default().push(iv),
            _ => {}
        }
    }
    // Own stream first, then device-wide ranges for what is still unassigned.
    for per_stream in [true, false] {
        let mut queries: HashMap<Track, Queries> = HashMap::new();
        for (i, d) in selected.iter().enumerate() {
            if out[i].is_none() {
                let key = (d.device, per_stream.then_some(d.stream));
                queries.entry(key).or_default().push((d.start.ns(), i));
            }
        }
        for (key, q) in queries {
            if let Some(anns) = gpu.get_mut(&key) {
                sweep(anns, q, &mut out);
            }
        }
    }
    if !cpu.is_empty() && !profile.host_launches.is_empty() {
        let launches: HashMap<u64, (i64, i64, i64)> = profile
            .host_launches
            .iter()
            .map(|l| (l.correlation, (l.pid, l.tid, l.start.ns())))
            .collect();
        let captured = super::graphs::replay_origins(profile);
        let mut cpu_queries: HashMap<(i64, i64), Vec<(i64, usize)>> = HashMap::new();
        for (i, d) in selected.iter().enumerate() {
            if out[i].is_some() {
                continue;
            }
            let origin = captured
                .get(&indices[i])
                .or_else(|| d.correlation.and_then(|c| launches.get(&c)));
            if let Some(&(pid, tid, t)) = origin {
                cpu_queries.entry((pid, tid)).or_default().push((t, i));
            }
        }
        for (key, queries) in cpu_queries {
            if let Some(anns) = cpu.get_mut(&key) {
                sweep(anns, queries, &mut out);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kernelab_model::{Annotation, Nanos, Timestamp};

    /// A 1 ns kernel on device 0, stream 0, starting at `s`.
    fn kernel(s: i64, correlation: Option<u64>) -> KernelDispatch {
        KernelDispatch {
            name: NameId(9),
            device: 0,
            stream: 0,
            start: Timestamp::from_ns(s),
            duration: Nanos::from_ns(1),
            launch: 0,
            correlation,
            sub_ns: 0,
        }
    }

    #[test]
    fn innermost_gpu_range_wins() {
        let mut p = Profile::default();
        let outer = p.names.intern_str("step");
        let inner = p.names.intern_str("attention");
        for (name, s, d) in [(outer, 0, 100), (inner, 10, 20)] {
            p.annotations.push(Annotation {
                name,
                scope: AnnotationScope::Gpu {
                    device: 0,
                    stream: None,
                },
                start: Timestamp::from_ns(s),
                duration: Nanos::from_ns(d),
            });
        }
        for s in [5, 15, 40, 200] {
            p.dispatches.push(kernel(s, None));
        }
        assert_eq!(
            assign(&p, &Selection::All(4)),
            vec![Some(outer), Some(inner), Some(outer), None]
        );
    }

    #[test]
    fn a_replayed_kernel_goes_to_the_range_that_held_its_captured_launch() {
        use kernelab_model::{GraphCapture, GraphLaunch, KernelLaunchCall, Launch};
        let mut p = Profile::default();
        let (layer, replay) = (p.names.intern_str("layer0"), p.names.intern_str("replay"));
        let cpu = AnnotationScope::Cpu { pid: 1, tid: 2 };
        // Captured under "layer0" (10..20), replayed under "replay" (100..200).
        for (name, s, d) in [(layer, 10, 10), (replay, 100, 100)] {
            p.annotations.push(Annotation {
                name,
                scope: cpu,
                start: Timestamp::from_ns(s),
                duration: Nanos::from_ns(d),
            });
        }
        p.graph_captures.push(GraphCapture {
            pid: 1,
            tid: 2,
            start: Timestamp::from_ns(5),
            end: Timestamp::from_ns(30),
        });
        p.kernel_launch_calls.push(KernelLaunchCall {
            pid: 1,
            tid: 2,
            start: Timestamp::from_ns(12),
        });
        for (correlation, t) in [(7, 110), (8, 150)] {
            p.graph_launches.push(GraphLaunch {
                correlation,
                pid: 1,
                tid: 2,
                start: Timestamp::from_ns(t),
                duration: Nanos::from_ns(1),
            });
            p.host_launches.push(Launch {
                correlation,
                pid: 1,
                tid: 2,
                start: Timestamp::from_ns(t),
            });
        }
        // An eager launch under "replay" (correlation 9) stays there.
        p.host_launches.push(Launch {
            correlation: 9,
            pid: 1,
            tid: 2,
            start: Timestamp::from_ns(160),
        });
        for (c, s) in [(7, 300), (8, 400), (9, 500)] {
            p.dispatches.push(kernel(s, Some(c)));
        }
        assert_eq!(
            assign(&p, &Selection::All(3)),
            vec![Some(layer), Some(layer), Some(replay)]
        );
        // Without the capture, the replay call's range.
        p.graph_captures.clear();
        assert_eq!(
            assign(&p, &Selection::All(3)),
            vec![Some(replay), Some(replay), Some(replay)]
        );
    }
}
