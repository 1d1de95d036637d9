//! `kernelab counters` against stand-in profilers (tests/standins/ncu, tests/standins/rocprofv3)
//! placed first on PATH: they run nothing on a GPU and replay output the real tools wrote
//! (ncu on an NVIDIA H200; rocprofv3 counter files from AMD's docs and an MI300A). rocprofv3
//! never ran on AMD hardware for these tests.

use super::{fixture, kernelab, root};
use std::path::Path;

/// A temporary folder with the stand-in `name` on PATH, its state folder, and a listing made
/// of the metric names the real tool wrote in the fixtures.
struct Standin {
    dir: tempfile::TempDir,
}

impl Standin {
    fn new(name: &str, listing: &[&str]) -> Standin {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).expect("bin");
        std::fs::create_dir_all(dir.path().join("state")).expect("state");
        std::fs::copy(root().join("tests/standins").join(name), bin.join(name)).expect("copy");
        let mut text = String::new();
        for l in listing {
            text.push_str(&format!("{l:<60} (listed)\n"));
        }
        std::fs::write(dir.path().join("listing.txt"), text).expect("listing");
        Standin { dir }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn cmd(&self) -> assert_cmd::Command {
        let mut c = kernelab();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![self.path().join("bin")];
        paths.extend(std::env::split_paths(&path));
        c.env("PATH", std::env::join_paths(paths).expect("PATH"))
            .env("STANDIN_STATE", self.path().join("state"))
            .env("STANDIN_FIXTURES", root().join("tests/fixtures"))
            .env("STANDIN_LISTING", self.path().join("listing.txt"))
            .arg("counters");
        c
    }
    fn argv_log(&self) -> String {
        std::fs::read_to_string(self.path().join("state/argv")).unwrap_or_default()
    }
}

/// Metric base names in the real H200 ncu CSVs (what `--query-metrics` would list).
fn h200_listing() -> Vec<String> {
    let mut names = Vec::new();
    for f in ["ncu_recompute_metrics.csv", "ncu_recompute_raw.csv"] {
        let text = std::fs::read_to_string(fixture(f)).expect("fixture");
        for field in text.split(['"', ',', '\n']) {
            if field.contains("__") && !field.contains(' ') {
                let base = field.split('.').next().unwrap_or(field).to_string();
                if !names.contains(&base) {
                    names.push(base);
                }
            }
        }
    }
    names
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: stdout {} stderr {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

const NCU_METRICS: &str = "dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct";

fn listing_refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn ncu_commands_repeated_with_medians_derived_metrics_and_unavailable_ones_named() {
    let names = h200_listing();
    let s = Standin::new("ncu", &listing_refs(&names));
    let out = s
        .cmd()
        .args([
            "--metrics",
            NCU_METRICS,
            "--repeats",
            "3",
            "--format",
            "json",
        ])
        .args([
            "--baseline",
            "true baseline",
            "--candidate",
            "true candidate",
        ])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json(&out);
    let b = &v;
    assert_eq!(
        b["unavailable"],
        serde_json::json!(["lts__t_sector_hit_rate.pct"])
    );
    assert_eq!(b["processes"].as_array().map(Vec::len), Some(6));
    assert!(b["processes"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|p| p["failure"].is_null()));
    let argv: Vec<&str> = b["processes"][0]["argv"]
        .as_array()
        .expect("argv")
        .iter()
        .filter_map(|a| a.as_str())
        .collect();
    for want in [
        "--csv",
        "--metrics",
        "--clock-control",
        "none",
        "--log-file",
    ] {
        assert!(argv.contains(&want), "{argv:?}");
    }
    let stat = |side: &str, metric: &str| {
        b["stats"]
            .as_array()
            .expect("stats")
            .iter()
            .find(|s| s["side"] == side && s["metric"] == metric)
            .cloned()
            .unwrap_or_else(|| panic!("{side} {metric}"))
    };
    // Two launches per replayed process (82,432 and 82,080 ns), three processes per side.
    let d = stat("baseline", "gpu__time_duration.sum");
    assert_eq!(d["median"], 82256.0);
    assert_eq!(
        (d["min"].clone(), d["max"].clone()),
        (82080.0.into(), 82432.0.into())
    );
    assert_eq!(d["values"].as_array().map(Vec::len), Some(6));
    let bw = stat("baseline", "derived: achieved DRAM bandwidth");
    assert_eq!(
        bw["formula"],
        "(dram__bytes_read.sum + dram__bytes_write.sum) / gpu__time_duration.sum"
    );
    let want = (171_353_344.0 + 113_980_160.0) / 82_432e-9;
    assert!((bw["median"].as_f64().expect("bw") - want).abs() < 1.0);
    let occ = stat("candidate", "derived: achieved occupancy");
    assert_eq!(
        occ["formula"],
        "sm__warps_active.avg.pct_of_peak_sustained_active"
    );
    // Same replayed output on both sides: no change, nothing flagged.
    let changes = b["changes"].as_array().expect("changes");
    assert!(!changes.is_empty());
    assert!(changes
        .iter()
        .all(|c| c["ratio"] == 1.0 && c["change"] == 0.0 && c["flagged"] == false));
    assert!(s
        .argv_log()
        .lines()
        .next()
        .is_some_and(|l| l.contains("--query-metrics")));
}

#[test]
fn a_crash_and_a_permission_error_are_recorded_per_process_and_the_run_goes_on() {
    let names = h200_listing();
    let s = Standin::new("ncu", &listing_refs(&names));
    // Invocation 1 is the metric query; 3 aborts, 5 lacks counter permission.
    let out = s
        .cmd()
        .env("STANDIN_CRASH", "3")
        .env("STANDIN_PERM", "5")
        .args([
            "--metrics",
            "gpu__time_duration.sum",
            "--repeats",
            "3",
            "--format",
            "json",
        ])
        .args(["--baseline", "true b", "--candidate", "true c"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let b = &json(&out);
    let p = b["processes"].as_array().expect("processes");
    assert_eq!(p.len(), 6);
    assert_eq!(p[1]["failure"], "signal");
    assert_eq!(p[1]["signal"], 6);
    assert!(p[1]["stderr"]
        .as_str()
        .is_some_and(|e| e.contains("==PROF== Connected")));
    assert_eq!(p[3]["failure"], "permission");
    assert!(p[3]["message"]
        .as_str()
        .is_some_and(|m| m.contains("gVisor")));
    assert_eq!(p.iter().filter(|x| x["failure"].is_null()).count(), 4);
    // Issue 27: the run's folder holds the profiler's output, and `kernelab runs` lists the run
    // with its six processes.
    let state = tempfile::tempdir().expect("tmp");
    std::fs::remove_file(s.path().join("state/count")).expect("reset");
    let again = s
        .cmd()
        .env("XDG_STATE_HOME", state.path())
        .args([
            "--metrics",
            "gpu__time_duration.sum",
            "--repeats",
            "3",
            "--format",
            "json",
        ])
        .args(["--baseline", "true b", "--candidate", "true c"])
        .output()
        .expect("runs");
    assert!(again.status.success());
    let listed = kernelab()
        .env("XDG_STATE_HOME", state.path())
        .args(["runs", "--format", "json"])
        .output()
        .expect("runs");
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(listed[0]["kind"], "counters");
    assert_eq!(listed[0]["count"], 6);
    assert_eq!(listed[0]["state"], "complete");
    let id = listed[0]["id"].as_str().expect("id");
    let profiler = state.path().join("kernelab/runs").join(id).join("profiler");
    assert!(
        std::fs::read_dir(&profiler)
            .expect("profiler folder")
            .count()
            > 0
    );
    assert!(b["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|n| n.as_str().is_some_and(|n| n.contains("ERR_NVGPUCTRPERM"))));
    std::fs::remove_file(s.path().join("state/count")).expect("reset");
    let md = s
        .cmd()
        .env("STANDIN_CRASH", "2")
        .args([
            "--metrics",
            "gpu__time_duration.sum",
            "--repeats",
            "1",
            "--format",
            "md",
        ])
        .args(["--baseline", "true b", "--candidate", "true c"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&md.stdout);
    assert!(text.contains("Failed profiler processes"), "{text}");
}

#[test]
fn a_missing_profiler_is_one_error_before_any_process_starts() {
    let s = Standin::new("ncu", &[]);
    let out = s
        .cmd()
        .args([
            "--profiler-path",
            "/nonexistent/ncu",
            "--repeats",
            "1",
            "--format",
            "json",
            "--",
            "true",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim(),
        "kernelab: error: /nonexistent/ncu: not an executable file; install NVIDIA Nsight Compute (ncu, in the CUDA toolkit), or name it with --profiler-path PATH"
    );
    assert!(out.stdout.is_empty());
    // On a PATH without ncu, the default profiler is named the same way, and nothing ran.
    let out = kernelab()
        .env("PATH", "/nonexistent")
        .args(["counters", "--repeats", "1", "--", "/bin/true"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ncu: not found on PATH; install NVIDIA Nsight Compute"),
        "{err}"
    );
    assert!(!err.contains("MissingBinary"), "{err}");
    assert!(s.argv_log().is_empty(), "no profiler process ran");
}

#[test]
fn a_used_work_dir_is_refused_so_no_stale_output_mixes_in() {
    let s = Standin::new("ncu", &[]);
    let work = s.path().join("work");
    std::fs::create_dir_all(work.join("r1")).expect("mkdir");
    let out = s
        .cmd()
        .arg("--work-dir")
        .arg(&work)
        .args(["--repeats", "1", "--", "true"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not empty"));
}

#[test]
fn a_spec_runs_each_build_once_per_process_filtered_by_its_symbol() {
    let names = h200_listing();
    let s = Standin::new("ncu", &listing_refs(&names));
    let spec = fixture("kernel/recompute_w4s3_vs_w8s2.toml");
    let bundle = s.path().join("bundle");
    let out = s
        .cmd()
        .arg("--record")
        .arg(&bundle)
        .arg(&spec)
        .args([
            "--metrics",
            "gpu__time_duration.sum,dram__bytes_read.sum",
            "--repeats",
            "2",
        ])
        .args(["--format", "md"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Baseline versus candidate"), "{text}");
    let log = s.argv_log();
    assert!(log.contains("kernel launch-once"), "{log}");
    assert!(
        log.contains("--build baseline") && log.contains("--build candidate"),
        "{log}"
    );
    assert!(
        log.contains("--kernel-name regex:^recompute_w_u_fwd_kernel$ --kernel-name-base mangled"),
        "{log}"
    );
    let report = kernelab()
        .arg("report")
        .arg(&bundle)
        .output()
        .expect("report");
    let md = String::from_utf8_lossy(&report.stdout);
    assert!(md.contains("counters"), "{md}");
}

#[test]
fn rocprofv3_one_counter_per_process_from_replayed_real_counter_files() {
    let s = Standin::new("rocprofv3", &["SQ_WAVES", "OccupancyPercent"]);
    let out = s
        .cmd()
        .args([
            "--profiler",
            "rocprofv3",
            "--metrics",
            "SQ_WAVES,OccupancyPercent,TCC_HIT_sum",
        ])
        .args([
            "--repeats",
            "2",
            "--kernel",
            "compute_rhs|addition",
            "--format",
            "json",
            "--",
            "true",
        ])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let b = &json(&out);
    assert_eq!(b["unavailable"], serde_json::json!(["TCC_HIT_sum"]));
    assert_eq!(b["group_size"], 1);
    assert_eq!(b["processes"].as_array().map(Vec::len), Some(4));
    let log = s.argv_log();
    for want in [
        "--pmc SQ_WAVES ",
        "--disable-signal-handlers true",
        "--output-format csv",
        "--kernel-include-regex compute_rhs|addition",
        " -- true",
    ] {
        assert!(log.contains(want), "{want}: {log}");
    }
    let stat = |kernel: &str, metric: &str| {
        b["stats"]
            .as_array()
            .expect("stats")
            .iter()
            .find(|s| s["kernel"] == kernel && s["metric"] == metric)
            .cloned()
            .unwrap_or_else(|| panic!("{kernel} {metric}"))
    };
    let occ = stat("compute_rhs", "OccupancyPercent");
    assert_eq!(occ["values"].as_array().map(Vec::len), Some(4));
    assert!((occ["median"].as_f64().expect("median") - (24.333218 + 22.353355) / 2.0).abs() < 1e-9);
    let dur = stat(
        "compute_rhs",
        "dispatch duration (End_Timestamp - Start_Timestamp)",
    );
    assert_eq!(dur["min"], 9334.0);
    let derived = stat("compute_rhs", "derived: achieved occupancy");
    assert_eq!(derived["formula"], "OccupancyPercent");
}

/// Every number the report draws of a counters record (medians, ranges, durations, derived
/// bandwidths, counts) is a figure the audit finds: kernelab's own report checks clean, and a
/// changed digit of a duration or a bandwidth is caught.
#[test]
fn a_counters_record_audits_clean_in_its_own_report_and_a_changed_rate_is_caught() {
    let names = h200_listing();
    let s = Standin::new("ncu", &listing_refs(&names));
    let bundle = s.path().join("bundle");
    let out = s
        .cmd()
        .args(["--metrics", NCU_METRICS, "--repeats", "3", "--record"])
        .arg(&bundle)
        .args([
            "--baseline",
            "true baseline",
            "--candidate",
            "true candidate",
        ])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = kernelab()
        .arg("report")
        .arg(&bundle)
        .args(["--format", "md"])
        .output()
        .expect("runs");
    assert!(report.status.success());
    let md = String::from_utf8(report.stdout).expect("UTF-8");
    let check = |note: &str| {
        let p = s.path().join("note.md");
        std::fs::write(&p, note).expect("note");
        let out = kernelab()
            .args(["report", "check"])
            .arg(&p)
            .arg("--bundle")
            .arg(&bundle)
            .args(["--format", "json"])
            .output()
            .expect("runs");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        (
            out.status.code(),
            v["mismatches"].clone(),
            v["checked"].clone(),
        )
    };
    let (code, mismatches, checked) = check(&md);
    assert_eq!(
        (code, &mismatches),
        (Some(0), &serde_json::json!([])),
        "{md}"
    );
    assert!(checked.as_u64().is_some_and(|n| n >= 20), "{checked}");
    // The median duration, 82.256 µs, and the derived bandwidth, (171,353,344 + 113,980,160)
    // B / 82,432 ns = 3,461.4 GB/s, each with one digit changed.
    for (from, to) in [("82.256 µs", "82.356 µs"), ("3,461.4 GB/s", "3,471.4 GB/s")] {
        assert!(md.contains(from), "no {from:?} in:\n{md}");
        let (code, mismatches, _) = check(&md.replacen(from, to, 1));
        assert_eq!(code, Some(1), "{from} → {to} passed: {mismatches}");
    }
    // And every other number of its tables (issue 45, item 2), but for counts that, moved by
    // one, equal another count the line may quote (3 repeats, 1 metric per process): `n=3` of
    // the derived rows, `0 counter changes`. A count is not told apart from another count of
    // the same scope.
    let (missed, moved) = super::audit::digits_missed(&bundle, &md);
    assert!(moved >= 70, "{moved}");
    assert!(
        missed.len() <= 5
            && missed
                .iter()
                .all(|m| m.contains("(n=3)") || m.contains("0 counter changes")),
        "{} of {moved} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}
