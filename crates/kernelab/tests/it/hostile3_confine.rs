//! Hostile input, round 3 (issue 39): the agent's trust boundary. A repository whose git
//! configuration names programs (none runs when a result is recorded), a `.nsys-rep` under a
//! confined root (no `nsys` without permission; its cache under the root's state folder), an
//! exporter that leaves a daemon holding its output, links planted where records and outputs
//! are written, a confined run's paths through links, and the MCP server's own reads of large
//! or linked records.

use crate::{fixture, kernelab};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every path under `dir` with its bytes (links as their target), recursively.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let t = e.file_type().expect("type");
            if t.is_dir() {
                stack.push(p.clone());
                out.push((p, Vec::new()));
            } else if t.is_symlink() {
                let target = std::fs::read_link(&p).expect("link");
                out.push((p, target.as_os_str().as_encoded_bytes().to_vec()));
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn a_repository_whose_git_config_names_programs_runs_none_when_a_result_is_recorded() {
    let t = tempfile::tempdir().expect("tmp");
    let repo = t.path().join("repo");
    std::fs::create_dir(&repo).expect("repo");
    if git(&repo, &["init", "-q"]).is_none() {
        kernelab_testkit::skip(
            "git",
            "git is not installed (the test builds a repository with it)",
        );
        return;
    }
    let trace = repo.join("trace.json.gz");
    std::fs::copy(fixture("h200_pair/gdn_w4s3_run1.json.gz"), &trace).expect("copy");
    std::fs::write(repo.join("notes.txt"), "a\n").expect("write");
    git(&repo, &["add", "."]).expect("add");
    git(&repo, &["commit", "-qm", "x"]).expect("commit");
    let head = git(&repo, &["rev-parse", "HEAD"]).expect("head");
    // Every configuration that makes `git status`/`rev-parse` run a program, each touching a
    // marker outside the repository.
    let marker = t.path().join("ran");
    let evil = t.path().join("evil.sh");
    script(
        &evil,
        &format!("echo \"$0 $*\" >> '{}'\ncat", marker.display()),
    );
    let e = evil.display();
    let mut config = std::fs::OpenOptions::new()
        .append(true)
        .open(repo.join(".git/config"))
        .expect("config");
    write!(
        config,
        "[core]\n\tfsmonitor = {e}\n\thooksPath = {hooks}\n\tpager = {e}\n[diff]\n\texternal = {e}\n[alias]\n\tstatus = !{e}\n\trev-parse = !{e}\n[filter \"x\"]\n\tclean = {e}\n\tsmudge = {e}\n\tprocess = {e}\n",
        hooks = t.path().display()
    )
    .expect("write");
    std::fs::write(repo.join(".gitattributes"), "* filter=x\n").expect("attrs");
    // A changed file whose stat data moved: git would run the clean filter to compare it.
    std::fs::write(repo.join("notes.txt"), "b\n").expect("write");
    let out = kernelab()
        .current_dir(&repo)
        .args([
            "profile",
            "trace.json.gz",
            "--format",
            "json",
            "--record",
            "bundle",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !marker.exists(),
        "a program named by the repository ran: {:?}",
        std::fs::read_to_string(&marker)
    );
    let rec = std::fs::read_dir(repo.join("bundle"))
        .expect("bundle")
        .flatten()
        .next()
        .expect("a record");
    let v: Value = serde_json::from_slice(&std::fs::read(rec.path()).expect("read")).expect("json");
    assert_eq!(v["provenance"]["git"]["commit"], head.as_str(), "{v}");
    assert_eq!(v["provenance"]["git"]["dirty"], true, "notes.txt changed");
}

/// A stand-in `nsys` in `bin` that logs its calls to `calls`, then runs `extra` and copies a
/// real export to `--output`.
fn stand_in_nsys(bin: &Path, calls: &Path, extra: &str) {
    std::fs::create_dir_all(bin).expect("bin");
    script(
        &bin.join("nsys"),
        &format!(
            "echo called >> '{}'\n{extra}\nwhile [ $# -gt 0 ]; do case \"$1\" in --output) out=\"$2\"; shift 2;; *) shift;; esac; done\ncp '{}' \"$out\"",
            calls.display(),
            fixture("nsys-2024.5-a100-cloverleaf-cuda.sqlite").display()
        ),
    );
}

#[test]
fn a_nsys_report_under_a_confined_root_starts_no_program_without_permission() {
    let t = tempfile::tempdir().expect("tmp");
    let root = t.path().join("root");
    let home = t.path().join("home");
    std::fs::create_dir_all(&root).expect("root");
    std::fs::create_dir_all(&home).expect("home");
    std::fs::copy(
        fixture("nsys_rep_header_only.nsys-rep"),
        root.join("r.nsys-rep"),
    )
    .expect("copy");
    let (bin, calls) = (t.path().join("bin"), t.path().join("calls"));
    stand_in_nsys(&bin, &calls, "");
    let run = |allow: Option<&str>| {
        let mut c = kernelab();
        c.current_dir(&root)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env_remove("KERNELAB_NSYS")
            .env_remove("KERNELAB_CACHE_DIR")
            .env_remove("XDG_CACHE_HOME")
            .env("HOME", &home)
            .env("XDG_STATE_HOME", root.join(".kernelab/state"))
            .env("KERNELAB_CONFINE_ROOT", &root)
            .args(["profile", "--format", "json", "r.nsys-rep"])
            .timeout(Duration::from_secs(60));
        match allow {
            Some(v) => c.env("KERNELAB_ALLOW_RUN", v),
            None => c.env_remove("KERNELAB_ALLOW_RUN"),
        };
        c.output().expect("run")
    };
    for allow in [None, Some("0")] {
        let out = run(allow);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("r.nsys-rep")
                && err.contains("would run `nsys export`")
                && err.contains("without permission to run programs"),
            "{err}"
        );
        assert!(!calls.exists(), "nsys ran without permission");
    }
    let out = run(Some("1"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&calls)
            .expect("calls")
            .lines()
            .count(),
        1
    );
    let cache = root.join(".kernelab/state/kernelab/nsys");
    let cached: Vec<_> = std::fs::read_dir(&cache)
        .expect("cache")
        .flatten()
        .collect();
    assert_eq!(
        cached.len(),
        1,
        "the export alone, no temporary folder left"
    );
    assert!(
        snapshot(&home).is_empty(),
        "nothing written outside the root"
    );
}

#[test]
fn an_exporter_that_leaves_a_daemon_holding_its_output_does_not_hold_kernelab() {
    let t = tempfile::tempdir().expect("tmp");
    let report = t.path().join("r.nsys-rep");
    std::fs::copy(fixture("nsys_rep_header_only.nsys-rep"), &report).expect("copy");
    let (bin, calls) = (t.path().join("bin"), t.path().join("calls"));
    // The daemon inherits standard output and error and outlives the exporter by a minute.
    stand_in_nsys(&bin, &calls, "(sleep 60; echo late) &");
    let start = Instant::now();
    let out = kernelab()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .env_remove("KERNELAB_NSYS")
        .env("KERNELAB_CACHE_DIR", t.path().join("cache"))
        .args(["profile", "--format", "json"])
        .arg(&report)
        .timeout(Duration::from_secs(50))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    // A exporter that never ends is killed at the deadline, with its group.
    let report2 = t.path().join("r2.nsys-rep");
    let mut bytes = std::fs::read(&report).expect("read");
    bytes.extend_from_slice(b"different report");
    std::fs::write(&report2, bytes).expect("write");
    let slow = t.path().join("slow");
    std::fs::create_dir_all(&slow).expect("slow");
    script(&slow.join("nsys"), "sleep 120");
    let start = Instant::now();
    let out = kernelab()
        .env("PATH", format!("{}:/usr/bin:/bin", slow.display()))
        .env_remove("KERNELAB_NSYS")
        .env("KERNELAB_NSYS_TIMEOUT", "2")
        .env("KERNELAB_CACHE_DIR", t.path().join("cache"))
        .args(["profile", "--format", "json"])
        .arg(&report2)
        .timeout(Duration::from_secs(50))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did not export within 2 s"),
        "{}",
        stderr(&out)
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn records_and_outputs_are_never_written_through_planted_links() {
    let t = tempfile::tempdir().expect("tmp");
    let root = t.path().join("root");
    let outside = t.path().join("outside");
    std::fs::create_dir_all(root.join("bundle")).expect("bundle");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::write(outside.join("victim"), "keep").expect("victim");
    let trace = root.join("trace.json.gz");
    std::fs::copy(fixture("h200_pair/gdn_w4s3_run1.json.gz"), &trace).expect("copy");
    // The next record's name, and every name the old writer's temporary file could take, are
    // links to the victim.
    std::os::unix::fs::symlink(
        outside.join("victim"),
        root.join("bundle/0001-profile.json"),
    )
    .expect("ln");
    for pid in 0..64 {
        let _ = std::os::unix::fs::symlink(
            outside.join("victim"),
            root.join(format!("bundle/.record-{pid}-profile.tmp")),
        );
    }
    std::os::unix::fs::symlink(&outside, root.join("out_link")).expect("ln");
    let before = snapshot(&outside);
    let run = |args: &[&str]| {
        kernelab()
            .current_dir(&root)
            .env("KERNELAB_CONFINE_ROOT", &root)
            .args(args)
            .timeout(Duration::from_secs(60))
            .output()
            .expect("run")
    };
    let out = run(&[
        "profile",
        "trace.json.gz",
        "--format",
        "json",
        "--record",
        "bundle",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(root.join("bundle/0002-profile.json").is_file());
    // Through a folder that is a link out of the root: refused, naming the path.
    for args in [
        &["profile", "trace.json.gz", "--out", "out_link/p.json"][..],
        &["profile", "trace.json.gz", "--record", "out_link"][..],
        &["profile", "out_link/victim"][..],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("outside the folder this run is confined to"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    assert_eq!(
        snapshot(&outside),
        before,
        "nothing outside the root changed"
    );
}

/// A raw JSON-RPC session with `kernelab mcp`: sends each request, returns each answer.
fn mcp_session(root: &Path, requests: &[String]) -> Vec<Value> {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("kernelab"))
        .envs(kernelab_testkit::isolated_env())
        .args(["mcp", "--root"])
        .arg(root)
        .arg("--bundle")
        .arg("bundle")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kernelab mcp");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut answers = Vec::new();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    writeln!(stdin, "{init}").expect("write");
    let _ = lines.next();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .expect("w");
    for r in requests {
        writeln!(stdin, "{r}").expect("write");
        stdin.flush().expect("flush");
        let l = lines.next().expect("an answer").expect("read");
        answers.push(serde_json::from_str(&l).expect("json"));
    }
    drop(stdin);
    let _ = child.wait();
    answers
}

#[test]
fn the_mcp_servers_own_reads_are_bounded_and_stay_under_its_root() {
    let t = tempfile::tempdir().expect("tmp");
    let root = t.path().join("root");
    let outside = t.path().join("outside");
    std::fs::create_dir_all(root.join("bundle")).expect("bundle");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::write(outside.join("secret.json"), r#"{"secret": "SECRET"}"#).expect("secret");
    let trace = root.join("trace.json.gz");
    std::fs::copy(fixture("h200_pair/gdn_w4s3_run1.json.gz"), &trace).expect("copy");
    let out = kernelab()
        .current_dir(&root)
        .args([
            "profile",
            "trace.json.gz",
            "--format",
            "json",
            "--record",
            "bundle",
        ])
        .output()
        .expect("record");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A record of 40 MB (a JSON document padded with spaces), and links out of the root.
    let mut big = std::fs::read(root.join("bundle/0001-profile.json")).expect("read");
    big.extend(std::iter::repeat_n(b' ', 40 << 20));
    std::fs::write(root.join("bundle/0002-profile.json"), &big).expect("big");
    std::os::unix::fs::symlink(
        outside.join("secret.json"),
        root.join("bundle/0003-profile.json"),
    )
    .expect("ln");
    std::os::unix::fs::symlink(&outside, root.join("link")).expect("ln");
    let req = |id: u32, method: &str, params: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
    };
    let read = |id: u32, uri: &str| req(id, "resources/read", &format!(r#"{{"uri":"{uri}"}}"#));
    let answers = mcp_session(
        &root,
        &[
            req(1, "resources/list", "{}"),
            read(2, "kernelab://record/bundle/0002-profile.json"),
            read(3, "kernelab://record/bundle/0003-profile.json"),
            read(4, "kernelab://record/link/secret.json"),
            read(5, "kernelab://record/bundle/0001-profile.json"),
        ],
    );
    let listed = answers[0]["result"]["resources"].to_string();
    assert!(listed.contains("0001-profile.json"), "{listed}");
    assert!(
        listed.contains("more than a resource carries"),
        "the large record is listed, described as too large: {listed}"
    );
    assert!(
        !listed.contains("SECRET") && !listed.contains("0003"),
        "{listed}"
    );
    let big_err = answers[1]["error"]["message"].to_string();
    assert!(big_err.contains("larger than the limit"), "{}", answers[1]);
    for a in &answers[2..4] {
        let e = a["error"]["message"].to_string();
        assert!(
            e.contains("outside") && !a.to_string().contains("SECRET"),
            "{a}"
        );
    }
    assert!(
        answers[4]["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|s| s.contains("\"kind\": \"profile\"")),
        "{}",
        answers[4]
    );
}

#[test]
fn a_confined_run_starts_no_program_without_permission_whatever_it_is_asked() {
    let t = tempfile::tempdir().expect("tmp");
    let root = t.path().join("root");
    std::fs::create_dir_all(&root).expect("root");
    let marker = t.path().join("ran");
    let touch = format!("touch {}", marker.display());
    let out = kernelab()
        .current_dir(&root)
        .env("KERNELAB_CONFINE_ROOT", &root)
        .env("XDG_STATE_HOME", root.join(".state"))
        .env_remove("KERNELAB_ALLOW_RUN")
        .args([
            "ab",
            "--baseline",
            &touch,
            "--candidate",
            &touch,
            "--format",
            "json",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("would run `touch`")
            && stderr(&out).contains("without permission to run programs"),
        "{}",
        stderr(&out)
    );
    assert!(!marker.exists(), "the program ran");
    // The same command with permission runs.
    let out = kernelab()
        .current_dir(&root)
        .env("KERNELAB_CONFINE_ROOT", &root)
        .env("XDG_STATE_HOME", root.join(".state"))
        .env("KERNELAB_ALLOW_RUN", "1")
        .args([
            "ab",
            "--baseline",
            &touch,
            "--candidate",
            &touch,
            "--format",
            "json",
        ])
        .args([
            "--max-pairs",
            "4",
            "--min-pairs",
            "4",
            "--warmup",
            "0",
            "--aa-pairs",
            "0",
        ])
        .timeout(Duration::from_secs(120))
        .output()
        .expect("run");
    assert!(marker.exists(), "with permission it runs: {}", stderr(&out));
}

#[test]
fn a_150_mb_record_or_a_huge_label_is_listed_unread_within_2_gib_and_seconds() {
    let t = tempfile::tempdir().expect("tmp");
    let b = t.path().join("b");
    let out = kernelab()
        .current_dir(t.path())
        .args(["profile", "--format", "json", "--record", "b"])
        .arg(fixture("h200_pair/gdn_w4s3_run1.json.gz"))
        .output()
        .expect("record");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first = std::fs::read_dir(&b)
        .expect("b")
        .flatten()
        .next()
        .expect("a record");
    let mut rec: Value =
        serde_json::from_slice(&std::fs::read(first.path()).expect("read")).expect("json");
    // 150 MB in the label: a record over the cap; 10 kB: a label over its cap.
    rec["label"] = Value::String("x".repeat(150 << 20));
    std::fs::write(b.join("0002-profile.json"), rec.to_string()).expect("write");
    rec["label"] = Value::String("y".repeat(10_000));
    std::fs::write(b.join("0003-profile.json"), rec.to_string()).expect("write");
    let start = Instant::now();
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2097152; exec \"$0\" report b --format md")
        .arg(assert_cmd::cargo::cargo_bin("kernelab"))
        .envs(kernelab_testkit::isolated_env())
        .current_dir(t.path())
        .output()
        .expect("report");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.contains("0002-profile.json`: larger than 134217728 bytes"),
        "{md}"
    );
    assert!(
        md.contains("0003-profile.json`: \\`label\\`: 10000 bytes, longer than the 4096"),
        "{md}"
    );
    // A longer --label is refused before anything is recorded.
    let out = kernelab()
        .current_dir(t.path())
        .args(["profile", "--format", "json", "--record", "c", "--label"])
        .arg("z".repeat(5000))
        .arg(fixture("h200_pair/gdn_w4s3_run1.json.gz"))
        .output()
        .expect("label");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("a label may have at most 4096"),
        "{}",
        stderr(&out)
    );
    assert!(!t.path().join("c").exists());
}
