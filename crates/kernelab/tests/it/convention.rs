//! The one change convention of docs/json.md ("Ratios and changes"): every ratio-like field of
//! every command, recomputed here from its own document's raw figures on the repository's real
//! fixtures (H200 profiles, serving samples, kernel-run documents, A/B pairs), with an
//! independent Hodges–Lehmann estimate where the figure is a paired one.

use super::{fixture, json_of, kernelab};
use serde_json::Value;

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The Hodges–Lehmann estimate of `d` (median of the Walsh averages), computed here without
/// kernelab's statistics crate.
fn hl(d: &[f64]) -> f64 {
    let mut w = Vec::new();
    for i in 0..d.len() {
        for j in i..d.len() {
            w.push((d[i] + d[j]) / 2.0);
        }
    }
    w.sort_by(f64::total_cmp);
    let n = w.len();
    if n % 2 == 1 {
        w[n / 2]
    } else {
        (w[n / 2 - 1] + w[n / 2]) / 2.0
    }
}

/// `ratio`, `change` and `interval` of an object that holds a change: ratio = `want`,
/// change = ratio − 1, the interval (when present) holds the ratio.
fn holds(o: &Value, want: f64, what: &str) {
    let r = f(&o["ratio"]);
    assert!(
        (r - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{what}: ratio {r}, want {want}"
    );
    assert!(
        (f(&o["change"]) - (r - 1.0)).abs() < 1e-12,
        "{what}: change"
    );
    if let Some(i) = o["interval"].as_object() {
        let (lo, hi) = (f(&i["low"]), f(&i["high"]));
        assert!(lo <= hi, "{what}: interval ends");
    }
}

/// The verdict's word from the interval, the threshold and the direction (docs/ab-statistics.md
/// §5.6), decided here from the document's own figures.
fn expected_verdict(a: &Value) -> &'static str {
    let Some(i) = a["interval"].as_object() else {
        return "INCONCLUSIVE";
    };
    let (l, u, t) = (f(&i["low"]) - 1.0, f(&i["high"]) - 1.0, f(&a["threshold"]));
    let higher = a["direction"] == "higher_is_better";
    if -t < l && u < t {
        "SAME"
    } else if l > 0.0 {
        if higher {
            "FASTER"
        } else {
            "SLOWER"
        }
    } else if u < 0.0 {
        if higher {
            "SLOWER"
        } else {
            "FASTER"
        }
    } else {
        "INCONCLUSIVE"
    }
}

#[test]
fn ratio_fields_follow_the_convention() {
    // compare: the H200 pair, three runs a side.
    let runs = |c: &str| -> Vec<String> {
        (1..=3)
            .map(|i| {
                fixture(&format!("h200_pair/gdn_{c}_run{i}.json.gz"))
                    .display()
                    .to_string()
            })
            .collect()
    };
    let mut args = vec!["--base".to_string()];
    args.extend(runs("w4s3"));
    args.push("--cand".into());
    args.extend(runs("w8s2"));
    let cmp = json_of("compare", &args);
    let mut rows = 0;
    for r in cmp["families"].as_array().expect("families") {
        let (b, c) = (
            f(&r["baseline"]["total_ns"]),
            f(&r["candidate"]["total_ns"]),
        );
        holds(r, c / b, r["family"].as_str().unwrap_or("?"));
        assert!(
            r["interval"].is_null(),
            "a ratio of medians has no interval"
        );
        rows += 1;
    }
    assert!(rows >= 6, "{rows} compare rows");
    let w_u = cmp["families"]
        .as_array()
        .and_then(|a| a.iter().find(|r| r["family"] == "recompute_w_u_fwd_kernel"))
        .expect("row");
    assert!(f(&w_u["ratio"]) > 1.0 && w_u["status"] == "slower");
    for s in cmp["summary"].as_array().expect("summary") {
        if let (Some(b), Some(c)) = (s["baseline"].as_f64(), s["candidate"].as_f64()) {
            if b > 0.0 {
                holds(s, c / b, s["figure"].as_str().unwrap_or("?"));
            } else {
                assert!(s["ratio"].is_null() && s["unavailable"].is_string(), "{s}");
            }
        }
    }

    // serve: the H200 runs, every metric (throughput included) candidate / baseline.
    for name in ["eager_vs_sdpa", "cb_eager_vs_sdpa", "aa_sdpa"] {
        let samples = fixture(&format!("serve/h200/{name}.samples.jsonl"));
        let out = kernelab()
            .args(["serve", "--analyze", "--format", "json", "--resume"])
            .arg(&samples)
            .output()
            .expect("runs");
        let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
        let mut throughput = 0;
        for m in doc["metrics"].as_array().expect("metrics") {
            let what = format!("{name} {} @ {}", m["metric"], m["concurrency"]);
            if let (Some(b), Some(c)) = (m["baseline"].as_f64(), m["candidate"].as_f64()) {
                holds(&m["medians"], c / b, &what);
            }
            let a = &m["analysis"];
            if a.is_null() {
                continue;
            }
            let d: Vec<f64> = m["rounds"]
                .as_array()
                .expect("rounds")
                .iter()
                .map(|r| (f(&r["candidate"]) / f(&r["baseline"])).ln())
                .collect();
            holds(a, hl(&d).exp(), &what);
            assert_eq!(a["verdict"], expected_verdict(a), "{what}");
            if m["metric"] == "throughput_tok_s" {
                assert_eq!(a["direction"], "higher_is_better");
                throughput += 1;
            }
        }
        assert!(throughput > 0, "{name}: throughput analysed");
    }

    // kernel run: the H200 documents (written by an earlier kernelab, read through the upgrade).
    for name in [
        "recompute_w4s3_vs_w8s2",
        "recompute_w4s3_aa",
        "copy_scalar_vs_vec4",
    ] {
        let path = fixture(&format!("h200_kernel/{name}.json"));
        let (kind, evidence) = kernelab_report::bundle::read_one(&path).expect("reads");
        assert_eq!(kind, "kernel_run");
        let kernelab_report::documents::Evidence::KernelRun(body) = evidence else {
            panic!("{name}: not a kernel run");
        };
        let doc = serde_json::to_value(&body).expect("json");
        let mut d = Vec::new();
        for r in doc["rounds"].as_array().expect("rounds") {
            let (b, c) = (f(&r["baseline_ns"]), f(&r["candidate_ns"]));
            holds(r, c / b, &format!("{name} round {}", r["round"]));
            assert!(r.get("speedup").is_none());
            d.push((c / b).ln());
        }
        let a = &doc["analysis"];
        holds(a, hl(&d).exp(), name);
        assert_eq!(a["verdict"], expected_verdict(a), "{name}");
    }

    // ab: real H200 pairs from a harness, analysed with every pair.
    let csv = fixture("h200_ab/inproc_w4s3_w8s2.csv");
    let out = kernelab()
        .args(["ab", "analyze"])
        .arg(&csv)
        .args(["--metric", "median_us", "--format", "json", "--fixed"])
        .output()
        .expect("runs");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let text = std::fs::read_to_string(&csv).expect("read");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |n: &str| header.iter().position(|h| h.trim() == n).expect("column");
    let (ia, ib, iaa) = (col("a"), col("b"), col("aa"));
    // The A/B pairs (the A/A control pairs, `aa` = 1, are analysed apart).
    let d: Vec<f64> = lines
        .filter(|l| !l.trim().is_empty())
        .filter(|l| l.split(',').nth(iaa).map(str::trim) != Some("1"))
        .map(|l| {
            let v: Vec<&str> = l.split(',').collect();
            let (a, b): (f64, f64) = (
                v[ia].trim().parse().expect("a"),
                v[ib].trim().parse().expect("b"),
            );
            (b / a).ln()
        })
        .collect();
    let a = &doc["analyses"][0]["analysis"];
    assert_eq!(f(&a["pairs"]) as usize, d.len());
    holds(a, hl(&d).exp(), "ab");
    assert_eq!(a["verdict"], expected_verdict(a));
    for (got, want) in doc["log_ratios"]
        .as_array()
        .expect("log ratios")
        .iter()
        .zip(&d)
    {
        assert!((f(got) - want).abs() < 1e-12);
    }
}

#[test]
fn no_document_holds_a_tuple_interval_or_a_stored_verdict_sentence() {
    // Walk the JSON of the documents above: every `interval` is an object, no key is `ci`,
    // `sign_ci`, `speedup`, `speedup_ci`, `ratio_ci` or `verdict_text`.
    fn walk(v: &Value, path: &str) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    assert!(
                        ![
                            "ci",
                            "sign_ci",
                            "speedup",
                            "speedup_ci",
                            "ratio_ci",
                            "verdict_text"
                        ]
                        .contains(&k.as_str()),
                        "{path}.{k}"
                    );
                    if k.ends_with("interval") && !x.is_null() {
                        assert!(
                            x.get("low").is_some() && x.get("high").is_some(),
                            "{path}.{k}"
                        );
                    }
                    walk(x, &format!("{path}.{k}"));
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, path)),
            _ => {}
        }
    }
    let samples = fixture("serve/h200/eager_vs_sdpa.samples.jsonl");
    let out = kernelab()
        .args(["serve", "--analyze", "--format", "json", "--resume"])
        .arg(&samples)
        .output()
        .expect("runs");
    walk(&serde_json::from_slice(&out.stdout).expect("json"), "serve");
    let out = kernelab()
        .args(["ab", "analyze"])
        .arg(fixture("h200_ab/inproc_w4s3_w8s2.csv"))
        .args(["--metric", "median_us", "--format", "json"])
        .output()
        .expect("runs");
    walk(&serde_json::from_slice(&out.stdout).expect("json"), "ab");
    let (_, run) =
        kernelab_report::bundle::read_one(&fixture("h200_kernel/recompute_w4s3_vs_w8s2.json"))
            .expect("reads");
    if let kernelab_report::documents::Evidence::KernelRun(b) = run {
        walk(&serde_json::to_value(&b).expect("json"), "kernel_run");
    }
}
