//! `kernelab serve --analyze` on the samples of a real run: two `transformers serve` servers on
//! an H200 (bench/h200/serve/session.sh), eager against SDPA attention, and the A/A control.
//! Each round's figure is recomputed here from the raw request lines, independently of the
//! analysis code.

use super::{fixture, kernelab};
use std::collections::BTreeMap;

fn analyze(name: &str) -> (serde_json::Value, i32) {
    let samples = fixture(&format!("serve/h200/{name}.samples.jsonl"));
    let out = kernelab()
        .args(["serve", "--analyze", "--format", "json", "--resume"])
        .arg(&samples)
        .output()
        .expect("run");
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    (v, out.status.code().unwrap_or(-1))
}

/// The metric's row for a case.
fn metric<'a>(v: &'a serde_json::Value, case: u64, name: &str) -> &'a serde_json::Value {
    v["metrics"]
        .as_array()
        .and_then(|m| m.iter().find(|x| x["case"] == case && x["metric"] == name))
        .unwrap_or_else(|| panic!("no {name} for case {case}"))
}

/// Mean TTFT per (round, slot) of a case, from the raw request lines.
fn ttft_means(name: &str, case: u64) -> BTreeMap<(u64, String), f64> {
    let text = std::fs::read_to_string(fixture(&format!("serve/h200/{name}.samples.jsonl")))
        .expect("samples");
    let mut sums: BTreeMap<(u64, String), (f64, u32)> = BTreeMap::new();
    for line in text.lines() {
        let r: serde_json::Value = serde_json::from_str(line).expect("line");
        if r["kind"] != "request" || r["case"] != case {
            continue;
        }
        let t = r["measured"]["ttft_s"].as_f64().expect("ttft");
        let e = sums
            .entry((
                r["round"].as_u64().expect("round"),
                r["slot"].as_str().expect("slot").to_string(),
            ))
            .or_default();
        e.0 += t;
        e.1 += 1;
    }
    sums.into_iter()
        .map(|(k, (s, n))| (k, s / f64::from(n)))
        .collect()
}

#[test]
fn eager_to_sdpa_on_an_h200_is_faster_to_first_token_on_long_prompts() {
    let (v, code) = analyze("eager_vs_sdpa");
    // Eager and SDPA differ in every output of this bf16 random-weight model: the gate fails.
    assert_eq!(code, 1);
    assert_eq!(v["identity"]["compared"], 72);
    assert_eq!(v["identity"]["identical"], 0);
    assert_eq!(v["request_failures"], 0);
    let ttft = metric(&v, 0, "ttft_mean_s");
    assert_eq!(ttft["analysis"]["verdict"], "FASTER", "{ttft:#}");
    // Each round's figure is the mean over that round's requests (A = baseline, B = candidate).
    let means = ttft_means("eager_vs_sdpa", 0);
    let rounds = ttft["rounds"].as_array().expect("rounds");
    assert_eq!(rounds.len(), 6);
    for r in rounds {
        let k = r["round"].as_u64().expect("round");
        for (side, slot) in [("baseline", "A"), ("candidate", "B")] {
            let want = means[&(k, slot.to_string())];
            let got = r[side].as_f64().expect("figure");
            assert!(
                (got - want).abs() < 1e-12,
                "round {k} {side}: {got} vs {want}"
            );
        }
    }
    // Peak memory of the eager server is larger: it materialises the score matrices.
    let starts = v["starts"].as_array().expect("starts");
    let peak = |who: &str| {
        starts
            .iter()
            .filter(|s| s["server"] == who)
            .filter_map(|s| s["peak_server_memory_bytes"].as_u64())
            .max()
            .expect("peak")
    };
    assert!(peak("baseline") > peak("candidate") + (512 << 20));
}

#[test]
fn the_h200_a_a_control_calls_no_mean_and_shows_the_servers_nondeterminism() {
    let (v, code) = analyze("aa_sdpa");
    // 36 comparisons (2 cases x 18 metrics) at alpha 0.05: about 1.8 chance calls are
    // expected; this run made one (itl_p90_s), and the note says so. No mean is called.
    let called: Vec<String> = calls(&v).into_iter().map(|c| c.1).collect();
    assert_eq!(called, ["itl_p90_s"]);
    let notes = v["notes"].to_string();
    assert!(
        notes.contains("36 metric comparisons at alpha = 0.05: about 1.8 would be called"),
        "{notes}"
    );
    // Two requests of the 2048-token case gave another greedy output after a fresh start.
    assert_eq!(v["identity"]["compared"], 72);
    assert_eq!(v["identity"]["identical"], 70);
    assert_eq!(code, 1);
}

/// The calls of a run: (concurrency, metric, verdict) of every FASTER or SLOWER metric.
fn calls(v: &serde_json::Value) -> Vec<(u64, String, String)> {
    v["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .filter_map(|m| {
            let verdict = m["analysis"]["verdict"].as_str()?;
            (verdict == "FASTER" || verdict == "SLOWER").then(|| {
                (
                    m["concurrency"].as_u64().unwrap_or(0),
                    m["metric"].as_str().unwrap_or("").to_string(),
                    verdict.to_string(),
                )
            })
        })
        .collect()
}

#[test]
fn continuous_batching_sdpa_is_slower_at_4_and_the_a_a_shows_the_runs_were_confounded() {
    // `--continuous-batching` (paged attention), concurrency 1 and 4, both pairs at once on two
    // GPUs of one host, in the same ABBA order.
    let (ab, code) = analyze("cb_eager_vs_sdpa");
    assert_eq!(code, 1);
    assert_eq!(ab["identity"]["identical"], 29);
    let ab_calls = calls(&ab);
    // At concurrency 4 every metric of paged SDPA is SLOWER than paged eager.
    let at4: Vec<_> = ab_calls.iter().filter(|c| c.0 == 4).collect();
    assert_eq!(at4.len(), 18, "{ab_calls:?}");
    assert!(at4.iter().all(|c| c.2 == "SLOWER"));
    // The A/A control calls 17 of 36 metrics: the two runs disturbed each other (or this
    // server drifts between fresh starts); the A/B above is not evidence until rerun alone.
    let (aa, _) = analyze("cb_aa_sdpa");
    let aa_calls = calls(&aa);
    assert_eq!(aa_calls.len(), 17, "{aa_calls:?}");
    assert!(aa["notes"]
        .to_string()
        .contains("about 1.8 would be called FASTER or SLOWER by chance alone"));
    assert_eq!(aa["identity"]["identical"], 91);
}

/// Mean TPOT, (E2E − TTFT) / (completion tokens − 1), per (round, slot), from the raw lines.
fn tpot_means(name: &str) -> BTreeMap<(u64, String), f64> {
    let text = std::fs::read_to_string(fixture(&format!("serve/h200/{name}.samples.jsonl")))
        .expect("samples");
    let mut sums: BTreeMap<(u64, String), (f64, u32)> = BTreeMap::new();
    for line in text.lines() {
        let r: serde_json::Value = serde_json::from_str(line).expect("line");
        if r["kind"] != "request" {
            continue;
        }
        let m = &r["measured"];
        let (e2e, ttft) = (m["e2e_s"].as_f64(), m["ttft_s"].as_f64());
        let tokens = m["completion_tokens"].as_f64().expect("tokens");
        let e = sums
            .entry((
                r["round"].as_u64().expect("round"),
                r["slot"].as_str().expect("slot").to_string(),
            ))
            .or_default();
        e.0 += (e2e.expect("e2e") - ttft.expect("ttft")) / (tokens - 1.0);
        e.1 += 1;
    }
    sums.into_iter()
        .map(|(k, (s, n))| (k, s / f64::from(n)))
        .collect()
}

/// The Hodges–Lehmann ratio of the rounds' log ratios, computed here from the raw lines:
/// exp of the median of the Walsh averages.
fn hodges_lehmann(means: &BTreeMap<(u64, String), f64>) -> f64 {
    let rounds: Vec<u64> = means
        .keys()
        .map(|k| k.0)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let d: Vec<f64> = rounds
        .iter()
        .map(|&k| (means[&(k, "B".to_string())] / means[&(k, "A".to_string())]).ln())
        .collect();
    let mut w = Vec::new();
    for i in 0..d.len() {
        for j in i..d.len() {
            w.push((d[i] + d[j]) / 2.0);
        }
    }
    w.sort_by(f64::total_cmp);
    let n = w.len();
    let med = if n % 2 == 1 {
        w[n / 2]
    } else {
        (w[n / 2 - 1] + w[n / 2]) / 2.0
    };
    med.exp()
}

#[test]
fn a_planted_1_ms_decode_sleep_reads_about_its_size_but_7_rounds_cannot_decide_at_4_looks() {
    // bench/h200/serve/looks_session.sh planted: the candidate sleeps 1 ms per decode step;
    // looks planned at 4, 8, 16, 24 rounds, the 6-minute budget spent after 7.
    let (v, _) = analyze("looks_planted");
    let m = metric(&v, 0, "tpot_mean_s");
    assert_eq!(m["primary"], true);
    let means = tpot_means("looks_planted");
    let a = &m["analysis"];
    let ratio = a["ratio"].as_f64().expect("ratio");
    assert!((ratio - hodges_lehmann(&means)).abs() < 1e-12, "{ratio}");
    // The planted size: 1 ms over the baseline's median TPOT.
    let base = m["baseline"].as_f64().expect("baseline");
    let planted = 1.0 + 1e-3 / base;
    assert!((planted - 1.083).abs() < 0.002, "{planted}");
    assert!(
        (ratio - planted).abs() < 0.02,
        "{ratio} vs planted {planted}"
    );
    // Level 1 − 0.05/4 needs 8 rounds for an interval: the honest answer at 7 is none.
    assert!(a["interval"].is_null(), "{a}");
    assert_eq!(a["verdict"], "INCONCLUSIVE");
    assert!(a["warnings"]
        .to_string()
        .contains("no interval exists with 7 pairs"));
    // What ±2% would take, from the spread between starts: (z·sd/0.02)², z at 1 − 0.0125/2.
    let sd = a["noise_sd"].as_f64().expect("spread");
    assert!((sd - 0.0827).abs() < 0.001, "{sd}");
    let want = (2.4977 * sd / 0.02).powi(2).ceil();
    let got = a["pairs_for_resolution"].as_f64().expect("predicted");
    assert!((got - want).abs() <= 1.0, "{got} vs {want}");
    let plan = &v["plan"];
    assert_eq!(plan["planned_looks"], serde_json::json!([4, 8, 16, 24]));
    assert_eq!(plan["stopped_by"], "budget of 360 s spent after 7 rounds");
    // A new run with this plan is refused: its first look could never decide.
    let dir = tempfile::tempdir().expect("tmp");
    let spec = dir.path().join("planted.toml");
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../bench/h200/serve/planted_tpot.toml"),
    )
    .expect("spec")
    .replace("count = 8", "count = 4");
    std::fs::write(&spec, text).expect("write");
    let out = kernelab().arg("serve").arg(&spec).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs at least 8 rounds"));
}

#[test]
fn the_a_a_of_the_planted_run_calls_nothing() {
    let (v, _) = analyze("looks_aa");
    let metrics = v["metrics"].as_array().expect("metrics");
    assert!(metrics.len() >= 10, "{}", metrics.len());
    for m in metrics {
        let verdict = m["analysis"]["verdict"].as_str().unwrap_or("");
        assert!(verdict != "FASTER" && verdict != "SLOWER", "{m}");
    }
    let m = metric(&v, 0, "tpot_mean_s");
    let ratio = m["analysis"]["ratio"].as_f64().expect("ratio");
    assert!((ratio - hodges_lehmann(&tpot_means("looks_aa"))).abs() < 1e-12);
    assert!((ratio - 1.0).abs() < 0.01, "{ratio}");
    // This server is not bit-deterministic across starts: the A/A's own identity rate.
    assert_eq!(v["identity"]["compared"], 40);
    assert_eq!(v["identity"]["identical"], 31);
}

#[test]
fn the_planted_runs_identity_reads_beside_its_a_a_controls() {
    // The A/B and its A/A sent the same workload: the A/A's own rate is shown beside.
    let out = kernelab()
        .args(["serve", "--analyze", "--format", "json", "--resume"])
        .arg(fixture("serve/h200/looks_planted.samples.jsonl"))
        .arg("--aa-samples")
        .arg(fixture("serve/h200/looks_aa.samples.jsonl"))
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["identity"]["identical"], 45);
    assert_eq!(v["identity"]["compared"], 56);
    assert_eq!(v["aa_identity"]["identical"], 31);
    assert_eq!(v["aa_identity"]["compared"], 40);
    let md = kernelab()
        .args(["serve", "--analyze", "--format", "md", "--resume"])
        .arg(fixture("serve/h200/looks_planted.samples.jsonl"))
        .arg("--aa-samples")
        .arg(fixture("serve/h200/looks_aa.samples.jsonl"))
        .output()
        .expect("run");
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("45 of 56 requests identical")
            && md.contains("the A/A control: 31 of 40 identical (77.5%"),
        "{md}"
    );
    // Another workload (the eager/SDPA pair sent other prompts): refused, naming the file.
    let bad = kernelab()
        .args(["serve", "--analyze", "--format", "json", "--resume"])
        .arg(fixture("serve/h200/eager_vs_sdpa.samples.jsonl"))
        .arg("--aa-samples")
        .arg(fixture("serve/h200/looks_aa.samples.jsonl"))
        .output()
        .expect("run");
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("looks_aa.samples.jsonl: the A/A control sent another workload"),
        "{err}"
    );
    // An A/A cut off before any round compared outputs is no control: refused, not "0 of 0".
    let dir = tempfile::tempdir().expect("tmp");
    let cut = dir.path().join("aa.samples.jsonl");
    let text = std::fs::read_to_string(fixture("serve/h200/looks_aa.samples.jsonl")).expect("aa");
    std::fs::write(&cut, &text.as_bytes()[..3000]).expect("write");
    let out = kernelab()
        .args(["serve", "--analyze", "--format", "json", "--resume"])
        .arg(fixture("serve/h200/looks_planted.samples.jsonl"))
        .arg("--aa-samples")
        .arg(&cut)
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the A/A control compared no outputs"));
}

#[test]
fn the_planted_decode_sleep_is_called_slower_at_the_first_look_with_both_servers_resident() {
    // bench/h200/serve/looks_session.sh planted-together: [placement] mode = "together", both
    // servers on GPU 0 for the whole round, requests A B B A; looks planned at 8 and 16.
    let (v, _) = analyze("looks_together_planted");
    assert!(v["placement"]
        .as_str()
        .is_some_and(|p| p.starts_with("together")));
    let m = metric(&v, 0, "tpot_mean_s");
    let a = &m["analysis"];
    assert_eq!(a["verdict"], "SLOWER", "{a}");
    let ratio = a["ratio"].as_f64().expect("ratio");
    assert!((ratio - hodges_lehmann(&tpot_means("looks_together_planted"))).abs() < 1e-12);
    // The interval holds the planted size: 1 ms over the baseline's median TPOT.
    let base = m["baseline"].as_f64().expect("baseline");
    let planted = 1.0 + 1e-3 / base;
    assert!((planted - 1.111).abs() < 0.002, "{planted}");
    let (lo, hi) = (
        a["interval"]["low"].as_f64().expect("low"),
        a["interval"]["high"].as_f64().expect("high"),
    );
    assert!(lo < planted && planted < hi, "[{lo}, {hi}] vs {planted}");
    assert!(lo > 1.02, "the whole interval is above the threshold: {lo}");
    let plan = &v["plan"];
    assert_eq!(plan["planned_looks"], serde_json::json!([8, 16]));
    assert_eq!(
        plan["stopped_by"],
        "every primary metric decided at 8 rounds"
    );
    // Both servers resident: one start phase a round, about 35 s.
    let look = &plan["looks"][0];
    let wall = look["round_wall_ns"].as_f64().expect("wall") / 1e9;
    assert!((30.0..40.0).contains(&wall), "{wall}");
}

#[test]
fn the_a_a_with_both_servers_resident_calls_nothing_and_only_controls_its_own_placement() {
    let (v, _) = analyze("looks_together_aa");
    for m in v["metrics"].as_array().expect("metrics") {
        let verdict = m["analysis"]["verdict"].as_str().unwrap_or("");
        assert!(verdict != "FASTER" && verdict != "SLOWER", "{m}");
    }
    assert_eq!(
        v["plan"]["stopped_by"],
        "budget of 300 s spent after 9 rounds"
    );
    let out = kernelab()
        .args(["serve", "--analyze", "--format", "json", "--resume"])
        .arg(fixture("serve/h200/looks_together_planted.samples.jsonl"))
        .arg("--aa-samples")
        .arg(fixture("serve/h200/looks_together_aa.samples.jsonl"))
        .output()
        .expect("run");
    let w: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(w["aa_identity"]["identical"], 53);
    assert_eq!(w["aa_identity"]["compared"], 72);
    assert_eq!(w["aa_identity"]["called"], 0);
    // The A/A of the other placement (one server at a time) is refused as this run's control.
    let out = kernelab()
        .args(["serve", "--analyze", "--format", "json", "--resume"])
        .arg(fixture("serve/h200/looks_together_planted.samples.jsonl"))
        .arg("--aa-samples")
        .arg(fixture("serve/h200/looks_aa.samples.jsonl"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("only for its own placement"), "{err}");
}

#[test]
fn requests_timed_without_the_kernels_receive_time_are_counted_in_a_note() {
    // Every third measured request of the A/A as if the kernel had given no receive time for
    // two of its reads (a sandbox that takes SO_TIMESTAMPNS and sends none).
    let text = std::fs::read_to_string(fixture("serve/h200/looks_aa.samples.jsonl")).expect("aa");
    let (mut marked, mut out) = (0u64, String::new());
    for (i, line) in text.lines().enumerate() {
        let mut r: serde_json::Value = serde_json::from_str(line).expect("line");
        let measured = r["kind"] == "request"
            && r["measured"].is_object()
            && r["warmup"] != true
            && r["error"].is_null();
        if measured && i % 3 == 0 {
            r["measured"]["untimed_reads"] = 2.into();
            marked += 1;
        }
        out.push_str(&r.to_string());
        out.push('\n');
    }
    assert!(marked > 0);
    let dir = tempfile::tempdir().expect("tmp");
    let path = dir.path().join("aa.samples.jsonl");
    std::fs::write(&path, out).expect("write");
    let run = kernelab()
        .args(["serve", "--analyze", "--format", "json", "--resume"])
        .arg(&path)
        .output()
        .expect("run");
    let v: serde_json::Value = serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&run.stderr)));
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .filter_map(|n| n.as_str())
        .filter(|n| n.contains("no receive time"))
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with(&format!("{marked} of "))
            && notes[0].contains(&format!("({} reads)", 2 * marked)),
        "{notes:?} (marked {marked})"
    );
    // The unmarked file says nothing of it.
    let (v, _) = analyze("looks_aa");
    assert!(!v["notes"].to_string().contains("no receive time"));
}
