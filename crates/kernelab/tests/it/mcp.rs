//! `kernelab mcp` driven by a real MCP client: the official Python SDK (`mcp` from PyPI, which
//! .ci/run installs; skipped with a message where it is not importable) runs
//! `tests/it/mcp_client.py`, which lists the tools and calls them over stdio. Each structured
//! result is compared with the CLI's own `--format json` document for the same arguments
//! (written here by hand, not by the server's argv builder); refusals must name the argument;
//! a cancelled long run leaves no process behind and resumes. The raw JSON-RPC test needs no
//! Python.

use super::fixture;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn exe() -> PathBuf {
    assert_cmd::cargo::cargo_bin("kernelab")
}

/// Whether the Python SDK is importable; prints why a test skips when not.
pub(super) fn have_mcp() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import mcp, anyio"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        kernelab_testkit::skip(
            "mcp-sdk",
            "the MCP Python SDK is not importable (python3 -m pip install 'mcp==2.3.0'; .ci/run installs it)",
        );
    }
    ok
}

/// A root with copies of the repository's fixtures: profiles, tensors, disassembly.
fn make_root() -> tempfile::TempDir {
    let t = tempfile::tempdir().expect("tmp");
    let r = t.path();
    for (dir, files) in [
        (
            "profiles",
            &[
                "h200_pair/gdn_w4s3_run1.json.gz",
                "h200_pair/gdn_w4s3_run2.json.gz",
                "h200_pair/gdn_w8s2_run1.json.gz",
                "h200_pair/gdn_w8s2_run2.json.gz",
            ][..],
        ),
        (
            "tensor",
            &["tensor/a.npy", "tensor/a_copy.npy", "tensor/a_flip.npy"][..],
        ),
        (
            "code",
            &[
                "code/recompute_w_u_fwd_kernel_w4s3.sass.txt",
                "code/recompute_w_u_fwd_kernel_w8s2.sass.txt",
            ][..],
        ),
    ] {
        std::fs::create_dir_all(r.join(dir)).expect("mkdir");
        for f in files {
            let name = Path::new(f).file_name().expect("name");
            std::fs::copy(fixture(f), r.join(dir).join(name)).expect("copy");
        }
    }
    t
}

/// Runs the client with `steps` against `kernelab mcp --root ROOT EXTRA...`; one result per
/// step (after the first, the initialize result).
pub(super) fn drive(root: &Path, extra: &[&str], steps: Value) -> Vec<Value> {
    let state = root.join(".state");
    let mut args = vec![
        "mcp".to_string(),
        "--root".into(),
        root.display().to_string(),
        "--state".into(),
        state.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let errlog = root.join(".mcp-stderr.log");
    let plan = json!({
        "command": exe(), "args": args, "cwd": root, "errlog": errlog, "steps": steps,
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/mcp_client.py");
    let mut child = Command::new("python3")
        .envs(kernelab_testkit::isolated_env())
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(plan.to_string().as_bytes())
        .expect("plan");
    let out = child.wait_with_output().expect("client");
    assert!(
        out.status.success(),
        "client failed: {}\nserver: {}",
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(&errlog).unwrap_or_default()
    );
    let v: Vec<Value> = serde_json::from_slice(&out.stdout).expect("client JSON");
    v[1..].to_vec()
}

/// The CLI's JSON document for `args`, run in `root` (its own runs folder).
pub(super) fn cli(root: &Path, args: &[&str]) -> Value {
    let out = Command::new(exe())
        .envs(kernelab_testkit::isolated_env())
        .args(args)
        .current_dir(root)
        .env("XDG_STATE_HOME", root.join(".state"))
        .env_remove("KERNELAB_BUNDLE")
        .output()
        .expect("kernelab");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("CLI JSON")
}

pub(super) fn structured(r: &Value) -> &Value {
    assert!(
        r.get("error").is_none(),
        "tool call failed: {}",
        serde_json::to_string_pretty(r).unwrap_or_default()
    );
    &r["structuredContent"]
}

fn text(r: &Value) -> String {
    r["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn an_mcp_client_gets_the_clis_documents_and_builds_a_bundle() {
    if !have_mcp() {
        return;
    }
    let t = make_root();
    let root = t.path();
    let w4 = [
        "profiles/gdn_w4s3_run1.json.gz",
        "profiles/gdn_w4s3_run2.json.gz",
    ];
    let w8 = [
        "profiles/gdn_w8s2_run1.json.gz",
        "profiles/gdn_w8s2_run2.json.gz",
    ];
    let sass = |c: &str| format!("code/recompute_w_u_fwd_kernel_{c}.sass.txt");
    let steps = json!([
        {"op": "list_tools"},
        {"op": "call", "tool": "profile", "args": {"files": [w4[0]], "record": "bundle", "label": "w8s2"}},
        {"op": "call", "tool": "compare", "args": {"base": w4, "cand": w8, "record": "bundle", "label": "w8s2"}},
        {"op": "call", "tool": "check_bitwise", "args": {"a": "tensor/a.npy", "b": "tensor/a_copy.npy", "record": "bundle", "label": "w8s2"}},
        {"op": "call", "tool": "check_bitwise", "args": {"a": "tensor/a.npy", "b": "tensor/a_flip.npy", "first": 3}},
        {"op": "call", "tool": "code_diff", "args": {"base": sass("w4s3"), "cand": sass("w8s2"), "record": "bundle", "label": "w8s2"}},
        {"op": "call", "tool": "report", "args": {"dir": "bundle"}},
        {"op": "call", "tool": "report", "args": {"dir": "bundle", "format": "md", "title": "w8s2"}},
        {"op": "call", "tool": "report", "args": {"dir": "bundle", "format": "md", "out": "pr.md"}},
        {"op": "list_resources"},
        {"op": "read_resource", "uri": "kernelab://record/bundle/0001-profile.json"},
        {"op": "read_resource", "uri": format!("kernelab://schema/v{}/profile.document.json", kernelab_model::SCHEMA_VERSION)},
        {"op": "list_resource_templates"},
        {"op": "list_prompts"},
        {"op": "get_prompt", "name": "evidence_order", "args": {"change": "w8s2", "bundle": "bundle"}},
    ]);
    let r = drive(root, &[], steps);
    // The tools: one per evidence command, schemas from the CLI's definition.
    let tools = r[0]["tools"].as_array().expect("tools");
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    for want in [
        "profile",
        "compare",
        "metrics",
        "code_show",
        "code_diff",
        "code_matrix",
        "check_bitwise",
        "check_close",
        "check_oracle",
        "check_finite",
        "check_repeat",
        "check_sweep",
        "ab_analyze",
        "ab_run",
        "kernel_run",
        "kernel_dry_run",
        "counters",
        "ceilings",
        "roofline",
        "impact",
        "serve",
        "serve_analyze",
        "sweep",
        "export",
        "report",
        "report_check",
        "runs",
    ] {
        assert!(names.contains(&want), "no tool {want}: {names:?}");
    }
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object", "{}", tool["name"]);
        assert_eq!(tool["outputSchema"]["type"], "object", "{}", tool["name"]);
    }
    let tool = |n: &str| tools.iter().find(|t| t["name"] == n).expect("tool");
    let profile = &tool("profile")["inputSchema"]["properties"];
    assert_eq!(profile["group"]["enum"], json!(["none", "family"]));
    assert_eq!(profile["by_phase"]["type"], "boolean");
    assert_eq!(profile["files"]["type"], "array");
    assert_eq!(profile["top"]["type"], "integer");
    assert!(profile.get("format").is_none(), "the server sets --format");
    assert_eq!(tool("profile")["inputSchema"]["required"], json!(["files"]));
    for run in ["ab_run", "kernel_run", "serve", "counters", "sweep"] {
        let d = tool(run)["description"].as_str().unwrap_or("");
        assert!(d.starts_with("UNAVAILABLE: "), "{run}: {d}");
    }
    assert!(!tool("ab_analyze")["description"]
        .as_str()
        .unwrap_or("")
        .contains("UNAVAILABLE"));

    // Each structured result is the CLI's document for the same arguments.
    let mut want = cli(root, &["profile", w4[0], "--format", "json"]);
    assert_eq!(structured(&r[1]), &want, "profile");
    assert!(text(&r[1]).contains("% of kernel time"), "{}", text(&r[1]));
    want = cli(
        root,
        &[
            "compare", "--base", w4[0], w4[1], "--cand", w8[0], w8[1], "--format", "json",
        ],
    );
    assert_eq!(structured(&r[2]), &want, "compare");
    want = cli(
        root,
        &[
            "check",
            "bitwise",
            "tensor/a.npy",
            "tensor/a_copy.npy",
            "--format",
            "json",
        ],
    );
    assert_eq!(structured(&r[3]), &want, "check bitwise");
    assert_eq!(r[3]["isError"], false);
    want = cli(
        root,
        &[
            "check",
            "bitwise",
            "tensor/a.npy",
            "tensor/a_flip.npy",
            "--first",
            "3",
            "--format",
            "json",
        ],
    );
    assert_eq!(structured(&r[4]), &want, "failing gate");
    assert_eq!(r[4]["structuredContent"]["pass"], false);
    assert!(text(&r[4]).contains("a gate failed"), "{}", text(&r[4]));
    want = cli(
        root,
        &[
            "code",
            "diff",
            &sass("w4s3"),
            &sass("w8s2"),
            "--format",
            "json",
        ],
    );
    assert_eq!(structured(&r[5]), &want, "code diff");
    // The bundle the calls recorded, and its report.
    want = cli(root, &["report", "bundle", "--format", "json"]);
    assert_eq!(structured(&r[6]), &want, "report");
    assert_eq!(want["records"].as_array().map(Vec::len), Some(4));
    let md = cli_text(
        root,
        &["report", "bundle", "--format", "md", "--title", "w8s2"],
    );
    assert!(
        text(&r[7]).contains(md.trim()),
        "report md: {}",
        text(&r[7])
    );
    let titled = cli(
        root,
        &["report", "bundle", "--format", "json", "--title", "w8s2"],
    );
    assert_eq!(structured(&r[7]), &titled, "report md's JSON summary");
    let pr = std::fs::read_to_string(root.join("pr.md")).expect("pr.md written");
    assert!(pr.contains("w8s2"), "{pr}");
    assert!(text(&r[8]).contains("written to"), "{}", text(&r[8]));
    // Resources: the bundle's records, the schemas; the prompt walks the evidence order.
    let res = r[9]["resources"].as_array().expect("resources");
    let uris: Vec<&str> = res.iter().filter_map(|x| x["uri"].as_str()).collect();
    let schema = format!(
        "kernelab://schema/v{}/code_diff.document.json",
        kernelab_model::SCHEMA_VERSION
    );
    for u in [
        "kernelab://record/bundle/0001-profile.json",
        "kernelab://record/bundle/0004-code_diff.json",
        schema.as_str(),
    ] {
        assert!(uris.contains(&u), "{u} not in {uris:?}");
    }
    let record: Value = serde_json::from_str(r[10]["contents"][0]["text"].as_str().expect("text"))
        .expect("record JSON");
    assert_eq!(record["kind"], "profile");
    assert_eq!(record["label"], "w8s2");
    let schema: Value = serde_json::from_str(r[11]["contents"][0]["text"].as_str().expect("text"))
        .expect("schema JSON");
    assert_eq!(schema["properties"]["kind"]["const"], "profile");
    assert!(r[12]["templates"][0]["uriTemplate"]
        .as_str()
        .is_some_and(|u| u.starts_with("kernelab://record/")));
    assert_eq!(r[13]["prompts"][0]["name"], "evidence_order");
    let prompt = r[14]["messages"][0]["content"]["text"]
        .as_str()
        .expect("prompt");
    let order = [
        "`profile`",
        "`check_bitwise`",
        "`code_diff`",
        "`kernel_run`",
        "`impact`",
        "`serve`",
        "`report`",
    ];
    let at: Vec<usize> = order
        .iter()
        .map(|w| {
            prompt
                .find(w)
                .unwrap_or_else(|| panic!("{w} not in the prompt"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "evidence order: {at:?}");
    assert!(prompt.contains("label: w8s2"), "{prompt}");
}

fn cli_text(root: &Path, args: &[&str]) -> String {
    let out = Command::new(exe())
        .envs(kernelab_testkit::isolated_env())
        .args(args)
        .current_dir(root)
        .output()
        .expect("kernelab");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn error(r: &Value) -> (i64, String, Value) {
    let e = &r["error"];
    (
        e["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("not an MCP error: {r}")),
        e["message"].as_str().unwrap_or("").to_string(),
        e["data"]["argument"].clone(),
    )
}

#[test]
fn refusals_name_the_argument_and_the_server_goes_on() {
    if !have_mcp() {
        return;
    }
    let t = make_root();
    let root = t.path();
    let outside = tempfile::tempdir().expect("outside");
    std::fs::copy(fixture("tensor/a.npy"), outside.path().join("a.npy")).expect("copy");
    std::os::unix::fs::symlink(outside.path(), root.join("link")).expect("symlink");
    std::fs::write(root.join("taken.json"), "keep me\n").expect("write");
    let out_abs = outside.path().join("x.json").display().to_string();
    let steps = json!([
        {"op": "call", "tool": "check_bitwise", "args": {"a": "../a.npy", "b": "tensor/a.npy"}},
        {"op": "call", "tool": "check_bitwise", "args": {"a": "link/a.npy", "b": "tensor/a.npy"}},
        {"op": "call", "tool": "check_bitwise", "args": {"a": "tensor/a.npy", "b": "tensor/a.npy", "out": out_abs}},
        {"op": "call", "tool": "profile", "args": {"files": ["profiles/gdn_w4s3_run1.json.gz"], "record": "/tmp/elsewhere"}},
        {"op": "call", "tool": "check_bitwise", "args": {"a": "tensor/a.npy", "b": "tensor/a.npy", "first": "ten"}},
        {"op": "call", "tool": "check_bitwise", "args": {"a": 3, "b": "tensor/a.npy"}},
        {"op": "call", "tool": "profile", "args": {"files": ["profiles/gdn_w4s3_run1.json.gz"], "group": "everything"}},
        {"op": "call", "tool": "profile", "args": {"files": ["profiles/gdn_w4s3_run1.json.gz"], "frobnicate": true}},
        {"op": "call", "tool": "check_bitwise", "args": {"b": "tensor/a.npy"}},
        {"op": "call", "tool": "check_close", "args": {"a": "tensor/a.npy", "b": "tensor/a.npy", "ulp": 1, "rtol": 0.1}},
        {"op": "call", "tool": "no_such_tool", "args": {}},
        {"op": "call", "tool": "ab_run", "args": {"baseline": "true", "candidate": "true"}},
        {"op": "call", "tool": "ceilings", "args": {}},
        {"op": "call", "tool": "ceilings", "args": {"datasheet": "NVIDIA H200"}},
        {"op": "call", "tool": "check_bitwise", "args": {"a": "tensor/a.npy", "b": "tensor/a.npy", "out": "taken.json"}},
        {"op": "call", "tool": "check_bitwise", "args": {"a": "tensor/missing.npy", "b": "tensor/a.npy"}},
        {"op": "call", "tool": "check_bitwise", "args": {"a": "tensor/a.npy", "b": "tensor/a_copy.npy"}},
    ]);
    let r = drive(root, &[], steps);
    for (i, arg) in [(0, "a"), (1, "a"), (2, "out"), (3, "record")] {
        let (code, msg, argument) = error(&r[i]);
        assert_eq!(code, -32602, "{msg}");
        assert_eq!(argument, arg, "{msg}");
        assert!(msg.contains("outside the root"), "{msg}");
    }
    assert!(!outside.path().join("x.json").exists());
    assert!(!Path::new("/tmp/elsewhere").exists());
    for (i, arg, says) in [
        (4, "first", "expected an integer"),
        (5, "a", "expected a path"),
        (6, "group", "is not one of none, family"),
        (7, "frobnicate", "unknown argument"),
        (8, "a", "is required"),
        (9, "rtol", "cannot be used with"),
    ] {
        let (code, msg, argument) = error(&r[i]);
        assert_eq!(code, -32602, "{msg}");
        assert_eq!(argument, arg, "step {i}: {msg}");
        assert!(msg.contains(says), "step {i}: {msg}");
    }
    let (code, msg, _) = error(&r[10]);
    assert_eq!(code, -32602);
    assert!(msg.contains("unknown tool `no_such_tool`"), "{msg}");
    // Tools that start programs or use the GPU are refused without --allow-run.
    for i in [11, 12] {
        assert_eq!(r[i]["isError"], true, "{}", r[i]);
        assert!(text(&r[i]).contains("--allow-run"), "{}", text(&r[i]));
    }
    assert_eq!(
        structured(&r[13])["kind"],
        "ceilings",
        "a datasheet runs nothing"
    );
    // The CLI's own refusal to replace a file it did not write comes back as a tool error.
    assert_eq!(r[14]["isError"], true);
    assert!(text(&r[14]).contains("already exists"), "{}", text(&r[14]));
    assert_eq!(
        std::fs::read_to_string(root.join("taken.json")).expect("kept"),
        "keep me\n"
    );
    assert_eq!(r[15]["isError"], true);
    assert!(text(&r[15]).contains("missing.npy"), "{}", text(&r[15]));
    // After every refusal the server still answers.
    assert_eq!(structured(&r[16])["pass"], true);
}

/// Processes whose command line contains `marker`, besides this test's own.
fn processes_with(marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == std::process::id() {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        if stat
            .rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        {
            continue;
        }
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if cmd.contains(marker) {
            out.push(format!("{pid}: {cmd}"));
        }
    }
    out
}

#[test]
fn a_cancelled_ab_run_leaves_no_process_and_resumes() {
    if !have_mcp() {
        return;
    }
    let t = make_root();
    let root = t.path();
    let marker = format!("mcp-cancel-{}", std::process::id());
    // Each run sleeps 0.2 s through sh -c; the comment marks every process of the run.
    let cmd = format!("sleep 0.2 # {marker}");
    let args = json!({
        "baseline": cmd, "candidate": cmd, "shell": true, "samples": "ab.jsonl",
        "aa_pairs": 2, "min_pairs": 6, "max_pairs": 6, "fixed": true, "warmup": 0,
    });
    let steps = json!([
        {"op": "call_cancel", "tool": "ab_run", "args": args, "after_progress": 3, "settle": 1},
    ]);
    let r = drive(root, &["--allow-run"], steps);
    let p = r[0]["progress"].as_array().expect("progress");
    assert!(p.len() >= 3, "progress notifications: {p:?}");
    assert!(p.iter().all(|x| x["total"].as_f64().is_some()), "{p:?}");
    assert!(
        p.windows(2)
            .all(|w| w[0]["progress"].as_f64() < w[1]["progress"].as_f64()),
        "progress increases: {p:?}"
    );
    assert!(
        p[0]["message"].as_str().unwrap_or("").contains("pair"),
        "{p:?}"
    );
    assert!(
        r[0].get("finished").is_none(),
        "the call was cancelled: {}",
        r[0]
    );
    // Nothing of the run is left: no shell, no sleep, no kernelab ab.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut left = processes_with(&marker);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
        left = processes_with(&marker);
    }
    assert!(left.is_empty(), "processes left behind: {left:#?}");
    let samples = std::fs::read_to_string(root.join("ab.jsonl")).expect("samples kept");
    let lines = samples.lines().count();
    assert!(lines >= 3, "samples: {samples}");
    // The same tool with `resume` goes on from the samples and finishes.
    let steps = json!([
        {"op": "call", "tool": "ab_run", "args": {"resume": "ab.jsonl", "fixed": true, "min_pairs": 6, "max_pairs": 6, "aa_pairs": 2}},
        {"op": "call", "tool": "runs", "args": {}},
    ]);
    let r = drive(root, &["--allow-run"], steps);
    let doc = structured(&r[0]);
    assert_eq!(doc["kind"], "ab");
    assert_eq!(doc["analyses"][0]["analysis"]["pairs"], 6, "{doc}");
    let after = std::fs::read_to_string(root.join("ab.jsonl")).expect("samples");
    assert!(
        after.starts_with(&samples[..samples.rfind('\n').unwrap_or(0)]),
        "appended, not rewritten"
    );
    let runs = structured(&r[1]);
    assert_eq!(runs["kind"], "runs");
    assert!(
        runs["runs"].as_array().is_some_and(|a| !a.is_empty()),
        "{runs}"
    );
    assert!(processes_with(&marker).is_empty());
}

#[test]
fn malformed_json_rpc_gets_errors_and_the_server_goes_on() {
    let t = make_root();
    let mut child = Command::new(exe())
        .envs(kernelab_testkit::isolated_env())
        .args(["mcp", "--root"])
        .arg(t.path())
        .arg("--state")
        .arg(t.path().join(".state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kernelab mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut send = |s: &str| {
        stdin.write_all(s.as_bytes()).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    };
    let mut next = || -> Value {
        let l = lines.next().expect("a line").expect("read");
        serde_json::from_str(&l).unwrap_or_else(|e| panic!("{l}: {e}"))
    };
    send("{this is not json");
    let e = next();
    assert_eq!(e["error"]["code"], -32700, "{e}");
    send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    let init = next();
    assert_eq!(init["id"], 1);
    assert_eq!(init["result"]["serverInfo"]["name"], "kernelab");
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"profile","arguments":"files"}}"#,
    );
    let e = next();
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(2), json!(-32602)),
        "{e}"
    );
    assert_eq!(e["error"]["data"]["argument"], "arguments");
    send(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"check_finite","arguments":{"files":[1,2]}}}"#,
    );
    let e = next();
    assert_eq!(e["id"], 3);
    assert_eq!(e["error"]["data"]["argument"], "files", "{e}");
    send(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"profile","arguments":{"files":["profiles/gdn_w4s3_run1.json.gz"]}}}"#,
    );
    let ok = next();
    assert_eq!(ok["id"], 4);
    assert_eq!(ok["result"]["structuredContent"]["kind"], "profile", "{ok}");
    drop(stdin);
    let status = child.wait().expect("exits");
    assert!(status.success(), "{status:?}");
}
