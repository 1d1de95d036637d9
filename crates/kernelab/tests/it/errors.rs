//! Bad input: a clear message naming the file and the position, exit code 2, no output.

use super::{fixture, kernelab};
use predicates::prelude::*;

fn fails_with(path: &std::path::Path, needles: &[&str]) {
    let out = kernelab().arg("profile").arg(path).output().expect("runs");
    assert_eq!(out.status.code(), Some(2), "exit code");
    assert!(out.stdout.is_empty(), "no partial output");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&path.display().to_string()),
        "names the file: {err}"
    );
    for n in needles {
        assert!(err.contains(n), "stderr should contain {n:?}: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn truncated_gzip() {
    let dir = tempfile::tempdir().expect("tmp");
    let bytes =
        std::fs::read(fixture("kineto_qwen3next_4l_prompt8192_baseline.json.gz")).expect("read");
    let p = dir.path().join("cut.json.gz");
    std::fs::write(&p, &bytes[..bytes.len() / 2]).expect("write");
    fails_with(
        &p,
        &["input ends early", "gzip stream", "truncated or corrupt"],
    );
}

#[test]
fn invalid_json_names_the_byte() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("bad.json");
    std::fs::write(
        &p,
        r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": }]}"#,
    )
    .expect("write");
    fails_with(
        &p,
        &[
            "byte 62",
            "expected a valid trace event, found invalid JSON (expected value)",
        ],
    );
    std::fs::write(
        &p,
        r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "soon", "dur": 1}]}"#,
    )
    .expect("write");
    fails_with(&p, &["`ts`", "decimal number of microseconds", "soon"]);
    std::fs::write(
        &p,
        r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "ts": 1, "dur": 1}"#,
    )
    .expect("write");
    fails_with(&p, &["input ends early"]);
    std::fs::write(&p, r#"{"schemaVersion": 1}"#).expect("write");
    fails_with(&p, &["traceEvents"]);
}

#[test]
fn unknown_csv_header() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("x.csv");
    std::fs::write(&p, "when,what,how long\n1,2,3\n").expect("write");
    fails_with(&p, &["unknown format", "CSV header [when, what, how long]"]);
}

#[test]
fn bad_csv_value_names_line_and_column() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("k.csv");
    std::fs::write(
        &p,
        "\"Kernel_Name\",\"Start_Timestamp\",\"End_Timestamp\"\r\n\"a\",1,5\r\n\"b\",x,9\r\n",
    )
    .expect("write");
    fails_with(&p, &["line 3", "`Start_Timestamp`", "\"x\""]);
    fails_with(
        &fixture("omniperf_rocprofv2_gfx942_vcopy_timestamps.csv"),
        &["line 2", "scientific notation", "spreadsheet"],
    );
}

#[test]
fn empty_file_and_directory() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("empty.json");
    std::fs::write(&p, "").expect("write");
    fails_with(&p, &["empty"]);
    fails_with(dir.path(), &["not a regular file: it is a directory"]);
    fails_with(&dir.path().join("missing.json"), &["No such file"]);
}

#[test]
fn bad_options_exit_2() {
    kernelab()
        .args(["profile", "--time-range", "9ms:1ms"])
        .arg(fixture("kineto_gdn_chunk_T8192.json.gz"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("end must be after the start"));
    kernelab()
        .args(["profile", "--name", "("])
        .arg(fixture("kineto_gdn_chunk_T8192.json.gz"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid regular expression"));
    kernelab().args(["profile"]).assert().code(2);
}

#[test]
fn a_cause_is_printed_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let missing = dir.path().join("missing.bin");
    for cmd in [
        &["profile"][..],
        &["code", "show"],
        &["check", "finite"],
        &["kernel", "run"],
        &["ab", "--resume"],
    ] {
        let out = kernelab().args(cmd).arg(&missing).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{cmd:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&missing.display().to_string()),
            "{cmd:?} names the file: {err}"
        );
        assert_eq!(
            err.matches("No such file").count(),
            1,
            "{cmd:?} prints the cause once: {err}"
        );
    }
}

/// An Nsight Compute report is named, with the command that exports it, never shown as bytes.
/// No real `.ncu-rep` is public under a licence we can copy: the file is the documented magic
/// (`NVR\0` and a little-endian header length, docs/formats/nvidia.md §3.4) and protobuf
/// bytes, in a folder with a space so the command's quoting shows.
#[test]
fn an_ncu_report_gives_the_export_command() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("my run.ncu-rep");
    std::fs::write(&p, b"NVR\0\x06\0\0\0\x08\x0b\x10\x01\x18\0").expect("write");
    let csv = dir.path().join("my run.csv");
    fails_with(
        &p,
        &[
            "an Nsight Compute report (.ncu-rep, binary)",
            &format!(
                "`ncu --import '{}' --csv --page raw > '{}'`",
                p.display(),
                csv.display()
            ),
        ],
    );
}
