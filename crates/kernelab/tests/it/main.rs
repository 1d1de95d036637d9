//! Integration tests of the `kernelab` binary against real profiler files. One test binary for
//! the crate (faster to link than one per file); modules group tests by topic.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

mod ab;
mod amd;
mod amd_compute_db;
mod audit;
mod check;
mod code;
mod code_targets;
mod compare;
mod convention;
mod conventions27;
mod counters;
mod errors;
mod export;
mod gate;
mod golden;
mod graphs;
mod hostile3_confine;
mod hostile3_plausible;
mod hostile3_readers;
mod hostile3_report;
mod hostile3_runner;
mod hostile_bin;
mod hostile_files2;
mod hostile_serve2;
mod hostile_spec;
mod hostile_text;
mod impact;
mod isolation;
mod kernel;
mod mcp;
mod ncu_rep;
mod nsys_rep;
mod nvidia;
mod oracle;
mod output;
mod pipeline;
mod profile;
mod ranks;
mod real_devices;
mod real_exact;
mod real_phases;
mod real_stats;
mod report;
mod roofline;
mod roofline_trace;
mod runs;
mod schema;
mod serve;
mod serve_h200;
mod serve_llama;
mod serve_looks;
mod serve_placement;
mod serve_state;
mod slurm;
pub mod sweep;
mod terminal;
mod verify;
mod words;
mod xplane;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fixture copied into this repository.
pub fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures").join(name)
}

/// The shared fixtures folder (`../shared/fixtures` beside the checkout, or
/// `$KERNELAB_SHARED/fixtures`), or `None` with a printed reason when it is absent.
pub fn shared(rel: &str) -> Option<PathBuf> {
    let base = std::env::var_os("KERNELAB_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared"));
    let dir = base.join("fixtures");
    let p = dir.join(rel);
    if p.exists() {
        return Some(p);
    }
    // The folder when it is absent (one reason for every test that needs it), else the file.
    let absent = if dir.is_dir() { p } else { dir };
    kernelab_testkit::skip(
        "shared",
        format!(
            "{} is absent: fixtures with no license stated stay outside the repository \
             (KERNELAB_SHARED=DIR reads DIR/fixtures instead)",
            absent.display()
        ),
    );
    None
}

/// The state folder the tests' runs go to (never the user's own): the `XDG_STATE_HOME` of
/// [`kernelab_testkit::isolated_env`], removed when the test process ends.
pub fn test_state() -> PathBuf {
    kernelab_testkit::sandbox().join("state")
}

/// The folder of the run whose samples file is `samples` (its header's `id`, in [`test_state`]).
pub fn run_dir_of(samples: &Path) -> PathBuf {
    let text = std::fs::read_to_string(samples).expect("samples file");
    let header: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("a header line")).expect("JSON header");
    let id = header["id"]
        .as_str()
        .expect("the header names the run's id");
    test_state().join("kernelab/runs").join(id)
}

/// The kernelab binary, with its runs kept in [`test_state`] and its cache, config and
/// temporary files in the test process's own folders ([`kernelab_testkit::isolated_env`]).
pub fn kernelab() -> Command {
    let mut c = Command::cargo_bin("kernelab").expect("binary built");
    c.env_remove("COLUMNS");
    c.envs(kernelab_testkit::isolated_env());
    c
}

/// Runs `kernelab report --format FORMAT BUNDLE`, which must succeed, and returns its output.
pub fn report_of(bundle: &std::path::Path, format: &str) -> String {
    let out = kernelab()
        .args(["report", "--format", format])
        .arg(bundle)
        .output()
        .expect("report");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `kernelab COMMAND ARGS --format json`, which must succeed, and parses the document.
pub fn json_of<S: AsRef<std::ffi::OsStr>>(command: &str, args: &[S]) -> serde_json::Value {
    let out = kernelab()
        .arg(command)
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "kernelab failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// Runs `kernelab profile ARGS --format json` and parses the document.
pub fn profile_json(args: &[&str]) -> serde_json::Value {
    json_of("profile", args)
}
