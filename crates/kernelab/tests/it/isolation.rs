//! Tests leave the user alone (#41): a command that records a run, started as every test
//! starts kernelab ([`kernelab`]), writes into the test process's own folders only: not into
//! `HOME`, and nothing stays in its temporary folder.

use super::{kernelab, test_state};
use std::path::{Path, PathBuf};

/// Every path under `dir`, relative to it, sorted (an absent `dir` lists nothing).
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.expect("entry").path();
            if p.is_dir() {
                todo.push(p.clone());
            }
            out.push(p.strip_prefix(dir).expect("under dir").to_path_buf());
        }
    }
    out.sort();
    out
}

#[test]
fn an_ab_run_writes_nothing_into_home_or_the_temporary_folder() {
    let t = tempfile::tempdir().expect("tmp");
    let (home, tmp) = (t.path().join("home"), t.path().join("tmp"));
    std::fs::create_dir_all(home.join(".config")).expect("home");
    std::fs::write(home.join(".profile"), "# a user's file\n").expect("write");
    std::fs::create_dir(&tmp).expect("tmp");
    let before = (listing(&home), listing(&tmp));
    // HOME as a user's own (XDG_STATE_HOME and XDG_CACHE_HOME set by `kernelab()` keep the run
    // away from it) and a private TMPDIR that kernelab must leave as it found it.
    let out = kernelab()
        .env("HOME", &home)
        .env("TMPDIR", &tmp)
        .args(["ab", "--baseline", "true", "--candidate", "true"])
        .args(["--aa-pairs", "2", "--warmup", "0", "--format", "json"])
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), None, "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // "kernelab ab: run ID, samples in …": the run's folder is in the test's state folder.
    let id = err
        .split_once("ab: run ")
        .and_then(|(_, rest)| rest.split(',').next())
        .expect("the run's id on stderr");
    assert!(
        test_state().join("kernelab/runs").join(id).is_dir(),
        "the run {id} is kept in the test's state folder: {err}"
    );
    assert_eq!(listing(&home), before.0, "nothing written into HOME");
    assert_eq!(listing(&tmp), before.1, "nothing left in TMPDIR");
}
