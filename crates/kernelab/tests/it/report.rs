//! Evidence bundles built from the real fixtures by the commands, rendered as Markdown, JSON and
//! HTML; the HTML page is opened in headless Chromium when it is installed (.ci/run installs it).

use super::{fixture, kernelab, report_of};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn record(dir: &Path, args: &[&str]) {
    let out = kernelab()
        .args(args)
        .arg("--record")
        .arg(dir)
        .output()
        .expect("runs");
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn p(name: &str) -> String {
    fixture(name).display().to_string()
}

fn bundle(dir: &Path) {
    record(
        dir,
        &[
            "profile",
            &p("kineto_qwen3next_4l_prompt8192_baseline.json.gz"),
        ],
    );
    let mut compare = vec!["compare".to_string(), "--base".into()];
    compare.extend((1..=3).map(|i| p(&format!("h200_pair/gdn_w4s3_run{i}.json.gz"))));
    compare.push("--cand".into());
    compare.extend((1..=3).map(|i| p(&format!("h200_pair/gdn_w8s2_run{i}.json.gz"))));
    let compare: Vec<&str> = compare.iter().map(String::as_str).collect();
    record(dir, &compare);
    record(
        dir,
        &[
            "check",
            "bitwise",
            &p("tensor/wu.npz"),
            &p("tensor/wu_compressed.npz"),
        ],
    );
    record(
        dir,
        &[
            "check",
            "oracle",
            &p("tensor/out_bf16.npy"),
            &p("tensor/ref_f64.npy"),
            "--dtype",
            "bf16",
        ],
    );
    record(
        dir,
        &[
            "code",
            "diff",
            &p("code/recompute_w_u_fwd_kernel_w4s3.cubin"),
            &p("code/recompute_w_u_fwd_kernel_w8s2.cubin"),
            "--no-disassemble",
        ],
    );
    record(dir, &["metrics", &p("ncu_recompute_metrics.csv")]);
    record(
        dir,
        &[
            "ab",
            "analyze",
            &p("h200_ab/inproc_w4s3_w8s2.csv"),
            "--metric",
            "median_us",
        ],
    );
}

#[test]
fn bundle_records_have_provenance_and_are_never_overwritten() {
    let dir = tempfile::tempdir().expect("tmp");
    bundle(dir.path());
    let mut files: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("e").path())
        .collect();
    files.sort();
    assert_eq!(files.len(), 7);
    let first: Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).expect("read")).expect("json");
    assert_eq!(first["schema_version"], kernelab_model::SCHEMA_VERSION);
    // `schema_version` and `kind` once per record, not repeated inside `result`.
    assert!(first["result"].get("schema_version").is_none());
    assert!(first["result"].get("kind").is_none());
    assert_eq!(first["kind"], "profile");
    assert_eq!(first["label"], "kineto_qwen3next_4l_prompt8192_baseline");
    let prov = &first["provenance"];
    assert_eq!(prov["inputs"][0]["bytes"], 119_691);
    assert_eq!(prov["inputs"][0]["sha256"].as_str().map(str::len), Some(64));
    assert_eq!(prov["gpu"], "NVIDIA H200");
    assert!(prov["argv"]
        .as_array()
        .expect("argv")
        .iter()
        .any(|a| a == "profile"));
    // A second recording of the same command gets the next number; nothing is replaced.
    let before = std::fs::read(&files[0]).expect("read");
    record(
        dir.path(),
        &[
            "profile",
            &p("kineto_qwen3next_4l_prompt8192_baseline.json.gz"),
        ],
    );
    assert_eq!(std::fs::read(&files[0]).expect("read"), before);
    assert!(dir.path().join("0008-profile.json").exists());
    // KERNELAB_BUNDLE works like --record.
    let env_dir = tempfile::tempdir().expect("tmp");
    let out = kernelab()
        .env("KERNELAB_BUNDLE", env_dir.path())
        .args(["check", "finite", &p("tensor/a.npy")])
        .output()
        .expect("runs");
    assert!(out.status.success());
    assert!(env_dir.path().join("0001-check_finite.json").exists());
    // --label names the record's change; without it, the first input's stem.
    let labelled = tempfile::tempdir().expect("tmp");
    record(
        labelled.path(),
        &["check", "finite", &p("tensor/a.npy"), "--label", "w8s2"],
    );
    record(labelled.path(), &["check", "finite", &p("tensor/a.npy")]);
    let label = |f: &str| -> Value {
        let v: Value =
            serde_json::from_slice(&std::fs::read(labelled.path().join(f)).expect("record"))
                .expect("json");
        v["label"].clone()
    };
    assert_eq!(label("0001-check_finite.json"), "w8s2");
    assert_eq!(label("0002-check_finite.json"), "a");
}

#[test]
fn markdown_and_json_reports() {
    let dir = tempfile::tempdir().expect("tmp");
    bundle(dir.path());
    let out = kernelab()
        .arg("report")
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "## Why this kernel",
        "## Correctness",
        "## Code evidence",
        "## Kernel timing",
        "## Request impact",
        "## Reproduction",
        "| recompute_w_u_fwd_kernel | 5 → 5 | 412.864 µs | 483.164 µs | +17.03% | slower |",
        "w (f32 [8, 16]): bit-exact",
        "SLOWER: change +7.63% [+7.12%, +8.14%], beyond ±0.50%",
        "kernelab check bitwise",
        "Every ratio is candidate / baseline of the metric as measured and every change is ratio − 1",
        "<details>\n<summary>Provenance of the 7 records</summary>",
    ] {
        assert!(md.contains(needle), "missing {needle:?}:\n{md}");
    }
    // The status comes first, then one row per change, then every record's row (folded),
    // before the sections.
    let status = md.find("**Status: ").expect("status");
    let changes = md.find("## Changes").expect("changes");
    let summary = md.find("## Summary").expect("summary");
    assert!(status < changes && changes < summary);
    assert!(summary < md.find("## Why this kernel").expect("why"));
    // The bitwise gate of `wu` passed but nothing times it: inconclusive, and it says why.
    assert!(
        md.contains("| wu | 2/2 | – | – | – | – | inconclusive (no kernel timing) |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| inproc_w4s3_w8s2 | – | – | SLOWER 1.0763 [1.0712, 1.0814] | – | – | regression (ab inproc_w4s3_w8s2 is SLOWER) |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| ✔ | wu | check_bitwise | 2/2 | pass | – |"),
        "{md}"
    );
    assert!(
        md.contains(
            "| ⚠ | inproc_w4s3_w8s2 | ab | – | SLOWER (median_us) | 1.0763 [1.0712, 1.0814] |"
        ),
        "{md}"
    );
    // The sections come in the reviewers' order.
    let at = |s: &str| md.find(s).expect(s);
    assert!(at("## Why this kernel") < at("## Correctness"));
    assert!(at("## Correctness") < at("## Code evidence"));
    assert!(at("## Code evidence") < at("## Kernel timing"));
    assert!(at("## Kernel timing") < at("## Request impact"));
    assert!(at("## Request impact") < at("## Reproduction"));
    // Input paths in the commands are relative to the folder that held them.
    assert!(
        md.contains("kernelab check bitwise tensor/wu.npz tensor/wu_compressed.npz --record bundle --label wu\n"),
        "{md}"
    );
    assert!(
        !md.contains(&fixture("").display().to_string()),
        "no checkout path"
    );
    let out = kernelab()
        .arg("report")
        .arg(dir.path())
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["records"].as_array().expect("records").len(), 7);
    // The same bundle gives the same report.
    let again = kernelab()
        .arg("report")
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(
        again.stdout,
        kernelab()
            .arg("report")
            .arg(dir.path())
            .output()
            .expect("runs")
            .stdout
    );
    // Bad bundles.
    let empty = tempfile::tempdir().expect("tmp");
    kernelab().arg("report").arg(empty.path()).assert().code(2);
    std::fs::write(empty.path().join("0001-x.json"), "{").expect("write");
    let out = kernelab()
        .arg("report")
        .arg(empty.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("0001-x.json"));
}

#[test]
fn html_report_loads_in_headless_chromium() {
    let dir = tempfile::tempdir().expect("tmp");
    bundle(dir.path());
    let html = dir.path().join("report.html");
    kernelab()
        .arg("report")
        .arg(dir.path())
        .args(["--format", "html", "--out"])
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).expect("read");
    assert_eq!(
        page.matches("<svg").count(),
        4,
        "forest plot, share bars, class-change bars, ratio strip plot"
    );
    let chart = |class: &str| -> &str {
        let start = page
            .find(&format!("class=\"chart {class}\""))
            .unwrap_or_else(|| panic!("no {class} chart"));
        let end = start + page[start..].find("</svg>").expect("end");
        &page[start..end]
    };
    // The forest plot: one verdict (the A/B run), its point, interval and ±0.50% band, and the
    // ratio written beside it; the axis names its unit.
    let forest = chart("forest");
    assert_eq!(forest.matches("<circle").count(), 1);
    assert_eq!(forest.matches("class=\"thr\"").count(), 1);
    assert!(forest.contains("±0.50% threshold"));
    assert!(forest.contains("1.0763 [1.0712, 1.0814] SLOWER"));
    assert!(forest.contains("candidate / baseline (ratio; &lt; 1: candidate faster)"));
    // The share bars: the top ten families, labelled, with a % axis.
    let shares = chart("shares");
    assert_eq!(shares.matches("class=\"bar").count(), 10);
    assert!(shares.contains(">40.50%<"));
    assert!(shares.contains("share of request kernel GPU time (%)"));
    assert!(!page.contains("<script"), "self-contained, no scripts");
    let Some(chromium) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        kernelab_testkit::skip(
            "chromium",
            "no chromium installed (.ci/run installs Debian's chromium)",
        );
        return;
    };
    let profile = tempfile::tempdir().expect("tmp");
    let headless = |extra: &[&str], page: &Path| {
        Command::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .args(extra)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("file://{}", page.display()))
            .output()
            .expect("chromium runs")
    };
    let out = headless(&["--enable-logging=stderr", "--v=0", "--dump-dom"], &html);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(dom.contains("<h1>kernelab evidence</h1>"), "{dom}");
    assert_eq!(dom.matches("<svg").count(), 4);
    // A screenshot for a person to look at, in the test's output folder.
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report.png");
    let _ = std::fs::remove_file(&shot);
    let screenshot = format!("--screenshot={}", shot.display());
    let out = headless(
        &["--hide-scrollbars", "--window-size=1100,2400", &screenshot],
        &html,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(dom.matches("<circle").count() >= 8, "one point per pair");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        !log.contains("CONSOLE") && !log.contains("Uncaught"),
        "page errors: {log}"
    );
    // Laid out by Chromium: the status and the table of changes come first, and no label of
    // any chart runs past its chart's edges (measured with getBBox in a copy of the page with
    // a probe script; the report itself has none).
    assert!(
        dom.find("class=\"status\"").expect("status") < dom.find("<h2>").expect("sections"),
        "{dom}"
    );
    assert!(dom.contains("<caption>Changes (ratio"), "{dom}");
    let probe = dir.path().join("probe.html");
    let script = r#"<script>
window.addEventListener('load', () => {
  let clipped = [], n = 0;
  for (const svg of document.querySelectorAll('svg.chart')) {
    const w = svg.viewBox.baseVal.width;
    for (const t of svg.querySelectorAll('text')) {
      const b = t.getBBox(); n += 1;
      if (b.x < -0.5 || b.x + b.width > w + 0.5) clipped.push(t.textContent);
    }
  }
  const d = document.createElement('div');
  d.id = 'probe';
  d.textContent = 'texts=' + n + ' clipped=' + clipped.length + ' ' + clipped.join(' | ');
  document.body.appendChild(d);
});
</script></body>"#;
    std::fs::write(&probe, page.replace("</body>", script)).expect("probe");
    let out = headless(&["--virtual-time-budget=5000", "--dump-dom"], &probe);
    let dom = String::from_utf8_lossy(&out.stdout);
    let line = dom
        .split("<div id=\"probe\">")
        .nth(1)
        .and_then(|r| r.split("</div>").next())
        .unwrap_or_else(|| panic!("no probe result: {dom}"));
    assert!(line.contains(" clipped=0 "), "{line}");
    let texts: usize = line
        .trim_start_matches("texts=")
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(texts > 20, "{line}");
}

/// A `kernel run` record (the real H200 one) in a bundle: gates, verdict and its chart.
#[test]
fn kernel_run_records_render_in_reports() {
    let dir = tempfile::tempdir().expect("tmp");
    record(dir.path(), &["check", "finite", &p("tensor/wu.npz")]);
    let first = std::fs::read_dir(dir.path())
        .expect("bundle")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a record");
    let mut rec: Value =
        serde_json::from_slice(&std::fs::read(&first).expect("read")).expect("json");
    rec["kind"] = "kernel_run".into();
    rec["schema_version"] = 2.into();
    rec["result"] = serde_json::from_slice(
        &std::fs::read(fixture("h200_kernel/recompute_w4s3_vs_w8s2.json")).expect("H200 record"),
    )
    .expect("json");
    std::fs::write(
        dir.path().join("0002-kernel_run.json"),
        serde_json::to_vec(&rec).expect("json"),
    )
    .expect("write");
    let out = kernelab()
        .arg("report")
        .arg(dir.path())
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "## Kernel timing",
        "| 6/6 | SLOWER | 1.1636 [1.1599, 1.1681] |",
        "| baseline vs candidate bitwise | pass | 0 of 67108864 elements differ |",
        // The verdict sentence is derived from the figures (the stored v1 sentence said
        // "SLOWER by 16.40%" beside ratio 1.1636): the change is ratio − 1.
        "SLOWER: change +16.36% [+15.99%, +16.81%], beyond ±1.00%: ratio candidate / baseline 1.1636 [1.1599, 1.1681]",
        "median round: baseline 88.784 µs → candidate 103.296 µs per launch",
        "<summary>wu: raw rounds (30)</summary>",
    ] {
        assert!(md.contains(needle), "missing {needle:?}:\n{md}");
    }
    let html = kernelab()
        .arg("report")
        .arg(dir.path())
        .args(["--format", "html"])
        .output()
        .expect("runs");
    let html = String::from_utf8_lossy(&html.stdout);
    assert!(html.contains("wu: candidate / baseline per round"));
    // One point per round, and the threshold (1%, read from the verdict of this older record)
    // drawn as two dashed lines.
    let start = html.find("class=\"chart rounds\"").expect("rounds chart");
    let rounds = &html[start..start + html[start..].find("</svg>").expect("end")];
    assert_eq!(rounds.matches("<circle").count(), 30);
    assert_eq!(rounds.matches("class=\"thrline\"").count(), 2);
    assert!(rounds.contains("round (time order)"));
}

/// Rewrites one record of the bundle and returns what `kernelab report` printed on error.
fn report_error(edit: impl Fn(&mut Value)) -> String {
    let dir = tempfile::tempdir().expect("tmp");
    record(
        dir.path(),
        &[
            "check",
            "bitwise",
            &p("tensor/wu.npz"),
            &p("tensor/wu_compressed.npz"),
        ],
    );
    let file = dir.path().join("0001-check_bitwise.json");
    let mut rec: Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("json");
    edit(&mut rec);
    std::fs::write(&file, serde_json::to_string(&rec).expect("json")).expect("write");
    let out = kernelab()
        .arg("report")
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "no partial report");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_record_missing_a_field_is_an_error_naming_the_file_and_field() {
    let err = report_error(|r| {
        r["result"]["tensors"][0]["result"]
            .as_object_mut()
            .expect("result")
            .remove("elements");
    });
    assert!(err.contains("0001-check_bitwise.json"), "{err}");
    assert!(err.contains("missing field `elements`"), "{err}");
    assert_eq!(err.matches("missing field").count(), 1, "said once: {err}");
    let err = report_error(|r| r["result"]["pass"] = Value::from("yes"));
    assert!(
        err.contains("invalid type: string \"yes\", expected a boolean"),
        "{err}"
    );
}

#[test]
fn records_of_another_schema_version_are_refused() {
    let next = kernelab_model::SCHEMA_VERSION + 1;
    let err = report_error(|r| r["schema_version"] = Value::from(next));
    let says = format!(
        "0001-check_bitwise.json: schema_version {next}; this kernelab reads versions 1 to {}",
        kernelab_model::SCHEMA_VERSION
    );
    assert!(err.contains(&says), "{err}");
    let err = report_error(|r| r["kind"] = Value::from("check_telepathy"));
    assert!(
        err.contains("a record kind this kernelab does not know"),
        "{err}"
    );
}

/// Write → read → write is identical for every record kind a bundle of the repository's fixtures
/// holds: each record's `result` read into its type and written again gives the same JSON.
/// A record whose figures are unavailable (an A/B of pairs without a log ratio) still renders.
#[test]
fn every_record_kind_round_trips_and_unavailable_figures_render() {
    let dir = tempfile::tempdir().expect("tmp");
    let b = dir.path();
    let pairs = b.join("zero_pairs.csv");
    // Two pairs: an estimate, but no interval exists at any usual level.
    std::fs::write(&pairs, "a,b\n10,11\n10,12\n").expect("write pairs");
    let pairs = pairs.display().to_string();
    let serve = p("serve/h200/eager_vs_sdpa.samples.jsonl");
    let runs: Vec<Vec<&str>> = vec![
        vec!["profile", "kineto_qwen3next_4l_prompt8192_baseline.json.gz"],
        vec![
            "compare",
            "h200_pair/gdn_w4s3_run1.json.gz",
            "h200_pair/gdn_w8s2_run1.json.gz",
        ],
        vec!["check", "bitwise", "tensor/wu.npz", "tensor/wu_changed.npz"],
        vec![
            "check",
            "oracle",
            "tensor/out_bf16.npy",
            "tensor/ref_f64.npy",
            "--dtype",
            "bf16",
        ],
        vec!["check", "finite", "tensor/a_nonfinite.npy"],
        vec![
            "code",
            "diff",
            "code/recompute_w_u_fwd_kernel_w4s3.cubin",
            "code/recompute_w_u_fwd_kernel_w8s2.cubin",
            "--no-disassemble",
        ],
        vec![
            "code",
            "show",
            "code/recompute_w_u_fwd_kernel_w4s3.cubin",
            "--no-disassemble",
        ],
        vec!["metrics", "ncu_recompute_metrics.csv"],
        vec![
            "ab",
            "analyze",
            "h200_ab/inproc_w4s3_w8s2.csv",
            "--metric",
            "median_us",
        ],
    ];
    for args in &runs {
        let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        // Fixture paths are relative to tests/fixtures.
        for a in args.iter_mut().skip(1) {
            if a.contains('.') && !a.starts_with('-') {
                *a = p(a);
            }
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        record(b, &args);
    }
    record(b, &["ab", "analyze", &pairs, "--label", "unusable"]);
    record(b, &["serve", "--analyze", "--resume", &serve]);
    // Documents written earlier (a v2 kernel run, measured ceilings), a roofline and an impact.
    let kernel_run = p("h200_kernel/recompute_w4s3_vs_w8s2.json");
    record(
        b,
        &["record", &kernel_run, &p("h200_ceilings/ceilings.json")],
    );
    let mut roofline = vec![
        "roofline".to_string(),
        p("ncu_recompute_metrics.csv"),
        "--work".into(),
        crate::root()
            .join("examples/roofline/work.toml")
            .display()
            .to_string(),
        "--ceilings".into(),
        p("h200_ceilings/ceilings.json"),
    ];
    for size in ["B=1", "T=8192", "H=32", "HV=32", "K=128", "V=128"] {
        roofline.extend(["--size".to_string(), size.to_string()]);
    }
    record(b, &roofline.iter().map(String::as_str).collect::<Vec<_>>());
    let profile = dir.path().join("profile.json.out");
    let out = kernelab()
        .args([
            "profile",
            &p("h200_pair/gdn_w4s3_run1.json.gz"),
            "--format",
            "json",
        ])
        .output()
        .expect("runs");
    std::fs::write(&profile, &out.stdout).expect("write profile");
    record(
        b,
        &[
            "impact",
            "--profile",
            &profile.display().to_string(),
            "--kernel-run",
            &kernel_run,
        ],
    );
    let mut kinds = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(b).expect("bundle").filter_map(Result::ok) {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let rec: Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
        let kind = rec["kind"].as_str().expect("kind").to_string();
        let evidence = kernelab_report::documents::Evidence::read(&kind, &rec["result"])
            .expect("a known kind")
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let again = evidence.to_value().expect("writes");
        assert_eq!(
            again,
            rec["result"],
            "{}: write → read → write",
            path.display()
        );
        kinds.insert(kind);
    }
    for k in [
        "profile",
        "compare",
        "check_bitwise",
        "check_oracle",
        "check_finite",
        "code_diff",
        "code_show",
        "metrics",
        "ab",
        "serve",
        "kernel_run",
        "ceilings",
        "roofline",
        "impact",
    ] {
        assert!(kinds.contains(k), "no {k} record: {kinds:?}");
    }
    let md = report_of(b, "md");
    assert!(md.contains("unusable"), "{md}");
    assert!(
        md.contains("too few pairs"),
        "the unavailable interval says why:\n{md}"
    );
}

/// Markdown as GitHub renders it (comrak, GitHub-flavoured: tables, no raw HTML passed through
/// unescaped).
fn github_html(md: &str) -> String {
    let mut o = comrak::Options::default();
    o.extension.table = true;
    o.extension.strikethrough = true;
    o.extension.autolink = true;
    o.extension.tagfilter = true;
    o.render.unsafe_ = true;
    comrak::markdown_to_html(md, &o)
}

/// `kernelab record` adds a document written earlier (the H200 kernel run, an earlier layout)
/// to the bundle; `impact --record` records; one corrupted record is listed and the rest
/// renders (`--strict` refuses); `--intro` goes above the evidence; the report never writes an
/// appendix where nobody asked.
#[test]
fn bundles_take_earlier_documents_and_survive_a_bad_record() {
    let dir = tempfile::tempdir().expect("tmp");
    let b = dir.path().join("bundle");
    let b_s = b.display().to_string();
    let run = p("h200_kernel/recompute_w4s3_vs_w8s2.json");
    // Without a bundle there is nothing to add to.
    let out = kernelab().args(["record", &run]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--record DIR"));
    let out = kernelab()
        .args(["record", &run, "--record", &b_s, "--label", "w8s2"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rec: Value =
        serde_json::from_slice(&std::fs::read(b.join("0001-kernel_run.json")).expect("the record"))
            .expect("json");
    assert_eq!(rec["schema_version"], kernelab_model::SCHEMA_VERSION);
    assert_eq!(rec["label"], "w8s2");
    assert_eq!(rec["provenance"]["gpu"], "NVIDIA H200");
    assert!(rec["provenance"]["inputs"][0]["sha256"].is_string());
    // Read in this layout: ratio candidate / baseline, intervals as objects.
    assert!(rec["result"]["rounds"][0]["ratio"].is_number());
    assert!(rec["result"]["analysis"]["interval"]["low"].is_number());
    // A bad document is refused when added, naming it.
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"schema_version": 3, "kind": "kernel_run", "pass": true}"#,
    )
    .expect("write");
    let out = kernelab()
        .arg("record")
        .arg(&bad)
        .args(["--record", &b_s])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.json"));
    // impact --record records an `impact` record that renders.
    let prof = p("h200_pair/gdn_w4s3_run1.json.gz");
    record(&b, &["profile", &prof, "--label", "gdn_request"]);
    let profile_rec = b.join("0002-profile.json");
    let out = kernelab()
        .args(["impact", "--profile"])
        .arg(&profile_rec)
        .arg("--kernel-run")
        .arg(&run)
        .args(["--record", &b_s, "--label", "w8s2"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(b.join("0003-impact.json").is_file());
    // A corrupted record: listed with its file and reason, the rest renders.
    std::fs::write(b.join("0004-ab.json"), "{not json").expect("write");
    let intro = dir.path().join("intro.md");
    std::fs::write(
        &intro,
        "## Motivation\n\nrecompute_w_u spends 17% of the prompt; try 8 warps.\n",
    )
    .expect("write");
    let out = kernelab()
        .current_dir(dir.path())
        .args(["report", &b_s, "--intro"])
        .arg(&intro)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(md.contains("## Records not read"), "{md}");
    assert!(md.contains("0004-ab.json"), "{md}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("0004-ab.json"));
    let at = |s: &str| md.find(s).unwrap_or_else(|| panic!("{s}:\n{md}"));
    assert!(at("## Motivation") < at("**Status: "));
    assert!(at("**Status: ") < at("## Changes"));
    assert!(md.contains("predicted request kernel time change"), "{md}");
    let out = kernelab()
        .args(["report", &b_s, "--strict"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("0004-ab.json"));
    // Only what was asked for was written.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    assert_eq!(names, ["bad.json", "bundle", "intro.md"]);
}

/// A bundle too large for one pull-request body: on standard output the report is refused
/// (no `appendix.md` appears in the working directory); with --out the appendix goes beside it.
#[test]
fn an_appendix_goes_beside_the_body_or_nowhere() {
    let dir = tempfile::tempdir().expect("tmp");
    let b = dir.path().join("bundle");
    let serve = p("serve/h200/eager_vs_sdpa.samples.jsonl");
    for i in 0..24 {
        let label = format!("serve{i}");
        record(
            &b,
            &["serve", "--analyze", "--resume", &serve, "--label", &label],
        );
    }
    let out = kernelab()
        .current_dir(dir.path())
        .arg("report")
        .arg(&b)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        out.stdout.is_empty(),
        "no partial body passed off as complete"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out FILE"));
    assert!(!dir.path().join("appendix.md").exists());
    let pr = dir.path().join("pr.md");
    let out = kernelab()
        .current_dir(dir.path())
        .arg("report")
        .arg(&b)
        .arg("--out")
        .arg(&pr)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let body = std::fs::read_to_string(&pr).expect("body");
    assert!(body.chars().count() <= 65_536);
    assert!(body.contains("pr.appendix.md"));
    assert!(dir.path().join("pr.appendix.md").is_file());
}

/// Names and labels read on GitHub as written: a template kernel keeps its `<float>`, `*` and
/// `__` do not format, a label with a newline does not become a heading.
#[test]
fn names_and_labels_render_as_written_on_github() {
    let dir = tempfile::tempdir().expect("tmp");
    let b = dir.path().join("bundle");
    let trace = p("kineto-a100-cuda12-triton_example.json.gz");
    record(
        &b,
        &[
            "profile",
            &trace,
            "--group",
            "none",
            "--label",
            "req\n# injected <b>x</b>",
        ],
    );
    let md = report_of(&b, "md");
    assert!(
        !md.contains("\n# injected"),
        "a label cannot start a heading:\n{md}"
    );
    let html = github_html(&md);
    assert!(
        !html.contains("<b>x</b>"),
        "raw HTML of a label passes through:\n{html}"
    );
    assert!(html.contains("&lt;b&gt;x&lt;/b&gt;"), "{html}");
    // Every template name of the profile table keeps its angle brackets.
    let names: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains("&lt;"))
        .collect();
    assert!(!names.is_empty(), "{md}");
    assert!(
        !html.contains("<float>") && !html.contains("<strong>float"),
        "{html}"
    );
    assert!(html.contains("&lt;"), "{html}");
}

/// A record whose own counts contradict each other ("9 of 4 identical") is not rendered as
/// evidence: it is listed as not read, with the reason, and `--strict` refuses the bundle.
#[test]
fn a_record_that_contradicts_itself_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let b = dir.path().join("bundle");
    let serve = p("serve/h200/eager_vs_sdpa.samples.jsonl");
    record(
        &b,
        &["serve", "--analyze", "--resume", &serve, "--label", "sdpa"],
    );
    let path = b.join("0001-serve.json");
    let mut rec: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    rec["result"]["identity"]["identical"] = 9.into();
    rec["result"]["identity"]["compared"] = 4.into();
    std::fs::write(&path, serde_json::to_vec(&rec).expect("json")).expect("write");
    record(
        &b,
        &["check", "finite", &p("tensor/wu.npz"), "--label", "wu"],
    );
    let md = report_of(&b, "md");
    assert!(md.contains("## Records not read"), "{md}");
    assert!(
        md.contains("contradicts itself") && md.contains("9 of 4"),
        "{md}"
    );
    assert!(!md.contains("9 of 4 requests identical"), "{md}");
    let out = kernelab()
        .arg("report")
        .arg(&b)
        .arg("--strict")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
}
