//! The client's timing against the scripted SSE server, whose token timing is known.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_runner::serve::client::{send, Client};
use kernelab_runner::serve::scripted::{Script, Scripted};
use std::time::Duration;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A scripted server with these timings (milliseconds) and its completions URL.
fn scripted(ttft_ms: u64, interval_ms: u64) -> (Scripted, String) {
    let s = Scripted::start(Script {
        ttft: Duration::from_millis(ttft_ms),
        interval: Duration::from_millis(interval_ms),
    })
    .expect("server");
    let url = format!("http://127.0.0.1:{}/v1/completions", s.port);
    (s, url)
}

#[test]
fn streamed_timing_matches_the_script() {
    let (s, url) = scripted(80, 10);
    let body = serde_json::json!({"prompt": [1, 2, 3, 4], "max_tokens": 20, "stream": true});
    let client = Client::new(reqwest::Client::new());
    let m = runtime()
        .block_on(send(&client, &url, &body, true, Duration::from_secs(10)))
        .expect("request");
    let ttft = m.ttft_s.expect("ttft");
    // Lower bounds are exact (the server cannot be early); upper bounds leave room for a busy
    // machine.
    assert!((0.080..0.200).contains(&ttft), "ttft {ttft}");
    let tt2t = m.tt2t_s.expect("tt2t");
    assert!(tt2t > ttft && tt2t - ttft < 0.050, "tt2t {tt2t}");
    assert_eq!(m.itl_s.len(), 19);
    for g in &m.itl_s {
        assert!((0.0..0.060).contains(g), "itl {g}");
    }
    assert_eq!(m.prompt_tokens, Some(4));
    assert_eq!(m.completion_tokens, Some(20));
    assert_eq!(m.chunks, 20);
    let tpot = m.tpot_s().expect("tpot");
    let t = &s.truths()[0];
    let truth = t.tpot_s;
    assert!(
        (tpot - truth).abs() / truth < 0.05,
        "tpot {tpot} vs {truth}"
    );
    // The server's own record of the request: its first write at the scripted TTFT, a gap per
    // later token; the client reads each a little later, never earlier than a gap allows.
    assert_eq!(t.id, None);
    assert!((0.080..0.150).contains(&t.ttft_s), "true ttft {}", t.ttft_s);
    assert!(
        ttft >= t.ttft_s,
        "the client cannot see the token before it is written"
    );
    assert_eq!(t.itl_s.len(), m.itl_s.len());
    let summed: f64 = t.itl_s.iter().sum();
    assert!((summed - truth * 19.0).abs() < 1e-9);
    assert!((m.e2e_s - (ttft + 19.0 * tpot)).abs() < 1e-9);
    let text: String = (0..20).map(|i| format!("t{i} ")).collect();
    assert_eq!(m.output_sha256, kernelab_model::sha256_hex(text.as_bytes()));
}

#[test]
fn non_streamed_has_no_ttft_and_same_output_hash() {
    let (_server, url) = scripted(30, 5);
    let body = serde_json::json!({"prompt": [1, 2], "max_tokens": 8, "stream": false});
    let client = Client::new(reqwest::Client::new());
    let m = runtime()
        .block_on(send(&client, &url, &body, false, Duration::from_secs(10)))
        .expect("request");
    assert_eq!(m.ttft_s, None);
    assert_eq!(m.tpot_s(), None);
    assert!(m.itl_s.is_empty());
    assert!(m.e2e_s >= 0.065, "e2e {}", m.e2e_s);
    assert_eq!(m.completion_tokens, Some(8));
    let text: String = (0..8).map(|i| format!("t{i} ")).collect();
    assert_eq!(m.output_sha256, kernelab_model::sha256_hex(text.as_bytes()));
}

/// One request against a fresh scripted server with extra body fields.
fn one(
    fields: serde_json::Value,
    stream: bool,
) -> Result<kernelab_runner::serve::client::Measured, String> {
    let (_server, url) = scripted(5, 2);
    let mut body = serde_json::json!({"prompt": [1, 2], "max_tokens": 6, "stream": stream});
    if let (Some(b), Some(f)) = (body.as_object_mut(), fields.as_object()) {
        b.extend(f.clone());
    }
    let client = Client::new(reqwest::Client::new());
    runtime()
        .block_on(send(&client, &url, &body, stream, Duration::from_secs(10)))
        .map_err(|e| e.to_string())
}

#[test]
fn a_stream_ended_by_a_finish_reason_without_done_is_complete() {
    // transformers serve sends a last chunk with finish_reason and usage, and no [DONE].
    let m = one(serde_json::json!({"scripted_tail": "finish"}), true).expect("complete");
    assert_eq!(
        (m.chunks, m.completion_tokens, m.prompt_tokens),
        (6, Some(6), Some(2))
    );
    // A stream cut before either is a failure, not a short measurement.
    let e = one(serde_json::json!({"scripted_tail": "cut"}), true).expect_err("cut");
    assert!(e.contains("neither a finish_reason nor [DONE]"), "{e}");
}

#[test]
fn token_ids_are_hashed_when_every_token_carries_them() {
    use kernelab_runner::serve::client::ids_sha256;
    let ids: Vec<u64> = (0..6).collect();
    for stream in [true, false] {
        let m = one(serde_json::json!({"return_token_ids": true}), stream).expect("ids");
        assert_eq!(
            m.output_ids_sha256,
            Some(ids_sha256(&ids)),
            "stream {stream}"
        );
        let m = one(serde_json::json!({}), stream).expect("text");
        assert_eq!(m.output_ids_sha256, None, "stream {stream}");
    }
}

#[test]
fn a_refused_connection_and_a_timeout_are_failures() {
    let port = kernelab_runner::serve::server::free_port().expect("port");
    let client = Client::new(reqwest::Client::new());
    let body = serde_json::json!({"prompt": [1], "max_tokens": 4, "stream": true});
    let rt = runtime();
    let e = rt
        .block_on(send(
            &client,
            &format!("http://127.0.0.1:{port}/v1/completions"),
            &body,
            true,
            Duration::from_secs(5),
        ))
        .expect_err("nothing listens");
    assert!(e.0.starts_with("request failed"), "{e}");
    let s = Scripted::start(Script {
        ttft: Duration::from_millis(500),
        interval: Duration::from_millis(1),
    })
    .expect("server");
    let e = rt
        .block_on(send(
            &client,
            &format!("http://127.0.0.1:{}/v1/completions", s.port),
            &body,
            true,
            Duration::from_millis(100),
        ))
        .expect_err("too slow");
    assert!(e.0.contains("no complete response within"), "{e}");
}

#[test]
fn requests_in_turn_share_one_kept_alive_connection() {
    // As on a real server (chunked streams, keep-alive), a closed loop's requests reuse their
    // connection: the fidelity benchmark then measures requests, not connection set-up. The
    // streamed ones share the client's own connection, the others reqwest's: two in all.
    let (s, url) = scripted(2, 1);
    let client = Client::new(reqwest::Client::new());
    let rt = runtime();
    for (i, stream) in [true, false, true, false, true].into_iter().enumerate() {
        let body =
            serde_json::json!({"prompt": [1], "max_tokens": 5, "stream": stream, "scripted_id": i});
        let m = rt
            .block_on(send(&client, &url, &body, stream, Duration::from_secs(10)))
            .expect("request");
        assert_eq!(m.completion_tokens, Some(5), "request {i}");
    }
    assert_eq!(s.connections(), 2);
    let ids: Vec<Option<u64>> = s.truths().iter().map(|t| t.id).collect();
    assert_eq!(
        ids,
        [Some(0), Some(2), Some(4)],
        "streamed requests have truths"
    );
}

#[test]
fn a_point_opens_its_connections_before_it_is_measured() {
    use kernelab_runner::serve::spec::Spec;
    use kernelab_runner::serve::workload::{prompts, run_point, PointPrompts, Target};
    let (s, url) = scripted(2, 1);
    let base = format!("http://127.0.0.1:{}", s.port);
    let text = format!(
        r#"
[baseline]
argv = ["true", "{{port}}"]
health_url = "{base}/health"
[candidate]
argv = ["true", "{{port}}"]
health_url = "{base}/health"
[workload]
requests = 8
[[workload.case]]
input_tokens = 4
output_tokens = 4
concurrency = [4]
"#
    );
    let spec = Spec::parse(&text, std::path::Path::new("s.toml")).expect("valid spec");
    let (w, case) = (&spec.workload, &spec.workload.cases[0]);
    let client = Client::new(reqwest::Client::new());
    let health = format!("{base}/health");
    let rt = runtime();
    let all = rt
        .block_on(prompts(&client.http, &base, w, 0, case, 0, 9))
        .expect("prompts");
    let (warm, measured) = all.split_at(1);
    let at_measuring = std::cell::Cell::new(None);
    let target = Target {
        client: &client,
        url: &url,
        model: None,
        health: Some(&health),
    };
    let point = rt.block_on(run_point(
        target,
        w,
        case,
        4,
        PointPrompts {
            warmup: warm,
            measured,
        },
        async { at_measuring.set(Some(s.connections())) },
    ));
    assert_eq!(point.requests.len(), 8);
    assert!(point.requests.iter().all(|r| r.error.is_none()));
    // All four streams' connections are open when measuring starts, and no request after it
    // opens another.
    assert_eq!(at_measuring.get(), Some(4));
    assert_eq!(s.connections(), 4);
}

/// A raw response written by a real server (tests/fixtures/serve/http/).
fn real_response(name: &str) -> Vec<u8> {
    let p = format!(
        "{}/../../tests/fixtures/serve/http/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

#[test]
fn real_uvicorn_responses_decode_at_every_split() {
    use kernelab_runner::serve::client::SseParser;
    use kernelab_runner::serve::wire::{parse_head, Body};
    let data = real_response("llama_cpp_stream.http");
    let (head, used) = parse_head(&data).expect("HTTP").expect("a whole head");
    assert_eq!(head.status, 200);
    let rest = &data[used..];
    // Every split of the body into two reads gives the same 8 events: 6 tokens, the finish
    // chunk and [DONE].
    for cut in 0..=rest.len() {
        let mut body = Body::new(&head);
        let (mut raw, mut out) = (Vec::new(), Vec::new());
        for part in [&rest[..cut], &rest[cut..]] {
            raw.extend_from_slice(part);
            body.decode(&mut raw, &mut out).expect("decodes");
        }
        assert!(body.ended() && raw.is_empty(), "cut {cut}");
        let events = SseParser::new(1 << 16).push(&out).expect("SSE");
        assert_eq!(events.len(), 8, "cut {cut}");
        assert_eq!(events[7], b"[DONE]");
    }
    let data = real_response("llama_cpp_error.http");
    let (head, used) = parse_head(&data).expect("HTTP").expect("a whole head");
    assert_eq!(head.status, 500);
    let (mut raw, mut out) = (data[used..].to_vec(), Vec::new());
    let mut body = Body::new(&head);
    body.decode(&mut raw, &mut out).expect("decodes");
    assert!(body.ended());
    assert_eq!(out.len(), 887, "content-length");
    assert!(out.starts_with(b"{\"error\""));
}

#[test]
fn mooncake_requests_sharing_block_ids_share_those_prompt_tokens() {
    use kernelab_runner::serve::spec::Spec;
    use kernelab_runner::serve::workload::prompts;
    let trace = format!(
        "{}/../../tests/fixtures/serve/traces/mooncake_conversation_head.jsonl",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = format!(
        r#"
[baseline]
argv = ["true", "{{port}}"]
health_url = "http://127.0.0.1:{{port}}/health"
[candidate]
argv = ["true", "{{port}}"]
health_url = "http://127.0.0.1:{{port}}/health"
[[workload.case]]
trace = "{trace}"
concurrency = [4]
"#
    );
    let spec = Spec::parse(&text, std::path::Path::new("s.toml")).expect("valid spec");
    let (w, case) = (&spec.workload, &spec.workload.cases[0]);
    let client = Client::new(reqwest::Client::new());
    let p = runtime()
        .block_on(prompts(&client.http, "http://unused", w, 0, case, 0, 3))
        .expect("prompts");
    // Rows 1-3: hash ids [0..14), [0, 14..28), [0, 28..42); 6758, 7322, 7236 tokens.
    assert_eq!(
        p.iter().map(|p| p.ids.len()).collect::<Vec<_>>(),
        [6758, 7322, 7236]
    );
    assert_eq!(p[0].ids[..512], p[1].ids[..512], "block 0 shared");
    assert_eq!(p[0].ids[..512], p[2].ids[..512], "block 0 shared");
    assert_ne!(
        p[0].ids[512..1024],
        p[1].ids[512..1024],
        "blocks 1 and 14 differ"
    );
    assert_ne!(p[1].ids[512..1024], p[2].ids[512..1024]);
    // Row 6 (hash ids 0, 46, …) shares block 0 too, and a block id seen twice gives equal
    // tokens whatever the request.
    let q = runtime()
        .block_on(prompts(&client.http, "http://unused", w, 0, case, 4, 1))
        .expect("prompts");
    assert_eq!(q[0].ids[..512], p[0].ids[..512]);
}
