//! `kernelab serve` plumbing against a small python completion server (tests/fixtures/serve):
//! a run and its analysis, resume after SIGKILL with no orphaned server, a server killed
//! mid-round, a server that exits at start, a wrong token count, the output-identity gate.
//! The A/B evidence against a real server is in serve_llama.rs.

use crate::{fixture, kernelab, report_of};
use std::path::Path;
use std::time::{Duration, Instant};

/// A spec running the fixture server with `base` and `cand` extra arguments.
pub fn spec(dir: &Path, base: &str, cand: &str, rounds: usize, extra: &str) -> std::path::PathBuf {
    let script = fixture("serve/sse_server.py");
    let server = |args: &str| {
        format!(
            "argv = [\"python3\", \"{}\", \"{{port}}\"{args}]\nhealth_url = \"http://127.0.0.1:{{port}}/health\"\nstop_grace_s = 2\n",
            script.display()
        )
    };
    let text = format!(
        "[baseline]\n{}\n[candidate]\n{}\n[workload]\nrequests = 3\nwarmup = 1\n{extra}\n[[workload.case]]\ninput_tokens = 16\noutput_tokens = 8\nconcurrency = [1, 2]\n\n[rounds]\ncount = {rounds}\n",
        server(base),
        server(cand)
    );
    let p = dir.join("spec.toml");
    std::fs::write(&p, text).expect("spec");
    p
}

/// Runs `kernelab serve SPEC --samples DIR/s.jsonl ARGS`.
fn serve(spec: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    kernelab()
        .arg("serve")
        .arg(spec)
        .arg("--samples")
        .arg(dir.join("s.jsonl"))
        .args(args)
        .output()
        .expect("run")
}

fn json_of(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out).expect("JSON document")
}

/// Runs `kernelab serve SPEC --samples DIR/s.jsonl --format json`, which must succeed, and
/// parses the document.
fn serve_ok(spec: &Path, dir: &Path) -> serde_json::Value {
    let out = serve(spec, dir, &["--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    json_of(&out.stdout)
}

#[test]
fn a_run_measures_every_request_and_resume_analyze_agrees() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = spec(dir.path(), "", "", 2, "");
    let samples = dir.path().join("s.jsonl");
    let v = serve_ok(&spec, dir.path());
    assert_eq!(v["kind"], "serve");
    let b = &v;
    assert_eq!(
        b["identity"]["compared"], 12,
        "2 rounds × 2 concurrencies × 3"
    );
    assert_eq!(b["identity"]["identical"], 12);
    assert_eq!(b["request_failures"], 0);
    assert_eq!(b["pass"], true);
    let starts = b["starts"].as_array().expect("starts");
    assert_eq!(starts.len(), 4);
    assert!(starts
        .iter()
        .all(|s| s["health_ns"].as_u64().is_some_and(|h| h > 0)));
    let tpot = b["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|m| m["metric"] == "tpot_mean_s" && m["concurrency"] == 1)
        .expect("tpot");
    assert!(tpot["baseline"]
        .as_f64()
        .is_some_and(|x| x > 0.0005 && x < 0.1));
    assert_eq!(tpot["rounds"].as_array().map(Vec::len), Some(2));
    // GPU telemetry: figures where NVML sees a GPU, else the reason, never a 0.
    let gpu = starts
        .iter()
        .all(|s| s["peak_gpu_memory_bytes"].as_u64().is_some());
    let why = b["notes"].as_array().expect("notes").iter().any(|n| {
        n.as_str()
            .is_some_and(|n| n.starts_with("GPU memory and clocks unavailable: NVML"))
    });
    assert!(gpu || (why && starts.iter().all(|s| s["peak_gpu_memory_bytes"].is_null())));
    // Logs are kept.
    // The servers' logs are in the run's folder, not beside the samples file.
    assert!(crate::run_dir_of(&dir.path().join("s.jsonl"))
        .join("logs/round0-baseline.log")
        .exists());
    assert!(!dir.path().join("s.jsonl.logs").exists());
    let again = kernelab()
        .args(["serve", "--analyze", "--format", "json", "--resume"])
        .arg(&samples)
        .output()
        .expect("analyze");
    assert!(again.status.success());
    assert_eq!(json_of(&again.stdout)["metrics"], b["metrics"]);
    // Markdown and CSV.
    let md = kernelab()
        .args(["serve", "--analyze", "--format", "md", "--resume"])
        .arg(&samples)
        .output()
        .expect("md");
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(
        md.contains("Baseline → candidate medians (Δ%) | Paired change |"),
        "{md}"
    );
    // The Δ% beside the medians is their own change; the paired estimate has its own column.
    let doc = json_of(&again.stdout);
    for m in doc["metrics"].as_array().expect("metrics") {
        if let (Some(b), Some(c)) = (m["baseline"].as_f64(), m["candidate"].as_f64()) {
            let r = m["medians"]["ratio"]
                .as_f64()
                .expect("ratio of the medians");
            assert!((r - c / b).abs() < 1e-12, "{m}");
            assert!((m["medians"]["change"].as_f64().expect("change") - (r - 1.0)).abs() < 1e-12);
        }
    }
    assert!(md.contains("12 of 12 requests identical"), "{md}");
    let csv = kernelab()
        .args(["serve", "--analyze", "--format", "csv", "--resume"])
        .arg(&samples)
        .output()
        .expect("csv");
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert!(
        csv.starts_with("case,input_tokens,output_tokens,concurrency,metric"),
        "{csv}"
    );
    assert!(csv.lines().any(|l| l.contains(",2,tpot_p99_s,")), "{csv}");
}

#[test]
fn non_streaming_marks_ttft_unavailable() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = spec(dir.path(), "", "", 2, "stream = false");
    let out = serve(&spec, dir.path(), &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("unavailable → unavailable"), "{text}");
    assert!(
        text.contains("TTFT, time to second token, ITL and TPOT are unavailable"),
        "{text}"
    );
}

#[test]
fn a_wrong_token_count_is_an_error_not_a_measurement() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = spec(dir.path(), "", ", \"--short\"", 2, "");
    let out = serve(&spec, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the server returned 7 completion tokens, the case asks for 8"),
        "{err}"
    );
}

#[test]
fn different_outputs_fail_the_identity_gate() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = spec(dir.path(), "", ", \"--salt\", \"x\"", 2, "");
    let out = serve(&spec, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("0 of 12 requests identical"), "{text}");
}

#[test]
fn a_server_that_exits_at_start_is_exit_2_with_its_log() {
    let dir = tempfile::tempdir().expect("tmp");
    let spec = spec(dir.path(), ", \"--no-such-flag\"", "", 2, "");
    let out = serve(&spec, dir.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("baseline: exited at start"), "{err}");
    assert!(
        err.contains("unrecognized arguments: --no-such-flag"),
        "{err}"
    );
    assert!(err.contains("(--resume serve-"), "{err}");
}

#[test]
fn a_bad_spec_names_the_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(dir.path(), "", "", 2, "");
    let text = std::fs::read_to_string(&p)
        .expect("spec")
        .replace("count = 2", "count = 1");
    std::fs::write(&p, text).expect("write");
    let out = kernelab().arg("serve").arg(&p).output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("spec.toml: line 21: `rounds.count`: expected at least 2 rounds"),
        "{err}"
    );
}

#[test]
fn a_server_killed_mid_round_fails_that_round_and_the_run_goes_on() {
    let dir = tempfile::tempdir().expect("tmp");
    // Each fresh candidate serves 5 requests (1 warm-up + 3 + 1 warm-up), then dies.
    let spec = spec(dir.path(), "", ", \"--die-after\", \"5\"", 2, "");
    let out = serve(&spec, dir.path(), &["--format", "json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("failed: the candidate exited"), "{err}");
    let v = json_of(&out.stdout);
    let starts = v["starts"].as_array().expect("starts").clone();
    let failed: Vec<_> = starts.iter().filter(|s| !s["failure"].is_null()).collect();
    assert_eq!(failed.len(), 2, "both candidate rounds failed: {starts:?}");
    assert!(failed.iter().all(|s| s["server"] == "candidate"
        && s["log"]
            .as_str()
            .is_some_and(|l| l.ends_with("candidate.log"))));
    // Concurrency 1 was complete on both: it is still compared.
    assert_eq!(v["identity"]["compared"], 6);
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, r)| !r.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

#[test]
fn sigkill_mid_run_leaves_no_server_and_resume_completes() {
    let dir = tempfile::tempdir().expect("tmp");
    let pids = dir.path().join("pids");
    let pid_arg = format!(
        ", \"--delay-ms\", \"20\", \"--pids\", \"{}\"",
        pids.display()
    );
    let spec = spec(dir.path(), &pid_arg, &pid_arg, 4, "");
    let samples = dir.path().join("s.jsonl");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("kernelab"))
        .envs(kernelab_testkit::isolated_env())
        .arg("serve")
        .arg(&spec)
        .arg("--samples")
        .arg(&samples)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let t = Instant::now();
    loop {
        let text = std::fs::read_to_string(&samples).unwrap_or_default();
        if text.matches("\"kind\":\"point\"").count() >= 3 {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(60), "no progress: {text}");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL kernelab");
    child.wait().expect("reap");
    let started: Vec<u32> = std::fs::read_to_string(&pids)
        .expect("pids")
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect();
    let t = Instant::now();
    while started.iter().any(|&p| alive(p)) && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        started.iter().all(|&p| !alive(p)),
        "a server outlived kernelab"
    );
    let out = kernelab()
        .args(["serve", "--format", "json", "--resume"])
        .arg(&samples)
        .output()
        .expect("resume");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    // Every point of every round is complete: 4 rounds × 2 concurrencies × 3 requests.
    assert_eq!(v["identity"]["compared"], 24);
    let text = std::fs::read_to_string(&samples).expect("samples");
    assert_eq!(text.matches("\"kind\":\"point\"").count(), 16);
    assert_eq!(text.matches("\"kind\":\"header\"").count(), 1);
}

#[test]
fn a_public_trace_is_replayed_at_its_times_with_its_lengths() {
    let dir = tempfile::tempdir().expect("tmp");
    let (ta, tb) = (dir.path().join("a.trace"), dir.path().join("b.trace"));
    let arg = |t: &Path| {
        format!(
            ", \"--delay-ms\", \"0.2\", \"--trace\", \"{}\"",
            t.display()
        )
    };
    let p = spec(dir.path(), &arg(&ta), &arg(&tb), 2, "");
    let trace = fixture("serve/traces/azure_llm_conv_2023_head.csv");
    // The Azure excerpt's 40 requests over 24.1 s, replayed 20 times faster.
    let text = std::fs::read_to_string(&p).expect("spec").replace(
        "input_tokens = 16\noutput_tokens = 8\nconcurrency = [1, 2]",
        &format!(
            "trace = \"{}\"\ntime_scale = 20.0\nconcurrency = [64]",
            trace.display()
        ),
    );
    std::fs::write(&p, text).expect("write");
    let v = serve_ok(&p, dir.path());
    // The case shows the trace's largest lengths.
    let m = v["metrics"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["metric"] == "e2e_mean_s"))
        .expect("e2e");
    assert_eq!(
        (m["input_tokens"].as_u64(), m["output_tokens"].as_u64()),
        (Some(4085), Some(217))
    );
    // Every request asked for its own row's lengths, and got them.
    let rows: Vec<(f64, u64, u64)> = std::fs::read_to_string(&trace)
        .expect("trace")
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (0.0, f[1].parse().expect("in"), f[2].parse().expect("out"))
        })
        .collect();
    let samples = std::fs::read_to_string(dir.path().join("s.jsonl")).expect("samples");
    let requests: Vec<serde_json::Value> = samples
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| r["kind"] == "request" && r["warmup"] != true)
        .collect();
    assert_eq!(requests.len(), 2 * 2 * 40);
    for r in &requests {
        let i = r["index"].as_u64().expect("index") as usize;
        let m = &r["measured"];
        assert_eq!(m["prompt_tokens"].as_u64(), Some(rows[i].1), "{r}");
        assert_eq!(m["completion_tokens"].as_u64(), Some(rows[i].2), "{r}");
        assert!(r["error"].is_null(), "{r}");
    }
    // The server saw the measured requests at the trace's times ÷ 20 (the warm-up comes
    // first: the last 40 requests of each start are the measured ones).
    let header = samples.lines().next().expect("header");
    let h: serde_json::Value = serde_json::from_str(header).expect("JSON");
    let replay = h["spec"]["workload"]["case"][0]["replay"]
        .as_array()
        .expect("replay");
    assert_eq!(replay.len(), 40);
    let at: Vec<f64> = replay
        .iter()
        .map(|r| r["at_s"].as_f64().expect("at"))
        .collect();
    assert!((at[1] - 4.314579 / 20.0).abs() < 1e-9, "{}", at[1]);
    for t in [&ta, &tb] {
        let text = std::fs::read_to_string(t).expect("server trace");
        let mut starts: Vec<Vec<u64>> = Vec::new();
        for l in text.lines() {
            if l.starts_with("start") {
                starts.push(Vec::new());
            } else if let Some(s) = starts.last_mut() {
                s.push(
                    l.split(' ')
                        .next()
                        .and_then(|x| x.parse().ok())
                        .expect("ns"),
                );
            }
        }
        for s in starts {
            let seen = &s[s.len() - 40..];
            for (i, &ns) in seen.iter().enumerate() {
                let offset = (ns - seen[0]) as f64 / 1e9;
                assert!(
                    (offset - at[i]).abs() < 0.1,
                    "request {i}: {offset} vs {}",
                    at[i]
                );
            }
        }
    }
}

#[test]
fn a_rate_sweep_finds_the_highest_rate_each_side_sustains_under_the_slo() {
    let dir = tempfile::tempdir().expect("tmp");
    // Baseline 40 ms a request (two in flight: about 50 per second), candidate 640 ms (about
    // 3 per second): at half the offered rate as goodput, the baseline sustains 32 per second,
    // the candidate only 2.
    let p = spec(
        dir.path(),
        ", \"--delay-ms\", \"5\"",
        ", \"--delay-ms\", \"80\"",
        2,
        "rates = [2.0, 8.0, 32.0]\narrivals = \"constant\"",
    );
    let text = std::fs::read_to_string(&p)
        .expect("spec")
        .replace("requests = 3", "requests = 6")
        .replace("concurrency = [1, 2]", "concurrency = [2]")
        + "\n[analysis.slo]\ne2e_ms = 1000\nattain = 0.5\n";
    std::fs::write(&p, text).expect("write");
    let v = serve_ok(&p, dir.path());
    let search = &v["slo_search"][0];
    assert_eq!(search["concurrency"], 2);
    let rates: Vec<f64> = search["rates"]
        .as_array()
        .expect("rates")
        .iter()
        .map(|r| r["rate_per_s"].as_f64().expect("rate"))
        .collect();
    assert_eq!(rates, vec![2.0, 8.0, 32.0]);
    assert_eq!(search["baseline_max_rate_per_s"], 32.0, "{search}");
    assert_eq!(search["candidate_max_rate_per_s"], 2.0, "{search}");
    assert_eq!(search["ratio"], 0.0625);
    // Each "sustains" is the goodput against half the rate, recomputed here.
    for r in search["rates"].as_array().expect("rates") {
        for side in ["baseline", "candidate"] {
            let g = r[format!("{side}_goodput_per_s")]
                .as_f64()
                .expect("goodput");
            let rate = r["rate_per_s"].as_f64().expect("rate");
            assert_eq!(r[format!("{side}_sustains")], g >= 0.5 * rate, "{r}");
        }
    }
    // The header keeps the expanded cases (one per rate), so a resume runs the same points.
    let header: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(dir.path().join("s.jsonl"))
            .expect("samples")
            .lines()
            .next()
            .expect("header"),
    )
    .expect("JSON");
    let cases = header["spec"]["workload"]["case"]
        .as_array()
        .expect("cases");
    assert_eq!(cases.len(), 3);
    assert!(header["spec"]["workload"].get("rates").is_none());
    let again = kernelab()
        .args(["serve", "--analyze", "--format", "md", "--resume"])
        .arg(dir.path().join("s.jsonl"))
        .output()
        .expect("md");
    let md = String::from_utf8_lossy(&again.stdout);
    assert!(md.contains("SLO search: 16 in × 8 out"), "{md}");
    assert!(md.contains("ratio 0.062×"), "{md}");
}

#[test]
fn a_request_rate_load_records_send_lag_and_goodput() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(dir.path(), "", "", 2, "rate = 40.0\narrivals = \"poisson\"");
    let mut text = std::fs::read_to_string(&p).expect("spec");
    text.push_str("\n[analysis.slo]\ne2e_ms = 10000\n");
    std::fs::write(&p, text).expect("write");
    let samples = dir.path().join("s.jsonl");
    let v = serve_ok(&p, dir.path());
    let goodput = v["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|m| m["metric"] == "goodput_req_s" && m["concurrency"] == 2)
        .expect("goodput");
    assert!(
        goodput["baseline"].as_f64().is_some_and(|g| g > 0.0),
        "{goodput}"
    );
    let text = std::fs::read_to_string(&samples).expect("samples");
    let requests: Vec<serde_json::Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|r| r["kind"] == "request")
        .collect();
    assert_eq!(requests.len(), 24, "2 rounds × 2 servers × 2 caps × 3");
    assert!(requests
        .iter()
        .all(|r| r["send_lag_s"].as_f64().is_some_and(|l| l >= 0.0)));
}

#[test]
fn the_flush_endpoint_is_called_before_each_point() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(dir.path(), "", "", 2, "flush = \"/flush_cache\"");
    let samples = dir.path().join("s.jsonl");
    let out = kernelab()
        .arg("serve")
        .arg(&p)
        .arg("--samples")
        .arg(&samples)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for round in 0..2 {
        for server in ["baseline", "candidate"] {
            let log = crate::run_dir_of(&samples).join(format!("logs/round{round}-{server}.log"));
            let text = std::fs::read_to_string(&log).expect("log");
            assert_eq!(
                text.matches("flushed").count(),
                2,
                "one per concurrency: {text}"
            );
        }
    }
}

#[test]
fn a_serve_record_plots_every_metric_and_concurrency_in_the_html_report() {
    let dir = tempfile::tempdir().expect("tmp");
    // Three rounds, so that each metric and concurrency has a paired interval.
    let spec = spec(dir.path(), "", "", 3, "");
    let bundle = dir.path().join("bundle");
    let out = kernelab()
        .arg("serve")
        .arg(&spec)
        .arg("--samples")
        .arg(dir.path().join("s.jsonl"))
        .arg("--record")
        .arg(&bundle)
        .args(["--format", "json"])
        .output()
        .expect("run");
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out.stdout);
    let analysed: Vec<String> = v["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .filter(|m| {
            [
                "ttft_mean_s",
                "tpot_mean_s",
                "e2e_mean_s",
                "throughput_tok_s",
            ]
            .contains(&m["metric"].as_str().unwrap_or(""))
                && !m["analysis"].is_null()
        })
        .map(|m| {
            format!(
                "{} @ {}",
                m["metric"].as_str().unwrap_or(""),
                m["concurrency"]
            )
        })
        .collect();
    assert!(!analysed.is_empty());
    let html = report_of(&bundle, "html");
    let start = html
        .find("Serving: candidate / baseline per metric and concurrency")
        .expect("the serving plot");
    let svg = &html[start
        ..html[start..]
            .find("</svg>")
            .map_or(html.len(), |e| start + e)];
    // One point per analysed metric and concurrency, each named in its tooltip.
    assert_eq!(
        svg.matches("<circle").count(),
        analysed.len(),
        "{analysed:?}"
    );
    for name in &analysed {
        assert!(svg.contains(name.as_str()), "{name} in the plot");
    }
}

#[test]
fn a_confined_run_refuses_files_named_inside_a_spec_outside_its_root() {
    // `kernelab mcp` runs each command with KERNELAB_CONFINE_ROOT=its root: a trace named in a
    // serve spec outside the root is refused before any server starts, as a direct argument is.
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path().join("root");
    std::fs::create_dir_all(&root).expect("root");
    let outside = dir.path().join("outside.csv");
    std::fs::copy(
        fixture("serve/traces/azure_llm_conv_2023_head.csv"),
        &outside,
    )
    .expect("copy");
    let p = spec(&root, "", "", 2, "");
    let text = std::fs::read_to_string(&p).expect("spec").replace(
        "input_tokens = 16\noutput_tokens = 8\n",
        "trace = \"../outside.csv\"\n",
    );
    std::fs::write(&p, text).expect("write");
    let run = |confine: bool| {
        let mut c = kernelab();
        if confine {
            c.env("KERNELAB_CONFINE_ROOT", &root);
        }
        c.current_dir(&root)
            .args([
                "serve",
                "spec.toml",
                "--samples",
                "s.jsonl",
                "--budget",
                "1s",
            ])
            .output()
            .expect("run")
    };
    let out = run(true);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("outside.csv"), "{err}");
    assert!(
        err.contains("outside the folder this run is confined to"),
        "{err}"
    );
    assert!(!root.join("s.jsonl").exists());
    // A direct argument outside the root is refused the same way.
    let out = kernelab()
        .env("KERNELAB_CONFINE_ROOT", &root)
        .arg("profile")
        .arg(fixture("kineto_h200_cuda_graph_replay.json.gz"))
        .output()
        .expect("profile");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("confined"));
    // Unconfined, the same spec reads its trace (and fails later only for the budget's lack
    // of planned looks: the trace itself was read).
    let out = run(false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("confined"), "{err}");
    assert!(err.contains("--budget stops planned looks"), "{err}");
}
