//! Hostile input, round 3 (#39), slice B: the audit of a note, the renderers and the figures
//! they show. A note of 200,000 numbers is audited in linear time; control characters from
//! inputs never reach the terminal raw; absurd ratios and changes are bounded or unavailable;
//! launch figures no part can hold are unavailable with a note; an old record with repeated
//! config names keeps every config through `kernelab record`.

use super::{fixture, kernelab};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// A bundle holding the profile of the H200 request under the label `gdn`.
fn profile_bundle(dir: &Path) -> std::path::PathBuf {
    let b = dir.join("bundle");
    let out = kernelab()
        .arg("profile")
        .arg(fixture("h200_pair/gdn_w4s3_run1.json.gz"))
        .args(["--label", "gdn", "--record"])
        .arg(&b)
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    b
}

/// 200,000 numbers in every shape the audit reads: 50,000 on one line, 50,000 after one
/// arrow, 50,000 cells of one table row and 50,000 lines; then one wrong figure on the last
/// line. Each quotes a figure of the bundle (the request's kernel totals). Before: the line,
/// the arrow and the row were quadratic (a row of 5,000 cells alone took over a minute).
#[test]
fn a_note_of_200000_numbers_is_checked_in_linear_time() {
    let t = tempfile::tempdir().expect("tempdir");
    let b = profile_bundle(t.path());
    let n = 50_000;
    let mut note = String::new();
    note += "gdn ";
    note += &vec!["791.003 µs"; n].join(" ");
    note += "\n\ngdn 1.0 → 2.0 ms ";
    note += &(0..n).map(|i| i.to_string()).collect::<Vec<_>>().join(" ");
    note += "\n\n| kernel | total |\n|---|---|\n| gdn | ";
    note += &vec!["670.238 µs"; n].join(" | ");
    note += " |\n\n";
    for _ in 0..n {
        note += "gdn took 495.775 µs\n";
    }
    note += "gdn took 123.456 µs\n";
    let lines = note.lines().count();
    let path = t.path().join("note.md");
    std::fs::write(&path, &note).expect("write");
    let start = Instant::now();
    let out = kernelab()
        .args(["report", "check"])
        .arg(&path)
        .arg("--bundle")
        .arg(&b)
        .args(["--format", "json"])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs");
    let took = start.elapsed();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        v["checked"].as_u64().expect("checked") >= 150_001,
        "{}",
        v["checked"]
    );
    let wrong: Vec<(u64, &str)> = v["mismatches"]
        .as_array()
        .expect("mismatches")
        .iter()
        .map(|m| {
            (
                m["line"].as_u64().unwrap_or(0),
                m["quoted"].as_str().unwrap_or(""),
            )
        })
        .collect();
    // The planted figure on the last line is next to the bundle's; the arrow's own
    // `1.0 → 2.0 ms` is no figure of the bundle at all: not backed, listed, not an error.
    assert_eq!(wrong, [(lines as u64, "123.456 µs")], "{wrong:?}");
    let unbacked: Vec<(u64, &str)> = v["unbacked"]
        .as_array()
        .expect("unbacked")
        .iter()
        .map(|m| {
            (
                m["line"].as_u64().unwrap_or(0),
                m["quoted"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(unbacked, [(3, "1.0"), (3, "2.0 ms")], "{unbacked:?}");
}

/// A minimal Kineto trace of one kernel named `name` lasting `dur_us`.
fn kineto(dir: &Path, file: &str, name: &str, dur_us: f64) -> std::path::PathBuf {
    let p = dir.join(file);
    let doc = serde_json::json!({"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": name, "ts": 1, "dur": dur_us, "pid": 0, "tid": 7}
    ]});
    std::fs::write(&p, doc.to_string()).expect("write");
    p
}

const HOSTILE: &str = "evil\u{1b}[2J\u{1b}]0;pwned\u{7}|x\ny\u{7f}\u{9b}31m";

/// Control characters in a kernel name (an ESC sequence that clears the screen, an OSC title,
/// BEL, DEL, a C1 CSI) are shown as escapes in the terminal, Markdown and HTML; a `|` or a
/// newline cannot break a Markdown table; JSON keeps the exact name. Before: printed raw.
#[test]
fn control_characters_from_inputs_are_escaped_in_every_renderer() {
    let t = tempfile::tempdir().expect("tempdir");
    let p = kineto(t.path(), "trace.json", HOSTILE, 2.0);
    let run = |format: &str| {
        let out = kernelab()
            .args(["profile", "--format", format])
            .arg(&p)
            .output()
            .expect("runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let raw = |s: &str| s.chars().any(|c| c.is_control() && c != '\n');
    let table = run("table");
    assert!(!raw(&table), "{table:?}");
    assert!(
        table.contains(r"evil\x1b[2J\x1b]0;pwned\x07|x\x0ay\x7f\u{9b}31m"),
        "{table}"
    );
    let md = run("md");
    assert!(!raw(&md), "{md:?}");
    assert!(
        md.contains(r"evil\\x1b[2J\\x1b]0;pwned\\x07\|x y\\x7f\\u{9b}31m"),
        "{md}"
    );
    // Every table row naming the kernel has as many cell borders (unescaped `|`) as its
    // table's separator line: the name's `|` and newline add no column and no row.
    let borders = |l: &str| {
        let b = l.as_bytes();
        (0..b.len())
            .filter(|&i| b[i] == b'|' && (i == 0 || b[i - 1] != b'\\'))
            .count()
    };
    let mut separator = None;
    let mut rows = 0;
    for l in md.lines() {
        if l.starts_with("|---") {
            separator = Some(borders(l));
        } else if l.starts_with('|') && l.contains("evil") {
            assert_eq!(Some(borders(l)), separator, "{l}");
            rows += 1;
        }
    }
    assert!(rows > 0, "{md}");
    let json: Value = serde_json::from_str(&run("json")).expect("json");
    assert_eq!(json["kernels"][0]["name"], HOSTILE);
    // The report of a bundle: Markdown and HTML.
    let b = t.path().join("b");
    let out = kernelab()
        .arg("profile")
        .arg(&p)
        .args(["--label", "x", "--record"])
        .arg(&b)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    for format in ["md", "html"] {
        let out = kernelab()
            .arg("report")
            .arg(&b)
            .args(["--format", format])
            .output()
            .expect("runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).expect("utf-8");
        assert!(!raw(&text), "{format}: {text:?}");
        assert!(text.contains("x1b[2J"), "{format}");
    }
}

/// The longest run of digits in `s`.
fn longest_digits(s: &str) -> usize {
    s.split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0)
}

/// An A/B run whose ratio is 1e308 (a baseline of 1e-300): the ratio and its interval in
/// scientific notation, the change too (`+1.01e310%`, not `+inf%`), in the terminal, the
/// report and the pull-request body. Before: `+inf%` and a 310-digit ratio.
#[test]
fn a_ratio_of_1e308_is_bounded_in_every_output() {
    let t = tempfile::tempdir().expect("tempdir");
    let csv = t.path().join("huge.csv");
    let mut text = "a,b,order\n".to_string();
    for i in 0..20 {
        let order = if i % 2 == 0 { "AB" } else { "BA" };
        text += &format!("1e-300,{},{order}\n", 1e8 * (1.0 + i as f64 * 0.001));
    }
    std::fs::write(&csv, text).expect("write");
    let b = t.path().join("b");
    let out = kernelab()
        .args(["ab", "analyze"])
        .arg(&csv)
        .args(["--label", "huge", "--record"])
        .arg(&b)
        .output()
        .expect("runs");
    assert!(
        out.status.code().is_some_and(|c| c < 2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let terminal = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(terminal.contains("1.0095e308"), "{terminal}");
    assert!(terminal.contains("+1.01e310%"), "{terminal}");
    // `report --format md` is the pull-request body.
    let report = |format: &str| {
        let out = kernelab()
            .arg("report")
            .arg(&b)
            .args(["--format", format])
            .output()
            .expect("runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let (body, html) = (report("md"), report("html"));
    assert!(body.contains("1.0095e308"), "{body}");
    for (what, s) in [("terminal", &terminal), ("PR body", &body), ("HTML", &html)] {
        assert!(!s.contains("inf%") && !s.contains("NaN"), "{what}: {s}");
        assert!(
            longest_digits(s) <= 20,
            "{what}: {} digits",
            longest_digits(s)
        );
    }
}

/// `compare` of a kernel of 1 ns against one of 8e13 ns (22 hours: within what Kineto can hold
/// and the plausible range of a duration, 0..=86400 s): the ratio and the change have a bounded
/// width.
#[test]
fn compare_of_an_absurd_ratio_has_bounded_figures() {
    let t = tempfile::tempdir().expect("tempdir");
    let base = kineto(t.path(), "base.json", "k", 0.001);
    let cand = kineto(t.path(), "cand.json", "k", 8.0e10);
    for format in ["table", "md"] {
        let out = kernelab()
            .args(["compare", "--format", format, "--base"])
            .arg(&base)
            .arg("--cand")
            .arg(&cand)
            .output()
            .expect("runs");
        assert!(
            out.status.code().is_some_and(|c| c < 2),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let s = String::from_utf8_lossy(&out.stdout);
        assert!(s.contains("8.0000e13"), "{s}");
        assert!(!s.contains("inf"), "{s}");
        assert!(longest_digits(&s) < 13, "{s}");
    }
}

/// The real JAX profile of MI300X (XPlane) with an uninitialised register count (2³¹ − 1, as
/// JAX on ROCm writes it) in the kernel details of every kernel that had none: the registers
/// are unavailable and the input's notes name the field and the value. Before: 2147483647
/// registers per thread shown as a measurement.
#[test]
fn an_uninitialised_register_count_is_unavailable_with_a_note() {
    let data = std::fs::read(fixture("xplane_mi300_jax_conv_tw003.xplane.pb")).expect("pb");
    let (old, new) = (
        b"private_mem:0 group_mem:0 occ_pct:0".as_slice(),
        b"regs:2147483647 group_mem:0 occ_p:0".as_slice(),
    );
    let mut out = Vec::with_capacity(data.len());
    let mut i = 0;
    let mut replaced = 0;
    while i < data.len() {
        if data[i..].starts_with(old) {
            out.extend_from_slice(new);
            i += old.len();
            replaced += 1;
        } else {
            out.push(data[i]);
            i += 1;
        }
    }
    assert!(replaced > 0);
    let t = tempfile::tempdir().expect("tempdir");
    let p = t.path().join("regs.xplane.pb");
    std::fs::write(&p, out).expect("write");
    let json = kernelab()
        .args(["profile", "--format", "json"])
        .arg(&p)
        .output()
        .expect("runs");
    assert_eq!(json.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&json.stdout).expect("json");
    let kernels = v["kernels"].as_array().expect("rows");
    assert!(
        kernels.iter().all(|k| k["registers"].is_null()),
        "{kernels:?}"
    );
    let notes = v["inputs"][0]["notes"].to_string();
    assert!(
        notes.contains("registers per thread 2147483647: outside 0..=512, shown as unavailable"),
        "{notes}"
    );
    let table = kernelab().arg("profile").arg(&p).output().expect("runs");
    let s = String::from_utf8_lossy(&table.stdout);
    assert!(
        !s.contains("2147483647 ") && !s.contains("2,147,483,647"),
        "{s}"
    );
    assert!(
        s.contains("registers per thread 2147483647: outside"),
        "{s}"
    );
}

/// A version-5 `check_sweep` record whose configs are named `X`, `X` (the failing one) and
/// `X#2`: `kernelab record` writes a sweep of three points, the failing one among them, and
/// the report counts it. Before: the renamed `X#2` collided with the third config and the
/// failing config was lost.
#[test]
fn a_v5_check_sweep_with_colliding_renames_keeps_the_failing_config() {
    let text = std::fs::read_to_string(fixture("bundle_v5_check_sweep/0001-check_sweep.json"))
        .expect("read");
    let mut rec: Value = serde_json::from_str(&text).expect("json");
    let configs = rec["result"]["configs"].as_array_mut().expect("configs");
    let pass = configs[0].clone();
    let mut fail = configs[1].clone();
    let name = pass["name"].as_str().expect("name").to_string();
    fail["name"] = name.clone().into();
    let mut third = pass.clone();
    third["name"] = format!("{name}#2").into();
    *configs = vec![pass, fail, third];
    let t = tempfile::tempdir().expect("tempdir");
    let old = t.path().join("old.json");
    std::fs::write(&old, rec.to_string()).expect("write");
    let b = t.path().join("b");
    let out = kernelab()
        .arg("record")
        .arg(&old)
        .arg("--record")
        .arg(&b)
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_dir(&b)
        .expect("bundle")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("a record");
    let new: Value =
        serde_json::from_str(&std::fs::read_to_string(written).expect("read")).expect("json");
    let r = &new["result"];
    let ids: Vec<&str> = r["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter_map(|p| p["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [name.clone(), format!("{name}#3"), format!("{name}#2")]
    );
    assert_eq!(r["points"][1]["verdict"], "fail");
    assert_eq!(r["total"], 3);
    assert_eq!(r["failed"], 1);
    assert_eq!(r["pending"], serde_json::json!([]));
    let report = kernelab()
        .arg("report")
        .arg(&b)
        .args(["--format", "md"])
        .output()
        .expect("runs");
    let md = String::from_utf8_lossy(&report.stdout);
    assert!(md.contains("2 of 3 configs passed"), "{md}");
}
