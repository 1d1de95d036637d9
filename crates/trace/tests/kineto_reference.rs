//! Differential test of the Kineto scanner: every Kineto fixture is also read by a plain
//! reference reader built on `serde_json` (each event parsed whole, numbers kept as their JSON
//! text), the way the reader worked before the one-pass scanner; dispatches, copies, ranges,
//! launch calls and the rankings must be the same. The fixtures of the repository always run;
//! those of `../shared/fixtures/external` (real traces from public projects) when present.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use flate2::read::GzDecoder;
use kernelab_model::{
    parse_scaled_decimal, Annotation, AnnotationScope, Grouping, KernelDispatch, Launch,
    LaunchConfig, Nanos, Profile, Resources, Timestamp, Transfer, TransferKind,
};
use kernelab_trace::{rank, read_file, NoProgress, RankOptions, ReadOptions};
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

type Event<'a> = HashMap<String, &'a RawValue>;

fn text(v: Option<&&RawValue>) -> Option<String> {
    serde_json::from_str(v?.get()).ok()
}

fn int_of(v: Option<&&RawValue>) -> Option<i64> {
    let t = v?.get().trim();
    if let Ok(x) = t.parse::<i64>() {
        return Some(x);
    }
    let s: String = serde_json::from_str(t).ok()?;
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => i64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn uint(v: Option<&&RawValue>) -> Option<u64> {
    let t = v?.get().trim().trim_matches('"');
    t.parse().ok()
}

fn time(v: Option<&&RawValue>) -> i64 {
    let t = v.map(|r| r.get().trim_matches('"')).unwrap_or("none");
    parse_scaled_decimal(t, 3).unwrap_or_else(|| panic!("time {t}"))
}

fn triple(v: Option<&&RawValue>) -> Option<[u32; 3]> {
    serde_json::from_str(v?.get()).ok()
}

/// The profile the reference reader makes of a Kineto trace (events with `cat` only).
fn reference(bytes: &[u8]) -> Profile {
    let events: Vec<&RawValue> = match serde_json::from_slice::<Vec<&RawValue>>(bytes) {
        Ok(v) => v,
        Err(_) => {
            let top: HashMap<String, &RawValue> = serde_json::from_slice(bytes).expect("object");
            serde_json::from_str(top["traceEvents"].get()).expect("traceEvents")
        }
    };
    let mut p = Profile::default();
    for raw in events {
        let Ok(ev) = serde_json::from_str::<Event<'_>>(raw.get()) else {
            continue;
        };
        let (Some(cat), Some(ph)) = (text(ev.get("cat")), text(ev.get("ph"))) else {
            continue;
        };
        if ph != "X" {
            continue;
        }
        let args: Event<'_> = ev
            .get("args")
            .and_then(|a| serde_json::from_str(a.get()).ok())
            .unwrap_or_default();
        let start = Timestamp::from_ns(time(ev.get("ts")));
        let duration = Nanos::from_ns(u64::try_from(time(ev.get("dur"))).expect("dur"));
        let (pid, tid) = (int_of(ev.get("pid")), int_of(ev.get("tid")));
        let device = int_of(args.get("device"))
            .or(pid)
            .and_then(|d| u32::try_from(d).ok())
            .unwrap_or(0);
        let stream_of = || {
            int_of(args.get("stream"))
                .or(tid)
                .and_then(|s| u64::try_from(s).ok())
        };
        let stream = stream_of().unwrap_or(0);
        let correlation = uint(args.get("correlation"));
        let name = text(ev.get("name")).unwrap_or_default();
        match cat.as_str() {
            "kernel" | "Kernel" => {
                let launch = p.launches.intern(LaunchConfig {
                    grid: triple(args.get("grid")),
                    block: triple(args.get("block")),
                    resources: Resources {
                        registers: uint(args.get("registers per thread"))
                            .and_then(|x| u32::try_from(x).ok()),
                        shared_bytes: uint(args.get("shared memory"))
                            .and_then(|x| u32::try_from(x).ok()),
                        ..Resources::default()
                    },
                });
                let name = p.names.intern_str(&name);
                p.dispatches.push(KernelDispatch {
                    name,
                    device,
                    stream,
                    start,
                    duration,
                    launch,
                    correlation,
                    sub_ns: 0,
                });
            }
            "gpu_memcpy" | "Memcpy" | "gpu_memset" | "Memset" => p.transfers.push(Transfer {
                kind: if cat.contains("emcpy") {
                    TransferKind::Memcpy
                } else {
                    TransferKind::Memset
                },
                device,
                stream,
                start,
                duration,
                bytes: uint(args.get("bytes")),
                sub_ns: 0,
            }),
            "gpu_user_annotation" | "user_annotation" => {
                let scope = if cat == "gpu_user_annotation" {
                    AnnotationScope::Gpu {
                        device,
                        stream: stream_of(),
                    }
                } else {
                    AnnotationScope::Cpu {
                        pid: pid.unwrap_or(0),
                        tid: tid.unwrap_or(0),
                    }
                };
                let name = p.names.intern_str(&name);
                p.annotations.push(Annotation {
                    name,
                    scope,
                    start,
                    duration,
                });
            }
            "cuda_runtime" | "cuda_driver" | "Runtime" => {
                if let Some(correlation) = correlation {
                    p.host_launches.push(Launch {
                        correlation,
                        pid: pid.unwrap_or(0),
                        tid: tid.unwrap_or(0),
                        start,
                    });
                }
            }
            _ => {}
        }
    }
    p
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    for dir in [
        root.join("tests/fixtures"),
        root.join("../shared/fixtures/external/hta"),
        root.join("../shared/fixtures/external/kineto_plain"),
        root.join("../shared/fixtures/external/tracelens"),
    ] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            let kineto = name.ends_with(".json") || name.ends_with(".json.gz");
            if kineto
                && (dir.ends_with("fixtures") == name.starts_with("kineto")
                    || !dir.ends_with("fixtures"))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Dispatches with their names and launch configs resolved, for comparing two profiles.
fn resolved(p: &Profile) -> Vec<(String, KernelDispatch, LaunchConfig)> {
    p.dispatches
        .iter()
        .map(|d| (p.names.name(d.name).to_string(), d, p.launch(&d)))
        .collect()
}

#[test]
fn scanner_reads_every_kineto_fixture_like_the_reference_reader() {
    let files = fixtures();
    assert!(files.len() >= 7, "{files:?}");
    for path in files {
        let mut bytes = std::fs::read(&path).expect("read");
        if path.extension().is_some_and(|e| e == "gz") {
            let mut out = Vec::new();
            GzDecoder::new(&bytes[..])
                .read_to_end(&mut out)
                .expect("gunzip");
            bytes = out;
        }
        let want = reference(&bytes);
        let mut got = Profile::default();
        let options = ReadOptions {
            host_launches: true,
            ..ReadOptions::default()
        };
        read_file(&path, &options, &mut got, &NoProgress).expect("reads");
        let shown = path.display();
        assert!(
            !want.dispatches.is_empty() || got.dispatches.is_empty(),
            "{shown}"
        );
        assert_eq!(resolved(&got), resolved(&want), "{shown}: dispatches");
        assert_eq!(got.transfers, want.transfers, "{shown}: copies");
        let ranges = |p: &Profile| -> Vec<(String, AnnotationScope, Timestamp, Nanos)> {
            p.annotations
                .iter()
                .map(|a| {
                    (
                        p.names.name(a.name).to_string(),
                        a.scope,
                        a.start,
                        a.duration,
                    )
                })
                .collect()
        };
        assert_eq!(ranges(&got), ranges(&want), "{shown}: ranges");
        assert_eq!(got.host_launches, want.host_launches, "{shown}: launches");
        for (grouping, by_phase) in [
            (Grouping::Family, false),
            (Grouping::None, false),
            (Grouping::Family, true),
        ] {
            let o = RankOptions {
                grouping,
                by_phase,
                top: 5,
                ..RankOptions::default()
            };
            let (a, b) = (
                rank(&got, &o).expect("rank"),
                rank(&want, &o).expect("rank"),
            );
            assert_eq!(a, b, "{shown}: ranking {grouping:?} {by_phase}");
        }
    }
}
