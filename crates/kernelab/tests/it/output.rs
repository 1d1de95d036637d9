//! Output formats and the --out file.

use super::{fixture, kernelab};
use predicates::prelude::*;

#[test]
fn markdown_and_csv_outputs() {
    let f = fixture("kineto_gdn_chunk_T8192.json.gz");
    let md = kernelab()
        .args(["profile", "--format", "md"])
        .arg(&f)
        .output()
        .expect("runs");
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("| # | family | calls | total |"), "{md}");
    assert!(
        md.contains("| 1 | chunk_gated_delta_rule_fwd_kernel_h_blockdim64 | 5 | 792.389 µs |"),
        "{md}"
    );
    let csv = kernelab()
        .args(["profile", "--format", "csv", "--top", "3"])
        .arg(&f)
        .output()
        .expect("runs");
    let csv = String::from_utf8_lossy(&csv.stdout);
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .expect("header")
        .starts_with("rank,name,family,variants,calls,total_ns,mean_ns,median_ns,min_ns,max_ns"));
    let first = lines.next().expect("row 1");
    assert!(first.starts_with("1,chunk_gated_delta_rule_fwd_kernel_h_blockdim64,chunk_gated_delta_rule_fwd_kernel_h_blockdim64,1,5,792389,"), "{first}");
    assert_eq!(csv.lines().count(), 1 + 3 + 1, "header, 3 rows, other");
}

#[test]
fn out_refuses_to_overwrite_without_force() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("r.json");
    std::fs::write(&out, "precious").expect("write");
    let f = fixture("kineto_gdn_chunk_T8192.json.gz");
    kernelab()
        .args(["profile", "--format", "json", "--out"])
        .arg(&out)
        .arg(&f)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    assert_eq!(std::fs::read_to_string(&out).expect("read"), "precious");
    kernelab()
        .args(["profile", "--format", "json", "--force", "--out"])
        .arg(&out)
        .arg(&f)
        .assert()
        .success();
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("read")).expect("json");
    assert_eq!(doc["schema_version"], kernelab_model::SCHEMA_VERSION);
    assert_eq!(doc["summary"]["kernel_count"], 40);
}

#[test]
fn failed_read_leaves_no_out_file() {
    let dir = tempfile::tempdir().expect("tmp");
    let out = dir.path().join("r.md");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{").expect("write");
    kernelab()
        .args(["profile", "--out"])
        .arg(&out)
        .arg(&bad)
        .assert()
        .code(2);
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("dir").count(),
        1,
        "no temporary files left"
    );
}

#[test]
fn out_never_replaces_special_files_and_leaves_no_temporary_file() {
    let f = fixture("kineto_gdn_chunk_T8192.json.gz");
    let dir = tempfile::tempdir().expect("tmp");
    let fifo = dir.path().join("out.fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    for force in [false, true] {
        let mut cmd = kernelab();
        cmd.args(["profile", "--out"]).arg(&fifo).arg(&f);
        if force {
            cmd.arg("--force");
        }
        cmd.timeout(std::time::Duration::from_secs(20))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "out.fifo: not a regular file; --out replaces only regular files",
            ));
    }
    let target = dir.path().join("p.json");
    kernelab()
        .args(["profile", "--format", "json", "--out"])
        .arg(&target)
        .arg(&f)
        .assert()
        .success();
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("e").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "only the FIFO and the output: {names:?}");
}

#[test]
fn bundle_record_numbers_do_not_wrap() {
    let f = fixture("kineto_gdn_chunk_T8192.json.gz");
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(dir.path().join("4294967295-profile.json"), "{}").expect("write");
    kernelab()
        .arg("profile")
        .arg(&f)
        .arg("--record")
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("record numbers are exhausted"));
    let left: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").collect();
    assert_eq!(left.len(), 1, "no temporary record left behind");
}
