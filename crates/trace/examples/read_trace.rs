//! Reads one trace file with `kernelab_trace::read_file` (as `kernelab profile` does) and prints
//! the dispatch count, the summed kernel time and the reading time, for benchmarks of the
//! reader alone (`$KERNELAB_THREADS=1` forces the one-thread Kineto path).
//!
//! Usage: `cargo run --release -p kernelab-trace --example read_trace -- FILE [REPEATS]`

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
            "dispatches {} kernel_time_ns {} names {} read_s {:.4}",
            p.dispatches.len(),
            total,
            p.names.len(),
            secs
        );
    }
    Ok(())
}
