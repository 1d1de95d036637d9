//! A scripted OpenAI-style completion server whose token timing is known: for the unit tests of
//! the client's timing arithmetic and the client-overhead benchmark only, never as evidence
//! about a real server. It streams `max_tokens` chunks, the first after `ttft`, then one every
//! `interval`, and keeps the true time of every write, from which it gives the true TPOT.
//!
//! Two request fields select a server's dialect: `"return_token_ids": true` adds vLLM's
//! `token_ids` to every chunk; `"scripted_tail"` ends a stream with `"done"` (usage chunk and
//! `[DONE]`, the default), `"finish"` (a chunk with a `finish_reason` and usage but no
//! `[DONE]`, as `transformers serve` does) or `"cut"` (nothing: a truncated stream).
//!
//! Connections are kept alive as real servers keep them (uvicorn, vLLM): a streamed response
//! is sent with chunked transfer encoding and the connection then serves the next request, so
//! a benchmark measures requests on warm connections, not connection set-up. A `"cut"`
//! stream alone is close-delimited (the body ends where the connection does).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Token timing of the scripted server.
#[derive(Clone, Copy, Debug)]
pub struct Script {
    /// Delay before the first token.
    pub ttft: Duration,
    /// Delay between tokens.
    pub interval: Duration,
}

/// What the server did for one request.
#[derive(Clone, Debug, PartialEq)]
pub struct Truth {
    /// The request's `scripted_id`, if it sent one.
    pub id: Option<u64>,
    /// Tokens written.
    pub tokens: u64,
    /// (last token write − first token write) / (tokens − 1), seconds.
    pub tpot_s: f64,
    /// First token write − the request read whole, seconds.
    pub ttft_s: f64,
    /// Each gap between consecutive token writes, seconds.
    pub itl_s: Vec<f64>,
}

/// A running scripted server (threads; it lives until the process ends).
pub struct Scripted {
    /// Its port on 127.0.0.1.
    pub port: u16,
    truths: Arc<Mutex<Vec<Truth>>>,
    connections: Arc<std::sync::atomic::AtomicUsize>,
}

impl Scripted {
    /// Starts the server on a free port.
    pub fn start(script: Script) -> std::io::Result<Scripted> {
        // A listen backlog for a thousand connections at once (std's is 128: the rest wait
        // for a SYN retransmit, a second, which the benchmark would count as client error).
        let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)?;
        socket.bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())?;
        socket.listen(4096)?;
        let listener: TcpListener = socket.into();
        let port = listener.local_addr()?.port();
        let truths = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (t, c) = (truths.clone(), connections.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let t = t.clone();
                std::thread::spawn(move || {
                    let _ = serve(conn, script, &t);
                });
            }
        });
        Ok(Scripted {
            port,
            truths,
            connections,
        })
    }

    /// Connections accepted so far (kept-alive connections serve several requests).
    pub fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// What the server did so far, one entry per streamed request.
    pub fn truths(&self) -> Vec<Truth> {
        self.truths.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

/// Sleeps until `deadline` (the truth is the time of each write, so sleep precision only
/// changes the pace, not what is compared).
fn sleep_until(deadline: Instant) {
    let now = Instant::now();
    if deadline > now {
        std::thread::sleep(deadline - now);
    }
}

fn serve(conn: TcpStream, script: Script, truths: &Mutex<Vec<Truth>>) -> std::io::Result<()> {
    conn.set_nodelay(true)?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut out = conn;
    while let Some(body) = read_request(&mut reader)? {
        if !respond(&mut out, &body, script, truths)? {
            return Ok(());
        }
    }
    Ok(())
}

/// The body of the next request on a connection; `None` when the client closed it.
fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<Vec<u8>>> {
    let mut length = 0usize;
    let mut any = false;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let l = line.trim_end();
        if l.is_empty() {
            if any {
                break;
            }
            continue;
        }
        any = true;
        if let Some((k, v)) = l.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    Ok(Some(body))
}

/// Writes `data` as one chunk of a chunked body.
fn chunk(out: &mut TcpStream, data: &str) -> std::io::Result<()> {
    out.write_all(format!("{:x}\r\n{data}\r\n", data.len()).as_bytes())
}

/// Answers one request; false when the connection is to be closed after it.
fn respond(
    out: &mut TcpStream,
    body: &[u8],
    script: Script,
    truths: &Mutex<Vec<Truth>>,
) -> std::io::Result<bool> {
    let req: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
    let n = req.get("max_tokens").and_then(|v| v.as_u64()).unwrap_or(16);
    let prompt = req
        .get("prompt")
        .and_then(|p| p.as_array())
        .map_or(0, |a| a.len());
    let stream = req.get("stream").and_then(|v| v.as_bool()).unwrap_or(false);
    let with_ids = req.get("return_token_ids").and_then(|v| v.as_bool()) == Some(true);
    let tail = req
        .get("scripted_tail")
        .and_then(|v| v.as_str())
        .unwrap_or("done")
        .to_string();
    let usage = serde_json::json!({"prompt_tokens": prompt, "completion_tokens": n});
    let start = Instant::now();
    if !stream {
        sleep_until(start + script.ttft + script.interval * (n.saturating_sub(1)) as u32);
        let text: String = (0..n).map(|i| format!("t{i} ")).collect();
        let mut choice = serde_json::json!({"text": text, "finish_reason": "length"});
        if with_ids {
            choice["token_ids"] = (0..n).collect::<Vec<u64>>().into();
        }
        let b = serde_json::json!({"choices": [choice], "usage": usage}).to_string();
        write!(
            out,
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{b}",
            b.len()
        )?;
        return Ok(true);
    }
    let chunked = tail != "cut";
    if chunked {
        out.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
        )?;
    } else {
        out.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
        )?;
    }
    let send = |out: &mut TcpStream, data: &str| {
        if chunked {
            chunk(out, data)
        } else {
            out.write_all(data.as_bytes())
        }
    };
    let mut first = None;
    let mut last = start;
    let mut itl_s = Vec::with_capacity(n.saturating_sub(1) as usize);
    for i in 0..n {
        sleep_until(start + script.ttft + script.interval * i as u32);
        let mut choice = serde_json::json!({"text": format!("t{i} ")});
        if with_ids {
            choice["token_ids"] = serde_json::json!([i]);
        }
        let c = serde_json::json!({"choices": [choice]});
        send(out, &format!("data: {c}\n\n"))?;
        let now = Instant::now();
        if first.is_some() {
            itl_s.push(now.duration_since(last).as_secs_f64());
        }
        last = now;
        first.get_or_insert(last);
    }
    let tpot_s = match first {
        Some(f) if n >= 2 => last.duration_since(f).as_secs_f64() / (n - 1) as f64,
        _ => f64::NAN,
    };
    let ttft_s = first.map_or(f64::NAN, |f| f.duration_since(start).as_secs_f64());
    // Recorded before the end of the stream, so a client that has the response has the truth.
    if let Ok(mut v) = truths.lock() {
        v.push(Truth {
            id: req.get("scripted_id").and_then(|v| v.as_u64()),
            tokens: n,
            tpot_s,
            ttft_s,
            itl_s,
        });
    }
    match tail.as_str() {
        "cut" => return Ok(false),
        "finish" => {
            let c = serde_json::json!({"choices": [{"text": "", "finish_reason": "length"}], "usage": usage});
            send(out, &format!("data: {c}\n\n"))?;
        }
        _ => {
            let c = serde_json::json!({"choices": [], "usage": usage});
            send(out, &format!("data: {c}\n\ndata: [DONE]\n\n"))?;
        }
    }
    out.write_all(b"0\r\n\r\n")?;
    Ok(true)
}
