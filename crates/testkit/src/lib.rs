//! Test support shared by the workspace's test binaries (a dev-dependency only, docs/testing.md,
//! "Skips and folders").
//!
//! - [`skip`]: a test whose prerequisite is missing here (a tool, `../shared`, root) says so.
//!   libtest cannot mark a test ignored once it runs, so the test still counts as passed; the
//!   test binary then prints, under its `test result:` line, how many tests did not run and why.
//!   With `KERNELAB_REQUIRE_ALL=1` (`.ci/run` sets it) a missing prerequisite fails the test
//!   instead, unless its name is in `KERNELAB_MAY_SKIP` (names separated by commas).
//! - [`isolated_env`]: the variables that give every program a test starts state, cache, config,
//!   data and temporary folders of its own, in one folder per test process that is removed when
//!   the process ends; nothing lands in the user's home or stays in `/tmp`.
// A test-support crate: what it prints is the point (standard error of the test binary).
#![allow(clippy::print_stderr)]

use std::collections::BTreeMap;
use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, OnceLock};

/// The variable under which a missing prerequisite fails its test instead of skipping it.
pub const REQUIRE_ALL: &str = "KERNELAB_REQUIRE_ALL";
/// The prerequisites (the `need` of [`skip`]) that may be missing even under [`REQUIRE_ALL`].
pub const MAY_SKIP: &str = "KERNELAB_MAY_SKIP";

/// One test (or part of one) that did not run.
struct Skipped {
    test: String,
    need: &'static str,
    why: String,
}

static SKIPPED: Mutex<Vec<Skipped>> = Mutex::new(Vec::new());
static AT_EXIT: Once = Once::new();
static SANDBOX: OnceLock<PathBuf> = OnceLock::new();

/// The running test cannot run (or finish) here because `need` is missing; `why` says what is
/// missing and how to get it. Records and prints the skip, or panics when
/// `KERNELAB_REQUIRE_ALL=1` and `need` is not named in `KERNELAB_MAY_SKIP`. The caller returns
/// (or leaves out the part) after it.
#[track_caller]
pub fn skip(need: &'static str, why: impl Display) {
    let why = why.to_string();
    let test = current_test();
    if required(need) {
        panic!(
            "{test} cannot run here ({need}: {why}), and {REQUIRE_ALL}=1 says every test must \
             ({MAY_SKIP}=NAME,… lets a named prerequisite be missing)"
        );
    }
    eprintln!("SKIP ({need}): {why}");
    at_exit();
    SKIPPED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .push(Skipped { test, need, why });
}

/// Whether `KERNELAB_REQUIRE_ALL=1` makes a missing `need` fail its test.
fn required(need: &str) -> bool {
    required_under(
        &std::env::var(REQUIRE_ALL).unwrap_or_default(),
        &std::env::var(MAY_SKIP).unwrap_or_default(),
        need,
    )
}

/// Whether `need` must be present, given the values of [`REQUIRE_ALL`] and [`MAY_SKIP`].
fn required_under(all: &str, may: &str, need: &str) -> bool {
    all == "1" && !may.split(',').any(|n| n.trim() == need)
}

/// The running test's name: libtest names each test's thread after it.
fn current_test() -> String {
    match std::thread::current().name() {
        Some(n) if n != "main" => n.to_string(),
        _ => "a test".to_string(),
    }
}

/// One folder for this test process (under the system's temporary folder), with `state`,
/// `cache`, `config`, `data` and `tmp` in it; removed when the process ends.
pub fn sandbox() -> &'static Path {
    SANDBOX.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let d =
            std::env::temp_dir().join(format!("kernelab-test-{}-{nanos:08x}", std::process::id()));
        for sub in ["state", "cache", "config", "data", "tmp"] {
            // A folder that cannot be made fails the spawned program, which names it.
            let _ = std::fs::create_dir_all(d.join(sub));
        }
        at_exit();
        d
    })
}

/// The environment every program a test starts gets: `XDG_STATE_HOME` (kernelab's runs),
/// `XDG_CACHE_HOME` (its nsys cache), `XDG_CONFIG_HOME`, `XDG_DATA_HOME` and `TMPDIR`, each a
/// folder of [`sandbox`]. kernelab reads `HOME` only when the XDG folders are unset, so `HOME`
/// itself stays (a user's `pip install --user` packages stay importable by the programs run).
pub fn isolated_env() -> [(&'static str, PathBuf); 5] {
    let d = sandbox();
    [
        ("XDG_STATE_HOME", d.join("state")),
        ("XDG_CACHE_HOME", d.join("cache")),
        ("XDG_CONFIG_HOME", d.join("config")),
        ("XDG_DATA_HOME", d.join("data")),
        ("TMPDIR", d.join("tmp")),
    ]
}

/// Registers [`on_exit`] once.
fn at_exit() {
    AT_EXIT.call_once(|| {
        // SAFETY: `atexit` only stores the pointer of a function of the C ABI that takes and
        // returns nothing; `on_exit` never unwinds (it catches every panic).
        #[allow(unsafe_code)]
        let _ = unsafe { libc::atexit(on_exit) };
    });
}

/// At the end of the test binary (after libtest's summary): the tally of skips, then the
/// sandbox removed.
extern "C" fn on_exit() {
    let _ = std::panic::catch_unwind(|| {
        let skipped = SKIPPED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !skipped.is_empty() {
            let _ = std::io::stderr().write_all(tally(&skipped).as_bytes());
        }
        if let Some(d) = SANDBOX.get() {
            let _ = std::fs::remove_dir_all(d);
        }
    });
}

/// The lines that say how many tests did not run here, grouped by reason.
fn tally(skipped: &[Skipped]) -> String {
    let mut by_reason: BTreeMap<(&str, &str), Vec<&str>> = BTreeMap::new();
    for s in skipped {
        by_reason
            .entry((s.need, s.why.as_str()))
            .or_default()
            .push(s.test.as_str());
    }
    let mut tests: Vec<&str> = skipped.iter().map(|s| s.test.as_str()).collect();
    tests.sort_unstable();
    tests.dedup();
    let n = tests.len();
    let mut out = format!(
        "\nnot run here: {n} test{} (in whole or in part), counted as passed above:\n",
        if n == 1 { "" } else { "s" }
    );
    for ((need, why), tests) in by_reason {
        out.push_str(&format!("  {need}: {why}\n    {}\n", tests.join(", ")));
    }
    out.push_str(&format!(
        "({REQUIRE_ALL}=1 makes a missing prerequisite fail its test; .ci/run sets it.)\n\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(test: &str, need: &'static str, why: &str) -> Skipped {
        Skipped {
            test: test.into(),
            need,
            why: why.into(),
        }
    }

    #[test]
    fn the_tally_counts_tests_once_and_groups_them_by_reason() {
        let t = tally(&[
            s("a::one", "llvm-19", "llvm-mc-19 is absent"),
            s("a::two", "llvm-19", "llvm-mc-19 is absent"),
            s("a::two", "shared", "../shared is absent"),
        ]);
        assert!(t.contains("not run here: 2 tests"), "{t}");
        assert!(
            t.contains("  llvm-19: llvm-mc-19 is absent\n    a::one, a::two\n"),
            "{t}"
        );
        assert!(
            t.contains("  shared: ../shared is absent\n    a::two\n"),
            "{t}"
        );
    }

    #[test]
    fn only_require_all_makes_a_skip_fail_and_may_skip_names_the_exceptions() {
        assert!(!required_under("", "", "llvm-19"));
        assert!(!required_under("0", "", "llvm-19"));
        assert!(required_under("1", "", "llvm-19"));
        assert!(required_under("1", "root", "llvm-19"));
        assert!(!required_under("1", "shared, root", "root"));
    }

    #[test]
    fn the_sandbox_holds_every_folder_of_the_environment() {
        for (var, dir) in isolated_env() {
            assert!(dir.starts_with(sandbox()), "{var}");
            assert!(dir.is_dir(), "{var}: {}", dir.display());
        }
    }
}
