//! The server state behind serve figures, against the fixture server: `warmup = "steady"`
//! warms a cold server until its last requests agree, keeps those requests (flagged) and shows
//! the cold-start curve; cached prompt tokens that differ between the sides are flagged; a
//! server's Prometheus `/metrics` is scraped around each point.

use crate::kernelab;
use crate::serve::spec;
use std::path::Path;

fn run(spec: &Path, dir: &Path, format: &str) -> std::process::Output {
    kernelab()
        .arg("serve")
        .arg(spec)
        .arg("--samples")
        .arg(dir.join("s.jsonl"))
        .args(["--format", format])
        .output()
        .expect("run")
}

/// Edits the fixture spec at `p` (`crate::serve::spec`): with `steady` (a `steady = {…}`
/// rule) the warm-up is steady and the case has one concurrency level; with `metrics` both
/// servers get that `metrics_url`.
fn edit(p: &Path, steady: Option<&str>, metrics: Option<&str>) {
    let mut text = std::fs::read_to_string(p).expect("spec");
    if let Some(rule) = steady {
        text = text
            .replace(
                "warmup = 1",
                &format!("warmup = \"steady\"\nsteady = {rule}"),
            )
            .replace("concurrency = [1, 2]", "concurrency = [1]");
    }
    if let Some(url) = metrics {
        text = text.replace(
            "stop_grace_s = 2\n",
            &format!("stop_grace_s = 2\nmetrics_url = \"{url}\"\n"),
        );
    }
    std::fs::write(p, &text).expect("write");
}

/// The JSON document of a run that must succeed.
fn json_of_success(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn lines(dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(dir.join("s.jsonl"))
        .expect("samples")
        .lines()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect()
}

#[test]
fn a_cold_server_is_warmed_until_steady_and_its_warm_up_kept_flagged() {
    let dir = tempfile::tempdir().expect("tmp");
    // The first 6 completions after a start are 5×, 4.3×, … 1.7× slower; steady needs the
    // last 3 within 25% on TTFT and on TPOT (any 3 TPOTs with a slow one among them differ by
    // 31% or more; TPOT carries no request overhead, which on a loaded machine can make the
    // slow TTFTs look alike), so it comes at the 9th warm-up request at the earliest.
    let cold = ", \"--cold\", \"6\", \"--delay-ms\", \"20\"";
    let p = spec(dir.path(), cold, cold, 2, "");
    edit(&p, Some("{ last = 3, within = 0.25, max = 24 }"), None);
    let out = run(&p, dir.path(), "json");
    let v = json_of_success(&out);
    // Only measured requests count: 2 rounds × 2 servers × 3.
    assert_eq!(v["requests"], 12);
    assert_eq!(v["identity"]["compared"], 6);
    let warm = v["warmup"].as_array().expect("warm-up curves");
    assert_eq!(warm.len(), 2, "{warm:?}");
    for w in warm {
        let n: Vec<u64> = w["requests"]
            .as_array()
            .expect("per start")
            .iter()
            .map(|x| x.as_u64().expect("n"))
            .collect();
        assert_eq!(n.len(), 2);
        assert!(n.iter().all(|&n| (9..=24).contains(&n)), "{n:?}");
        assert_eq!(w["not_steady"], 0, "{w}");
        // The first request is slower than the measured ones (5× on the server's side).
        let cold = w["cold_over_warm_ttft"].as_f64().expect("cold ÷ warm");
        assert!(cold > 1.5, "{cold}");
        let curve = w["tpot_ns"].as_array().expect("curve");
        let first = curve[0].as_u64().expect("first");
        let last = curve[8].as_u64().expect("ninth");
        assert!(first > 3 * last, "{first} vs {last}");
        assert!(w["first_token_ns"].as_array().is_some_and(|c| c.len() >= 9));
    }
    // The samples keep every warm-up request, flagged, and every point says it became steady.
    let all = lines(dir.path());
    let flagged = all
        .iter()
        .filter(|l| l["kind"] == "request" && l["warmup"] == true)
        .count();
    let total: u64 = warm
        .iter()
        .flat_map(|w| w["requests"].as_array().into_iter().flatten())
        .filter_map(serde_json::Value::as_u64)
        .sum();
    assert_eq!(flagged as u64, total);
    assert!(all
        .iter()
        .filter(|l| l["kind"] == "point")
        .all(|l| l["steady"] == true));
    // The text shows the curve.
    let md = kernelab()
        .args(["serve", "--analyze", "--format", "md", "--resume"])
        .arg(dir.path().join("s.jsonl"))
        .output()
        .expect("md");
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("Warm-up to steady state"), "{md}");
    assert!(md.contains("Cold ÷ warm TTFT"), "{md}");
}

#[test]
fn a_warm_up_that_never_settles_is_flagged_not_steady() {
    let dir = tempfile::tempdir().expect("tmp");
    let cold = ", \"--cold\", \"40\", \"--delay-ms\", \"2\"";
    let p = spec(dir.path(), cold, cold, 2, "");
    edit(&p, Some("{ last = 3, within = 0.01, max = 4 }"), None);
    let out = run(&p, dir.path(), "json");
    let v = json_of_success(&out);
    for w in v["warmup"].as_array().expect("curves") {
        assert_eq!(w["requests"], serde_json::json!([4, 4]));
        assert_eq!(w["not_steady"], 2);
    }
    assert!(v["notes"]
        .to_string()
        .contains("2 of 2 baseline starts were not steady after 4 warm-up requests"));
}

#[test]
fn cached_tokens_that_differ_are_flagged_and_prometheus_metrics_are_read_per_point() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(
        dir.path(),
        ", \"--cached\", \"0\"",
        ", \"--cached\", \"8\"",
        2,
        "",
    );
    edit(&p, None, Some("http://127.0.0.1:{port}/metrics"));
    let out = run(&p, dir.path(), "json");
    let v = json_of_success(&out);
    let cache = v["cache"].as_array().expect("cache state");
    assert_eq!(cache.len(), 2, "one per concurrency");
    for c in cache {
        // 2 rounds × 3 measured requests × 8 cached tokens on the candidate; none on the baseline.
        assert_eq!(c["baseline_cached_tokens"], 0);
        assert_eq!(c["candidate_cached_tokens"], 48);
        assert_eq!(c["prompt_tokens"], serde_json::json!([96, 96]));
        assert_eq!(c["differ"], true);
    }
    assert!(v["notes"]
        .to_string()
        .contains("cached prompt tokens differ"));
    // The servers' own counters over each point's measured requests: 8 of 16 prompt tokens
    // hit on the candidate, 0 on the baseline.
    let sm = v["server_metrics"].as_array().expect("server metrics");
    assert_eq!(sm.len(), 4);
    for m in sm {
        assert_eq!(m["points"], 2);
        assert_eq!(m["unavailable"], 0);
        assert_eq!(m["preemptions"], 0.0);
        let want = if m["server"] == "candidate" { 0.5 } else { 0.0 };
        assert_eq!(m["prefix_cache_hit_rate"], want, "{m}");
        assert!(m["kv_cache_usage_max"].as_f64().is_some_and(|u| u > 0.0));
        assert!(m["spec_acceptance_rate"].is_null());
    }
    // Each point record holds its own differences.
    let points: Vec<serde_json::Value> = lines(dir.path())
        .into_iter()
        .filter(|l| l["kind"] == "point")
        .collect();
    assert_eq!(points.len(), 8);
    for pt in &points {
        let q = pt["server_metrics"]["prefix_cache_queries"]
            .as_f64()
            .expect("queries");
        // The 3 measured requests of 16 prompt tokens: the counters are read when the warm-up
        // is over, so its request is not in them.
        assert_eq!(q, 48.0, "{pt}");
    }
    let md = kernelab()
        .args(["serve", "--analyze", "--format", "md", "--resume"])
        .arg(dir.path().join("s.jsonl"))
        .output()
        .expect("md");
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("Prefix cache"), "{md}");
    assert!(md.contains("no: not comparable"), "{md}");
    assert!(md.contains("| 50.0% |"), "{md}");
}

#[test]
fn a_metrics_url_that_fails_is_said_per_point_and_the_run_goes_on() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(dir.path(), "", "", 2, "");
    edit(&p, None, Some("http://127.0.0.1:9/metrics"));
    let out = run(&p, dir.path(), "json");
    let v = json_of_success(&out);
    for m in v["server_metrics"].as_array().expect("server metrics") {
        assert_eq!(m["unavailable"], m["points"]);
        assert!(m["unavailable_reason"]
            .as_str()
            .is_some_and(|r| r.contains("127.0.0.1:9")));
        assert!(m["prefix_cache_hit_rate"].is_null());
    }
}

#[test]
fn the_report_of_a_run_with_warm_up_cache_and_server_metrics_passes_its_own_audit() {
    let dir = tempfile::tempdir().expect("tmp");
    let cold = ", \"--cold\", \"4\", \"--delay-ms\", \"10\"";
    let p = spec(
        dir.path(),
        &format!("{cold}, \"--cached\", \"0\""),
        &format!("{cold}, \"--cached\", \"8\""),
        2,
        "",
    );
    edit(
        &p,
        Some("{ last = 3, within = 0.25, max = 16 }"),
        Some("http://127.0.0.1:{port}/metrics"),
    );
    let bundle = dir.path().join("bundle");
    let out = kernelab()
        .arg("serve")
        .arg(&p)
        .arg("--samples")
        .arg(dir.path().join("s.jsonl"))
        .arg("--record")
        .arg(&bundle)
        .args(["--format", "json"])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = crate::report_of(&bundle, "md");
    for table in [
        "Warm-up to steady state",
        "Prefix cache",
        "Server metrics over the points",
    ] {
        assert!(md.contains(table), "{table}:\n{md}");
    }
    let note = dir.path().join("pr.md");
    std::fs::write(&note, &md).expect("write");
    let check = kernelab()
        .args(["report", "check"])
        .arg(&note)
        .arg("--bundle")
        .arg(&bundle)
        .output()
        .expect("check");
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(
        said.contains(" numbers checked disagree") && said.contains("- 0 of "),
        "{said}"
    );
    assert!(check.status.success(), "{said}");
}
