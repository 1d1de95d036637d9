//! `kernelab ab` end to end with tiny real processes, and `ab analyze` on recorded and external
//! samples.

use super::kernelab;
use serde_json::Value;

fn ab_json(args: &[&str]) -> (i32, Value, String) {
    let out = kernelab()
        .arg("ab")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let code = out.status.code().expect("code");
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (code, doc, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn printed_metric_slower_candidate() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = dir.path().join("s.jsonl");
    let (code, doc, err) = ab_json(&[
        "--baseline",
        "sh -c 'echo t=100'",
        "--candidate",
        "sh -c 'echo t=103'",
        "--metric-regex",
        "t=t=([0-9.]+)",
        "--samples",
        s.to_str().expect("p"),
        "--aa-pairs",
        "8",
        "--warmup",
        "0",
    ]);
    assert_eq!(code, 0, "{err}");
    let a = &doc["analyses"][0]["analysis"];
    assert_eq!(a["verdict"], "SLOWER");
    assert!((a["ratio"].as_f64().expect("ratio") - 1.03).abs() < 1e-9);
    assert_eq!(doc["aa"]["harness_bias"], false);
    // Every run is in the samples file, and it is never overwritten.
    let lines = std::fs::read_to_string(&s).expect("read").lines().count();
    assert_eq!(
        lines,
        1 + 16 + 16 + 16,
        "header, 8 A/A pairs and 8 pairs (two runs each), a fingerprint line before each pair"
    );
    let (code, _, err) = ab_json(&[
        "--baseline",
        "true",
        "--candidate",
        "true",
        "--samples",
        s.to_str().expect("p"),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("already exists"), "{err}");
    // The same samples give the same answer.
    let out = kernelab()
        .args(["ab", "analyze"])
        .arg(&s)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let again: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(again["analyses"][0]["analysis"]["ratio"], a["ratio"]);
    assert_eq!(again["analyses"][0]["analysis"]["ci"], a["ci"]);
}

#[test]
fn json_metric_higher_is_better_and_failures() {
    let dir = tempfile::tempdir().expect("tmp");
    let s = dir.path().join("s.jsonl");
    let (code, doc, err) = ab_json(&[
        "--baseline",
        r#"echo '{"tok_s": 1000}'"#,
        "--candidate",
        r#"echo '{"tok_s": 1100}'"#,
        "--metric-json",
        "tok_s",
        "--higher-is-better",
        "tok_s",
        "--no-aa",
        "--samples",
        s.to_str().expect("p"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        doc["analyses"][0]["analysis"]["verdict"], "FASTER",
        "more tokens per second is better"
    );
    // A candidate that exits non-zero: failures are recorded, then the run stops.
    let s2 = dir.path().join("f.jsonl");
    let (code, _, err) = ab_json(&[
        "--baseline",
        "true",
        "--candidate",
        "false",
        "--no-aa",
        "--max-failures",
        "2",
        "--samples",
        s2.to_str().expect("p"),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("runs failed") && err.contains("exit status 1") && !err.contains("Some("),
        "{err}"
    );
    let failures = std::fs::read_to_string(&s2)
        .expect("read")
        .matches("\"failure\"")
        .count();
    assert_eq!(failures, 3);
    // A timeout is a failure too.
    let s3 = dir.path().join("t.jsonl");
    let (code, _, err) = ab_json(&[
        "--baseline",
        "sleep 5",
        "--candidate",
        "true",
        "--timeout",
        "0.2",
        "--no-aa",
        "--max-failures",
        "0",
        "--warmup",
        "0",
        "--samples",
        s3.to_str().expect("p"),
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("timed out"), "{err}");
}

#[test]
fn analyze_external_paired_samples() {
    let dir = tempfile::tempdir().expect("tmp");
    let csv = dir.path().join("pairs.csv");
    let mut text = String::from("a,b,order,aa\n");
    for k in 0..32 {
        let jitter = (k * 7 % 11) as f64 * 0.001;
        text += &format!(
            "{},{},{},0\n",
            10.0 + jitter,
            10.0 + jitter,
            if k % 2 == 0 { "AB" } else { "BA" }
        );
        text += &format!("{},{},AB,1\n", 10.0 + jitter, 10.0 + jitter);
    }
    std::fs::write(&csv, text).expect("write");
    let out = kernelab()
        .args(["ab", "analyze"])
        .arg(&csv)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["analyses"][0]["analysis"]["verdict"], "SAME");
    assert!(doc["aa"].is_object());
    let json = dir.path().join("pairs.json");
    std::fs::write(
        &json,
        r#"{"pairs": [{"a": 1.0, "b": 2.0}, {"a": 1.0, "b": 2.0, "order": "BA"}]}"#,
    )
    .expect("write");
    let out = kernelab()
        .args(["ab", "analyze"])
        .arg(&json)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        doc["analyses"][0]["analysis"]["verdict"], "INCONCLUSIVE",
        "two pairs give no interval"
    );
    std::fs::write(&csv, "x,y\n1,2\n").expect("write");
    let out = kernelab()
        .args(["ab", "analyze"])
        .arg(&csv)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("line 1"));
}

/// Hodges–Lehmann of the first `n` pairs' log ratios, computed here independently.
fn hl_of_csv(text: &str, n: usize) -> f64 {
    let d: Vec<f64> = text
        .lines()
        .skip(1)
        .filter(|l| l.ends_with(",0"))
        .take(n)
        .map(|l| {
            let f: Vec<f64> = l
                .split(',')
                .take(2)
                .map(|x| x.parse().expect("number"))
                .collect();
            (f[1] / f[0]).ln()
        })
        .collect();
    let mut w = Vec::new();
    for i in 0..d.len() {
        for j in i..d.len() {
            w.push((d[i] + d[j]) / 2.0);
        }
    }
    w.sort_by(f64::total_cmp);
    let m = w.len();
    (if m % 2 == 1 {
        w[m / 2]
    } else {
        (w[m / 2 - 1] + w[m / 2]) / 2.0
    })
    .exp()
}

#[test]
fn real_h200_kernel_pairs() {
    let f = super::fixture("h200_ab/inproc_w4s3_w8s2.csv");
    let out = kernelab()
        .args(["ab", "analyze"])
        .arg(&f)
        .args(["--metric", "median_us", "--format", "json"])
        .output()
        .expect("runs");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let a = &doc["analyses"][0]["analysis"];
    assert_eq!(a["verdict"], "SLOWER");
    let n = a["pairs"].as_u64().expect("pairs") as usize;
    let want = hl_of_csv(&std::fs::read_to_string(&f).expect("read"), n);
    assert!((a["ratio"].as_f64().expect("ratio") - want).abs() < 1e-12);
    assert_eq!(doc["aa"]["harness_bias"], false);
    // The A/A control: no false call.
    let f = super::fixture("h200_ab/inproc_aa_w4s3.csv");
    let out = kernelab()
        .args(["ab", "analyze"])
        .arg(&f)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let v = doc["analyses"][0]["analysis"]["verdict"]
        .as_str()
        .expect("verdict")
        .to_string();
    assert!(v == "SAME" || v == "INCONCLUSIVE", "{v}");
}

#[test]
fn issue27_analyze_of_collected_pairs_uses_every_pair_unless_a_sequential_plan_is_recorded() {
    let out = kernelab()
        .args(["ab", "analyze", "--metric", "median_us", "--format", "json"])
        .arg(crate::fixture("h200_ab/inproc_w4s3_w8s2.csv"))
        .output()
        .expect("runs");
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let a = &doc["analyses"][0]["analysis"];
    assert_eq!(
        (a["pairs"].as_u64(), a["pairs_available"].as_u64()),
        (Some(96), Some(96))
    );
    assert!(
        a["stopped_by"].to_string().contains("fixed"),
        "{}",
        a["stopped_by"]
    );
    // A file whose header records the sequential plan of its run is analysed by that plan.
    let dir = tempfile::tempdir().expect("tmp");
    let mut text = String::from(
        "{\"kind\":\"header\",\"schema_version\":3,\"baseline\":[\"a\"],\"candidate\":[\"b\"],\"metrics\":[\"t\"],\"start\":\"AB\",\"design\":{\"alpha\":0.05,\"threshold\":0.005,\"min_pairs\":8,\"max_pairs\":256,\"stop\":{\"auto\":{\"resolution\":0.005}},\"direction\":\"lower_is_better\"}}\n",
    );
    for k in 0..40 {
        let (o, first) = if k % 2 == 0 { ("AB", "A") } else { ("BA", "B") };
        let second = if first == "A" { "B" } else { "A" };
        for slot in [first, second] {
            let v = if slot == "A" {
                100.0
            } else {
                110.0 + (k % 3) as f64
            };
            text.push_str(&format!("{{\"kind\":\"run\",\"pair\":{k},\"aa\":false,\"order\":\"{o}\",\"slot\":\"{slot}\",\"values\":[{{\"name\":\"t\",\"value\":{v}}}],\"exit_code\":0}}\n"));
        }
    }
    let p = dir.path().join("seq.jsonl");
    std::fs::write(&p, text).expect("writes");
    let out = kernelab()
        .args(["ab", "analyze", "--format", "json"])
        .arg(&p)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let a = &doc["analyses"][0]["analysis"];
    assert_eq!(a["pairs_available"], 40);
    assert!(
        a["pairs"].as_u64().expect("pairs") < 40,
        "a decisive early look stops it: {a}"
    );
}

/// `ab analyze` of kernelab's own samples file reads back the fingerprint taken before each
/// pair: clocks that fell mid-run refuse the verdict again (exit 2, naming the field), and
/// unchanged conditions are kept in the document.
#[test]
fn ab_analyze_reads_back_the_conditions_and_refuses_a_change() {
    let dir = tempfile::tempdir().expect("tmp");
    for (change_after, code_wanted) in [(100, 0), (3, 2)] {
        let bin = dir.path().join(format!("bin{change_after}"));
        super::gate::fake_nvidia_smi(&bin, change_after);
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let s = dir.path().join(format!("s{change_after}.jsonl"));
        let out = kernelab()
            .args(["ab", "--baseline", "true", "--candidate", "true"])
            .args([
                "--aa-pairs",
                "0",
                "--warmup",
                "0",
                "--min-pairs",
                "8",
                "--max-pairs",
                "8",
            ])
            .arg("--samples")
            .arg(&s)
            .env("PATH", &path)
            .output()
            .expect("runs");
        assert_eq!(
            out.status.code(),
            Some(code_wanted),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Analysed again, with no nvidia-smi at all: the file's own fingerprints decide.
        let out = kernelab()
            .args(["ab", "analyze"])
            .arg(&s)
            .args(["--format", "json"])
            .output()
            .expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code_wanted), "{err}");
        let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
        let c = &doc["conditions"];
        assert_eq!(c["fingerprint"]["gpus"][0]["sm_clock_mhz"], "1980", "{c}");
        if code_wanted == 2 {
            assert!(
                err.contains("gpu 0 sm_clock_mhz: 1980 → 1410 (pair 3)"),
                "{err}"
            );
            assert_eq!(c["changed"][0]["field"], "gpu 0 sm_clock_mhz", "{c}");
        } else {
            assert_eq!(c["changed"], serde_json::json!([]), "{c}");
        }
    }
}
