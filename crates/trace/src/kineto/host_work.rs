//! Work a Kineto trace records on host events rather than on its kernels: PyTorch Inductor's
//! benchmark harness (`benchmark_kernel`) puts `kernel_num_gb` and `kernel_flop` on the
//! `cpu_op` that launches each of its Triton kernels, and augmented traces may carry them on
//! a launch call or `python_function` too. Each such event links to its kernel by its
//! `correlation` (a runtime or driver launch: the kernel's correlation id) or else by its
//! `External id` (an operator: the id its launch calls and kernels carry). While the file is
//! read, the events' work and the (correlation, External id) pairs of kernels and launch
//! calls are kept in the profile ([`Profile::host_work`], [`Profile::external_ids`]); at the
//! end [`link`] gives each to the one kernel it links to, where that kernel records no work of
//! its own (its own args win), and empties both.

use super::scan::Fields;
use super::values::{non_negative, uint};
use crate::error::Result;
use kernelab_model::{FlopWidth, HostWork, Profile, RecordedWork, SourceInfo, WorkLink, WorkOf};
use std::collections::{HashMap, HashSet};

/// Keeps the work a host event `ev` records, with its link (`correlation`, else `External
/// id`); an event with work but neither id is counted as unlinked.
pub(super) fn record(
    ev: &[u8],
    f: &Fields,
    at: u64,
    correlation: Option<u64>,
    p: &mut Profile,
) -> Result<()> {
    let a = &f.args;
    if a.kernel_flop.is_none() && a.kernel_num_gb.is_none() {
        return Ok(());
    }
    let flops = non_negative(ev, a.kernel_flop, "args.kernel_flop", at)?;
    let gb = non_negative(ev, a.kernel_num_gb, "args.kernel_num_gb", at)?;
    if flops.is_none() && gb.is_none() {
        return Ok(());
    }
    let external = uint::<u64>(ev, a.external_id, "args.External id", at)?;
    let link = match (correlation, external) {
        (Some(c), _) => Some(WorkLink::Correlation(c)),
        (None, Some(e)) => Some(WorkLink::External(e)),
        (None, None) => None,
    };
    p.host_work.push(HostWork {
        // An event with no id links to nothing: kept as a link no kernel has, to be counted.
        link: link.unwrap_or(WorkLink::External(u64::MAX)),
        flops,
        // Inductor writes bytes / 1e9: whole bytes back, as for a kernel's own.
        bytes: gb.map(|g| (g * 1e9).round()),
    });
    Ok(())
}

/// Keeps the (correlation, External id) pair of a kernel or launch call, when it has both.
pub(super) fn pair(
    ev: &[u8],
    f: &Fields,
    at: u64,
    correlation: Option<u64>,
    p: &mut Profile,
) -> Result<()> {
    if let Some(c) = correlation {
        if let Some(e) = uint::<u64>(ev, f.args.external_id, "args.External id", at)? {
            p.external_ids.push((c, e));
        }
    }
    Ok(())
}

/// Gives the host work of the file whose dispatches start at `first` to the kernels it links
/// to, and says in `source` what was given and what was not; empties the profile's host work
/// and pairs.
pub(super) fn link(p: &mut Profile, first: usize, source: &mut SourceInfo) {
    let host = std::mem::take(&mut p.host_work);
    let pairs = std::mem::take(&mut p.external_ids);
    if host.is_empty() {
        return;
    }
    // The file's kernels by correlation id, and the correlations of each External id.
    let mut by_correlation: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, d) in p.dispatches.iter().enumerate().skip(first) {
        if let Some(c) = d.correlation {
            by_correlation.entry(c).or_default().push(i);
        }
    }
    let mut by_external: HashMap<u64, HashSet<u64>> = HashMap::new();
    for (c, e) in pairs {
        by_external.entry(e).or_default().insert(c);
    }
    let own: HashSet<usize> = p
        .recorded_work
        .iter()
        .filter_map(|w| match w.of {
            WorkOf::Dispatch(i) if i >= first => Some(i),
            _ => None,
        })
        .collect();
    let mut given: HashSet<usize> = HashSet::new();
    let (mut linked, mut kernel_had, mut twice, mut several, mut none) = (0u64, 0, 0, 0, 0);
    for w in host {
        let kernels: HashSet<usize> = match w.link {
            WorkLink::Correlation(c) => by_correlation
                .get(&c)
                .map(|v| v.iter().copied().collect())
                .unwrap_or_default(),
            WorkLink::External(e) => by_external
                .get(&e)
                .into_iter()
                .flatten()
                .filter_map(|c| by_correlation.get(c))
                .flatten()
                .copied()
                .collect(),
        };
        let mut it = kernels.iter();
        match (it.next(), it.next()) {
            (None, _) => none += 1,
            (Some(_), Some(_)) => several += 1,
            (Some(&i), None) if own.contains(&i) => kernel_had += 1,
            (Some(&i), None) if !given.insert(i) => twice += 1,
            (Some(&i), None) => {
                linked += 1;
                p.recorded_work.push(RecordedWork {
                    of: WorkOf::Dispatch(i),
                    flops: w.flops,
                    width: FlopWidth::Unsaid,
                    bytes: w.bytes,
                    flops_key: "kernel_flop",
                    bytes_key: "kernel_num_gb",
                });
            }
        }
    }
    if linked > 0 {
        source.notes.push(format!(
            "the work (kernel_flop, kernel_num_gb) of {linked} kernels is read from the host \
             event that launched each (PyTorch Inductor's cpu_op), linked by correlation or \
             External id"
        ));
    }
    let mut skipped = Vec::new();
    if kernel_had > 0 {
        skipped.push(format!(
            "{kernel_had} whose kernel records its own (the kernel's args are used)"
        ));
    }
    if twice > 0 {
        skipped.push(format!(
            "{twice} whose kernel already took the work of another host event"
        ));
    }
    if several > 0 {
        skipped.push(format!(
            "{several} linked to several kernels (the work of one event is not split)"
        ));
    }
    if none > 0 {
        skipped.push(format!("{none} linked to no kernel of the trace"));
    }
    if !skipped.is_empty() {
        source.notes.push(format!(
            "host events with kernel_flop/kernel_num_gb not used: {}",
            skipped.join("; ")
        ));
    }
}

#[cfg(test)]
mod tests {
    use crate::{read_bytes, ReadOptions};
    use kernelab_model::WorkOf;

    fn read(json: &str) -> kernelab_model::Profile {
        let options = ReadOptions {
            host_work: true,
            ..ReadOptions::default()
        };
        read_bytes(json.as_bytes(), &options).expect("a trace")
    }

    /// Inductor's layout (the real H100 trace's, reduced): the work on the launching `cpu_op`
    /// (External id 8), its driver call (correlation 47, External id 8), the kernel
    /// (correlation 47); a launch call with work of its own (correlation 60); a kernel that
    /// records its own work (it wins); an operator with two kernels (not split); an event
    /// linked to nothing.
    #[test]
    fn host_work_reaches_its_one_kernel_by_external_id_or_correlation() {
        let p = read(
            r#"{"traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "triton_poi", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {"External id": 8, "kernel_num_gb": 0.008388608, "kernel_flop": 0}},
            {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"External id": 8, "correlation": 47}},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 6, "dur": 1, "args": {"External id": 9, "correlation": 60, "kernel_flop": 1000, "kernel_num_gb": 1e-6}},
            {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 8, "dur": 5, "args": {"External id": 10, "kernel_flop": 5, "kernel_num_gb": 1e-9}},
            {"ph": "X", "cat": "cpu_op", "name": "two", "pid": 1, "tid": 1, "ts": 14, "dur": 5, "args": {"External id": 11, "kernel_num_gb": 1e-9}},
            {"ph": "X", "cat": "python_function", "name": "f", "pid": 1, "tid": 1, "ts": 20, "dur": 5, "args": {"kernel_num_gb": 1e-9}},
            {"ph": "X", "cat": "kernel", "name": "triton_poi", "pid": 0, "tid": 7, "ts": 3, "dur": 2, "args": {"External id": 8, "correlation": 47}},
            {"ph": "X", "cat": "kernel", "name": "k60", "pid": 0, "tid": 7, "ts": 7, "dur": 2, "args": {"correlation": 60}},
            {"ph": "X", "cat": "kernel", "name": "mm", "pid": 0, "tid": 7, "ts": 9, "dur": 2, "args": {"External id": 10, "correlation": 70, "kernel_flop": 7}},
            {"ph": "X", "cat": "kernel", "name": "two_a", "pid": 0, "tid": 7, "ts": 15, "dur": 2, "args": {"External id": 11, "correlation": 80}},
            {"ph": "X", "cat": "kernel", "name": "two_b", "pid": 0, "tid": 7, "ts": 17, "dur": 2, "args": {"External id": 11, "correlation": 81}}]}"#,
        );
        assert!(p.host_work.is_empty() && p.external_ids.is_empty());
        let of = |i: usize| {
            p.recorded_work
                .iter()
                .find(|w| w.of == WorkOf::Dispatch(i))
                .map(|w| (w.flops, w.bytes))
        };
        assert_eq!(of(0), Some((Some(0.0), Some(8_388_608.0))));
        assert_eq!(of(1), Some((Some(1000.0), Some(1000.0))));
        assert_eq!(of(2), Some((Some(7.0), None)), "the kernel's own args win");
        assert_eq!((of(3), of(4)), (None, None), "one operator, two kernels");
        assert_eq!(p.recorded_work.len(), 3);
        let notes = p.sources[0].notes.join("\n");
        assert!(
            notes.contains("of 2 kernels is read from the host event"),
            "{notes}"
        );
        assert!(
            notes.contains("1 whose kernel records its own")
                && notes.contains("1 linked to several kernels")
                && notes.contains("1 linked to no kernel"),
            "{notes}"
        );
    }

    /// Without the option nothing on host events is read (the profile a ranking reads is
    /// unchanged), and a bad figure on a host event is an error at its byte.
    #[test]
    fn host_work_is_read_only_when_asked_and_a_bad_figure_is_located() {
        let json = r#"{"traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "t", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "args": {"External id": 8, "kernel_num_gb": 0.5}},
            {"ph": "X", "cat": "kernel", "name": "t", "pid": 0, "tid": 7, "ts": 3, "dur": 2, "args": {"External id": 8, "correlation": 47}}]}"#;
        let plain = read_bytes(json.as_bytes(), &ReadOptions::default()).expect("a trace");
        assert!(plain.recorded_work.is_empty());
        assert_eq!(read(json).recorded_work.len(), 1);
        let options = ReadOptions {
            host_work: true,
            ..ReadOptions::default()
        };
        let e = read_bytes(json.replace("0.5", "-2").as_bytes(), &options)
            .expect_err("a negative kernel_num_gb")
            .to_string();
        assert!(
            e.contains("args.kernel_num_gb") && e.contains("byte"),
            "{e}"
        );
    }
}
