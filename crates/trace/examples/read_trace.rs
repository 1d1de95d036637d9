//! Reads one trace file with `kernelab_trace::read_file` (as `kernelab profile` does) and prints
//! the dispatch count, the summed kernel time, the reading time and the peak memory, for benchmarks of the
//! reader alone (`$KERNELAB_THREADS=1` forces the one-thread Kineto path).
//!
//! Usage: `cargo run --release -p kernelab-trace --example read_trace -- FILE [REPEATS]`
// An example, not the library: it prints and may stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_model::Profile;
use kernelab_trace::{read_file, NoProgress, ReadOptions};
use std::path::Path;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: read_trace FILE [REPEATS]");
        std::process::exit(2);
    };
    let repeats: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(1);
    for _ in 0..repeats {
        let t = Instant::now();
        let mut p = Profile::default();
        let options = ReadOptions {
            skip_correlations: true,
            ..ReadOptions::default()
        };
        read_file(Path::new(path), &options, &mut p, &NoProgress)?;
        let secs = t.elapsed().as_secs_f64();
        let total: u64 = p.dispatches.iter().map(|d| d.duration.ns()).sum();
        println!(
            "dispatches {} kernel_time_ns {} names {} read_s {:.4} peak_rss_kb {}",
            p.dispatches.len(),
            total,
            p.names.len(),
            secs,
            peak_rss_kb()
        );
    }
    Ok(())
}

/// The process's peak resident set (`VmHWM` of `/proc/self/status`; 0 where there is none):
/// unlike the rusage a parent sees, it does not start from the parent's size.
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
