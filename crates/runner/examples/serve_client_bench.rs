//! The client-fidelity benchmark of `kernelab serve` (docs/benchmarks.md): the streaming
//! client on one core (a current-thread runtime) against the scripted SSE server, whose truth
//! is the time of its own token writes. Per request (matched by `scripted_id`): the client's
//! TTFT minus the server's (first write − request read), and each inter-token gap minus the
//! server's gap; p50 and p99 of the absolute errors, and the client's TPOT over the true TPOT.
//!
//! `cargo run --release -p kernelab-runner --example serve_client_bench [STREAMS...]`
//! (`BENCH_TOKENS`, default 400 tokens per stream; `BENCH_INTERVAL_US`, default 500 µs between
//! tokens, i.e. 2,000 tokens/s per stream).

use kernelab_runner::serve::client::send;
use kernelab_runner::serve::scripted::{Script, Scripted};
use std::time::{Duration, Instant};

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
    let server = match Scripted::start(Script {
        ttft: Duration::from_millis(10),
        interval: Duration::from_micros(interval_us),
    }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot start the scripted server: {e}");
            std::process::exit(2);
        }
    };
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
    let client = reqwest::Client::new();
    println!(
        "streams | tokens/s per stream (true) | TTFT error p50 / p99 | ITL error p50 / p99 | client TPOT − true | failed | wall"
    );
    for &n in &streams {
        let before = server.truths().len();
        let t0 = Instant::now();
        let results = rt.block_on(futures_util::future::join_all((0..n).map(|i| {
            let body = serde_json::json!({"prompt": [1, 2, 3], "max_tokens": tokens, "stream": true, "scripted_id": i});
            let (client, url) = (&client, &url);
            async move { send(client, url, &body, true, Duration::from_secs(120)).await }
        })));
        let wall = t0.elapsed().as_secs_f64();
        let truths = server.truths();
        let by_id: std::collections::HashMap<u64, &kernelab_runner::serve::scripted::Truth> =
            truths[before..]
                .iter()
                .filter_map(|t| Some((t.id?, t)))
                .collect();
        let (mut ttft_err, mut itl_err) = (Vec::new(), Vec::new());
        let (mut client_tpot, mut true_tpot) = (0.0, 0.0);
        let mut failed = 0;
        for (i, r) in results.iter().enumerate() {
            let (Ok(m), Some(t)) = (r, by_id.get(&(i as u64))) else {
                failed += 1;
                continue;
            };
            if let Some(c) = m.ttft_s {
                ttft_err.push((c - t.ttft_s).abs());
            }
            if m.itl_s.len() == t.itl_s.len() {
                itl_err.extend(m.itl_s.iter().zip(&t.itl_s).map(|(c, t)| (c - t).abs()));
            }
            client_tpot += m.tpot_s().unwrap_or(f64::NAN);
            true_tpot += t.tpot_s;
        }
        let q = |v: &mut Vec<f64>, p: f64| -> f64 {
            v.sort_by(f64::total_cmp);
            v.get(((v.len() as f64 - 1.0) * p).round() as usize)
                .copied()
                .unwrap_or(f64::NAN)
        };
        let ok = (n - failed).max(1) as f64;
        println!(
            "{n:>7} | {:>19.0} | {:>7.3} / {:>7.3} ms | {:>7.3} / {:>7.3} ms | {:>+16.3}% | {failed:>6} | {wall:.2} s",
            ok / true_tpot,
            q(&mut ttft_err, 0.5) * 1e3,
            q(&mut ttft_err, 0.99) * 1e3,
            q(&mut itl_err, 0.5) * 1e3,
            q(&mut itl_err, 0.99) * 1e3,
            (client_tpot / true_tpot - 1.0) * 100.0
        );
    }
}
