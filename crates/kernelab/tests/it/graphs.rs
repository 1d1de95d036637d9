//! `kernelab profile --by-graph` (issue 26) on Kineto traces of PyTorch CUDA graphs made on an
//! H200, against a reading of the trace's JSON written here: a graph replay is the
//! `cudaGraphLaunch` call and the kernels that carry its correlation id.

use super::{fixture, kernelab};
use std::collections::BTreeMap;

fn events(name: &str) -> Vec<serde_json::Value> {
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(fixture(name)).expect("trace")),
        &mut text,
    )
    .expect("gz");
    let mut t: serde_json::Value = serde_json::from_str(&text).expect("json");
    match t["traceEvents"].take() {
        serde_json::Value::Array(a) => a,
        _ => panic!("no traceEvents"),
    }
}

fn by_graph(name: &str) -> serde_json::Value {
    crate::json_of("profile", &[fixture(name), "--by-graph".into()])
}

/// Nanoseconds of a Kineto µs figure with three decimals.
fn ns(v: &serde_json::Value) -> i64 {
    (v.as_f64().expect("a number") * 1000.0).round() as i64
}

fn median(mut v: Vec<i64>) -> i64 {
    v.sort_unstable();
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        v[n / 2 - 1] + (v[n / 2] - v[n / 2 - 1]) / 2
    }
}

#[test]
fn graph_replays_of_an_h200_trace_against_its_correlation_ids() {
    let ev = events("kineto_h200_cuda_graph_replay.json.gz");
    // Independent reading: per cudaGraphLaunch, its kernels; graphs told apart by kernel count
    // (the trace's two graphs have 5 and 6 kernels).
    let launches: BTreeMap<i64, i64> = ev
        .iter()
        .filter(|e| e["name"] == "cudaGraphLaunch")
        .map(|e| (e["args"]["correlation"].as_i64().expect("id"), ns(&e["ts"])))
        .collect();
    assert_eq!(launches.len(), 13);
    let mut replays: BTreeMap<i64, Vec<(i64, i64)>> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["cat"] == "kernel") {
        let c = e["args"]["correlation"].as_i64().expect("id");
        if launches.contains_key(&c) {
            replays
                .entry(c)
                .or_default()
                .push((ns(&e["ts"]), ns(&e["dur"])));
        }
    }
    let mut per_count: BTreeMap<usize, (Vec<i64>, Vec<i64>)> = BTreeMap::new();
    for (c, ks) in &replays {
        let first = ks.iter().map(|k| k.0).min().expect("a kernel");
        let e = per_count.entry(ks.len()).or_default();
        e.0.push(ks.iter().map(|k| k.1).sum());
        e.1.push(first - launches[c]);
    }
    let v = by_graph("kineto_h200_cuda_graph_replay.json.gz");
    let g = &v["graphs"];
    assert_eq!(g["launch_calls"], 13);
    assert_eq!(g["captures"], 0);
    let rows = g["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    for r in rows {
        let k = r["kernels_per_replay"].as_u64().expect("count") as usize;
        let (times, latency) = &per_count[&k];
        assert_eq!(r["replays"], times.len());
        assert_eq!(r["kernel_ns_total"], times.iter().sum::<i64>());
        assert_eq!(r["kernel_ns_per_replay"]["median"], median(times.clone()));
        assert_eq!(
            r["kernel_ns_per_replay"]["min"],
            *times.iter().min().expect("min")
        );
        assert_eq!(r["launch_latency_ns"]["median"], median(latency.clone()));
    }
    // graph 1 (replayed first, 8 times inside record_function("replay_g1")) has 5 kernels.
    let g1 = rows
        .iter()
        .find(|r| r["graph"] == "graph 1")
        .expect("graph 1");
    assert_eq!(g1["replays"], 8);
    assert_eq!(g1["kernels_per_replay"], 5);
    assert_eq!(g1["site"], "replay_g1");
    let g2 = rows
        .iter()
        .find(|r| r["graph"] == "graph 2")
        .expect("graph 2");
    assert_eq!(
        (g2["replays"].as_u64(), g2["site"].as_str()),
        (Some(5), Some("replay_g2"))
    );
    let all: i64 = ev
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .map(|e| ns(&e["dur"]))
        .sum();
    assert_eq!(g["all_kernel_ns"], all);
    let missing = g["missing"].as_array().expect("missing");
    assert!(
        missing
            .iter()
            .any(|m| m.as_str().is_some_and(|m| m.contains("no stream capture"))),
        "{missing:?}"
    );
    // The table says the same.
    let out = kernelab()
        .args(["profile", "--by-graph"])
        .arg(fixture("kineto_h200_cuda_graph_replay.json.gz"))
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Graph replays"), "{text}");
    assert!(
        text.contains("2 graphs, 13 replays of 13 graph launch calls"),
        "{text}"
    );
    assert!(text.contains("missing: no stream capture"), "{text}");
}

#[test]
fn capture_in_the_trace_is_counted_and_a_trace_without_graphs_says_what_is_missing() {
    let v = by_graph("kineto_h200_cuda_graph_capture_and_replay.json.gz");
    let g = &v["graphs"];
    assert_eq!(g["captures"], 1);
    assert_eq!(g["rows"][0]["replays"], 4);
    assert_eq!(g["rows"][0]["kernels_per_replay"], 3);
    let v = by_graph("kineto_gdn_chunk_T8192.json.gz");
    let g = &v["graphs"];
    assert_eq!(g["rows"].as_array().map(Vec::len), Some(0));
    assert!(g["missing"][0]
        .as_str()
        .is_some_and(|m| m.contains("no graph launch calls")));
    // Without --by-graph, no `graphs` key.
    let out = kernelab()
        .args(["profile", "--format", "json"])
        .arg(fixture("kineto_gdn_chunk_T8192.json.gz"))
        .output()
        .expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v.get("graphs").is_none());
}

fn compare_by_graph(base: &str, cand: &str) -> serde_json::Value {
    crate::json_of(
        "compare",
        &[fixture(base), fixture(cand), "--by-graph".into()],
    )
}

#[test]
fn compare_by_graph_matches_graphs_by_site_and_takes_per_replay_figures_from_each_profile() {
    let name = "kineto_h200_cuda_graph_replay.json.gz";
    let v = compare_by_graph(name, name);
    let g = &v["graphs"];
    let rows = g["rows"].as_array().expect("rows");
    // The same figures as `profile --by-graph` on each side, matched by each graph's site.
    let p = by_graph(name);
    let prow = p["graphs"]["rows"].as_array().expect("profile rows");
    assert_eq!(rows.len(), prow.len());
    for (r, q) in rows.iter().zip(prow) {
        assert_eq!(r["matched_by"], "site");
        assert_eq!(r["site"], q["site"]);
        let per = q["kernel_ns_per_replay"]["median"].clone();
        assert_eq!(r["kernel_ns_per_replay"], serde_json::json!([per, per]));
        assert_eq!(
            r["replays"],
            serde_json::json!([q["replays"], q["replays"]])
        );
        assert_eq!(r["ratio"], 1.0);
        assert_eq!(r["change"], 0.0);
    }
    assert!(g["only_baseline"].as_array().is_some_and(|a| a.is_empty()));
    // Without --by-graph there is no `graphs` key.
    let out = kernelab()
        .args(["compare", "--format", "json"])
        .arg(fixture(name))
        .arg(fixture(name))
        .output()
        .expect("runs");
    let plain: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(plain.get("graphs").is_none());
}

#[test]
fn compare_by_graph_without_sites_matches_by_order_and_says_so() {
    // The capture trace's graph has no annotated launch site: graphs are matched by order.
    let v = compare_by_graph(
        "kineto_h200_cuda_graph_replay.json.gz",
        "kineto_h200_cuda_graph_capture_and_replay.json.gz",
    );
    let g = &v["graphs"];
    let rows = g["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r["matched_by"], "order");
    assert!(r["site"].is_null());
    let b = by_graph("kineto_h200_cuda_graph_replay.json.gz");
    let c = by_graph("kineto_h200_cuda_graph_capture_and_replay.json.gz");
    let (bn, cn) = (
        b["graphs"]["rows"][0]["kernel_ns_per_replay"]["median"]
            .as_f64()
            .expect("b"),
        c["graphs"]["rows"][0]["kernel_ns_per_replay"]["median"]
            .as_f64()
            .expect("c"),
    );
    assert_eq!(r["ratio"].as_f64(), Some(cn / bn));
    assert_eq!(g["only_baseline"], serde_json::json!(["graph 2"]));
    let notes = g["notes"].to_string();
    assert!(notes.contains("matched by their order"), "{notes}");
    assert!(
        notes.contains("5 kernels per replay in the baseline, 3 in the candidate"),
        "{notes}"
    );
    // The record renders in the report with the same figures, and passes its own audit.
    let dir = tempfile::tempdir().expect("tmp");
    let bundle = dir.path().join("b");
    let out = kernelab()
        .args(["compare", "--by-graph", "--record"])
        .arg(&bundle)
        .arg(fixture("kineto_h200_cuda_graph_replay.json.gz"))
        .arg(fixture("kineto_h200_cuda_graph_capture_and_replay.json.gz"))
        .output()
        .expect("record");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = crate::report_of(&bundle, "md");
    assert!(md.contains("Per-graph change"), "{md}");
    assert!(md.contains("-93.87%"), "{md}");
}

#[test]
fn replayed_kernels_are_attributed_to_the_operators_that_captured_them() {
    // Independent reading of the H200 trace: the launch calls between cudaStreamBeginCapture
    // and cudaStreamEndCapture on the capturing thread, each under its innermost cpu_op; the
    // k-th kernel of each replay (by start) is the k-th captured launch.
    let name = "kineto_h200_cuda_graph_capture_and_replay.json.gz";
    let ev = events(name);
    let x: Vec<&serde_json::Value> = ev.iter().filter(|e| e["ph"] == "X").collect();
    let at = |e: &serde_json::Value| ns(&e["ts"]);
    let end = |e: &serde_json::Value| ns(&e["ts"]) + ns(&e["dur"]);
    let named = |n: &str| -> Vec<&serde_json::Value> {
        x.iter().copied().filter(|e| e["name"] == n).collect()
    };
    let (begin, finish) = (
        at(named("cudaStreamBeginCapture")[0]),
        end(named("cudaStreamEndCapture")[0]),
    );
    let mut launches: Vec<&serde_json::Value> = x
        .iter()
        .copied()
        .filter(|e| e["cat"] == "cuda_runtime")
        .filter(|e| {
            e["name"]
                .as_str()
                .is_some_and(|n| n.starts_with("cudaLaunchKernel"))
        })
        .filter(|e| at(e) >= begin && at(e) <= finish)
        .collect();
    launches.sort_by_key(|e| at(e));
    let ops: Vec<String> = launches
        .iter()
        .map(|l| {
            x.iter()
                .filter(|o| o["cat"] == "cpu_op" && o["tid"] == l["tid"])
                .filter(|o| at(o) <= at(l) && end(o) > at(l))
                .max_by_key(|o| at(o))
                .and_then(|o| o["name"].as_str())
                .unwrap_or("(no host operator)")
                .to_string()
        })
        .collect();
    let calls: Vec<u64> = named("cudaGraphLaunch")
        .iter()
        .filter_map(|e| e["args"]["correlation"].as_u64())
        .collect();
    let mut per_op: BTreeMap<String, (u64, i64)> = BTreeMap::new();
    for c in &calls {
        let mut kernels: Vec<&serde_json::Value> = x
            .iter()
            .copied()
            .filter(|e| e["cat"] == "kernel" && e["args"]["correlation"].as_u64() == Some(*c))
            .collect();
        kernels.sort_by_key(|e| at(e));
        assert_eq!(kernels.len(), launches.len());
        for (k, op) in kernels.iter().zip(&ops) {
            let e = per_op.entry(op.clone()).or_default();
            e.0 += 1;
            e.1 += ns(&k["dur"]);
        }
    }
    assert_eq!(ops, ["aten::mm", "aten::mm", "aten::clamp_min"]);
    let v = by_graph(name);
    let got: BTreeMap<String, (u64, i64)> = v["graphs"]["rows"][0]["operators"]
        .as_array()
        .expect("operators")
        .iter()
        .map(|o| {
            let n = o["kernels_per_replay"].as_u64().expect("n");
            let total = o["total_ns"].as_i64().expect("ns");
            (
                o["name"].as_str().expect("name").to_string(),
                (n * calls.len() as u64, total),
            )
        })
        .collect();
    assert_eq!(got, per_op);
    assert_eq!(v["graphs"]["missing"], serde_json::json!([]));
    // The terminal view names them.
    let out = kernelab()
        .args(["profile", "--by-graph"])
        .arg(fixture(name))
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("graph 1 by the operator that captured each kernel (by capture order): aten::mm ×2 (24.224 µs); aten::clamp_min ×1 (5.984 µs)"),
        "{text}"
    );
}

/// Issue 44, item 2: a real Nsight Systems export of two captured PyTorch graphs, made on an
/// H100 with `--cuda-graph-trace=node` (`bench/h100/graph_trace/capture_import.sh`), whose
/// replayed kernels carry graph node ids. Each kernel's operator is found from its node (the
/// executable graph's node, cloned at instantiation from the captured node, created inside the
/// launch call an `emit_nvtx` range encloses), and held against the same chain followed in SQL
/// here. The second graph forks onto a second stream: its branches run in a different order
/// from replay to replay, so only its node ids make its replays one graph.
#[test]
fn replayed_kernels_of_an_nsys_export_reach_their_operators_through_graph_node_ids() {
    let name = "nsys-2025.3-h100-torch_graphs_node.sqlite";
    let db = rusqlite::Connection::open_with_flags(
        fixture(name),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open");
    let q = |sql: &str| -> Vec<Vec<rusqlite::types::Value>> {
        let mut st = db.prepare(sql).expect("prepare");
        let n = st.column_count();
        st.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    let int = |v: &rusqlite::types::Value| match v {
        rusqlite::types::Value::Integer(i) => Some(*i),
        _ => None,
    };
    let text = |v: &rusqlite::types::Value| match v {
        rusqlite::types::Value::Text(t) => t.clone(),
        _ => String::new(),
    };
    let (mut original, mut created) = (BTreeMap::new(), BTreeMap::new());
    for r in
        q("SELECT graphNodeId, originalGraphNodeId, globalTid, start FROM CUDA_GRAPH_NODE_EVENTS")
    {
        let node = int(&r[0]).expect("node");
        match int(&r[1]) {
            Some(o) => {
                original.insert(node, o);
            }
            None => {
                created
                    .entry(node)
                    .or_insert((int(&r[2]), int(&r[3]).expect("start")));
            }
        }
    }
    let ranges: Vec<(i64, i64, String, Option<i64>)> =
        q("SELECT start, \"end\", text, globalTid FROM NVTX_EVENTS WHERE \"end\" IS NOT NULL")
            .iter()
            .map(|r| {
                (
                    int(&r[0]).expect("s"),
                    int(&r[1]).expect("e"),
                    text(&r[2]),
                    int(&r[3]),
                )
            })
            .collect();
    let operator = |mut node: i64| -> String {
        while let Some(&o) = original.get(&node) {
            node = o;
        }
        let (tid, at) = created[&node];
        let inner = ranges
            .iter()
            .filter(|r| r.3 == tid && r.0 <= at && at < r.1)
            .min_by_key(|r| r.1 - r.0)
            .expect("a range around the node's creation");
        // emit_nvtx appends `, seq = N` (autograd ops) and `, op_id = N`.
        let cut = [", seq = ", ", op_id = "]
            .iter()
            .filter_map(|f| inner.2.find(f))
            .min()
            .unwrap_or(inner.2.len());
        inner.2[..cut].to_string()
    };
    // Expected: per replay (correlation id of its cudaGraphLaunch), its kernels; per graph
    // (the set of its nodes), ns per operator; and the order of kernel names per replay.
    let mut replays: BTreeMap<i64, Vec<(i64, i64, i64, String)>> = BTreeMap::new();
    for r in q("SELECT k.correlationId, k.start, k.\"end\", k.graphNodeId, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName WHERE k.graphNodeId IS NOT NULL") {
        replays.entry(int(&r[0]).expect("c")).or_default().push((
            int(&r[1]).expect("s"),
            int(&r[2]).expect("e"),
            int(&r[3]).expect("n"),
            text(&r[4]),
        ));
    }
    // Per graph (its sorted nodes): replays, ns per operator, kernel names of each replay.
    type Expected = (u64, BTreeMap<String, i64>, Vec<Vec<String>>);
    let mut graphs: BTreeMap<Vec<i64>, Expected> = BTreeMap::new();
    for kernels in replays.values_mut() {
        kernels.sort();
        let mut nodes: Vec<i64> = kernels.iter().map(|k| k.2).collect();
        nodes.sort();
        let g = graphs.entry(nodes).or_default();
        g.0 += 1;
        for k in kernels.iter() {
            *g.1.entry(operator(k.2)).or_default() += k.1 - k.0;
        }
        g.2.push(kernels.iter().map(|k| k.3.clone()).collect());
    }
    assert_eq!(graphs.len(), 2);
    let forked = graphs
        .values()
        .find(|g| g.0 == 10)
        .expect("the forked graph's 10 replays");
    assert!(
        forked.2.iter().any(|order| *order != forked.2[0]),
        "its branches ran in more than one order"
    );

    let v = by_graph(name);
    let rows = v["graphs"]["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 2, "{v}");
    for row in rows {
        let replays = row["replays"].as_u64().expect("replays");
        let g = graphs
            .values()
            .find(|g| g.0 == replays)
            .expect("a graph of that many replays");
        assert_eq!(row["operators_from"], "graph_node_ids", "{row}");
        let got: BTreeMap<String, i64> = row["operators"]
            .as_array()
            .expect("operators")
            .iter()
            .map(|o| {
                (
                    o["name"].as_str().expect("name").to_string(),
                    o["total_ns"].as_i64().expect("ns"),
                )
            })
            .collect();
        assert_eq!(got, g.1, "{row}");
        let site = if replays == 20 {
            "decode loop"
        } else {
            "prefill loop"
        };
        assert_eq!(row["site"], site);
    }
    // Nothing is missing: every replayed kernel's operator is known from its node.
    assert_eq!(v["graphs"]["missing"], serde_json::json!([]), "{v}");
    let text = String::from_utf8(
        kernelab()
            .arg("profile")
            .arg(fixture(name))
            .arg("--by-graph")
            .output()
            .expect("runs")
            .stdout,
    )
    .expect("UTF-8");
    assert!(
        text.contains(
            "by the operator that captured each kernel (from graph node ids): aten::mm ×2"
        ),
        "{text}"
    );
}

/// The same program traced with `--cuda-graph-trace=graph`: the export holds whole-graph
/// executions, not their kernels. Their count and GPU time are a note, and `--by-graph` says
/// why no kernel is a replay, instead of calling the trace's GPU activity off.
#[test]
fn whole_graph_executions_of_an_nsys_export_are_named_not_silently_dropped() {
    let name = "nsys-2025.3-h100-torch_graphs_whole.sqlite";
    let db = rusqlite::Connection::open_with_flags(
        fixture(name),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open");
    let (n, ns): (i64, i64) = db
        .query_row(
            "SELECT count(*), sum(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("sum");
    assert_eq!(n, 30);
    let v = by_graph(name);
    let notes = v["notes"].to_string();
    let ms = format!("{:.3} ms", ns as f64 / 1e6);
    assert!(
        notes.contains("30 CUDA graph executions were traced as whole graphs")
            && notes.contains(&ms),
        "{ms}: {notes}"
    );
    assert!(
        v["graphs"]["missing"]
            .to_string()
            .contains("--cuda-graph-trace=node"),
        "{v}"
    );
}
