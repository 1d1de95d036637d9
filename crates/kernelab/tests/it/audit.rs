//! `kernelab report check`: notes audited against a bundle recorded from the real H200 fixtures
//! (the request's profile, the `compare` of three profiles a side and the `kernel run` of
//! w4s3 → w8s2 under one label, a bitwise check, a code diff and an in-process A/B run).

use super::{fixture, kernelab};
use serde_json::Value;
use std::path::Path;

fn p(name: &str) -> String {
    fixture(name).display().to_string()
}

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

/// The bundle, recorded by the commands; the H200 kernel run (no GPU here) is its JSON
/// document written as a record labelled `w8s2`.
fn bundle(dir: &Path) {
    let gdn = p("h200_pair/gdn_w4s3_run1.json.gz");
    record(dir, &["profile", &gdn, "--label", "gdn_request"]);
    let mut compare = vec!["compare".to_string(), "--label".into(), "w8s2".into()];
    compare.push("--base".into());
    compare.extend((1..=3).map(|i| p(&format!("h200_pair/gdn_w4s3_run{i}.json.gz"))));
    compare.push("--cand".into());
    compare.extend((1..=3).map(|i| p(&format!("h200_pair/gdn_w8s2_run{i}.json.gz"))));
    let compare: Vec<&str> = compare.iter().map(String::as_str).collect();
    record(dir, &compare);
    let (wu, wu2) = (p("tensor/wu.npz"), p("tensor/wu_compressed.npz"));
    record(dir, &["check", "bitwise", &wu, &wu2, "--label", "w8s2"]);
    let (c4, c8) = (
        p("code/recompute_w_u_fwd_kernel_w4s3.cubin"),
        p("code/recompute_w_u_fwd_kernel_w8s2.cubin"),
    );
    record(
        dir,
        &[
            "code",
            "diff",
            &c4,
            &c8,
            "--no-disassemble",
            "--label",
            "w8s2",
        ],
    );
    let ab = p("h200_ab/inproc_w4s3_w8s2.csv");
    record(
        dir,
        &[
            "ab",
            "analyze",
            &ab,
            "--metric",
            "median_us",
            "--label",
            "inproc",
        ],
    );
    let first: Value = serde_json::from_slice(
        &std::fs::read(dir.join("0001-profile.json")).expect("first record"),
    )
    .expect("json");
    let mut rec = first;
    rec["kind"] = "kernel_run".into();
    // The H200 document was written by an earlier kernelab: the record says so, and the
    // report reads it through the upgrade of docs/json.md.
    rec["schema_version"] = 2.into();
    rec["label"] = "w8s2".into();
    rec["result"] = serde_json::from_slice(
        &std::fs::read(fixture("h200_kernel/recompute_w4s3_vs_w8s2.json")).expect("H200 record"),
    )
    .expect("json");
    std::fs::write(
        dir.join("0006-kernel_run.json"),
        serde_json::to_vec(&rec).expect("json"),
    )
    .expect("write");
}

/// Records the roofline of the H200 recompute metrics (the repository's work model and
/// ceilings, the GDN sizes) under `w8s2`.
fn record_roofline(b: &Path) {
    let ncu = p("ncu_recompute_metrics.csv");
    let work = super::root()
        .join("examples/roofline/work.toml")
        .display()
        .to_string();
    let ceilings = p("h200_ceilings/ceilings.json");
    let mut roof = vec![
        "roofline",
        &ncu,
        "--work",
        &work,
        "--ceilings",
        &ceilings,
        "--label",
        "w8s2",
    ];
    for s in ["B=1", "T=8192", "H=32", "HV=32", "K=128", "V=128"] {
        roof.extend(["--size", s]);
    }
    record(b, &roof);
}

/// `kernelab report check NOTE --bundle DIR --format json`: exit code and mismatches as
/// (line, number, problem).
fn check(dir: &Path, note: &str) -> (i32, Vec<(u64, String, String)>) {
    let file = dir.join("note.md");
    std::fs::write(&file, note).expect("write note");
    let out = kernelab()
        .args(["report", "check"])
        .arg(&file)
        .arg("--bundle")
        .arg(dir.join("bundle"))
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!("not JSON: {}", String::from_utf8_lossy(&out.stderr));
    });
    assert_eq!(doc["kind"], "report_check");
    let found = doc["mismatches"]
        .as_array()
        .expect("mismatches")
        .iter()
        .map(|m| {
            (
                m["line"].as_u64().expect("line"),
                m["quoted"].as_str().expect("quoted").to_string(),
                m["problem"].as_str().expect("problem").to_string(),
            )
        })
        .collect();
    (out.status.code().expect("exit code"), found)
}

/// A temporary folder holding `bundle/` and the rendered Markdown report.
fn setup() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("tmp");
    bundle(&dir.path().join("bundle"));
    let out = kernelab()
        .arg("report")
        .arg(dir.path().join("bundle"))
        .args(["--format", "md"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    (dir, String::from_utf8(out.stdout).expect("UTF-8"))
}

/// The 1-based line of the first line of `text` that contains `needle`.
fn line_of(text: &str, needle: &str) -> u64 {
    let i = text
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?}:\n{text}"));
    i as u64 + 1
}

/// `text` with `from` replaced once, which must be there.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "no {from:?} in:\n{text}");
    text.replacen(from, to, 1)
}

#[test]
fn the_rendered_report_audits_clean() {
    let (dir, md) = setup();
    let (code, found) = check(dir.path(), &md);
    assert_eq!((code, found), (0, vec![]));
    // It checked the figures, not nothing: the table format says how many.
    let out = kernelab()
        .args(["report", "check"])
        .arg(dir.path().join("note.md"))
        .arg("--bundle")
        .arg(dir.path().join("bundle"))
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let checked: usize = text
        .split("0 of ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!(checked > 100, "{text}");
    // `kernelab report DIR` still renders.
    assert!(md.starts_with("# kernelab evidence"));
}

#[test]
fn planted_errors_are_caught_with_their_lines() {
    let (dir, md) = setup();
    // A sign flipped in the compare table's change column.
    let row = "| recompute_w_u_fwd_kernel | 5 → 5 | 412.864 µs | 483.164 µs | +17.03% | slower |";
    let note = edit(&md, row, &row.replace("+17.03%", "-17.03%"));
    let (code, found) = check(dir.path(), &note);
    assert_eq!(code, 1);
    assert_eq!(
        found,
        vec![(
            line_of(&note, "| recompute_w_u_fwd_kernel | 5 → 5 |"),
            "-17.03%".into(),
            "sign flipped: 412.864 µs → 483.164 µs is a change of +17.03%".into()
        )]
    );

    // The kernel run's ratio inverted in the summary table.
    let note = edit(
        &md,
        "| 1.1636 [1.1599, 1.1681] |",
        "| 0.8594 [1.1599, 1.1681] |",
    );
    let (code, found) = check(dir.path(), &note);
    assert_eq!(code, 1);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, line_of(&note, "| 0.8594 ["));
    assert_eq!(found[0].1, "0.8594");
    assert!(
        found[0].2.starts_with("ratio inverted: it is baseline / candidate; the ratio is candidate / baseline = 1.1636"),
        "{found:?}"
    );

    // A table of shares that sums past 100%.
    let note = format!(
        "{md}\n## Shares by hand\n\n| kernel | share |\n|---|---:|\n| a | 60.0% |\n| b | 35.0% |\n| c | 15.0% |\n"
    );
    let (code, found) = check(dir.path(), &note);
    assert_eq!(code, 1);
    // The sum is caught; the invented shares themselves (under no label) are also checked
    // against every record, and match none.
    assert!(
        found.contains(&(
            line_of(&note, "| c | 15.0% |"),
            "15.0%".into(),
            "share sum over 100%: the table's shares add up to 110.00% by this row".into()
        )),
        "{found:?}"
    );
    assert!(found
        .iter()
        .any(|(_, q, p)| q == "60.0%" && p.starts_with("matches no figure")));

    // A figure that no longer matches the bundle (the family's total in the request).
    let note = edit(&md, "415.486 µs over 5 calls", "425.486 µs over 5 calls");
    let (code, found) = check(dir.path(), &note);
    assert_eq!(code, 1);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, line_of(&note, "425.486 µs"));
    assert_eq!(found[0].1, "425.486 µs");
    assert!(
        found[0]
            .2
            .contains("recompute_w_u_fwd_kernel total = 415.486 µs"),
        "{found:?}"
    );
}

/// A note written by hand, in the style of the notes kernel engineers write, quoting the bundle
/// with its own rounding, units and separators.
const HAND_WRITTEN: &str = "\
# recompute_w_u_fwd_kernel: w4s3 → w8s2 on H200 (rejected)

Status: **rejected**. All timings are measured on one NVIDIA H200.

## Why this kernel

In the 5-call GDN request (`gdn_request`), recompute_w_u_fwd_kernel takes 16.9% of kernel GPU
time: 415.486 µs over 5 calls, of 2.459 ms.

## Correctness and timing

w8s2 passes its gates (6/6) and is bit-exact on 2/2 tensors, but is slower: 1.164x
(CI 1.160x–1.168x), or +16.4% per launch; median round 88.78 µs → 103.30 µs (+16.35%).

| w8s2 | baseline | candidate | change | ratio |
|---|---:|---:|---:|---:|
| recompute_w_u_fwd_kernel, three profiles a side | 412.864 µs | 483.164 µs | +17.03% | 1.1703x |

## Request impact

Predicted for gdn_request with w8s2: +2.76% of request kernel time (about +67.955 µs), wall time
at most +1.37%; measured (w8s2, three runs a side): +2.41%.

The in-process A/B run (inproc) agrees: 1.0763x, SLOWER by 7.63%, A/A 0.9934x.
";

#[test]
fn a_hand_written_note_with_correct_figures_audits_clean() {
    let (dir, _) = setup();
    let (code, found) = check(dir.path(), HAND_WRITTEN);
    assert_eq!((code, found), (0, vec![]));
    // The same note with the hand-written mistakes of the seeds' kind.
    let note = edit(HAND_WRITTEN, "(+16.35%)", "(−16.35%)");
    let note = edit(&note, "1.1703x", "0.8545x");
    let note = edit(&note, "+2.41%", "+2.14%");
    let (code, found) = check(dir.path(), &note);
    assert_eq!(code, 1);
    let lines: Vec<u64> = found.iter().map(|f| f.0).collect();
    assert_eq!(
        lines,
        vec![
            line_of(&note, "(−16.35%)"),
            line_of(&note, "0.8545x"),
            line_of(&note, "+2.14%")
        ],
        "{found:?}"
    );
    assert!(found[0].2.starts_with("sign flipped"), "{found:?}");
    assert!(found[1].2.starts_with("ratio inverted"), "{found:?}");
    assert!(found[2].2.contains("matches no figure"), "{found:?}");
}

#[test]
fn bad_input_exits_2() {
    let (dir, _) = setup();
    let missing = kernelab()
        .args(["report", "check"])
        .arg(dir.path().join("absent.md"))
        .arg("--bundle")
        .arg(dir.path().join("bundle"))
        .output()
        .expect("runs");
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("absent.md"));
    std::fs::write(dir.path().join("bad.md"), b"ratio \xff 1.2x").expect("write");
    let out = kernelab()
        .args(["report", "check"])
        .arg(dir.path().join("bad.md"))
        .arg("--bundle")
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.md: not UTF-8 text"), "{err}");
}

/// The report passes its own audit by construction: a bundle holding every record kind the
/// repository's fixtures can make here (profile, compare, every check gate, code show and diff,
/// ncu metrics, an A/B, a roofline, the H200 serving samples and the H200 kernel run), rendered
/// as Markdown with and without a `--title` that names a label, gives 0 mismatches, and the
/// figures of every kind are among those checked.
#[test]
fn a_report_of_every_record_kind_passes_its_own_audit() {
    let dir = tempfile::tempdir().expect("tmp");
    let b = dir.path().join("bundle");
    bundle(&b);
    let (o, r, f) = (
        p("tensor/out_bf16.npy"),
        p("tensor/ref_f64.npy"),
        p("tensor/wu.npz"),
    );
    record(
        &b,
        &[
            "check", "oracle", &o, &r, "--dtype", "bf16", "--label", "w8s2",
        ],
    );
    record(&b, &["check", "finite", &f, "--label", "w8s2"]);
    // A sweep of tensor points (one build flips two elements, so it fails a gate: exit 1).
    let sweep = crate::sweep::tensor_sweep(dir.path(), 3);
    let results = dir.path().join("sweep-results");
    record(
        &b,
        &[
            "sweep",
            "--jobs",
            "1",
            "--dir",
            &results.display().to_string(),
            &sweep.display().to_string(),
            "--label",
            "sweep",
        ],
    );
    record(
        &b,
        &[
            "check",
            "repeat",
            &f,
            &p("tensor/wu_compressed.npz"),
            "--label",
            "w8s2",
        ],
    );
    let cubin = p("code/recompute_w_u_fwd_kernel_w8s2.cubin");
    record(
        &b,
        &[
            "code",
            "show",
            &cubin,
            "--no-disassemble",
            "--label",
            "w8s2",
        ],
    );
    let ncu = p("ncu_recompute_metrics.csv");
    record(&b, &["metrics", &ncu, "--label", "w8s2"]);
    record_roofline(&b);
    let serve = p("serve/h200/eager_vs_sdpa.samples.jsonl");
    record(
        &b,
        &["serve", "--analyze", "--resume", &serve, "--label", "sdpa"],
    );
    for title in [None, Some("w8s2: recompute_w_u with 8 warps and 2 stages")] {
        let mut c = kernelab();
        c.arg("report").arg(&b);
        if let Some(t) = title {
            c.args(["--title", t]);
        }
        let out = c.output().expect("runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let md = String::from_utf8(out.stdout).expect("UTF-8");
        let (code, found) = check(dir.path(), &md);
        assert_eq!((code, &found), (0, &vec![]), "title {title:?}");
        // Figures of the kinds the audit did not know before are in the note and checked.
        for needle in [
            "Per-launch counters",
            "of roof",
            "Server starts",
            "per round",
        ] {
            assert!(md.contains(needle), "{needle}");
        }
    }
    // Any command's own `--format md` output pasted under its label passes too.
    let gdn = p("h200_pair/gdn_w4s3_run1.json.gz");
    let runs = |c: &str| -> Vec<String> {
        (1..=3)
            .map(|i| p(&format!("h200_pair/gdn_{c}_run{i}.json.gz")))
            .collect()
    };
    let mut compare = vec!["compare".to_string(), "--base".into()];
    compare.extend(runs("w4s3"));
    compare.push("--cand".into());
    compare.extend(runs("w8s2"));
    let (c4, c8) = (
        p("code/recompute_w_u_fwd_kernel_w4s3.cubin"),
        p("code/recompute_w_u_fwd_kernel_w8s2.cubin"),
    );
    let pasted: Vec<(&str, Vec<String>)> = vec![
        ("gdn_request", vec!["profile".into(), gdn.clone()]),
        ("w8s2", compare),
        (
            "w8s2",
            vec![
                "code".into(),
                "diff".into(),
                c4,
                c8,
                "--no-disassemble".into(),
            ],
        ),
        ("w8s2", vec!["metrics".into(), ncu.clone()]),
        (
            "sdpa",
            vec![
                "serve".into(),
                "--analyze".into(),
                "--resume".into(),
                serve.clone(),
            ],
        ),
    ];
    let (mut command_missed, mut command_moved) = (Vec::new(), 0);
    for (label, args) in pasted {
        let out = kernelab()
            .args(&args)
            .args(["--format", "md"])
            .output()
            .expect("runs");
        let md = format!("# {label}\n\n{}", String::from_utf8_lossy(&out.stdout));
        let (code, found) = check(dir.path(), &md);
        assert_eq!((code, &found), (0, &vec![]), "{args:?}");
        let (missed, moved) = digits_missed(&b, &md);
        command_missed.extend(missed.into_iter().map(|m| format!("{args:?}: {m}")));
        command_moved += moved;
    }
    // The commands' own Markdown, pasted: a ratchet. On 2026-12-06, 48 of its 445 numbers
    // still passed a one-digit change unseen (50 before the whole-trace `figure | value`
    // table's integers were read as counts): copy counts and the stream count next to other
    // counts of one, a profile row's grid, block, registers and shared memory (`256x32x1`),
    // compare's kernel and copy counts, and code diff's unchanged resources (`| barriers | 1 |
    // 1 | unchanged |`). Fewer may pass, never more.
    assert!(command_moved >= 440, "{command_moved}");
    assert!(
        command_missed.len() <= 48,
        "{} of {command_moved} missed in the commands' tables:\n{}",
        command_missed.len(),
        command_missed.join("\n")
    );
    // A figure changed in the serving table is caught.
    let out = kernelab().arg("report").arg(&b).output().expect("runs");
    let md = String::from_utf8(out.stdout).expect("UTF-8");
    // Issue 45, item 2, over every kind: every number of the report's tables is caught when
    // its last digit moves (before: 19 of 572 were not, each equal to another figure the line
    // could quote; now a server start's row names its start, a per-round row its heading's
    // metric, and a count written before its noun is held against that noun's figure), but
    // for the words of a failed sweep point's gate detail (below).
    // A failed sweep point's row shows its gate's detail as recorded (`2 of 2048 elements
    // differ; first at base[3, 4]: 0.5026… vs 0.5026…`): its count is a figure, but the
    // point's id, the first differing element's index and its two values are words of the
    // detail the audit does not hold as figures (15 numbers on three rows). Every other number
    // is caught; those may only become fewer.
    let (missed, moved) = digits_missed(&b, &md);
    assert!(moved >= 600, "{moved}");
    let (detail, other): (Vec<&String>, Vec<&String>) =
        missed.iter().partition(|m| m.contains("| flip-n="));
    assert!(
        other.is_empty() && detail.len() <= 15,
        "{} of {moved} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
    let line = md
        .lines()
        .find(|l| l.starts_with("| round 0 candidate |"))
        .expect("a server-start row")
        .to_string();
    let health = line
        .split('|')
        .nth(2)
        .expect("health cell")
        .trim()
        .to_string();
    let file = dir.path().join("note.md");
    let check = |note: &str, strict: bool| {
        std::fs::write(&file, note).expect("write note");
        let mut c = kernelab();
        c.args(["report", "check"])
            .arg(&file)
            .arg("--bundle")
            .arg(dir.path().join("bundle"))
            .args(["--format", "json"]);
        if strict {
            c.arg("--strict");
        }
        let out = c.output().expect("runs");
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        (out.status.code(), v)
    };
    // A health time in the row of a start it is not that start's: contradicted, held against
    // that start's health (the row names the start).
    let planted = md.replace(&line, &line.replacen(&health, "99.99 s", 1));
    let (code, v) = check(&planted, false);
    assert_eq!(code, Some(1), "{v}");
    assert!(
        v["mismatches"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["quoted"] == "99.99 s"
                && m["against"]
                    .as_str()
                    .is_some_and(|a| a.contains("round 0 candidate health")))),
        "{v}"
    );
    // The same time on a line of its own under the serving record: no figure backs it. It is
    // listed as such, and `--strict` (kernelab's own report must be wholly backed) fails on it.
    let planted = format!("{md}\n\nsdpa: a server took 99.99 s to become healthy elsewhere.\n");
    let (code, v) = check(&planted, false);
    assert_eq!(code, Some(0), "{v}");
    assert!(
        v["unbacked"]
            .as_array()
            .is_some_and(|u| u.iter().any(|u| u["quoted"] == "99.99 s")),
        "{v}"
    );
    let (code, v) = check(&planted, true);
    assert_eq!(code, Some(1), "{v}");
}

/// Claims the audit used to miss: "k of N" counts written in words, and lines of a note that
/// name no bundle label (checked against every record, not skipped).
#[test]
fn counts_in_words_and_notes_without_labels_are_checked() {
    let (dir, _) = setup();
    let good = "# Notes\n\nw8s2: 6 of 6 gates passed; 1 of 1 kernels changed.\n\nrecompute_w_u_fwd_kernel took 415.486 µs over 5 calls in the request.\n";
    let (code, found) = check(dir.path(), good);
    assert_eq!((code, &found), (0, &vec![]), "{found:?}");
    let bad = "# Notes\n\nw8s2: 5 of 6 gates passed; 2 of 3 kernels changed.\n\nrecompute_w_u_fwd_kernel took 425.486 µs over 5 calls in the request.\n";
    let (code, found) = check(dir.path(), bad);
    assert_eq!(code, 1);
    let quoted: Vec<&str> = found.iter().map(|(_, q, _)| q.as_str()).collect();
    assert_eq!(quoted, ["5 of 6", "2 of 3", "425.486 µs"], "{found:?}");
    assert!(
        found.iter().all(|(l, _, _)| *l == 3 || *l == 5),
        "{found:?}"
    );
}

/// Tables pasted from the terminal (box drawing) are read like Markdown tables; a
/// tab-separated one is a warning with its line; a figure that matches records of several
/// labels on a line naming none is a warning, not a silent pass.
#[test]
fn terminal_tables_are_read_and_what_cannot_be_decided_is_a_warning() {
    let (dir, _) = setup();
    let runs = |c: &str| -> Vec<String> {
        (1..=3)
            .map(|i| p(&format!("h200_pair/gdn_{c}_run{i}.json.gz")))
            .collect()
    };
    let mut args = vec!["compare".to_string(), "--base".into()];
    args.extend(runs("w4s3"));
    args.push("--cand".into());
    args.extend(runs("w8s2"));
    let out = kernelab().args(&args).output().expect("runs");
    let table = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(table.contains('┆'), "a terminal table: {table}");
    let note = format!("# w8s2\n\n{table}");
    let (code, found) = check(dir.path(), &note);
    assert_eq!((code, &found), (0, &vec![]));
    // The same table with a figure changed: caught on its line.
    let bad = note.replace("483.164 µs", "493.164 µs");
    let (code, found) = check(dir.path(), &bad);
    assert_eq!(code, 1, "{found:?}");
    assert!(found
        .iter()
        .any(|(l, q, _)| q == "493.164 µs" && *l == line_of(&bad, "493.164 µs")));
    // Warnings, in the JSON document.
    let file = dir.path().join("warn.md");
    std::fs::write(
        &file,
        "# Notes\n\nfamily\tbaseline\tcandidate\nrecompute\t412.864 µs\t483.164 µs\n\nThe family took 415.486 µs.\n",
    )
    .expect("write");
    let out = kernelab()
        .args(["report", "check"])
        .arg(&file)
        .arg("--bundle")
        .arg(dir.path().join("bundle"))
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let warnings: Vec<(u64, String)> = doc["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| {
            (
                w["line"].as_u64().unwrap_or(0),
                w["text"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert!(
        warnings
            .iter()
            .any(|(l, t)| *l == 4 && t.contains("tab-separated")),
        "{warnings:?}"
    );
    assert!(
        warnings
            .iter()
            .any(|(l, t)| *l == 6 && t.contains("several labels")),
        "{warnings:?}"
    );
}

/// A share that is not its row's total over the table's total is caught on its row, against the
/// total the other rows agree on.
#[test]
fn a_share_that_is_not_part_over_total_is_caught() {
    let (dir, md) = setup();
    let row = md
        .lines()
        .find(|l| l.starts_with("| 1 | chunk_gated_delta_rule_fwd_kernel_h_blockdim64 |"))
        .expect("the profile's top row")
        .to_string();
    let share = row
        .trim_end_matches(" |")
        .rsplit(" | ")
        .next()
        .expect("share cell")
        .to_string();
    assert!(share.ends_with('%'), "{row}");
    let planted = md.replacen(&row, &row.replace(&share, "30.17%"), 1);
    let (code, found) = check(dir.path(), &planted);
    assert_eq!(code, 1);
    assert!(
        found
            .iter()
            .any(|(l, q, p)| *l == line_of(&planted, "| 30.17% |")
                && q == "30.17%"
                && p.starts_with("share is not this row's total over the table's total")),
        "{found:?}"
    );
}

/// Percentage points in prose and rates (GB/s, TFLOP/s) are checked: the roofline's figures and
/// a change of shares written in points.
#[test]
fn points_in_prose_and_rates_are_checked() {
    let (dir, _) = setup();
    let b = dir.path().join("bundle");
    record_roofline(&b);
    let good = "# w8s2\n\nrecompute_w_u_fwd_kernel share 16.89% → 19.26% (+2.37 pp) of kernel time; it moves 3,690.5 GB/s at 104.43 TFLOP/s.\n";
    let (code, found) = check(dir.path(), good);
    assert_eq!((code, &found), (0, &vec![]));
    let bad = "# w8s2\n\nrecompute_w_u_fwd_kernel share 16.89% → 19.26% (+3.37 pp) of kernel time; it moves 3,990.5 GB/s at 104.43 TFLOP/s.\n";
    let (code, found) = check(dir.path(), bad);
    assert_eq!(code, 1);
    let quoted: Vec<&str> = found.iter().map(|(_, q, _)| q.as_str()).collect();
    assert_eq!(quoted, ["+3.37 pp", "3,990.5 GB/s"], "{found:?}");
}

/// A note whose lower-cased text has other byte lengths (`Ⱥ` → `ⱥ`) is read, not a panic.
#[test]
fn letters_whose_case_changes_byte_length_do_not_panic() {
    let (dir, _) = setup();
    let (code, _) = check(dir.path(), "w8s2 ȺȺ 5 ms\nL ȺȺ 5 ms\n");
    assert!(code == 0 || code == 1, "exit {code}");
}

#[test]
fn a_ratio_after_a_verdict_word_is_checked_as_a_ratio() {
    let (dir, md) = setup();
    // The Changes table writes each verdict as `SLOWER ratio [low, high]`: each of the three
    // numbers, one digit off, is caught; the report as rendered passes.
    assert_eq!(check(dir.path(), &md).0, 0);
    for (from, to) in [
        (
            "SLOWER 1.1636 [1.1599, 1.1681]",
            "SLOWER 1.1637 [1.1599, 1.1681]",
        ),
        (
            "SLOWER 1.1636 [1.1599, 1.1681]",
            "SLOWER 1.1636 [1.1589, 1.1681]",
        ),
        (
            "SLOWER 1.0763 [1.0712, 1.0814]",
            "SLOWER 1.0763 [1.0712, 1.0815]",
        ),
    ] {
        let (code, found) = check(dir.path(), &edit(&md, from, to));
        assert_eq!(code, 1, "{to}: {found:?}");
        assert!(
            found.iter().all(|(_, _, p)| p.contains("ratio")),
            "{found:?}"
        );
    }
}

#[test]
fn a_note_quoting_another_experiment_lists_its_figures_as_unbacked_and_passes() {
    let (dir, md) = setup();
    // A reviewer's figures from another machine, correct as quoted: none is the bundle's, and
    // their own arithmetic holds (48.9 / 41.5 − 1 = +17.83%).
    let note = format!(
        "{md}\n## From the reviewer's A100\n\nThe same change there: 41.5 s → 48.9 s (+17.83%).\n"
    );
    let file = dir.path().join("note.md");
    std::fs::write(&file, &note).expect("write note");
    let run = |extra: &[&str]| {
        let out = kernelab()
            .args(["report", "check"])
            .arg(&file)
            .arg("--bundle")
            .arg(dir.path().join("bundle"))
            .args(["--format", "json"])
            .args(extra)
            .output()
            .expect("runs");
        let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        (out.status.code(), v)
    };
    let (code, v) = run(&[]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["mismatches"], serde_json::json!([]));
    let quoted: Vec<&str> = v["unbacked"]
        .as_array()
        .expect("unbacked")
        .iter()
        .filter_map(|u| u["quoted"].as_str())
        .collect();
    assert_eq!(quoted, ["41.5 s", "48.9 s"], "{v}");
    let (code, _) = run(&["--strict"]);
    assert_eq!(code, Some(1));
    // The same note with its arithmetic wrong is contradicted by itself: exit 1.
    std::fs::write(&file, note.replace("(+17.83%)", "(+18.83%)")).expect("write note");
    let (code, v) = run(&[]);
    assert_eq!(code, Some(1), "{v}");
    // A figure next to the bundle's is contradicted, and says which figure it was held against.
    std::fs::write(
        &file,
        edit(&md, "415.486 µs over 5 calls", "415.468 µs over 5 calls"),
    )
    .expect("write note");
    let (code, v) = run(&[]);
    assert_eq!(code, Some(1), "{v}");
    assert!(
        v["mismatches"][0]["against"]
            .as_str()
            .is_some_and(|a| a.contains("= 415.486 µs")),
        "{v}"
    );
}

/// The numbers of `md` that are figures a record drew: every maximal run of digits (with `,`
/// and `.` inside) that stands alone, not part of a name (`w8s2`, `run1`), in a table row of a
/// record's section, outside the columns that index or name rows (`#`, `round`, `rank`, `gate`). Returns the
/// byte offset of each one's last digit and its 1-based line.
fn figure_digits(md: &str) -> Vec<(usize, usize)> {
    // Markdown rows (`| a | b |`) and the terminal's box-drawn rows (`│ a ┆ b │`).
    let row = |l: &str| l.starts_with('|') || l.starts_with('│');
    let bar = |c: char| matches!(c, '|' | '│' | '┆');
    let mut out = Vec::new();
    let mut offset = 0;
    let mut index_columns: Vec<usize> = Vec::new();
    let mut previous = "";
    for (n, line) in md.lines().enumerate() {
        let in_table = row(line) && !line.starts_with("|---");
        let header_row = in_table && !row(previous);
        if header_row {
            // A header row: which columns index rows.
            index_columns = line
                .split(bar)
                .enumerate()
                .filter(|(_, h)| {
                    let h = h.trim().to_lowercase();
                    matches!(h.as_str(), "#" | "id" | "round" | "rank" | "pair" | "gate")
                })
                .map(|(i, _)| i)
                .collect();
        }
        previous = line;
        let b = line.as_bytes();
        let mut i = 0;
        while in_table && i < b.len() {
            if b[i].is_ascii_digit() {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_digit()
                        || ((b[i] == b',' || b[i] == b'.')
                            && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
                {
                    i += 1;
                }
                let before = start.checked_sub(1).map(|j| b[j]);
                let after = b.get(i).copied();
                let word = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_alphabetic() || c == b'_');
                let column = line[..start].matches(bar).count();
                if !header_row
                    && !index_columns.contains(&column)
                    && !word(before)
                    && !after.is_some_and(|c| c.is_ascii_alphabetic() && c != b'x')
                {
                    out.push((offset + i - 1, n + 1));
                }
            } else {
                i += 1;
            }
        }
        offset += line.len() + 1;
    }
    out
}

pub(crate) fn digits_missed(bundle: &Path, md: &str) -> (Vec<String>, usize) {
    let digits = figure_digits(md);
    let mut missed = Vec::new();
    for &(at, line) in &digits {
        let mut b = md.to_string().into_bytes();
        // 5 → 6 … 9 → 8: the last digit moves by one, the smallest change a typo makes.
        b[at] = if b[at] == b'9' { b'8' } else { b[at] + 1 };
        let note = String::from_utf8(b).expect("UTF-8");
        let (doc, _) = kernelab_commands::bundle::report_check(&note, bundle).expect("audits");
        if doc.body.mismatches.is_empty() {
            let l = md.lines().nth(line - 1).unwrap_or("");
            let start = md[..=at]
                .char_indices()
                .rev()
                .find(|&(_, c)| !(c.is_ascii_digit() || c == ',' || c == '.'))
                .map_or(0, |(i, c)| i + c.len_utf8());
            missed.push(format!("line {line}: {:?} in {}", &md[start..=at], l));
        }
    }
    (missed, digits.len())
}

#[test]
fn a_changed_digit_in_any_figure_of_the_rendered_report_is_caught() {
    // Issue 45, item 2: every number the records of a real bundle draw in the report's tables
    // is a figure the audit knows, so that moving its last digit by one is a contradiction.
    let (dir, md) = setup();
    let (missed, moved) = digits_missed(&dir.path().join("bundle"), &md);
    assert!(moved > 200, "{moved}");
    assert!(
        missed.is_empty(),
        "{} of {moved} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}
