//! Differential tests: the parallel reader (`read_path`) against the one-thread reader
//! (`read`) on every Kineto fixture and on synthetic traces with tricky strings, at many chunk
//! sizes (so cuts fall everywhere, inside strings too), including malformed inputs, whose
//! errors must be the same.

use super::*;
use crate::detect::{detect, Format};
use kernelab_model::LaunchConfig;
use std::io::Write as _;
use std::path::PathBuf;

fn options_sets() -> [KinetoOptions; 2] {
    [
        KinetoOptions::default(),
        KinetoOptions {
            host_launches: true,
            op_shapes: true,
            graphs: true,
            graph_operators: true,
            host_work: true,
        },
    ]
}

type Read = std::result::Result<(Profile, SourceInfo), String>;

fn one_thread(bytes: &[u8], options: &KinetoOptions) -> Read {
    let mut p = Profile::default();
    let mut s = SourceInfo::default();
    super::super::read(bytes, options, &mut p, &mut s).map_err(|e| e.to_string())?;
    Ok((p, s))
}

fn parallel(path: &Path, split: Split, options: &KinetoOptions) -> Read {
    let size = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    let mut p = Profile::default();
    let mut s = SourceInfo::default();
    let consumed = AtomicU64::new(0);
    read_path(path, size, split, options, &mut p, &mut s, Some(&consumed))
        .map_err(|e| e.to_string())?;
    Ok((p, s))
}

/// Every field of the two profiles, equal (names, configs and shapes by id).
fn assert_same(a: &Profile, b: &Profile, what: &str) {
    let Profile {
        names,
        launches,
        dispatches,
        transfers,
        annotations,
        host_launches,
        shapes,
        op_shapes,
        graph_launches,
        graph_captures,
        kernel_launch_calls,
        host_ops,
        graph_nodes,
        graph_node_creations,
        aggregates,
        activities,
        sources,
        untimed,
        launch_metrics,
        remainders,
        recorded_work,
        host_work,
        external_ids,
    } = a;
    let all_names = |n: &kernelab_model::Interner<String>| {
        (0..n.len())
            .map(|i| n.get(i as u32).cloned())
            .collect::<Vec<_>>()
    };
    assert_eq!(all_names(names), all_names(&b.names), "names: {what}");
    let all_launches = |n: &kernelab_model::Interner<LaunchConfig>| {
        (0..n.len())
            .map(|i| n.get(i as u32).copied())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        all_launches(launches),
        all_launches(&b.launches),
        "launches: {what}"
    );
    let all_shapes = |n: &kernelab_model::Interner<Vec<Vec<i64>>>| {
        (0..n.len())
            .map(|i| n.get(i as u32).cloned())
            .collect::<Vec<_>>()
    };
    assert_eq!(all_shapes(shapes), all_shapes(&b.shapes), "shapes: {what}");
    assert_eq!(dispatches.len(), b.dispatches.len(), "dispatches: {what}");
    assert!(*dispatches == b.dispatches, "dispatches: {what}");
    assert_eq!(
        dispatches.contexts(),
        b.dispatches.contexts(),
        "contexts: {what}"
    );
    assert_eq!(*transfers, b.transfers, "transfers: {what}");
    assert_eq!(*annotations, b.annotations, "annotations: {what}");
    assert_eq!(*host_launches, b.host_launches, "host launches: {what}");
    assert_eq!(*op_shapes, b.op_shapes, "op shapes: {what}");
    assert_eq!(*graph_launches, b.graph_launches, "graph launches: {what}");
    assert_eq!(*graph_captures, b.graph_captures, "graph captures: {what}");
    assert_eq!(
        *kernel_launch_calls, b.kernel_launch_calls,
        "kernel launch calls: {what}"
    );
    assert_eq!(*host_ops, b.host_ops, "host ops: {what}");
    assert_eq!(*graph_nodes, b.graph_nodes, "graph nodes: {what}");
    assert_eq!(
        *graph_node_creations, b.graph_node_creations,
        "graph node creations: {what}"
    );
    assert_eq!(*aggregates, b.aggregates, "aggregates: {what}");
    assert_eq!(*activities, b.activities, "activities: {what}");
    assert_eq!(*sources, b.sources, "sources: {what}");
    assert_eq!(*untimed, b.untimed, "untimed: {what}");
    assert_eq!(*launch_metrics, b.launch_metrics, "metrics: {what}");
    assert_eq!(*remainders, b.remainders, "remainders: {what}");
    assert_eq!(*recorded_work, b.recorded_work, "recorded work: {what}");
    assert_eq!(*host_work, b.host_work, "host work: {what}");
    assert_eq!(*external_ids, b.external_ids, "external ids: {what}");
}

/// Reads `bytes` on one thread and, written to a file, in parallel at every split of
/// `splits`, with both option sets; the results must be the same (errors too).
fn check(bytes: &[u8], splits: &[Split], what: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("trace.json");
    std::fs::File::create(&path)
        .and_then(|mut f| f.write_all(bytes))
        .expect("write");
    for options in options_sets() {
        let want = one_thread(bytes, &options);
        for &split in splits {
            let got = parallel(&path, split, &options);
            let what = format!("{what}, {split:?}, {options:?}");
            match (&want, &got) {
                (Ok((a, sa)), Ok((b, sb))) => {
                    assert_same(a, b, &what);
                    assert_eq!(sa, sb, "source: {what}");
                }
                (Err(a), Err(b)) => assert_eq!(a, b, "error: {what}"),
                (a, b) => panic!(
                    "{what}: one thread {:?}, parallel {:?}",
                    a.as_ref().err(),
                    b.as_ref().err()
                ),
            }
        }
    }
}

/// Splits of a trace of `len` bytes into a few, some and many chunks over 2 and 3 threads.
fn splits_for(len: usize) -> Vec<Split> {
    let len = len as u64;
    let mut out = Vec::new();
    for (threads, parts) in [(2, 2), (2, 7), (3, 31), (2, 400)] {
        out.push(Split {
            threads,
            chunk_bytes: (len / parts).max(1),
        });
    }
    out
}

/// Every Kineto trace among the repository's fixtures and examples (and the shared external
/// fixtures when present), decompressed.
fn kineto_fixtures() -> Vec<(PathBuf, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut dirs = vec![
        root.join("tests/fixtures"),
        root.join("examples"),
        root.join("../shared/fixtures/external/hta"),
        root.join("../shared/fixtures/external/kineto_plain"),
        root.join("../shared/fixtures/external/tracelens"),
        root.join("../shared/fixtures/external/rocprof_v1"),
    ];
    let mut out = Vec::new();
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
                continue;
            }
            let name = p.to_string_lossy().to_string();
            if !(name.ends_with(".json") || name.ends_with(".json.gz")) {
                continue;
            }
            let Ok(raw) = std::fs::read(&p) else { continue };
            let bytes = if raw.starts_with(&[0x1f, 0x8b]) {
                let mut out = Vec::new();
                match std::io::Read::read_to_end(
                    &mut flate2::read::GzDecoder::new(&raw[..]),
                    &mut out,
                ) {
                    Ok(_) => out,
                    Err(_) => continue,
                }
            } else {
                raw
            };
            if bytes.len() < (64 << 20) && detect(&bytes).ok() == Some(Format::Kineto) {
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_kineto_fixture_reads_the_same_in_parallel() {
    let fixtures = kineto_fixtures();
    assert!(fixtures.len() >= 20, "{} fixtures", fixtures.len());
    for (path, bytes) in &fixtures {
        check(bytes, &splits_for(bytes.len()), &path.display().to_string());
    }
}

/// A trace whose strings hold what a cut looks for (`},{`, with whitespace), escaped quotes,
/// braces and brackets, in names, in `args` and in keys kernelab does not read, around kernels,
/// copies, annotations, operators with shapes, runtime calls, captures and metadata.
fn tricky_trace(events: usize) -> Vec<u8> {
    let nasty = [
        r#"a},{b"#,
        r#"},{"#,
        r#"}, {\"cat\": \"kernel\", \"ph\": \"X\", \"name\": \"fake\", \"ts\": 1, \"dur\": 1},{"#,
        r#"\"},{\""#,
        r#"x\\"#,
        r#"{[}]"#,
        r#"}\n,\t{"#,
        r#"\u007d,\u007b"#,
        r#"]}"#,
    ];
    let mut t = String::from("{\"schemaVersion\": 1, \"traceEvents\": [\n");
    for i in 0..events {
        let n = nasty[i % nasty.len()];
        let m = nasty[(i / nasty.len()) % nasty.len()];
        let ts = 1000 + i * 7;
        let ev = match i % 9 {
            0 => format!(
                r#"{{"ph": "X", "cat": "kernel", "name": "k{}{n}", "pid": 0, "tid": 7, "ts": {ts}, "dur": {}, "args": {{"device": 0, "stream": 7, "correlation": {i}, "grid": [{}, 1, 1], "block": [128, 1, 1], "registers per thread": 32, "shared memory": 0, "kernel_flop": {i}, "kernel_num_gb": 0.25, "note": "{m}", "nested": {{"k": ["{n}", {{"z": "{m}"}}]}}, "list": [{{"a": 1}},{{"cat": "kernel", "ph": "X", "ts": 5, "dur": 1}}, {{"b": "{m}"}}]}}}}"#,
                i % 5,
                i % 4,
                i % 3 + 1
            ),
            1 => format!(
                r#"{{"ph":"X","cat":"cpu_op","name":"aten::mm{m}","pid":1,"tid":2,"ts":{ts},"dur":5,"args":{{"Input Dims":[[{},4],[4,{}]],"Input type":["{n}"]}}}}"#,
                i % 3,
                i % 2
            ),
            2 => format!(
                r#"{{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": {ts}, "dur": 2, "args": {{"correlation": {}, "cbid": 211, "s": "{n}"}}}}"#,
                i - 2
            ),
            3 => format!(
                r#"{{"ph": "X", "cat": "user_annotation", "name": "step{m}{}", "pid": 1, "tid": 2, "ts": {ts}, "dur": 50}}"#,
                i % 4
            ),
            4 => format!(
                r#"{{"ph": "X", "cat": "gpu_user_annotation", "name": "{n}", "pid": 0, "tid": 7, "ts": {ts}, "dur": 40, "args": {{"device": 0}}}}"#
            ),
            5 => format!(
                r#"{{"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy {n}", "pid": 0, "tid": 7, "ts": {ts}, "dur": 3, "args": {{"device": 0, "stream": 7, "bytes": {}}}}}"#,
                i * 16
            ),
            6 => format!(
                r#"{{"ph": "X", "cat": "cuda_runtime", "name": "{}", "pid": 1, "tid": {}, "ts": {ts}, "dur": 4, "args": {{"correlation": {i}}}}}"#,
                [
                    "cudaStreamBeginCapture",
                    "cudaStreamEndCapture",
                    "cudaGraphLaunch"
                ][(i / 9) % 3],
                (i / 27) % 2
            ),
            7 => format!(
                r#"{{"name": "process_name", "ph": "M", "pid": {}, "tid": 0, "args": {{"name": "{n}"}}}}"#,
                i % 3
            ),
            _ => format!(
                r#"{{"ph": "f", "id": {i}, "pid": 0, "tid": 7, "ts": {ts}, "cat": "ac2g", "name": "{m}", "bp": "e"}}"#
            ),
        };
        t.push_str(&ev);
        t.push_str(match i % 4 {
            0 => ",\n",
            1 => ", ",
            2 => ",",
            _ => " ,\n\t",
        });
    }
    t.push_str("{\"ph\": \"i\", \"name\": \"end\"}\n],\n\"deviceProperties\": [{\"name\": \"H200\"}], \"displayTimeUnit\": \"ms\"}\n");
    t.into_bytes()
}

/// Whether byte `at` of a JSON text is inside a string.
fn inside_string(b: &[u8], at: usize) -> bool {
    let (mut inside, mut escaped) = (false, false);
    for &c in &b[..at] {
        match (inside, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (_, false, b'"') => inside = !inside,
            _ => {}
        }
    }
    inside
}

#[test]
fn tricky_strings_read_the_same_at_every_chunk_size() {
    let bytes = tricky_trace(60);
    // The trace is valid JSON with all kinds of events, and cuts are guessed inside strings.
    serde_json::from_slice::<serde_json::Value>(&bytes).expect("valid JSON");
    let all = &options_sets()[1];
    let (p, _) = one_thread(&bytes, all).expect("reads");
    assert!(p.dispatches.len() >= 6 && !p.op_shapes.is_empty() && !p.graph_captures.is_empty());
    assert!(!p.annotations.is_empty() && !p.transfers.is_empty() && !p.graph_launches.is_empty());
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.json");
    std::fs::write(&path, &bytes).expect("write");
    let file = std::fs::File::open(&path).expect("open");
    let p0 = bytes.iter().position(|&c| c == b'[').expect("[") as u64 + 1;
    let starts = split_points(Some(&file), p0, bytes.len() as u64, 1).expect("cuts");
    let inside = starts
        .iter()
        .filter(|&&s| inside_string(&bytes, s as usize))
        .count();
    assert!(
        inside >= 10 && starts.len() - inside >= 10,
        "{inside} of {}",
        starts.len()
    );
    let mut splits: Vec<Split> = (1..=400)
        .step_by(3)
        .map(|c| Split {
            threads: 2 + c % 3,
            chunk_bytes: c as u64,
        })
        .collect();
    splits.extend(splits_for(bytes.len()));
    check(&bytes, &splits, "tricky trace");
    let big = tricky_trace(5000);
    check(&big, &splits_for(big.len()), "tricky trace, 5000 events");
}

#[test]
fn plain_array_and_empty_arrays_read_the_same() {
    let body = tricky_trace(40);
    let text = String::from_utf8(body).expect("utf-8");
    let start = text.find('[').expect("array");
    let end = text.rfind(']').expect("array end");
    let array = format!("  {}  ", &text[start..=end]);
    let small: Vec<Split> = [1u64, 2, 50, 333]
        .iter()
        .map(|&c| Split {
            threads: 2,
            chunk_bytes: c,
        })
        .collect();
    check(array.as_bytes(), &small, "plain array");
    check(b"{\"traceEvents\": []}", &small, "empty");
    check(b"[ ]", &small, "empty array");
    check(
        b"{\"traceEvents\": [], \"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":2},{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"j\",\"ts\":3,\"dur\":2}]}",
        &small,
        "two arrays",
    );
}

/// Legacy rocprof traces (events without `cat`, placed by their process's name): from the
/// first such event on, the rest is read on one thread.
#[test]
fn legacy_traces_read_the_same() {
    let mut t = String::from("{\"traceEvents\":[\n");
    for i in 0..200 {
        if i % 50 == 0 {
            t.push_str(&format!(
                "{{\"args\":{{\"name\":\"GPU{}\"}},\"ph\":\"M\",\"pid\":{},\"name\":\"process_name\"}},\n",
                i / 50,
                6 + i / 50
            ));
            t.push_str("{\"args\":{\"name\":\"COPY\"},\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\"},\n");
        }
        t.push_str(&format!(
            "{{\"ph\":\"X\",\"name\":\"k{}}},{{\",\"pid\":{},\"tid\":0,\"ts\":{},\"dur\":5,\"args\":{{\"BeginNs\":\"{}\",\"EndNs\":\"{}\",\"dev-id\":\"{}\"}}}},\n",
            i % 3,
            [6, 7, 2][i % 3],
            10 * i,
            10_000 * i as u64,
            10_000 * i as u64 + 4_321,
            2 + i % 2
        ));
        if i % 7 == 0 {
            t.push_str("{\"ph\":\"X\",\"name\":\"<barrier packet>\",\"pid\":6,\"tid\":0,\"ts\":1,\"dur\":2,\"args\":{\"BeginNs\":\"1000\",\"EndNs\":\"2000\"}},\n");
        }
    }
    t.push_str("{\"ph\":\"X\",\"name\":\"last\",\"pid\":6,\"tid\":0,\"ts\":1,\"dur\":2}]}");
    let splits: Vec<Split> = [7u64, 100, 1000, 5000]
        .iter()
        .map(|&c| Split {
            threads: 2,
            chunk_bytes: c,
        })
        .collect();
    let (p, _) = one_thread(t.as_bytes(), &KinetoOptions::default()).expect("reads");
    assert!(p.dispatches.len() > 100 && !p.activities.is_empty() && !p.transfers.is_empty());
    check(t.as_bytes(), &splits, "legacy trace");
    // Kineto events first, legacy ones later: chunks before go in parallel.
    let tricky = String::from_utf8(tricky_trace(300)).expect("utf-8");
    let at = tricky.rfind("{\"ph\": \"i\"").expect("last event");
    let legacy = &t[t.find('[').expect("[") + 1..t.rfind(']').expect("]")];
    let mixed = format!("{}{legacy},\n{}", &tricky[..at], &tricky[at..]);
    check(
        mixed.as_bytes(),
        &splits_for(mixed.len()),
        "kineto then legacy",
    );
}

#[test]
fn malformed_traces_fail_with_the_same_error() {
    let good = tricky_trace(45);
    let splits: Vec<Split> = [3u64, 40, 300, 2000]
        .iter()
        .map(|&c| Split {
            threads: 2,
            chunk_bytes: c,
        })
        .collect();
    // Cut off everywhere (a few positions per stride), and one byte spoiled in several ways.
    for cut in (1..good.len()).step_by(53) {
        check(&good[..cut], &splits, &format!("cut at {cut}"));
    }
    for (k, at) in (0..good.len()).step_by(97).enumerate() {
        let mut bad = good.clone();
        bad[at] = [b'x', b'"', b'}', b']', b',', b'{'][k % 6];
        check(&bad, &splits, &format!("byte {at} spoiled"));
    }
    let dur = br#"{"traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2}, {"ph":"X","cat":"kernel","name":"k},{","ts":1,"dur":-2}, {"ph":"X","cat":"kernel","name":"j","ts":"x","dur":2}]}"#;
    check(dur, &splits, "negative duration");
    check(
        b"{\"traceEvents\": [{\"ph\":\"X\"}, ",
        &splits,
        "ends after a comma",
    );
    check(
        b"{\"traceEvents\": [{\"ph\":\"X\"}] garbage",
        &splits,
        "trailing",
    );
}

#[test]
fn split_points_find_event_starts() {
    assert_eq!(find_split(b"x}, \n{y"), Some(5));
    assert_eq!(find_split(b"}}}{,{"), None);
    assert_eq!(find_split(b"} ,{"), Some(3));
    assert_eq!(find_split(b"}, x{},{"), Some(7));
    assert_eq!(find_split(b""), None);
}
