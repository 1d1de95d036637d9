//! Every fixture against the independent oracle `tests/oracle/profile_oracle.py`, whose
//! output is committed in `tests/expected/` (regenerate: see that script's docstring).

use super::{fixture, profile_json, root, shared};
use serde_json::Value;
use std::path::Path;

fn expected(rel: &str) -> Value {
    let p = root().join("tests/expected").join(rel);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).expect("oracle JSON")
}

/// Compares `kernelab profile --group none` on `input` with the oracle document.
fn check(input: &Path, oracle: &Value) {
    let doc = profile_json(&[
        input.to_str().expect("utf-8 path"),
        "--group",
        "none",
        "--top",
        "1000000",
    ]);
    let kernels = doc["kernels"].as_array().expect("kernels array");
    let want = oracle["kernels"].as_object().expect("oracle kernels");
    assert_eq!(
        kernels.len(),
        want.len(),
        "{}: number of distinct kernels",
        input.display()
    );
    assert!(doc["other"].is_null());
    for row in kernels {
        let name = row["name"].as_str().expect("name");
        let w = &want[name];
        assert!(
            !w.is_null(),
            "{}: kernel {name:?} not in the oracle",
            input.display()
        );
        for key in ["calls", "total_ns", "min_ns", "max_ns", "median_ns"] {
            if let Some(expected) = w.get(key) {
                assert_eq!(
                    row[key].as_f64(),
                    expected.as_f64(),
                    "{}: {name}: {key}",
                    input.display()
                );
            }
        }
    }
    let summary = &doc["summary"];
    for (key, value) in oracle["summary"].as_object().expect("oracle summary") {
        assert_eq!(&summary[key], value, "{}: summary.{key}", input.display());
    }
    let shares: f64 = kernels
        .iter()
        .map(|r| r["share"].as_f64().expect("share"))
        .sum();
    assert!((shares - 1.0).abs() < 1e-9, "shares sum to {shares}");
}

#[test]
fn every_repository_fixture_matches_the_oracle() {
    let dir = root().join("tests/expected");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("expected dir") {
        let path = entry.expect("entry").path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(fixture_name) = name.strip_suffix(".oracle.json") else {
            continue;
        };
        check(&fixture(fixture_name), &expected(name));
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} fixtures checked");
}

#[test]
fn shared_fixtures_match_the_oracle() {
    for rel in [
        "amd/rocpd_rocm7_gfx942_att_results.db",
        "amd/rocprofv1_gfx1201_llamacpp_stats/results.stats.csv",
        "amd/rocprofv1_gfx942_bmm_stats/results.stats.csv",
    ] {
        let Some(path) = shared(rel) else { continue };
        check(&path, &expected(&format!("shared/{rel}.oracle.json")));
    }
}

#[test]
fn phases_match_the_oracle() {
    for name in [
        "kineto-rocm6.2-mi250-minitoy_train.json.gz",
        "kineto-v100-resnet-rank0-ns_resolution.pt.trace.json.gz",
        // Made on an H200 by bench/h200/two_stream_profile.py: a side stream's GEMMs overlap
        // the main stream's annotated layers; they belong to their own range or to none.
        "kineto_two_stream_h200.json.gz",
    ] {
        let doc = profile_json(&[fixture(name).to_str().expect("path"), "--by-phase"]);
        let oracle = expected(&format!("{name}.oracle.json"));
        let want = oracle["phases"].as_object().expect("phases");
        let phases = doc["phases"].as_array().expect("phases array");
        assert_eq!(phases.len(), want.len(), "{name}");
        for p in phases {
            let w = &want[p["phase"].as_str().expect("phase")];
            assert_eq!(p["calls"], w["calls"], "{name} {}", p["phase"]);
            assert_eq!(p["total_ns"], w["total_ns"], "{name} {}", p["phase"]);
        }
    }
}

#[test]
fn side_stream_kernels_of_the_h200_trace_stay_out_of_the_layers() {
    let doc = profile_json(&[
        fixture("kineto_two_stream_h200.json.gz")
            .to_str()
            .expect("path"),
        "--by-phase",
    ]);
    let phases = doc["phases"].as_array().expect("phases");
    let calls = |name: &str| {
        phases
            .iter()
            .find(|p| p["phase"] == name)
            .map(|p| p["calls"].as_u64().expect("calls"))
    };
    // Each layer: its GEMM and its softmax on the main stream, nothing from the side stream.
    for l in 0..4 {
        assert_eq!(calls(&format!("layer{l}")), Some(2), "layer{l}");
    }
    assert_eq!(calls("side_loop"), Some(3));
    assert_eq!(calls("(no phase)"), Some(3));
}

/// Triton Proton hatchet profiles (triton-lang/triton's `third_party/proton/test/examples`)
/// against the oracle: kernels with their calls and time, and the FLOPs, bytes and devices
/// each input states as facts.
#[test]
fn proton_profiles_match_the_oracle() {
    for name in [
        "cuda.json",
        "hip.json",
        "triton.json",
        "h100_add_scopes.hatchet",
    ] {
        let path = fixture(&format!("proton/{name}"));
        let oracle = expected(&format!("proton/{name}.oracle.json"));
        check(&path, &oracle);
        let doc = profile_json(&[path.to_str().expect("utf-8 path")]);
        let input = &doc["inputs"][0];
        assert_eq!(input["format"], "proton-hatchet", "{name}");
        let facts = &input["facts"];
        let number = |v: &Value| v.as_f64().or_else(|| v.as_str()?.parse().ok());
        for (key, total) in oracle["work"].as_object().expect("work") {
            let fact = &facts[format!("{key}_total")];
            assert_eq!(number(fact), total.as_f64(), "{name}: {key} in {facts}");
        }
        let device = facts["device"].as_str().expect("device fact");
        for (id, arch) in oracle["devices"].as_object().expect("devices") {
            let arch = arch.as_str().expect("arch");
            assert!(
                device.contains(&format!("{id} ({arch})")),
                "{name}: {device}"
            );
        }
    }
}

/// Proton's Chrome trace of the same H100 run (`data="trace"`, Triton 3.6.0): detected by
/// content, every launch against the oracle (which names each kernel by its call stack's
/// innermost frame, not the `name` member); truncated, empty and hostile copies exit 2 naming
/// the byte.
#[test]
fn proton_chrome_trace_matches_the_oracle_and_damaged_copies_are_located() {
    let path = fixture("proton/h100_add_scopes.chrome_trace");
    check(
        &path,
        &expected("proton/h100_add_scopes.chrome_trace.oracle.json"),
    );
    let doc = profile_json(&[path.to_str().expect("utf-8 path")]);
    let input = &doc["inputs"][0];
    assert_eq!(input["format"], "proton-chrome-trace");
    assert!(
        input["notes"].to_string().contains("Proton's Chrome trace"),
        "{input}"
    );
    let text = std::fs::read_to_string(&path).expect("read");
    let dir = tempfile::tempdir().expect("tempdir");
    let cut = text.len() / 2;
    let negative = text.replacen("\"dur\":2.528", "\"dur\":-2.528", 1);
    let at = negative.find("\"dur\":-2.528").expect("edited");
    let start = negative[..at].rfind("{\"args\"").expect("event start");
    for (what, body, want) in [
        ("truncated", text[..cut].to_string(), String::new()),
        ("empty", String::new(), String::new()),
        ("negative", negative.clone(), format!("byte {start}")),
    ] {
        let file = dir.path().join(format!("{what}.chrome_trace"));
        std::fs::write(&file, &body).expect("write");
        let out = super::kernelab()
            .arg("profile")
            .arg(&file)
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(
            err.contains(&format!("{what}.chrome_trace")),
            "{what}: {err}"
        );
        assert!(err.contains(&want), "{what}: {err}");
        assert!(!err.contains("panicked"), "{what}: {err}");
    }
}
