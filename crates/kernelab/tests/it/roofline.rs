//! `kernelab ceilings` and `kernelab roofline`.

use super::{fixture, kernelab};

fn has_cuda() -> bool {
    [
        "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
        "/usr/lib64/libcuda.so.1",
        "/usr/local/nvidia/lib64/libcuda.so.1",
    ]
    .iter()
    .any(|p| std::path::Path::new(p).exists())
}

#[test]
fn ceilings_without_a_gpu_say_so_and_the_datasheet_still_answers() {
    if has_cuda() {
        kernelab_testkit::skip(
            "no-cuda-driver",
            "this machine has a CUDA driver; the no-driver error cannot be shown here",
        );
    } else {
        let out = kernelab().arg("ceilings").output().expect("runs");
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no CUDA driver"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let out = kernelab()
        .args(["ceilings", "--datasheet", "NVIDIA H200", "--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["kind"], "ceilings");
    let copy = &v["ceilings"][0];
    assert_eq!(copy["kind"], "dram_copy");
    assert_eq!(copy["datasheet"]["value"], 4.8e12);
    assert!(copy["measured"].is_null());
    let out = kernelab()
        .args(["ceilings", "--datasheet", "Voodoo2"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("MI300X"));
    let _ = fixture;
}

const SIZES: [&str; 6] = ["B=1", "T=8192", "H=32", "HV=32", "K=128", "V=128"];

fn roofline_json(extra: &[&str]) -> serde_json::Value {
    let mut c = kernelab();
    c.arg("roofline")
        .arg(fixture("ncu_recompute_metrics.csv"))
        .arg("--work")
        .arg(super::root().join("examples/roofline/work.toml"))
        .arg("--ceilings")
        .arg(fixture("h200_ceilings/ceilings.json"))
        .args(["--format", "json"]);
    for s in SIZES {
        c.args(["--size", s]);
    }
    let out = c.args(extra).output().expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

/// Every `"Metric Name","Metric Unit","Metric Value"` of `metric` in an ncu CSV, by hand.
fn ncu_values(text: &str, metric: &str) -> Vec<f64> {
    text.lines()
        .filter(|l| l.contains(&format!("\"{metric}\"")))
        .map(|l| {
            let last = l.rsplit("\",\"").next().expect("value");
            last.trim_matches('"')
                .replace(',', "")
                .parse()
                .expect("number")
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

#[test]
fn roofline_of_the_h200_recompute_profile_against_a_hand_computation() {
    let v = roofline_json(&[
        "--ncu",
        fixture("h200_ceilings/ncu_recompute_w4s3_vs_w8s2.csv")
            .to_str()
            .expect("utf-8"),
    ]);
    assert_eq!(v["kind"], "roofline");
    assert_eq!(v["device"], "NVIDIA H200");
    let f = &v["families"][0];
    assert_eq!(f["family"], "recompute_w_u_fwd_kernel");
    assert_eq!(f["roof"], "bf16");
    // The profile's two launches, from the fixture's gpu__time_duration.sum.
    let profile = std::fs::read_to_string(fixture("ncu_recompute_metrics.csv")).expect("csv");
    let times = ncu_values(&profile, "gpu__time_duration.sum");
    assert_eq!(times, [82_432.0, 82_080.0]);
    let seconds: f64 = times.iter().sum::<f64>() / 1e9;
    assert_eq!(f["calls"], 2);
    assert_eq!(f["total_ns"], 164_512);
    // By hand, per token and head (B=1, T=8192, H=HV=32, K=V=128, BT=64): reads
    // 2·(128+128+1+64) + 4 bytes, writes 2·(128+128) bytes; 2·64·256 FLOP.
    let bytes = 8192.0 * 32.0 * (2.0 * 321.0 + 4.0 + 2.0 * 256.0);
    assert_eq!(bytes, 303_562_752.0);
    let flops = 8192.0 * 32.0 * 2.0 * 64.0 * 256.0;
    assert_eq!(f["bytes_per_launch"]["value"], bytes);
    assert_eq!(f["flops_per_launch"]["value"], flops);
    let p = &f["placement"];
    let byte_per_s = 2.0 * bytes / seconds;
    assert!(close(
        p["byte_per_s"]["value"].as_f64().expect("GB/s"),
        byte_per_s
    ));
    assert!(close(
        p["flop_per_s"]["value"].as_f64().expect("FLOP/s"),
        2.0 * flops / seconds
    ));
    assert!(close(
        p["intensity"]["value"].as_f64().expect("AI"),
        flops / bytes
    ));
    // The ceilings: the measured DRAM copy figure wins over the 4.8 TB/s datasheet one.
    let c: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixture("h200_ceilings/ceilings.json")).expect("ceilings"),
    )
    .expect("json");
    let bw = c["ceilings"][0]["measured"]["value"]
        .as_f64()
        .expect("copy");
    assert_eq!(c["ceilings"][0]["kind"], "dram_copy");
    assert!(close(v["bandwidth"]["value"].as_f64().expect("bw"), bw));
    assert!(bw < 4.8e12);
    // 28.3 FLOP/byte × 4.2 TB/s is far below the BF16 peak: memory-bound, and the fraction
    // is the byte rate over the bandwidth (≈ 87.5%).
    assert_eq!(p["bound"], "memory");
    let fraction = p["fraction"]["value"].as_f64().expect("fraction");
    assert!(close(fraction, byte_per_s / bw), "{fraction}");
    assert!((0.87..0.88).contains(&fraction), "{fraction}");
    // Measured bytes: the mean dram__bytes.sum of the ncu file's launches.
    let ncu = std::fs::read_to_string(fixture("h200_ceilings/ncu_recompute_w4s3_vs_w8s2.csv"))
        .expect("ncu");
    let dram = ncu_values(&ncu, "dram__bytes.sum");
    assert!(!dram.is_empty());
    let mean = dram.iter().sum::<f64>() / dram.len() as f64;
    assert!(close(
        f["measured_bytes_per_launch"].as_f64().expect("measured"),
        mean
    ));
    assert_eq!(f["measured_launches"], dram.len());
}

#[test]
fn roofline_sizes_from_kineto_input_dims_and_a_missing_size_is_named() {
    // The Kineto trace: B, T, H, K, HV, V from ChunkGatedDeltaRuleFunction's Input Dims.
    let trace = fixture("kineto_gdn_chunk_T8192.json.gz");
    let out = kernelab()
        .arg("roofline")
        .arg(&trace)
        .arg("--work")
        .arg(super::root().join("examples/roofline/work.toml"))
        .arg("--ceilings")
        .arg(fixture("h200_ceilings/ceilings.json"))
        .args(["--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let f = v["families"]
        .as_array()
        .expect("families")
        .iter()
        .find(|f| f["family"] == "recompute_w_u_fwd_kernel")
        .expect("recompute")
        .clone();
    assert_eq!(f["bytes_per_launch"]["value"], 303_562_752.0);
    // By hand from the trace: the recompute kernels' durations (µs).
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&trace).expect("trace")),
        &mut text,
    )
    .expect("gz");
    let t: serde_json::Value = serde_json::from_str(&text).expect("trace json");
    let durs: Vec<f64> = t["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| {
            e["cat"] == "kernel"
                && e["name"]
                    .as_str()
                    .is_some_and(|n| n.contains("recompute_w_u_fwd_kernel"))
        })
        .map(|e| e["dur"].as_f64().expect("dur"))
        .collect();
    assert_eq!(f["calls"], durs.len());
    let seconds = durs.iter().sum::<f64>() / 1e6;
    let got = f["placement"]["byte_per_s"]["value"]
        .as_f64()
        .expect("byte/s");
    let want = durs.len() as f64 * 303_562_752.0 / seconds;
    assert!((got - want).abs() <= 1e-6 * want, "{got} vs {want}");
    assert_eq!(f["placement"]["bound"], "memory");
    // Without dims (an ncu input) and only T given: the figure names the missing size.
    let out = kernelab()
        .arg("roofline")
        .arg(fixture("ncu_recompute_metrics.csv"))
        .arg("--work")
        .arg(super::root().join("examples/roofline/work.toml"))
        .arg("--ceilings")
        .arg(fixture("h200_ceilings/ceilings.json"))
        .args(["--size", "T=8192", "--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let f = &v["families"][0];
    assert_eq!(f["bytes_per_launch"]["unavailable"], "missing `B`");
    assert!(f["bytes_per_launch"]["value"].is_null());
    assert_eq!(f["placement"]["byte_per_s"]["unavailable"], "missing `B`");
    assert!(f["placement"]["bound"].is_null());
    // A kernel spec's [sizes] fill them in (B=1, T=8192, H=HV=32, K=V=128).
    let out = kernelab()
        .arg("roofline")
        .arg(fixture("ncu_recompute_metrics.csv"))
        .arg("--work")
        .arg(super::root().join("examples/roofline/work.toml"))
        .arg("--ceilings")
        .arg(fixture("h200_ceilings/ceilings.json"))
        .arg("--spec")
        .arg(fixture("kernel/recompute_w4s3_vs_w8s2.toml"))
        .args(["--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["families"][0]["bytes_per_launch"]["value"], 303_562_752.0);
    assert_eq!(v["sizes"]["T"], 8192);
    let csv = kernelab()
        .arg("roofline")
        .arg(fixture("ncu_recompute_metrics.csv"))
        .arg("--work")
        .arg(super::root().join("examples/roofline/work.toml"))
        .args(["--datasheet", "H200", "--format", "csv"])
        .output()
        .expect("runs");
    assert_eq!(csv.status.code(), Some(0));
    let text = String::from_utf8_lossy(&csv.stdout);
    assert!(text.starts_with("family,calls,total_ns,roof,"), "{text}");
    assert!(text.contains("unavailable (missing `B`)"), "{text}");
    let md = kernelab()
        .arg("roofline")
        .arg(fixture("ncu_recompute_metrics.csv"))
        .arg("--work")
        .arg(super::root().join("examples/roofline/work.toml"))
        .arg("--ceilings")
        .arg(fixture("h200_ceilings/ceilings.json"))
        .args(["--format", "md"])
        .args(SIZES.iter().flat_map(|s| ["--size", s]))
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&md.stdout);
    assert!(text.contains("| recompute_w_u_fwd_kernel"), "{text}");
    let dir = tempfile::tempdir().expect("tempdir");
    let svg = dir.path().join("roofline.svg");
    let out = kernelab()
        .arg("roofline")
        .arg(fixture("ncu_recompute_metrics.csv"))
        .arg("--work")
        .arg(super::root().join("examples/roofline/work.toml"))
        .arg("--ceilings")
        .arg(fixture("h200_ceilings/ceilings.json"))
        .arg("--svg")
        .arg(&svg)
        .args(SIZES.iter().flat_map(|s| ["--size", s]))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let chart = std::fs::read_to_string(&svg).expect("svg");
    assert!(chart.contains("BF16 matrix 774.7 TFLOP/s"), "{chart}");
    assert!(
        chart.contains("recompute_w_u_fwd_kernel: 28.30 FLOP/byte, 104.43 TFLOP/s"),
        "{chart}"
    );
    assert!(text.contains("87.5%"), "{text}");
    assert!(text.contains("memory"), "{text}");
}

/// Issue 26: one cuBLAS kernel ran three of the four `torch.mm` shapes of the H200 trace; the
/// roofline sums each launch's own FLOPs (from its `aten::mm` `Input Dims`), not the family's
/// first launch's × calls. Ground truth recomputed here from the trace's JSON by hand.
#[test]
fn roofline_sums_each_launchs_own_shapes_and_flags_a_placement_above_the_roof() {
    let trace = fixture("kineto_h200_mm_bf16_four_shapes.json.gz");
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&trace).expect("trace")),
        &mut text,
    )
    .expect("gz");
    let t: serde_json::Value = serde_json::from_str(&text).expect("trace json");
    let events = t["traceEvents"].as_array().expect("events");
    let ops: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["cat"] == "cpu_op" && e["name"] == "aten::mm")
        .collect();
    let launch = |c: &serde_json::Value| {
        events
            .iter()
            .find(|e| {
                (e["cat"] == "cuda_runtime" || e["cat"] == "cuda_driver")
                    && e["args"]["correlation"] == *c
            })
            .expect("launch call")
    };
    let family = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT";
    let (mut flops, mut seconds, mut first, mut calls) = (0.0, 0.0, None, 0);
    for k in events
        .iter()
        .filter(|e| e["cat"] == "kernel" && e["name"] == family)
    {
        let l = launch(&k["args"]["correlation"]);
        let ts = l["ts"].as_f64().expect("ts");
        let op = ops
            .iter()
            .find(|o| {
                let s = o["ts"].as_f64().expect("ts");
                o["tid"] == l["tid"] && s <= ts && ts <= s + o["dur"].as_f64().expect("dur")
            })
            .expect("aten::mm around the launch");
        let d = &op["args"]["Input Dims"];
        let m = d[0][0].as_f64().expect("M");
        let k_ = d[0][1].as_f64().expect("K");
        let n = d[1][1].as_f64().expect("N");
        let f = 2.0 * m * n * k_;
        first.get_or_insert(f);
        flops += f;
        seconds += k["dur"].as_f64().expect("dur") / 1e6;
        calls += 1;
    }
    assert_eq!(calls, 15);
    let out = kernelab()
        .arg("roofline")
        .arg(&trace)
        .arg("--work")
        .arg(fixture("kineto_h200_mm_bf16_four_shapes.work.toml"))
        .arg("--ceilings")
        .arg(fixture("h200_ceilings/ceilings.json"))
        .args(["--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let f = v["families"]
        .as_array()
        .expect("families")
        .iter()
        .find(|f| f["family"] == family)
        .expect("the nvjet 256x128 family");
    assert_eq!(f["calls"], 15);
    let got = f["placement"]["flop_per_s"]["value"]
        .as_f64()
        .expect("FLOP/s");
    assert!(close(got, flops / seconds), "{got} vs {}", flops / seconds);
    // The first launch's shapes × calls (the old reading) is a quarter lower.
    let first = first.expect("a launch") * 15.0 / seconds;
    assert!(got > 1.3 * first, "{got} vs {first}");
    assert!(close(
        f["flops_per_launch"]["value"].as_f64().expect("mean"),
        flops / 15.0
    ));
    // Three shapes, five launches each, as the trace's Input Dims say.
    let shapes = f["shapes"].as_array().expect("shapes");
    assert_eq!(shapes.len(), 3);
    assert!(shapes.iter().all(|s| s["launches"] == 5));
    assert!(shapes
        .iter()
        .any(|s| s["sizes"] == serde_json::json!({"M": 2048, "K": 4096, "N": 8192})));
    // 792 TFLOP/s against a measured 774.7: above the roof, flagged with its causes.
    let fraction = f["placement"]["fraction"]["value"]
        .as_f64()
        .expect("fraction");
    assert!(fraction > 1.0, "{fraction}");
    let flag = f["above_roof"].as_str().expect("flagged");
    assert!(flag.contains("work model overcounts"), "{flag}");
    assert!(flag.contains("measured low"), "{flag}");
    let out = kernelab()
        .arg("roofline")
        .arg(&trace)
        .arg("--work")
        .arg(fixture("kineto_h200_mm_bf16_four_shapes.work.toml"))
        .arg("--ceilings")
        .arg(fixture("h200_ceilings/ceilings.json"))
        .output()
        .expect("runs");
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("(above roof!)"), "{table}");
    assert!(table.contains("Sizes read from the trace"), "{table}");
    assert!(table.contains("K=4096 M=2048 N=8192 × 5"), "{table}");
    // A placement under the roof carries no flag.
    let datasheet = kernelab()
        .arg("roofline")
        .arg(&trace)
        .arg("--work")
        .arg(fixture("kineto_h200_mm_bf16_four_shapes.work.toml"))
        .args(["--datasheet", "H200", "--format", "json"])
        .output()
        .expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&datasheet.stdout).expect("json");
    assert!(v["families"]
        .as_array()
        .expect("families")
        .iter()
        .all(|f| f.get("above_roof").is_none()));
}
