//! What differs between Nsight Compute and rocprofv3: the metric check, the command line, where
//! the output goes, how it is read, and what a failure looks like.

use super::process::{self, tail, Outcome};
use super::summary::AMD_DURATION;
use super::{Settings, Side};
use kernelab_model::counters::{CounterSample, FailureKind, ProcessRecord};
use kernelab_model::MetricValue;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The profiler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profiler {
    /// NVIDIA Nsight Compute (`ncu`).
    Ncu,
    /// AMD rocprofv3.
    Rocprofv3,
}

/// Said when a process could not read counters for lack of permission.
pub(super) const PERMISSION_NOTE: &str = "the profiler may not read GPU performance counters on this machine (ERR_NVGPUCTRPERM): counters need profiling permission (root, or the driver option NVreg_RestrictProfilingToAdminUsers=0), and sandboxed machines such as gVisor never expose them; run on a machine with direct GPU access (for example a Firecracker VM)";

impl Profiler {
    /// Its program name.
    pub fn name(self) -> &'static str {
        match self {
            Profiler::Ncu => "ncu",
            Profiler::Rocprofv3 => "rocprofv3",
        }
    }
    /// Notes that hold for every run with this profiler.
    pub fn notes(self) -> Vec<String> {
        match self {
            Profiler::Ncu => vec!["ncu ran with --clock-control none: the GPU kept its own clocks (as in production); ncu still replays each profiled kernel once per counter pass, with caches flushed between passes".into()],
            Profiler::Rocprofv3 => vec!["rocprofv3 ran with --disable-signal-handlers true and CSV output; counter values are summed by rocprofv3 over the counter's hardware instances".into()],
        }
    }
}

/// The metric check's result.
#[derive(Debug, Default)]
pub struct Check {
    /// Metrics the listing does not name.
    pub unavailable: Vec<String>,
    /// Why the check could not run.
    pub failed: Option<String>,
}

/// The name a listing shows for a metric: ncu lists base names (`dram__bytes` for
/// `dram__bytes.sum`), rocprofv3 counters without an instance index (`TCC_HIT` for `TCC_HIT[3]`).
fn listed_name(p: Profiler, metric: &str) -> &str {
    match p {
        Profiler::Ncu => metric.split('.').next().unwrap_or(metric),
        Profiler::Rocprofv3 => metric.split('[').next().unwrap_or(metric),
    }
}

/// Whether `word` occurs in `text` as a whole word (letters, digits, `_` around it differ).
fn has_word(text: &str, word: &str) -> bool {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// Asks the profiler which metrics this GPU offers (`ncu --query-metrics`,
/// `rocprofv3 --list-avail`) and names the requested ones it does not list.
pub fn check_metrics(p: Profiler, program: &Path, metrics: &[String], timeout: Duration) -> Check {
    let flag = match p {
        Profiler::Ncu => "--query-metrics",
        Profiler::Rocprofv3 => "--list-avail",
    };
    let argv = vec![program.display().to_string(), flag.to_string()];
    let dir = std::env::temp_dir().join(format!("kernelab-counters-check-{}", std::process::id()));
    let (out_path, err_path) = (dir.with_extension("out"), dir.with_extension("err"));
    let o = process::run(&argv, &out_path, &err_path, timeout);
    let listing = read_capped_text(&out_path, MAX_PROFILER_TEXT);
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    let text = format!("{listing}\n{}", o.stderr);
    let failed = if let Some(e) = &o.spawn_error {
        Some(format!("`{}` could not start: {e}", argv.join(" ")))
    } else if text.contains("ERR_NVGPUCTRPERM") {
        Some(format!("`{}`: ERR_NVGPUCTRPERM", argv.join(" ")))
    } else if o.exit_code != Some(0) {
        Some(format!(
            "`{}` {}: {}",
            argv.join(" "),
            ended(&o),
            tail(o.stderr.trim()).lines().last().unwrap_or("")
        ))
    } else if !metrics
        .iter()
        .any(|m| has_word(&listing, listed_name(p, m)))
        && !metrics.is_empty()
    {
        // A listing that names none of them is not a listing of this GPU's metrics.
        Some(format!(
            "`{}` listed none of the requested metrics",
            argv.join(" ")
        ))
    } else {
        None
    };
    if failed.is_some() {
        return Check {
            unavailable: Vec::new(),
            failed,
        };
    }
    Check {
        unavailable: metrics
            .iter()
            .filter(|m| !has_word(&listing, listed_name(p, m)))
            .cloned()
            .collect(),
        failed: None,
    }
}

/// Most bytes of a profiler's output read (its log file, a counter CSV, its standard output,
/// its metric listing): 256 MiB.
pub(super) const MAX_PROFILER_OUTPUT: u64 = 256 << 20;
/// Most bytes of a profiler's text kept to classify a failure or read a listing: 16 MiB.
pub(super) const MAX_PROFILER_TEXT: u64 = 16 << 20;

/// Opens a file a profiler wrote: a regular file (a FIFO is refused without blocking) of at
/// most [`MAX_PROFILER_OUTPUT`] bytes, read no further than that.
fn open_output(p: &Path) -> std::io::Result<std::io::Take<std::fs::File>> {
    use std::io::Read;
    let f = kernelab_model::open_regular(p)?;
    let len = f.metadata()?.len();
    if len > MAX_PROFILER_OUTPUT {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{len} bytes: larger than the limit of {MAX_PROFILER_OUTPUT} bytes"),
        ));
    }
    Ok(f.take(MAX_PROFILER_OUTPUT))
}

/// The end of a text file a profiler wrote, at most `limit` bytes of it (the end holds the
/// error); empty when it cannot be read or is not a regular file.
fn read_capped_text(p: &Path, limit: u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = kernelab_model::open_regular(p) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let _ = f.seek(SeekFrom::Start(len.saturating_sub(limit)));
    let mut bytes = Vec::new();
    let _ = f.take(limit).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// How a process ended, in words.
fn ended(o: &Outcome) -> String {
    match (o.exit_code, o.signal, o.timed_out) {
        (_, _, true) => "was killed at the timeout".into(),
        (_, Some(s), _) => format!("was ended by signal {s}"),
        (Some(c), _, _) => format!("exited with status {c}"),
        _ => "ended without a status".into(),
    }
}

/// The command line of one process.
fn argv(s: &Settings, side: &Side, metrics: &[String], out: &Path) -> Vec<String> {
    let mut a = vec![s.program.display().to_string()];
    match s.profiler {
        Profiler::Ncu => {
            a.extend(["--csv".into(), "--metrics".into(), metrics.join(",")]);
            a.extend(["--clock-control".into(), "none".into()]);
            a.extend(["--target-processes".into(), "all".into()]);
            a.extend(["--log-file".into(), out.display().to_string()]);
            if let Some(k) = &side.kernel {
                a.extend(["--kernel-name".into(), format!("regex:{k}")]);
                if side.symbol {
                    a.extend(["--kernel-name-base".into(), "mangled".into()]);
                }
            }
            if let Some(n) = s.launch {
                a.extend(["--launch-skip".into(), n.to_string()]);
                a.extend(["--launch-count".into(), "1".into()]);
            }
            a.extend(side.argv.iter().cloned());
        }
        Profiler::Rocprofv3 => {
            a.push("--pmc".into());
            a.extend(metrics.iter().cloned());
            a.extend(["--disable-signal-handlers".into(), "true".into()]);
            a.extend(["-d".into(), out.display().to_string()]);
            a.extend(["-o".into(), "counters".into()]);
            a.extend(["--output-format".into(), "csv".into()]);
            if let Some(k) = &side.kernel {
                a.extend(["--kernel-include-regex".into(), k.clone()]);
            }
            a.push("--".into());
            a.extend(side.argv.iter().cloned());
        }
    }
    a
}

/// Classifies a failure from how the process ended and what it said.
fn classify(o: &Outcome, text: &str) -> Option<(FailureKind, String)> {
    if let Some(e) = &o.spawn_error {
        let kind = if e.kind() == std::io::ErrorKind::NotFound {
            FailureKind::MissingBinary
        } else {
            FailureKind::Exit
        };
        return Some((kind, format!("the profiler could not start: {e}")));
    }
    if text.contains("ERR_NVGPUCTRPERM") {
        return Some((FailureKind::Permission, PERMISSION_NOTE.into()));
    }
    if o.timed_out {
        return Some((FailureKind::Timeout, ended(o)));
    }
    if o.signal.is_some() {
        return Some((FailureKind::Signal, ended(o)));
    }
    let lower = text.to_ascii_lowercase();
    if [
        "device is not supported",
        "unsupported gpu",
        "no supported devices",
        "not supported on this device",
        "no cuda-capable device",
        "no gpu agents",
    ]
    .iter()
    .any(|p| lower.contains(p))
    {
        return Some((
            FailureKind::UnsupportedGpu,
            format!(
                "the profiler does not support this GPU or found none ({})",
                ended(o)
            ),
        ));
    }
    if o.exit_code != Some(0) {
        return Some((FailureKind::Exit, ended(o)));
    }
    None
}

/// Reads an Nsight Compute CSV (the log file, else standard output).
fn read_ncu(
    s: &Side,
    repeat: usize,
    metrics: &[String],
    paths: &[PathBuf],
) -> Result<Vec<CounterSample>, String> {
    // Every file's reason, the log file's first: a log that cannot be read is the news, not
    // the standard output tried after it.
    let mut why: Vec<String> = Vec::new();
    for p in paths {
        let f = match open_output(p) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                why.push(format!("{}: {e}", p.display()));
                continue;
            }
        };
        match kernelab_trace::read_ncu_launches(f) {
            Ok(launches) => {
                let mut out = Vec::new();
                for l in &launches {
                    for m in metrics {
                        if let Some(v) = l.metrics.get(m) {
                            if let MetricValue::Number(x) = v.value {
                                out.push(CounterSample {
                                    side: s.name.clone(),
                                    kernel: l.kernel.clone(),
                                    metric: m.clone(),
                                    unit: v.unit.clone(),
                                    repeat,
                                    value: x,
                                });
                            }
                        }
                    }
                }
                return Ok(out);
            }
            Err(e) => why.push(format!("{}: {e}", p.display())),
        }
    }
    Err(if why.is_empty() {
        "no output file".into()
    } else {
        why.join("; ")
    })
}

/// Every `*counter_collection.csv` under `dir`.
fn counter_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            counter_files(&p, found);
        } else if p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with("counter_collection.csv"))
        {
            found.push(p);
        }
    }
}

/// Reads rocprofv3's counter_collection CSV(s) under `dir`, keeping the `launch`-th matching
/// dispatch when one is chosen.
fn read_rocprof(
    s: &Side,
    repeat: usize,
    launch: Option<usize>,
    dir: &Path,
) -> Result<Vec<CounterSample>, String> {
    let mut files = Vec::new();
    counter_files(dir, &mut files);
    if files.is_empty() {
        return Err(format!(
            "no *counter_collection.csv under {}",
            dir.display()
        ));
    }
    let mut out = Vec::new();
    for f in files {
        let file = open_output(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let rows = kernelab_trace::read_counter_collection(file)
            .map_err(|e| format!("{}", e.with_path(&f)))?;
        // Dispatches in order of first appearance, found through a hash set (no scan per row).
        let mut dispatches: Vec<u64> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for r in &rows {
            if seen.insert(r.dispatch) {
                dispatches.push(r.dispatch);
            }
        }
        let keep = launch.map(|n| dispatches.get(n).copied());
        let mut timed = std::collections::HashSet::new();
        for r in rows
            .iter()
            .filter(|r| keep.is_none_or(|k| k == Some(r.dispatch)))
        {
            let sample = |metric: &str, unit: &str, value: f64| CounterSample {
                side: s.name.clone(),
                kernel: r.kernel.clone(),
                metric: metric.to_string(),
                unit: unit.to_string(),
                repeat,
                value,
            };
            out.push(sample(&r.counter, "", r.value));
            if let Some(d) = r.duration_ns {
                if timed.insert(r.dispatch) {
                    out.push(sample(AMD_DURATION, "ns", d as f64));
                }
            }
        }
    }
    Ok(out)
}

/// Runs one process of group `group`, repeat `repeat`, for `side`; `stem` names its files.
pub(super) fn profile(
    s: &Settings,
    side: &Side,
    group: usize,
    repeat: usize,
    metrics: &[String],
    stem: &Path,
) -> (ProcessRecord, Vec<CounterSample>) {
    let out = match s.profiler {
        Profiler::Ncu => stem.with_extension("csv"),
        Profiler::Rocprofv3 => stem.to_path_buf(),
    };
    let (stdout, stderr) = (stem.with_extension("stdout"), stem.with_extension("stderr"));
    let argv = argv(s, side, metrics, &out);
    let o = process::run(&argv, &stdout, &stderr, s.timeout);
    let log = match s.profiler {
        Profiler::Ncu => read_capped_text(&out, MAX_PROFILER_TEXT),
        Profiler::Rocprofv3 => String::new(),
    };
    let said = format!(
        "{}\n{log}\n{}",
        o.stderr,
        read_capped_text(&stdout, MAX_PROFILER_TEXT)
    );
    let mut failure = classify(&o, &said);
    let mut samples = Vec::new();
    if failure.is_none()
        || failure
            .as_ref()
            .is_some_and(|(k, _)| *k == FailureKind::Exit)
    {
        let read = match s.profiler {
            Profiler::Ncu => read_ncu(side, repeat, metrics, &[out.clone(), stdout.clone()]),
            Profiler::Rocprofv3 => read_rocprof(side, repeat, s.launch, &out),
        };
        match read {
            Ok(v) if !v.is_empty() => samples = v,
            Ok(_) => {
                failure.get_or_insert((
                    FailureKind::NoKernels,
                    "no profiled launch matched the kernel filter (or none had the metrics)".into(),
                ));
            }
            Err(e) if said.contains("No kernels were profiled") => {
                failure.get_or_insert((
                    FailureKind::NoKernels,
                    format!("no kernel matched the filter ({e})"),
                ));
            }
            Err(e) => {
                failure.get_or_insert((
                    FailureKind::Output,
                    format!("the output could not be read: {e}"),
                ));
            }
        }
    }
    let launches = samples
        .iter()
        .filter(|x| metrics.first() == Some(&x.metric))
        .count();
    let (kind, message) = failure.unzip();
    (
        ProcessRecord {
            side: side.name.clone(),
            group,
            repeat,
            metrics: metrics.to_vec(),
            argv,
            exit_code: o.exit_code,
            signal: o.signal,
            wall_ns: kernelab_model::seconds_to_ns(o.wall_s),
            launches,
            failure: kind,
            message,
            stderr: tail(&o.stderr),
        },
        samples,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_only() {
        assert!(has_word("dram__bytes   # of bytes", "dram__bytes"));
        assert!(!has_word("dram__bytes_read  x", "dram__bytes"));
        assert!(has_word("gpu-agent1 : TCC_HIT : hits", "TCC_HIT"));
        assert!(!has_word("TCC_HIT_sum", "TCC_HIT"));
        assert_eq!(
            listed_name(
                Profiler::Ncu,
                "sm__throughput.avg.pct_of_peak_sustained_elapsed"
            ),
            "sm__throughput"
        );
        assert_eq!(listed_name(Profiler::Rocprofv3, "TCC_HIT[3]"), "TCC_HIT");
    }
}
