//! `kernelab serve` against a real server: llama.cpp through `llama-cpp-python[server]`,
//! serving a tiny random-weight GGUF model the test writes itself (nothing is downloaded). An
//! A/B of prompt batch sizes 1 and 256 (a real change of prompt-processing speed) must be
//! called; an A/A must not. Skips with a printed reason when the pip packages are absent
//! (`.ci/run` installs them).

use crate::{fixture, kernelab, report_of};
use std::path::Path;

fn available() -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import llama_cpp.server, gguf"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        kernelab_testkit::skip(
            "llama.cpp",
            "python3 cannot import llama_cpp.server and gguf (pip install 'llama-cpp-python[server]' gguf; .ci/run installs them)",
        );
    }
    ok
}

fn model(dir: &Path) -> std::path::PathBuf {
    let m = dir.join("tiny.gguf");
    let out = std::process::Command::new("python3")
        .arg(fixture("serve/tiny_gguf.py"))
        .arg(&m)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    m
}

/// A spec of two llama.cpp servers differing only in their prompt batch size.
fn spec(dir: &Path, base_batch: u32, cand_batch: u32) -> std::path::PathBuf {
    let m = model(dir);
    let server = |batch: u32| {
        format!(
            "argv = [\"python3\", \"-m\", \"llama_cpp.server\", \"--model\", \"{}\", \"--port\", \"{{port}}\", \"--n_threads\", \"1\", \"--n_threads_batch\", \"1\", \"--n_batch\", \"{batch}\", \"--n_ubatch\", \"{batch}\"]\nhealth_url = \"http://127.0.0.1:{{port}}/v1/models\"\nstop_grace_s = 5\n",
            m.display()
        )
    };
    // Byte tokens (ids 3..=258) are kept out of the output, so every token has text.
    let bias: Vec<String> = (0..259).map(|i| format!("\"{i}\" = -100.0")).collect();
    let text = format!(
        "[baseline]\n{}\n[candidate]\n{}\n[workload]\nprompt = \"text\"\ndetokenize = \"/extras/detokenize\"\ntokenize = \"/extras/tokenize\"\nvocab = [259, 771]\nignore_eos = false\nmin_tokens = true\nrequests = 6\nwarmup = 1\nextra = {{ logit_bias = {{ {} }} }}\n\n[[workload.case]]\ninput_tokens = 192\noutput_tokens = 8\nconcurrency = [1]\n\n[rounds]\ncount = 8\n\n[analysis]\nalpha = 0.01\n",
        server(base_batch),
        server(cand_batch),
        bias.join(", ")
    );
    let p = dir.join("spec.toml");
    std::fs::write(&p, text).expect("spec");
    p
}

fn verdict(v: &serde_json::Value, metric: &str) -> String {
    v["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|m| m["metric"] == metric)
        .and_then(|m| m["analysis"]["verdict"].as_str())
        .unwrap_or("none")
        .to_string()
}

#[test]
fn llama_cpp_prompt_batch_1_versus_256_is_called_faster() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let spec = spec(dir.path(), 1, 256);
    let bundle = dir.path().join("bundle");
    let out = kernelab()
        .arg("serve")
        .arg(&spec)
        .arg("--samples")
        .arg(dir.path().join("s.jsonl"))
        .args(["--format", "json", "--record"])
        .arg(&bundle)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(verdict(&v, "ttft_mean_s"), "FASTER", "{v:#}");
    assert_eq!(verdict(&v, "e2e_mean_s"), "FASTER");
    // 8 rounds × 6 requests, every one with 192 prompt tokens and 8 output tokens.
    assert_eq!(v["identity"]["compared"], 48);
    assert_eq!(v["request_failures"], 0);
    // The record renders in the evidence report.
    let md = report_of(&bundle, "md");
    assert!(md.contains("## Serving"), "{md}");
    assert!(
        md.contains("e2e_mean at concurrency 1") || md.contains("tpot_mean at concurrency 1"),
        "{md}"
    );
}

#[test]
fn llama_cpp_a_a_is_not_called_a_change() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let spec = spec(dir.path(), 256, 256);
    // Both servers resident, requests in turns (A B B A): the other tests running beside this
    // one load the machine unevenly over time, which servers measured one after the other
    // would read as a change (seen once: an A/A called under a loaded CI run).
    // Warm-up to steady state, and the server's metrics URL (llama-cpp-python serves none:
    // every scrape is recorded unavailable and the run goes on).
    let text = std::fs::read_to_string(&spec)
        .expect("spec")
        .replace(
            "stop_grace_s = 5\n",
            "stop_grace_s = 5\nmetrics_url = \"http://127.0.0.1:{port}/metrics\"\n",
        )
        .replace(
            "warmup = 1\n",
            "warmup = \"steady\"\nsteady = { last = 3, within = 0.5, max = 8 }\n",
        )
        + "\n[placement]\nmode = \"together\"\n";
    std::fs::write(&spec, text).expect("write");
    let out = kernelab()
        .arg("serve")
        .arg(&spec)
        .arg("--samples")
        .arg(dir.path().join("s.jsonl"))
        .args(["--format", "json"])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    for m in ["ttft_mean_s", "e2e_mean_s"] {
        let verdict = verdict(&v, m);
        assert!(
            verdict != "FASTER" && verdict != "SLOWER",
            "A/A {m}: {verdict}"
        );
    }
    // Same model, same prompts, temperature 0: identical outputs.
    assert_eq!(v["identity"]["identical"], 48);
    assert!(v["placement"]
        .as_str()
        .is_some_and(|p| p.starts_with("together")));
    // Every start of both sides warmed up to steady (or said it was not), and its curve is kept.
    let warm = v["warmup"].as_array().expect("warmup");
    assert_eq!(warm.len(), 2, "{warm:?}");
    for w in warm {
        let starts = w["requests"].as_array().expect("requests");
        assert_eq!(starts.len(), 8);
        assert!(starts
            .iter()
            .all(|n| n.as_u64().is_some_and(|n| (3..=8).contains(&n))));
    }
    // The metrics URL was scraped at every point of both sides, and said why it gave nothing.
    let sm = v["server_metrics"].as_array().expect("server_metrics");
    assert_eq!(sm.len(), 2, "{sm:?}");
    for m in sm {
        assert_eq!(
            (m["points"].as_u64(), m["unavailable"].as_u64()),
            (Some(8), Some(8)),
            "{m}"
        );
        let why = m["unavailable_reason"].as_str().unwrap_or("");
        assert!(why.contains("/metrics: HTTP 404"), "{m}");
    }
}

#[test]
fn a_text_prompt_that_does_not_tokenize_to_the_case_is_exit_2() {
    if !available() {
        return;
    }
    let dir = tempfile::tempdir().expect("tmp");
    let p = spec(dir.path(), 256, 256);
    // Special tokens decode to no text: their prompts cannot have 192 tokens.
    let text = std::fs::read_to_string(&p)
        .expect("spec")
        .replace("vocab = [259, 771]", "vocab = [0, 3]");
    std::fs::write(&p, text).expect("write");
    let out = kernelab()
        .arg("serve")
        .arg(&p)
        .arg("--samples")
        .arg(dir.path().join("s.jsonl"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("round 0: case 0: prompt 0: its text tokenizes to"),
        "{err}"
    );
    assert!(err.contains("the case has 192"), "{err}");
}
