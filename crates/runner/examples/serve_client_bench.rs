//! The client-fidelity benchmark of `kernelab serve` (docs/benchmarks.md): the streaming
//! client on one core (a current-thread runtime) against the scripted SSE server, whose truth
//! is the time of its own token writes. Per request (matched by `scripted_id`): the client's
//! TTFT minus the server's (first write − request read), and each inter-token gap minus the
//! server's gap; p50 and p99 of the absolute errors, and the client's TPOT over the true TPOT.
//!
//! Two load shapes per stream count:
//! - `steady`: a closed loop in steady state, as `kernelab serve` runs a concurrency level:
//!   each stream sends `BENCH_ROUNDS` requests back to back on its own kept-alive connection,
//!   the streams' first requests spread evenly over one request's duration; only requests after
//!   each stream's first are measured (warm connections, every stream in flight).
//! - `burst`: every stream's one request sent at the same instant on a new connection, and
//!   tokens written in lockstep (what a batched decode step does): the worst case for one core,
//!   where the k-th event of a burst waits for the k − 1 before it.
//!
//! The client runs on one core of its own: the first CPU of the process's affinity set, the
//! scripted server's threads on the others (where there are others), so the server's thousand
//! threads do not preempt the client and the row measures the client alone. Each row reports the
//! client thread's CPU time per token event and its share of the wall time (a share near 100%
//! is a saturated core: its queueing is then the error). `BENCH_PIN=0` leaves every thread
//! free to run anywhere, for comparison.
//!
//! `cargo run --release -p kernelab-runner --example serve_client_bench [STREAMS...]`
//! (`BENCH_TOKENS`, default 400 tokens per stream; `BENCH_INTERVAL_US`, default 500 µs between
//! tokens, i.e. 2,000 tokens/s per stream; `BENCH_ROUNDS`, default 3 requests per stream in
//! `steady`; `BENCH_MODES`, default `steady,burst`).
// An example, not the library: it prints and may stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_runner::serve::client::{send, Client, Failure, Measured};
use kernelab_runner::serve::scripted::{Script, Scripted, Truth};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The p-quantile (nearest rank) of `v`, sorting it.
fn quantile(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(((v.len() as f64 - 1.0) * p).round() as usize)
        .copied()
        .unwrap_or(f64::NAN)
}

/// The client's CPU and the server's: (client CPU, the rest) of the process's CPUs.
fn split_cpus() -> Option<(usize, rustix::thread::CpuSet)> {
    let all = rustix::thread::sched_getaffinity(None).ok()?;
    let cpus: Vec<usize> = (0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&c| all.is_set(c))
        .collect();
    let (&client, rest) = cpus.split_first()?;
    let mut others = rustix::thread::CpuSet::new();
    for &c in rest {
        others.set(c);
    }
    (!rest.is_empty()).then_some((client, others))
}

/// This thread's CPU time, seconds.
fn thread_cpu_s() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

fn main() {
    let streams: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let streams = if streams.is_empty() {
        vec![1, 64, 256, 1000]
    } else {
        streams
    };
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let tokens = env("BENCH_TOKENS", 400);
    let interval_us = env("BENCH_INTERVAL_US", 500);
    let rounds = env("BENCH_ROUNDS", 3).max(2);
    let modes = std::env::var("BENCH_MODES").unwrap_or_else(|_| "steady,burst".into());
    let script = Script {
        ttft: Duration::from_millis(10),
        interval: Duration::from_micros(interval_us),
    };
    // The server's threads inherit the affinity of the thread that starts it.
    let split = split_cpus().filter(|_| env("BENCH_PIN", 1) != 0);
    if let Some((_, others)) = &split {
        if let Err(e) = rustix::thread::sched_setaffinity(None, others) {
            eprintln!("cannot set the server's CPUs: {e}");
        }
    }
    let server = match Scripted::start(script) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot start the scripted server: {e}");
            std::process::exit(2);
        }
    };
    match &split {
        Some((client, _)) => {
            let mut one = rustix::thread::CpuSet::new();
            one.set(*client);
            if let Err(e) = rustix::thread::sched_setaffinity(None, &one) {
                eprintln!("cannot pin the client: {e}");
            }
            println!("client on CPU {client}; the scripted server on the other CPUs");
        }
        None => println!("not pinned: the client and the scripted server share the CPUs"),
    }
    let url = format!("http://127.0.0.1:{}/v1/completions", server.port);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            std::process::exit(2);
        }
    };
    println!(
        "mode   | streams | tokens/s per stream (true) | TTFT error p50 / p99 | ITL error p50 / p99 | client TPOT − true | measured | failed | wall | client CPU per event, share of wall"
    );
    // One request's duration, over which the steady streams' first requests are spread.
    let duration = script.ttft + script.interval * (tokens.saturating_sub(1)) as u32;
    let mut next_id = 0u64;
    for mode in modes.split(',') {
        for &n in &streams {
            // A client per row, so a burst opens its connections and a steady row warms its own.
            let client = Client::new(reqwest::Client::new());
            let before = server.truths().len();
            let base = next_id;
            let per_stream = if mode == "burst" { 1 } else { rounds };
            next_id += n as u64 * per_stream;
            let t0 = Instant::now();
            let cpu0 = thread_cpu_s();
            let start = tokio::time::Instant::now();
            // Token events of the requests not measured (each stream's first in `steady`).
            let unmeasured = std::cell::Cell::new(0u64);
            let results: Vec<Vec<(u64, Result<Measured, Failure>)>> =
                rt.block_on(futures_util::future::join_all((0..n).map(|i| {
                    let (client, url, unmeasured) = (&client, &url, &unmeasured);
                    let offset = if mode == "burst" {
                        Duration::ZERO
                    } else {
                        duration.mul_f64(i as f64 / n as f64)
                    };
                    async move {
                        tokio::time::sleep_until(start + offset).await;
                        let mut out = Vec::new();
                        for r in 0..per_stream {
                            let id = base + i as u64 * per_stream + r;
                            let body = serde_json::json!({"prompt": [1, 2, 3], "max_tokens": tokens, "stream": true, "scripted_id": id});
                            let m = send(client, url, &body, true, Duration::from_secs(120)).await;
                            // In steady state the first request of a stream opens its connection.
                            if mode == "burst" || r > 0 {
                                out.push((id, m));
                            } else if let Ok(m) = &m {
                                unmeasured.set(unmeasured.get() + m.chunks);
                            }
                        }
                        out
                    }
                })));
            let wall = t0.elapsed().as_secs_f64();
            let cpu = thread_cpu_s() - cpu0;
            let events: u64 = results
                .iter()
                .flatten()
                .filter_map(|(_, r)| r.as_ref().ok().map(|m| m.chunks))
                .sum::<u64>()
                + unmeasured.get();
            let truths = server.truths();
            let by_id: HashMap<u64, &Truth> = truths[before..]
                .iter()
                .filter_map(|t| Some((t.id?, t)))
                .collect();
            let (mut ttft_err, mut itl_err) = (Vec::new(), Vec::new());
            let (mut client_tpot, mut true_tpot) = (0.0, 0.0);
            let (mut measured, mut failed) = (0usize, 0usize);
            for (id, r) in results.iter().flatten() {
                let (Ok(m), Some(t)) = (r, by_id.get(id)) else {
                    failed += 1;
                    continue;
                };
                measured += 1;
                if let Some(c) = m.ttft_s {
                    ttft_err.push((c - t.ttft_s).abs());
                }
                if m.itl_s.len() == t.itl_s.len() {
                    itl_err.extend(m.itl_s.iter().zip(&t.itl_s).map(|(c, t)| (c - t).abs()));
                }
                client_tpot += m.tpot_s().unwrap_or(f64::NAN);
                true_tpot += t.tpot_s;
            }
            println!(
                "{mode:<6} | {n:>7} | {:>26.0} | {:>7.3} / {:>7.3} ms | {:>7.3} / {:>7.3} ms | {:>+17.3}% | {measured:>8} | {failed:>6} | {wall:.2} s | {:.2} µs, {:.0}%",
                measured.max(1) as f64 / true_tpot,
                quantile(&mut ttft_err, 0.5) * 1e3,
                quantile(&mut ttft_err, 0.99) * 1e3,
                quantile(&mut itl_err, 0.5) * 1e3,
                quantile(&mut itl_err, 0.99) * 1e3,
                (client_tpot / true_tpot - 1.0) * 100.0,
                cpu / events.max(1) as f64 * 1e6,
                cpu / wall * 100.0
            );
        }
    }
}
