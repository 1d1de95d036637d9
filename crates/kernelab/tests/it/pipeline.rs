//! One command pipeline (issue 40): every caller gets the same documents. The MCP server's
//! structured result of each evidence tool that runs without a GPU equals the CLI's JSON for
//! the same arguments (`mcp.rs` covers profile, compare, check bitwise, code diff and report);
//! the emitter writes one Markdown for every command; a recorded document holds every row
//! whatever `--top` shows.

use super::{fixture, kernelab, root};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;

/// Copies `files` (fixture paths) into `dir` under their file names.
fn copy_into(dir: &Path, files: &[&str]) {
    for f in files {
        let name = Path::new(f).file_name().expect("name");
        std::fs::copy(fixture(f), dir.join(name)).expect("copy");
    }
}

#[test]
fn mcp_tools_give_the_clis_documents_for_every_cpu_command() {
    if !super::mcp::have_mcp() {
        return;
    }
    let t = tempfile::tempdir().expect("tmp");
    let dir = t.path();
    copy_into(
        dir,
        &[
            "ncu_recompute_metrics.csv",
            "code/recompute_w_u_fwd_kernel_w4s3.sass.txt",
            "tensor/a.npy",
            "tensor/a_copy.npy",
            "tensor/a_flip.npy",
            "tensor/a_perturbed.npy",
            "tensor/a_nonfinite.npy",
            "tensor/out_bf16.npy",
            "tensor/ref_f64.npy",
            "h200_ab/inproc_w4s3_w8s2.csv",
            "h200_ab/ab_proc_w4s3_w8s2.jsonl",
            "h200_ceilings/ceilings.json",
        ],
    );
    std::fs::copy(
        root().join("examples/roofline/work.toml"),
        dir.join("work.toml"),
    )
    .expect("work model");
    let sass = "recompute_w_u_fwd_kernel_w4s3.sass.txt";
    let sizes = ["B=1", "T=8192", "H=32", "HV=32", "K=128", "V=128"];
    // (tool, its arguments, the CLI's arguments)
    let calls: Vec<(&str, Value, Vec<&str>)> = vec![
        (
            "metrics",
            json!({"files": ["ncu_recompute_metrics.csv"]}),
            vec!["metrics", "ncu_recompute_metrics.csv"],
        ),
        (
            "code_show",
            json!({"files": [sass]}),
            vec!["code", "show", sass],
        ),
        (
            "check_close",
            json!({"a": "a_perturbed.npy", "b": "a.npy"}),
            vec!["check", "close", "a_perturbed.npy", "a.npy"],
        ),
        (
            "check_oracle",
            json!({"a": "out_bf16.npy", "b": "ref_f64.npy"}),
            vec!["check", "oracle", "out_bf16.npy", "ref_f64.npy"],
        ),
        (
            "check_finite",
            json!({"files": ["a_nonfinite.npy", "a.npy"]}),
            vec!["check", "finite", "a_nonfinite.npy", "a.npy"],
        ),
        (
            "check_repeat",
            json!({"files": ["a.npy", "a_copy.npy", "a_flip.npy"]}),
            vec!["check", "repeat", "a.npy", "a_copy.npy", "a_flip.npy"],
        ),
        (
            "ab_analyze",
            json!({"file": "inproc_w4s3_w8s2.csv", "metric": "median_us"}),
            vec![
                "ab",
                "analyze",
                "inproc_w4s3_w8s2.csv",
                "--metric",
                "median_us",
            ],
        ),
        (
            "ab_analyze",
            json!({"file": "ab_proc_w4s3_w8s2.jsonl"}),
            vec!["ab", "analyze", "ab_proc_w4s3_w8s2.jsonl"],
        ),
        (
            "ceilings",
            json!({"datasheet": "H200"}),
            vec!["ceilings", "--datasheet", "H200"],
        ),
        (
            "roofline",
            json!({"inputs": ["ncu_recompute_metrics.csv"], "work": "work.toml",
                   "ceilings": "ceilings.json", "sizes": sizes}),
            [
                vec![
                    "roofline",
                    "ncu_recompute_metrics.csv",
                    "--work",
                    "work.toml",
                    "--ceilings",
                    "ceilings.json",
                ],
                sizes.iter().flat_map(|s| ["--size", *s]).collect(),
            ]
            .concat(),
        ),
    ];
    let steps: Vec<Value> = calls
        .iter()
        .map(|(tool, args, _)| json!({"op": "call", "tool": tool, "args": args}))
        .collect();
    let results = super::mcp::drive(dir, &[], Value::Array(steps));
    assert_eq!(results.len(), calls.len());
    for ((tool, _, argv), r) in calls.iter().zip(&results) {
        let want = super::mcp::cli(dir, &[argv.as_slice(), &["--format", "json"]].concat());
        assert_eq!(super::mcp::structured(r), &want, "{tool} {argv:?}");
        assert!(want["kind"].as_str().is_some(), "{tool}: a document");
    }
}

/// The text of `kernelab ARGS --format md`, which must exit with `code`.
fn markdown(args: &[&str], code: i32) -> String {
    let out = kernelab()
        .args(args)
        .args(["--format", "md"])
        .current_dir(root().join("tests/fixtures"))
        .output()
        .expect("kernelab");
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn every_commands_markdown_is_markdown_not_a_fenced_terminal_table() {
    for (args, code) in [
        (&["ab", "analyze", "h200_ab/ab_proc_w4s3_w8s2.jsonl"][..], 0),
        (&["metrics", "ncu_recompute_metrics.csv"][..], 0),
        (
            &["check", "bitwise", "tensor/a.npy", "tensor/a_copy.npy"][..],
            0,
        ),
        (&["ceilings", "--datasheet", "H200"][..], 0),
        (&["profile", "h200_pair/gdn_w4s3_run1.json.gz"][..], 0),
    ] {
        let md = markdown(args, code);
        assert!(!md.starts_with("```"), "{args:?} is fenced:\n{md}");
        assert!(
            md.lines()
                .any(|l| l.starts_with("#") || l.starts_with("| ")),
            "{args:?} has no Markdown heading or table:\n{md}"
        );
        assert!(!md.contains('━'), "{args:?} draws terminal rules:\n{md}");
    }
}

#[test]
fn a_recorded_profile_holds_every_row_while_the_view_shows_top() {
    let t = tempfile::tempdir().expect("tmp");
    let bundle = t.path().join("bundle");
    let trace = fixture("h200_pair/gdn_w4s3_run1.json.gz");
    let out = kernelab()
        .arg("--record")
        .arg(&bundle)
        .arg("profile")
        .arg(&trace)
        .args(["--top", "2", "--group", "none", "--format", "json"])
        .env("XDG_STATE_HOME", t.path().join(".state"))
        .output()
        .expect("kernelab");
    assert_eq!(out.status.code(), Some(0));
    let shown: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(shown["kernels"].as_array().map(Vec::len), Some(2));
    assert!(shown["other"].is_object(), "the view's other row");
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(bundle.join("0001-profile.json")).expect("record"),
    )
    .expect("record json");
    let all = record["result"]["kernels"].as_array().map(Vec::len);
    assert!(all > Some(2), "the record holds every row: {all:?}");
    assert!(
        record["result"]["other"].is_null(),
        "no other row when all rows are kept"
    );
    // The same rows as a run without --top, whose document has every row.
    let whole = Command::new(assert_cmd::cargo::cargo_bin("kernelab"))
        .envs(kernelab_testkit::isolated_env())
        .arg("profile")
        .arg(&trace)
        .args(["--group", "none", "--format", "json"])
        .output()
        .expect("kernelab");
    let whole: Value = serde_json::from_slice(&whole.stdout).expect("json");
    assert_eq!(record["result"]["kernels"], whole["kernels"]);
}
