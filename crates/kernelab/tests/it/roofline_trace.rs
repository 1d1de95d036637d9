//! `kernelab roofline` from the work the trace records (issue 44): a real PyTorch
//! Inductor-augmented Kineto trace and a real Proton profile (both written on an H100 by
//! `bench/h100/trace_work/`), against figures derived here from the raw files by another route,
//! and against the same trace with a work model.

use super::{fixture, kernelab};
use serde_json::Value;
use std::collections::BTreeMap;

fn roofline(args: &[&std::ffi::OsStr]) -> (Option<i32>, Value, String) {
    let out = kernelab()
        .arg("roofline")
        .args(args)
        .args(["--datasheet", "H100 SXM", "--format", "json"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), v, stderr)
}

fn family<'a>(v: &'a Value, prefix: &str) -> &'a Value {
    v["families"]
        .as_array()
        .expect("families")
        .iter()
        .find(|f| f["family"].as_str().is_some_and(|n| n.starts_with(prefix)))
        .unwrap_or_else(|| panic!("no family {prefix} in {v}"))
}

/// Per kernel name, from the raw trace: (launches, total µs, kernel_flop sum, kernel_num_gb sum).
fn raw_kernels(path: &std::path::Path) -> BTreeMap<String, (u64, f64, f64, f64)> {
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(path).expect("trace")),
        &mut text,
    )
    .expect("gz");
    let t: Value = serde_json::from_str(&text).expect("trace json");
    let mut out: BTreeMap<String, (u64, f64, f64, f64)> = BTreeMap::new();
    for e in t["traceEvents"].as_array().expect("events") {
        if e["cat"] != "kernel" {
            continue;
        }
        let k = out
            .entry(e["name"].as_str().expect("name").to_string())
            .or_default();
        k.0 += 1;
        k.1 += e["dur"].as_f64().expect("dur");
        k.2 += e["args"]["kernel_flop"].as_f64().unwrap_or(f64::NAN);
        k.3 += e["args"]["kernel_num_gb"].as_f64().unwrap_or(f64::NAN);
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

/// The work model: the bf16 `torch.mm` as cuBLAS runs it (2·M·N·K FLOPs; its three matrices
/// read or written once, 2 bytes an element) and the fp32 `addmm` counting its matrices once
/// (4 bytes an element, plus the bias): Inductor's estimate counts the matrices twice.
const RULES: &str = r#"
[[rule]]
match = "^nvjet_"
roof = "bf16"
flops = "2*M*N*K"
bytes = "2*(M*K + K*N + M*N)"
dims = { M = [0, 0], K = [0, 1], N = [1, 1] }

[[rule]]
match = "^sm80_xmma_gemm_f32"
roof = "fp32"
flops = "2*M*N*K"
bytes = "4*(M*K + K*N + M*N + N)"
dims = { M = [1, 0], K = [1, 1], N = [2, 1] }
"#;

#[test]
fn roofline_of_an_inductor_augmented_trace_against_the_same_trace_with_a_work_model() {
    let trace = fixture("inductor/kineto_inductor_augmented.json.gz");
    let raw = raw_kernels(&trace);
    let (code, v, err) = roofline(&[trace.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    // Every kernel's figures, from the trace, per launch; the times are the events' own.
    for (name, (n, us, flop, gb)) in &raw {
        let f = family(&v, &name[..20]);
        assert_eq!(f["calls"], *n, "{name}");
        assert!(f["rule_line"].is_null(), "{name}");
        let bytes = f["bytes_per_launch"]["value"].as_f64().expect("bytes");
        assert!(close(bytes, gb * 1e9 / *n as f64), "{name}: {bytes}");
        let byte_per_s = f["placement"]["byte_per_s"]["value"].as_f64().expect("B/s");
        assert!(close(byte_per_s, gb * 1e9 / (us / 1e6)), "{name}");
        if *flop > 0.0 {
            let flops = f["flops_per_launch"]["value"].as_f64().expect("flops");
            assert!(close(flops, flop / *n as f64), "{name}: {flops}");
            assert_eq!(f["roof"], "fp32", "{name}: the width is not said");
        } else {
            // Inductor's 0 is "no formula": the FLOPs are unavailable, placed on bytes alone.
            assert_eq!(
                f["flops_per_launch"]["unavailable"], "the trace records 0 FLOPs (kernel_flop)",
                "{name}"
            );
            assert_eq!(f["placement"]["bound"], "memory", "{name}");
        }
    }
    // The bf16 product's FLOPs are 2·2048·4096·1024 (its aten::mm's Input Dims).
    let mm = family(&v, "nvjet_");
    assert_eq!(
        mm["flops_per_launch"]["value"],
        2.0 * 2048.0 * 4096.0 * 1024.0
    );
    let notes = v["notes"].as_array().expect("notes");
    let said = |needle: &str| {
        notes
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n.contains(needle)))
    };
    assert!(
        said("work from the trace (kernel_flop, kernel_num_gb), no work-model rule: "),
        "{notes:?}"
    );
    assert!(said("placed under the fp32 roof"), "{notes:?}");

    // The same trace with a work model: the model wins; it agrees with the trace on the bf16
    // product and disagrees on the addmm's bytes (Inductor counts the matrices twice).
    let dir = tempfile::tempdir().expect("tempdir");
    let rules = dir.path().join("work.toml");
    std::fs::write(&rules, RULES).expect("rules");
    let with = |input: &std::path::Path| {
        let (code, v, err) = roofline(&[input.as_os_str(), "--work".as_ref(), rules.as_os_str()]);
        assert_eq!(code, Some(0), "{err}");
        v
    };
    let m = with(&trace);
    let mm_model = family(&m, "nvjet_");
    assert_eq!(mm_model["rule_line"], 3);
    assert_eq!(mm_model["roof"], "bf16");
    assert_eq!(mm_model["flops_per_launch"], mm["flops_per_launch"]);
    assert_eq!(mm_model["bytes_per_launch"], mm["bytes_per_launch"]);
    assert_eq!(
        mm_model["placement"]["flop_per_s"],
        mm["placement"]["flop_per_s"]
    );
    let addmm = family(&m, "sm80_xmma_gemm_f32");
    let (_, _, _, gb) = raw
        .iter()
        .find(|(k, _)| k.starts_with("sm80_xmma_gemm_f32"))
        .map(|(_, v)| *v)
        .expect("addmm kernel");
    let model_bytes = 4.0 * (3.0 * 1024.0 * 1024.0 + 1024.0);
    assert_eq!(addmm["bytes_per_launch"]["value"], model_bytes);
    let change = 100.0 * (model_bytes - gb * 1e9 / 3.0) / (gb * 1e9 / 3.0);
    let notes = m["notes"].as_array().expect("notes");
    let text: Vec<&str> = notes.iter().filter_map(Value::as_str).collect();
    assert!(
        text.iter().any(|n| n.starts_with("the work model (used) and the trace disagree beyond 1%: sm80_xmma_gemm_f32")
            && n.contains(&format!("bytes/launch 12.587 MB (model) against 25.170 MB (trace: kernel_num_gb), {change:+.1}%"))
            && !n.contains("FLOPs/launch")),
        "{text:?}"
    );
    assert!(
        text.contains(&"the work model and the trace agree within 1% for 1 family"),
        "{text:?}"
    );
    // The Inductor kernel has no rule: its bytes still come from the trace.
    assert!(text.iter().any(|n| n.starts_with("work from the trace (kernel_flop, kernel_num_gb), no work-model rule: triton_poi_fused_add_mul_relu_0 (1 family)")), "{text:?}");
    // The plain trace (before augment_trace) with the same model: the same placements for the
    // modelled families, and no work from the trace.
    let p = with(&fixture("inductor/kineto_inductor_plain.json.gz"));
    for prefix in ["nvjet_", "sm80_xmma_gemm_f32"] {
        assert_eq!(
            family(&p, prefix)["placement"],
            family(&m, prefix)["placement"],
            "{prefix}"
        );
    }
    // Its Inductor kernel's work is on the launching cpu_op (benchmark_kernel), not on the
    // kernel: taken through the link, the same placement as the augmented trace's.
    let triton = family(&p, "triton_poi_fused_add_mul_relu_0");
    assert_eq!(
        triton["placement"],
        family(&m, "triton_poi_fused_add_mul_relu_0")["placement"]
    );
    let host = raw_host_work(&fixture("inductor/kineto_inductor_plain.json.gz"));
    let (n, gb) = host["triton_poi_fused_add_mul_relu_0"];
    assert_eq!(n, 3);
    assert_eq!(
        triton["bytes_per_launch"]["value"],
        (gb / 3.0 * 1e9).round()
    );
    assert_eq!(triton["bytes_per_launch"]["value"], 8_388_608.0);
    assert_eq!(host.len(), 1, "{host:?}");
}

/// Per kernel name, the launches and `kernel_num_gb` sum of the host events (`cpu_op`) that
/// record work, each joined here to its kernel by `External id`.
fn raw_host_work(path: &std::path::Path) -> BTreeMap<String, (u64, f64)> {
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(path).expect("trace")),
        &mut text,
    )
    .expect("gz");
    let t: Value = serde_json::from_str(&text).expect("trace json");
    let events = t["traceEvents"].as_array().expect("events");
    let kernel_of: BTreeMap<i64, &str> = events
        .iter()
        .filter(|e| e["cat"] == "kernel")
        .filter_map(|e| Some((e["args"]["External id"].as_i64()?, e["name"].as_str()?)))
        .collect();
    let mut out: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    for e in events.iter().filter(|e| e["cat"] == "cpu_op") {
        let (Some(gb), Some(id)) = (
            e["args"]["kernel_num_gb"].as_f64(),
            e["args"]["External id"].as_i64(),
        ) else {
            continue;
        };
        let k = out
            .entry(kernel_of.get(&id).expect("a kernel").to_string())
            .or_default();
        k.0 += 1;
        k.1 += gb;
    }
    out
}

#[test]
fn roofline_of_a_proton_profile_from_its_flops_and_bytes_and_none_without_work() {
    let path = fixture("proton/h100_add_scopes.hatchet");
    let (code, v, err) = roofline(&[path.as_os_str()]);
    assert_eq!(code, Some(0), "{err}");
    // From the raw tree by hand: each add kernel's node holds count, flops32 and bytes.
    let tree: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
    let mut nodes = vec![&tree[0]];
    let mut seen = 0;
    while let Some(n) = nodes.pop() {
        nodes.extend(n["children"].as_array().into_iter().flatten());
        let m = &n["metrics"];
        let Some(flops) = m["flops32"].as_f64().filter(|_| m["device_id"].is_string()) else {
            continue;
        };
        let count = m["count"].as_f64().expect("count");
        let f = family(&v, n["frame"]["name"].as_str().expect("name"));
        assert_eq!(f["roof"], "fp32");
        assert_eq!(f["flops_per_launch"]["value"], flops / count);
        assert_eq!(
            f["bytes_per_launch"]["value"],
            m["bytes"].as_f64().expect("bytes") / count
        );
        let time = m["time (ns)"].as_f64().expect("time") / 1e9;
        let rate = f["placement"]["byte_per_s"]["value"].as_f64().expect("B/s");
        assert!(
            close(rate, m["bytes"].as_f64().expect("bytes") / time),
            "{rate}"
        );
        seen += 1;
    }
    assert_eq!(seen, 2);
    // The cuBLAS kernel records nothing: no rule, no work.
    let gemm = family(&v, "sm80_xmma_gemm");
    assert!(gemm["flops_per_launch"]["value"].is_null());
    assert!(v["notes"].to_string().contains(
        "1 of 3 families have no work recorded in the trace (give --work RULES for them)"
    ));
    // A trace that records no work, and no work model: exit 2, saying what to give. (The
    // plain H100 trace records its Inductor kernel's work on the launching cpu_op: removed
    // here.)
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(
            std::fs::File::open(fixture("inductor/kineto_inductor_plain.json.gz")).expect("trace"),
        ),
        &mut text,
    )
    .expect("gz");
    let mut t: Value = serde_json::from_str(&text).expect("trace json");
    for e in t["traceEvents"].as_array_mut().expect("events") {
        if let Some(args) = e.get_mut("args").and_then(Value::as_object_mut) {
            args.remove("kernel_num_gb");
            args.remove("kernel_flop");
        }
    }
    let dir = tempfile::tempdir().expect("tmp");
    let plain = dir.path().join("no_work.json");
    std::fs::write(&plain, t.to_string()).expect("write");
    let (code, _, err) = roofline(&[plain.as_os_str()]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("record no FLOPs or bytes") && err.contains("--work RULES"),
        "{err}"
    );
}
