//! Issue 27: experiment runs keep their files in the per-user state folder, never where the
//! command was run; `kernelab runs` lists them and `--resume` takes an id; a missing program
//! fails once, before anything runs.

use super::kernelab;
use std::path::Path;

/// Names in `dir` (sorted).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("lists")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `kernelab ab` in a fresh working directory with its own state folder.
fn ab_in(cwd: &Path, state: &Path, extra: &[&str]) -> std::process::Output {
    kernelab()
        .current_dir(cwd)
        .env("XDG_STATE_HOME", state)
        .args(["ab", "--baseline", "true", "--candidate", "true", "--no-aa"])
        .args([
            "--warmup",
            "0",
            "--fixed",
            "--min-pairs",
            "2",
            "--max-pairs",
            "4",
        ])
        .args(["--format", "json"])
        .args(extra)
        .output()
        .expect("runs")
}

#[test]
fn issue27_ab_writes_nothing_in_the_working_directory_and_runs_lists_it() {
    let cwd = tempfile::tempdir().expect("tmp");
    let state = tempfile::tempdir().expect("tmp");
    let first = ab_in(cwd.path(), state.path(), &[]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    // Two runs started in the same second do not collide.
    let second = ab_in(cwd.path(), state.path(), &[]);
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert_eq!(
        names(cwd.path()),
        Vec::<String>::new(),
        "the working directory stays empty"
    );
    let err = String::from_utf8_lossy(&first.stderr);
    let runs = state.path().join("kernelab/runs");
    assert!(
        err.contains(&format!("samples in {}", runs.display())),
        "{err}"
    );
    let ids = names(&runs);
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(ids.iter().all(|i| i.starts_with("ab-")), "{ids:?}");
    // The record names the samples file in the run's folder.
    let doc: serde_json::Value = serde_json::from_slice(&first.stdout).expect("json");
    assert!(doc["samples"]
        .as_str()
        .is_some_and(|s| s.starts_with(&runs.display().to_string())));
    // The header carries kind, schema version, id and the plan.
    let text = std::fs::read_to_string(runs.join(&ids[0]).join("samples.jsonl")).expect("reads");
    let header: serde_json::Value =
        serde_json::from_str(text.lines().next().expect("line")).expect("json");
    assert_eq!(header["kind"], "header");
    assert_eq!(header["run"], "ab");
    assert_eq!(header["id"], ids[0].as_str());
    assert!(header["schema_version"].is_u64() && header["design"]["stop"].is_string());
    // `kernelab runs` lists both, complete, with their pairs.
    let out = kernelab()
        .env("XDG_STATE_HOME", state.path())
        .args(["runs", "--format", "json"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let listed = listed.as_array().expect("array");
    assert_eq!(listed.len(), 2);
    for r in listed {
        assert_eq!(
            (r["kind"].as_str(), r["state"].as_str()),
            (Some("ab"), Some("complete"))
        );
        assert_eq!(r["count"], 4, "{r}");
    }
    let table = kernelab()
        .env("XDG_STATE_HOME", state.path())
        .arg("runs")
        .output()
        .expect("runs");
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.contains("2 runs in") && table.contains("4 pairs"),
        "{table}"
    );
    assert_eq!(names(cwd.path()), Vec::<String>::new());
}

#[test]
fn issue27_resume_takes_a_run_id_and_refuses_another_kind() {
    let cwd = tempfile::tempdir().expect("tmp");
    let state = tempfile::tempdir().expect("tmp");
    assert!(ab_in(cwd.path(), state.path(), &[]).status.success());
    let id = names(&state.path().join("kernelab/runs")).remove(0);
    let out = ab_in(cwd.path(), state.path(), &["--resume", &id]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A serve --resume of an ab run names what the file holds.
    let out = kernelab()
        .current_dir(cwd.path())
        .env("XDG_STATE_HOME", state.path())
        .args(["serve", "--resume", &id])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a serve run cannot be resumed here; this file holds a ab run"),
        "{err}"
    );
    let out = ab_in(cwd.path(), state.path(), &["--resume", "ab-nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`kernelab runs` lists them"));
    assert_eq!(names(cwd.path()), Vec::<String>::new());
}

#[test]
fn issue27_a_missing_program_fails_once_before_anything_runs_or_is_written() {
    let cwd = tempfile::tempdir().expect("tmp");
    let state = tempfile::tempdir().expect("tmp");
    let out = kernelab()
        .current_dir(cwd.path())
        .env("XDG_STATE_HOME", state.path())
        .args([
            "ab",
            "--baseline",
            "true",
            "--candidate",
            "kernelab-no-such-bench --x",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim(),
        "kernelab: error: kernelab-no-such-bench: not found on PATH; install it, or give its path in --candidate (or use --shell)"
    );
    assert!(
        !state.path().join("kernelab").exists(),
        "no run was created"
    );
    assert_eq!(names(cwd.path()), Vec::<String>::new());
}

#[test]
fn issue27_serve_names_a_missing_server_program_and_starts_nothing() {
    let cwd = tempfile::tempdir().expect("tmp");
    let state = tempfile::tempdir().expect("tmp");
    let specs = tempfile::tempdir().expect("tmp");
    let spec = crate::serve::spec(specs.path(), "", "", 2, "");
    let text = std::fs::read_to_string(&spec).expect("spec");
    std::fs::write(
        &spec,
        text.replacen("\"python3\"", "\"kernelab-no-such-server\"", 1),
    )
    .expect("spec");
    let out = kernelab()
        .current_dir(cwd.path())
        .env("XDG_STATE_HOME", state.path())
        .arg("serve")
        .arg(&spec)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("kernelab-no-such-server: not found on PATH; install it, or give its path in the spec's [baseline] argv"),
        "{err}"
    );
    assert!(
        !state.path().join("kernelab").exists(),
        "no run was created"
    );
    assert_eq!(names(cwd.path()), Vec::<String>::new());
}

#[test]
fn issue27_sweep_submit_without_slurm_is_one_error_naming_sbatch() {
    let t = tempfile::tempdir().expect("tmp");
    let sweep = crate::sweep::tensor_sweep(t.path(), 1);
    let out = kernelab()
        .env("PATH", "/nonexistent")
        .args(["sweep", "submit", "--dir"])
        .arg(t.path().join("results"))
        .arg(&sweep)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("sbatch: not found on PATH; install Slurm"),
        "{err}"
    );
    assert!(!t.path().join("results/slurm").exists(), "nothing written");
}

#[test]
fn issue27_a_sweep_without_dir_writes_nothing_beside_the_sweep_file() {
    let t = tempfile::tempdir().expect("tmp");
    let state = tempfile::tempdir().expect("tmp");
    let sweep = crate::sweep::tensor_sweep(t.path(), 1);
    let before = names(t.path());
    let run = || {
        kernelab()
            .current_dir(t.path())
            .env("XDG_STATE_HOME", state.path())
            .args(["sweep", "--jobs", "1", "--format", "json"])
            .arg(&sweep)
            .output()
            .expect("runs")
    };
    let out = run();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(names(t.path()), before, "the sweep's folder is unchanged");
    let sweeps = names(&state.path().join("kernelab/sweeps"));
    assert_eq!(sweeps.len(), 1);
    assert!(sweeps[0].starts_with("sweep-"), "{sweeps:?}");
    // A rerun finds the same folder and skips the points done.
    let again = run();
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(!err.contains("ran "), "nothing left to run: {err}");
    assert_eq!(names(&state.path().join("kernelab/sweeps")), sweeps);
}

#[test]
fn issue27_a_gpu_sweep_without_a_gpu_driver_is_one_error() {
    let has_driver = std::process::Command::new("sh")
        .args(["-c", "ldconfig -p | grep -q 'libcuda.so.1'"])
        .status()
        .is_ok_and(|s| s.success());
    if has_driver {
        kernelab_testkit::skip("no-cuda-driver", "this machine has a CUDA driver");
        return;
    }
    let t = tempfile::tempdir().expect("tmp");
    let sweep = crate::root().join("bench/h200/sweep_recompute.toml");
    let out = kernelab()
        .env("XDG_STATE_HOME", t.path())
        .args(["sweep", "--dir"])
        .arg(t.path().join("results"))
        .arg(&sweep)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no CUDA driver: libcuda.so.1 is not installed"),
        "{err}"
    );
    assert!(!err.contains("configs passed"), "no point ran: {err}");
}

/// A sweep's timed kernel points are runs of the one run type in the sweep's results folder:
/// `kernelab runs --dir` lists them (kind, label, samples, state); a folder that is not there
/// is exit 2 naming it.
#[test]
fn issue27_runs_lists_a_sweeps_point_runs_by_its_folder() {
    let t = tempfile::tempdir().expect("tmp");
    let sweep = t.path().join("sweep.out");
    let run = sweep_point_run(&sweep.join("runs"), &[1500.0; 3]);
    run.finish(kernelab_runner::run::RunState::Complete)
        .expect("finish");
    let out = kernelab()
        .args(["runs", "--format", "json", "--dir"])
        .arg(&sweep)
        .output()
        .expect("runs");
    assert!(out.status.success(), "{out:?}");
    let runs: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let runs = runs.as_array().expect("array");
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["id"], serde_json::json!(run.id));
    assert_eq!(runs[0]["kind"], "sweep_point");
    assert_eq!(runs[0]["label"], "w4s3-T=2048");
    assert_eq!(runs[0]["count"], 3);
    assert_eq!(runs[0]["state"], "complete");
    // An untimed sweep's results folder holds `points/` and no runs.
    let untimed = t.path().join("untimed.out");
    std::fs::create_dir_all(untimed.join("points")).expect("mkdir");
    let out = kernelab()
        .args(["runs", "--format", "json", "--dir"])
        .arg(&untimed)
        .output()
        .expect("runs");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("json"),
        serde_json::json!([])
    );
    let file = run.samples.clone();
    let out = kernelab()
        .args(["runs", "--dir"])
        .arg(&file)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("{}: not a folder", file.display())),
        "{out:?}"
    );
    let missing = t.path().join("no-such");
    let out = kernelab()
        .args(["runs", "--dir"])
        .arg(&missing)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains(&format!("{}: no such folder", missing.display())),
        "{out:?}"
    );
}

/// A `sweep_point` run under `root` as a timed kernel point writes it (label
/// `w4s3-T=2048`, the header, then one sample line per value of `ns`).
pub(crate) fn sweep_point_run(root: &Path, ns: &[f64]) -> kernelab_runner::run::Run {
    let point = "w4s3-T=2048";
    use kernelab_runner::run::{New, OwnPlan, Plan, RunKind, Session};
    let plan = OwnPlan {
        spec_sha256: Some("ab12"),
        plan: Plan::SweepPoint {
            build: None,
            params: Default::default(),
            point,
            rounds: 2,
            spec: "s.toml",
        },
    };
    let new = New {
        label: point,
        samples: None,
        root: Some(root),
    };
    let Session {
        run, mut writer, ..
    } = Session::create(
        RunKind::SweepPoint,
        kernelab_model::SCHEMA_VERSION,
        new,
        plan,
    )
    .expect("run");
    let w = &mut writer;
    for (i, ns) in ns.iter().enumerate() {
        let sample = serde_json::json!({"round": 0, "build": "candidate", "sample": i,
            "batch": 1, "ns_per_launch": ns});
        w.write(&kernelab_runner::run::SampleLine::Sample {
            point: Some(point),
            sample: &sample,
            spec: "s.toml",
        })
        .expect("line");
    }
    run
}
