//! Hostile input, round 2 (issue 24), beyond `serve`: a kernel block no GPU can launch, a sweep
//! grid whose product explodes, FIFOs where files are read (serve spec, `serve --resume`,
//! `sweep collect`'s point files, a profiler's `--log-file`), a profiler that leaves a daemon
//! holding its standard error or writes a 1 GiB log, gzip members and trailing garbage for
//! `export`, zero-duration kernels and a negative ceiling for `roofline`, files that must not be
//! replaced, and a newline in a file name that must not reach the Slurm batch script.

use crate::sweep::tensor_sweep;
use crate::{fixture, kernelab, root};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn mkfifo(p: &Path) -> bool {
    std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `kernelab ARGS` in `dir` with a limit; the output and the wall time.
fn run(dir: &Path, args: &[&std::ffi::OsStr], limit: u64) -> (std::process::Output, Duration) {
    let t = Instant::now();
    let out = kernelab()
        .current_dir(dir)
        .args(args)
        .timeout(Duration::from_secs(limit))
        .output()
        .expect("run");
    (out, t.elapsed())
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

#[test]
fn a_block_beyond_the_device_limits_fails_dry_run_naming_line_and_key() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = std::fs::read_to_string(fixture("kernel/copy_scalar_vs_vec4.toml"))
        .expect("spec")
        .replace(
            "../code/copy_variants_sm90.cubin",
            &fixture("code/copy_variants_sm90.cubin")
                .display()
                .to_string(),
        )
        .replace("block = [256]", "block = [4096, 4096, 64]");
    let p = dir.path().join("k.toml");
    std::fs::write(&p, &text).expect("write");
    let line = text
        .lines()
        .position(|l| l.starts_with("block"))
        .expect("block")
        + 1;
    let (o, took) = run(
        dir.path(),
        &[os("kernel"), os("run"), os("--dry-run"), p.as_os_str()],
        30,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "k.toml: line {line}: `block`: block x = 4096: at most 1024"
        )),
        "{err}"
    );
    assert!(took < Duration::from_secs(5));
    // 1024 × 2 × 1 threads: each dimension fits, the product does not.
    std::fs::write(&p, text.replace("[4096, 4096, 64]", "[1024, 2]")).expect("write");
    let (o, _) = run(
        dir.path(),
        &[os("kernel"), os("run"), os("--dry-run"), p.as_os_str()],
        30,
    );
    assert!(
        stderr(&o).contains("2048 threads per block: at most 1024"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_sweep_grid_is_counted_before_it_is_expanded() {
    let dir = tempfile::tempdir().expect("tmp");
    // 8 sizes of 10 values each: 10^8 points from a few hundred bytes.
    let mut text = String::from(
        "[tensor]\ngate = \"bitwise\"\nbaseline = \"a.npy\"\ncandidate = \"b.npy\"\n\n[grid.sizes]\n",
    );
    for k in 0..8 {
        text.push_str(&format!("s{k} = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\n"));
    }
    let p = dir.path().join("big.toml");
    std::fs::write(&p, &text).expect("write");
    let rss = dir.path().join("rss");
    let t = Instant::now();
    let o = assert_cmd::Command::new("/usr/bin/time")
        .current_dir(dir.path())
        .args(["-f", "%M", "-o"])
        .arg(&rss)
        .arg(assert_cmd::cargo::cargo_bin("kernelab"))
        .envs(kernelab_testkit::isolated_env())
        .args(["sweep", "--dir"])
        .arg(dir.path().join("out"))
        .arg(&p)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("run");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("big.toml: line 6"), "{err}");
    assert!(err.contains("100000000 points"), "{err}");
    assert!(err.contains("at most 100000"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(5));
    let kb: u64 = std::fs::read_to_string(&rss)
        .ok()
        .and_then(|t| t.lines().last()?.trim().parse().ok())
        .unwrap_or(0);
    assert!(kb < 100_000, "max RSS {kb} KiB");
}

#[test]
fn fifos_are_refused_without_blocking_where_files_are_read() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let spec = d.join("spec.toml");
    let samples = d.join("s.jsonl");
    if !(mkfifo(&spec) && mkfifo(&samples)) {
        kernelab_testkit::skip("mkfifo", "mkfifo is not available");
        return;
    }
    let (o, took) = run(d, &[os("serve"), spec.as_os_str()], 20);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("spec.toml"), "{}", stderr(&o));
    assert!(took < Duration::from_secs(5));
    let (o, took) = run(d, &[os("serve"), os("--resume"), samples.as_os_str()], 20);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("s.jsonl") && err.contains("not a regular file"),
        "{err}"
    );
    assert!(took < Duration::from_secs(5));
    // A FIFO among a sweep's point files.
    let sweep = tensor_sweep(d, 1);
    let results = d.join("results");
    std::fs::create_dir_all(results.join("points")).expect("points");
    assert!(mkfifo(&results.join("points/zz.json")));
    let (o, took) = run(
        d,
        &[
            os("sweep"),
            os("collect"),
            os("--dir"),
            results.as_os_str(),
            sweep.as_os_str(),
        ],
        20,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("zz.json"), "{err}");
    assert!(took < Duration::from_secs(5));
}

/// A folder with the ncu stand-in on PATH; runs `kernelab counters` with `hostile` set.
fn counters(hostile: &str) -> (tempfile::TempDir, std::process::Output, Duration, PathBuf) {
    let dir = tempfile::tempdir().expect("tmp");
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::create_dir_all(dir.path().join("state")).expect("state");
    std::fs::copy(root().join("tests/standins/ncu"), bin.join("ncu")).expect("copy");
    std::fs::write(
        dir.path().join("listing.txt"),
        "gpu__time_duration                                           (listed)\n",
    )
    .expect("listing");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&path));
    let rss = dir.path().join("rss");
    let t = Instant::now();
    let out = assert_cmd::Command::new("/usr/bin/time")
        .current_dir(dir.path())
        .args(["-f", "%M", "-o"])
        .arg(&rss)
        .arg(assert_cmd::cargo::cargo_bin("kernelab"))
        .envs(kernelab_testkit::isolated_env())
        .env("PATH", std::env::join_paths(paths).expect("PATH"))
        .env("STANDIN_STATE", dir.path().join("state"))
        .env("STANDIN_FIXTURES", root().join("tests/fixtures"))
        .env("STANDIN_LISTING", dir.path().join("listing.txt"))
        .env("STANDIN_HOSTILE", hostile)
        .arg("counters")
        .arg("--work-dir")
        .arg(dir.path().join("work"))
        .args(["--metrics", "gpu__time_duration.sum", "--repeats", "1"])
        .args([
            "--format",
            "json",
            "--baseline",
            "true b",
            "--candidate",
            "true c",
        ])
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs");
    let took = t.elapsed();
    (dir, out, took, rss)
}

fn max_rss_kb(rss: &Path) -> u64 {
    std::fs::read_to_string(rss)
        .ok()
        .and_then(|t| t.lines().last()?.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_profiler_log_that_is_a_fifo_or_1_gib_is_refused_fast() {
    for (hostile, said) in [
        ("fifo-log", "not a regular file"),
        ("big-log", "larger than the limit of 268435456 bytes"),
    ] {
        let (_dir, o, took, rss) = counters(hostile);
        let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
        assert!(text.contains(said), "{hostile}: {text}");
        assert!(took < Duration::from_secs(20), "{hostile}: {took:?}");
        let kb = max_rss_kb(&rss);
        assert!(kb < 300_000, "{hostile}: max RSS {kb} KiB");
        assert!(!text.contains("panicked"), "{text}");
    }
}

#[test]
fn a_profiler_daemon_holding_stderr_neither_stalls_kernelab_nor_outlives_it() {
    let (dir, o, took, _) = counters("daemon");
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    assert!(took < Duration::from_secs(20), "{took:?}");
    let pid = std::fs::read_to_string(dir.path().join("state/daemon")).expect("daemon pid");
    let alive = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
        .is_ok_and(|s| !s.contains(") Z"));
    if alive {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid.trim()])
            .status();
    }
    assert!(!alive, "the profiler's daemon {pid} was left running");
}

/// Gzip of `text` as one member.
fn gz(text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(text.as_bytes()).expect("gzip");
    e.finish().expect("gzip")
}

#[test]
fn export_reads_every_gzip_member_and_refuses_trailing_garbage() {
    let dir = tempfile::tempdir().expect("tmp");
    let line = |i: usize| format!("{{\"kind\":\"request\",\"round\":{i},\"value\":1.5}}\n");
    let mut bytes = gz(&(0..3).map(line).collect::<String>());
    bytes.extend(gz(&(3..6).map(line).collect::<String>()));
    let p = dir.path().join("two.jsonl.gz");
    std::fs::write(&p, &bytes).expect("write");
    let out_dir = dir.path().join("out");
    let (o, _) = run(
        dir.path(),
        &[
            os("export"),
            os("--parquet"),
            out_dir.as_os_str(),
            p.as_os_str(),
        ],
        60,
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(text.contains("6 rows"), "both members are read: {text}");
    bytes.extend_from_slice(b"trailing garbage, not a gzip member");
    std::fs::write(&p, &bytes).expect("write");
    let (o, _) = run(
        dir.path(),
        &[
            os("export"),
            os("--parquet"),
            dir.path().join("out2").as_os_str(),
            p.as_os_str(),
        ],
        60,
    );
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("two.jsonl.gz: line 7"), "{err}");
}

/// `kernelab roofline` of `ncu` against `ceilings` with the copy kernels' sizes.
fn roofline(dir: &Path, ncu: &Path, ceilings: &Path, extra: &[&str]) -> std::process::Output {
    let mut c = kernelab();
    c.current_dir(dir)
        .arg("roofline")
        .arg(ncu)
        .arg("--work")
        .arg(root().join("examples/roofline/work.toml"))
        .arg("--ceilings")
        .arg(ceilings)
        .args(["--format", "json"]);
    for s in ["B=1", "T=8192", "H=32", "HV=32", "K=128", "V=128"] {
        c.args(["--size", s]);
    }
    c.args(extra)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs")
}

#[test]
fn zero_durations_are_unavailable_and_a_negative_ceiling_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let csv = std::fs::read_to_string(fixture("ncu_recompute_metrics.csv")).expect("csv");
    let zeroed: String = csv
        .lines()
        .map(|l| {
            if l.contains("\"gpu__time_duration.sum\"") {
                match l.rfind(",\"") {
                    Some(i) => format!("{},\"0\"", &l[..i]),
                    None => l.to_string(),
                }
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let ncu = dir.path().join("zero.csv");
    std::fs::write(&ncu, zeroed + "\n").expect("write");
    let ceilings = fixture("h200_ceilings/ceilings.json");
    let o = roofline(dir.path(), &ncu, &ceilings, &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    if o.status.code() == Some(0) {
        let v: serde_json::Value = serde_json::from_str(&text).expect("json");
        for f in v["families"].as_array().expect("families") {
            let p = &f["placement"];
            assert!(!p["fraction"].is_number(), "{p}");
            assert!(!p["flop_per_s"].is_number(), "{p}");
        }
    } else {
        // A reader may refuse zero times itself; never a panic or an infinity.
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    }
    assert!(!text.contains("inf") && !text.contains("NaN"), "{text}");
    // A negative measured ceiling.
    let mut c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&ceilings).expect("read")).expect("json");
    let body = if c.get("result").is_some() {
        &mut c["result"]
    } else {
        &mut c
    };
    body["ceilings"][0]["measured"] = serde_json::json!({"value": -2e10, "method": "hostile"});
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, c.to_string()).expect("write");
    let o = roofline(dir.path(), &fixture("ncu_recompute_metrics.csv"), &bad, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.json: key `ceilings[0].measured.value"),
        "{err}"
    );
}

#[test]
fn svg_and_out_files_are_never_replaced_without_force_and_errors_name_them() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let svg = d.join("chart.svg");
    std::fs::write(&svg, "keep").expect("write");
    let ncu = fixture("ncu_recompute_metrics.csv");
    let ceilings = fixture("h200_ceilings/ceilings.json");
    let o = roofline(d, &ncu, &ceilings, &["--svg", svg.to_str().expect("utf-8")]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("chart.svg") && err.contains("already exists"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&svg).expect("read"), "keep");
    // --out through a planted link: the link's target is never written.
    let victim = d.join("victim.txt");
    std::fs::write(&victim, "keep").expect("write");
    let link = d.join("out.json");
    std::os::unix::fs::symlink(&victim, &link).expect("link");
    let o = roofline(
        d,
        &ncu,
        &ceilings,
        &["--out", link.to_str().expect("utf-8"), "--force"],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&victim).expect("read"), "keep");
    // A folder that cannot be written: the message names the user's file, not a temporary.
    let ro = d.join("ro");
    std::fs::create_dir(&ro).expect("ro");
    let out = ro.join("result.json");
    let _ = std::process::Command::new("chmod")
        .arg("555")
        .arg(&ro)
        .status();
    let o = roofline(d, &ncu, &ceilings, &["--out", out.to_str().expect("utf-8")]);
    let _ = std::process::Command::new("chmod")
        .arg("755")
        .arg(&ro)
        .status();
    if o.status.code() == Some(0) {
        kernelab_testkit::skip(
            "non-root",
            "the read-only part: running as root, the folder stays writable",
        );
    } else {
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("ro/result.json"), "{err}");
        assert!(!err.contains(".tmp"), "{err}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(d)
        .expect("dir")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn a_newline_in_a_sweep_file_name_never_reaches_the_batch_script() {
    let dir = tempfile::tempdir().expect("tmp");
    let d = dir.path();
    let sweep = tensor_sweep(d, 1);
    let evil = d.join("x\ntouch INJECTED\n.toml");
    std::fs::rename(&sweep, &evil).expect("rename");
    // A fake sbatch that would run the script it is given.
    let bin = d.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let sbatch = bin.join("sbatch");
    std::fs::write(
        &sbatch,
        "#!/bin/sh\nfor a; do s=\"$a\"; done\nsh \"$s\" >/dev/null 2>&1\necho 42\n",
    )
    .expect("sbatch");
    let _ = std::process::Command::new("chmod")
        .arg("755")
        .arg(&sbatch)
        .status();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin];
    paths.extend(std::env::split_paths(&path));
    let o = kernelab()
        .current_dir(d)
        .env("PATH", std::env::join_paths(paths).expect("PATH"))
        .args(["sweep", "submit", "--dir"])
        .arg(d.join("results"))
        .arg(&evil)
        .timeout(Duration::from_secs(60))
        .output()
        .expect("runs");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("unsafe batch script"), "{err}");
    assert!(!d.join("INJECTED").exists(), "the injected line ran");
    assert!(
        !d.join("results/INJECTED").exists(),
        "the injected line ran"
    );
}
