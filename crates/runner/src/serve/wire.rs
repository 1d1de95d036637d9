//! Streamed completions over plain HTTP/1.1 on sockets of the client's own, whose reads carry
//! the kernel's receive time (`SO_TIMESTAMPNS`): the time a token event reached the host, not
//! the time the client's event loop got round to it. reqwest (hyper) reads its sockets itself
//! and exposes no such time, so with a thousand streams on one core its timestamps carry the
//! loop's queueing (docs/benchmarks.md, client fidelity). This is the one HTTP exchange
//! kernelab writes by hand, for that reason alone: a POST with a JSON body, and a response
//! framed by chunked encoding, a length or the connection's end (RFC 9112); headers are parsed
//! by `httparse`, as hyper does. Everything else (TLS, proxies, non-streamed requests) goes
//! through reqwest.

use std::collections::HashMap;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncWriteExt, Interest};
use tokio::net::TcpStream;

/// Most bytes of a response's status line and headers: 64 KiB.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most bytes of one chunk-size line or trailer line: 4 KiB.
const MAX_LINE_BYTES: usize = 4096;
/// Bytes asked of one read.
const READ_BYTES: usize = 64 * 1024;

/// A plain `http://` URL split for a connection: where to connect and what to ask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plain {
    /// `host:port`, to connect to and to key the pool.
    pub authority: String,
    /// The `Host` header.
    pub host: String,
    /// Path and query.
    pub target: String,
}

impl Plain {
    /// The parts of `url` when it is plain HTTP with no user information, else `None`.
    pub fn of(url: &str) -> Option<Plain> {
        let u = reqwest::Url::parse(url).ok()?;
        if u.scheme() != "http" || !u.username().is_empty() || u.password().is_some() {
            return None;
        }
        let host = u.host_str()?.to_string();
        let port = u.port_or_known_default()?;
        let target = match u.query() {
            Some(q) => format!("{}?{q}", u.path()),
            None => u.path().to_string(),
        };
        let host_header = match u.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.clone(),
        };
        Some(Plain {
            authority: format!("{host}:{port}"),
            host: host_header,
            target,
        })
    }
}

/// One connection to a server.
pub struct Wire {
    sock: TcpStream,
    /// Bytes read past the end of the last response's head (the start of its body).
    pending: Vec<u8>,
    /// The buffer reads land in, and the control-message buffer of their timestamps (kept:
    /// zeroing 64 KiB per read costs more than the read).
    buf: Vec<u8>,
    cmsg: Vec<u8>,
}

/// A kernel receive time (`CLOCK_REALTIME`) as an [`Instant`]: now less how long ago it was.
fn to_instant(ts: nix::sys::time::TimeSpec) -> Instant {
    let now = Instant::now();
    let real = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let (Ok(s), Ok(ns)) = (u64::try_from(ts.tv_sec()), u32::try_from(ts.tv_nsec())) else {
        return now;
    };
    now.checked_sub(real.saturating_sub(Duration::new(s, ns)))
        .unwrap_or(now)
}

impl Wire {
    /// Connects, with Nagle off and kernel receive timestamps on (where the kernel refuses
    /// them, each read is timed when it returns).
    pub async fn connect(authority: &str) -> io::Result<Wire> {
        let sock = TcpStream::connect(authority).await?;
        sock.set_nodelay(true)?;
        let _ = nix::sys::socket::setsockopt(
            &sock,
            nix::sys::socket::sockopt::ReceiveTimestampns,
            &true,
        );
        Ok(Wire {
            sock,
            pending: Vec::new(),
            buf: vec![0; READ_BYTES],
            cmsg: nix::cmsg_space!(nix::sys::time::TimeSpec),
        })
    }

    /// Reads what has arrived: (bytes appended to `out`, 0 at the connection's end; when the
    /// kernel received the last of them, or when the read returned where the kernel gave no
    /// receive time; whether the kernel gave it).
    async fn read(&mut self, out: &mut Vec<u8>) -> io::Result<(usize, Instant, bool)> {
        use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags};
        let Wire {
            sock, buf, cmsg, ..
        } = self;
        loop {
            sock.readable().await?;
            let fd = sock.as_raw_fd();
            let got = sock.try_io(Interest::READABLE, || {
                let mut iov = [io::IoSliceMut::new(buf)];
                let msg = recvmsg::<()>(fd, &mut iov, Some(cmsg), MsgFlags::empty())
                    .map_err(io::Error::from)?;
                let mut at = None;
                if let Ok(c) = msg.cmsgs() {
                    for m in c {
                        if let ControlMessageOwned::ScmTimestampns(ts) = m {
                            at = Some(ts);
                        }
                    }
                }
                Ok((msg.bytes, at))
            });
            match got {
                Ok((n, at)) => {
                    out.extend_from_slice(&buf[..n]);
                    // A read of 0 bytes (the connection's end) carries no data to time.
                    let kernel = at.is_some() || n == 0;
                    return Ok((n, at.map_or_else(Instant::now, to_instant), kernel));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

/// How a response body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    Chunked,
    Length(u64),
    Close,
}

/// A response's status line and headers, read.
pub struct Head {
    /// The status code.
    pub status: u16,
    framing: Framing,
    /// Whether the connection may serve another request after this response.
    keep_alive: bool,
}

/// Why an exchange failed, and whether it failed before the server answered anything (a
/// kept-alive connection the server had closed: the request is sent again on a new one).
#[derive(Debug)]
pub struct WireError {
    /// What went wrong.
    pub message: String,
    /// Nothing of a response had arrived.
    pub before_answer: bool,
}

fn failed(message: impl Into<String>, before_answer: bool) -> WireError {
    WireError {
        message: message.into(),
        before_answer,
    }
}

/// Kept-alive connections by authority.
#[derive(Default)]
pub struct Pool {
    idle: Mutex<HashMap<String, Vec<Wire>>>,
}

impl Pool {
    /// An idle connection to `authority`, if any.
    fn take(&self, authority: &str) -> Option<Wire> {
        self.idle.lock().ok()?.get_mut(authority)?.pop()
    }

    /// Keeps `w` for the next request to `authority`.
    fn keep(&self, authority: &str, w: Wire) {
        if let Ok(mut m) = self.idle.lock() {
            m.entry(authority.to_string()).or_default().push(w);
        }
    }

    /// Opens connections to `authority` at once until `n` are idle; returns how many are.
    pub async fn open(&self, authority: &str, n: usize) -> usize {
        let idle = self
            .idle
            .lock()
            .map_or(0, |m| m.get(authority).map_or(0, Vec::len));
        let more = n.saturating_sub(idle);
        let opened =
            futures_util::future::join_all((0..more).map(|_| Wire::connect(authority))).await;
        let mut count = idle.min(n);
        for w in opened.into_iter().flatten() {
            self.keep(authority, w);
            count += 1;
        }
        count
    }
}

/// One streamed exchange: the request sent, the head read; then [`Exchange::next`] gives the
/// body's bytes as they arrive, with their kernel receive times.
pub struct Exchange<'p> {
    pool: &'p Pool,
    authority: String,
    wire: Option<Wire>,
    /// The response's head.
    pub head: Head,
    raw: Vec<u8>,
    /// When the kernel received the last bytes read.
    at: Instant,
    body: Body,
    /// Reads the kernel gave no receive time for (timed when they returned).
    untimed_reads: u64,
}

/// A response body's decoder: the framing of its head, and how far it has got. Takes bytes as
/// they are read (split anywhere) and gives the body's bytes.
#[derive(Clone, Debug)]
pub struct Body {
    framing: Framing,
    chunk: ChunkState,
    left: u64,
    ended: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChunkState {
    Size,
    Data,
    DataEnd,
    Trailers,
    Done,
}

impl Body {
    /// The decoder of the body that follows `head`.
    pub fn new(head: &Head) -> Body {
        let left = match head.framing {
            Framing::Length(n) => n,
            _ => 0,
        };
        Body {
            framing: head.framing,
            chunk: ChunkState::Size,
            left,
            ended: head.framing == Framing::Length(0),
        }
    }

    /// Whether the body is complete.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The connection ended: the end of a close-delimited body, else an error.
    pub fn end_of_input(&mut self) -> Result<(), WireError> {
        if self.framing == Framing::Close || self.ended {
            self.ended = true;
            return Ok(());
        }
        Err(failed(
            "stream broken: the connection closed mid-body",
            false,
        ))
    }

    /// Moves what `raw` holds of the body into `out`, as far as it goes (what is left of
    /// `raw` is an incomplete chunk line, or bytes after the body's end).
    pub fn decode(&mut self, raw: &mut Vec<u8>, out: &mut Vec<u8>) -> Result<(), WireError> {
        let mut pos = 0;
        match self.framing {
            Framing::Close => {
                out.extend_from_slice(raw);
                pos = raw.len();
            }
            Framing::Length(_) => {
                let take = (raw.len() as u64).min(self.left) as usize;
                out.extend_from_slice(&raw[..take]);
                self.left -= take as u64;
                pos = take;
                self.ended = self.left == 0;
            }
            Framing::Chunked => loop {
                let rest = &raw[pos..];
                match self.chunk {
                    ChunkState::Size => match httparse::parse_chunk_size(rest) {
                        Ok(httparse::Status::Complete((used, size))) => {
                            pos += used;
                            self.left = size;
                            self.chunk = if size == 0 {
                                ChunkState::Trailers
                            } else {
                                ChunkState::Data
                            };
                        }
                        Ok(httparse::Status::Partial) if rest.len() <= MAX_LINE_BYTES => break,
                        _ => return Err(failed("stream broken: a bad chunk size line", false)),
                    },
                    ChunkState::Data => {
                        if rest.is_empty() {
                            break;
                        }
                        let take = (rest.len() as u64).min(self.left) as usize;
                        out.extend_from_slice(&rest[..take]);
                        pos += take;
                        self.left -= take as u64;
                        if self.left == 0 {
                            self.chunk = ChunkState::DataEnd;
                        }
                    }
                    ChunkState::DataEnd => {
                        if rest.len() < 2 {
                            break;
                        }
                        if &rest[..2] != b"\r\n" {
                            return Err(failed("stream broken: a chunk not ended by CRLF", false));
                        }
                        pos += 2;
                        self.chunk = ChunkState::Size;
                    }
                    ChunkState::Trailers => match memchr::memmem::find(rest, b"\r\n") {
                        Some(0) => {
                            pos += 2;
                            self.chunk = ChunkState::Done;
                            self.ended = true;
                        }
                        Some(i) if i <= MAX_LINE_BYTES => pos += i + 2,
                        None if rest.len() <= MAX_LINE_BYTES => break,
                        _ => return Err(failed("stream broken: a trailer line too long", false)),
                    },
                    ChunkState::Done => break,
                }
            },
        }
        raw.drain(..pos);
        Ok(())
    }
}

/// Sends `body` as a JSON POST to `to` on a kept-alive connection (or a new one, and again on
/// a new one when a kept-alive one turns out closed) and reads the response's head.
pub async fn post<'p>(pool: &'p Pool, to: &Plain, body: &[u8]) -> Result<Exchange<'p>, WireError> {
    let request = {
        let mut r = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\nContent-Length: {}\r\n\r\n",
            to.target,
            to.host,
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        r
    };
    for attempt in 0..2 {
        let (mut w, reused) = match pool.take(&to.authority).filter(|_| attempt == 0) {
            Some(w) => (w, true),
            None => (
                Wire::connect(&to.authority).await.map_err(|e| {
                    failed(format!("cannot connect to {}: {e}", to.authority), true)
                })?,
                false,
            ),
        };
        let sent = w.sock.write_all(&request).await;
        let head = match sent {
            Ok(()) => read_head(&mut w).await,
            Err(e) => Err(failed(format!("sending the request: {e}"), true)),
        };
        match head {
            Ok((head, at, untimed_reads)) => {
                let raw = std::mem::take(&mut w.pending);
                let body = Body::new(&head);
                return Ok(Exchange {
                    pool,
                    authority: to.authority.clone(),
                    wire: Some(w),
                    head,
                    raw,
                    at,
                    body,
                    untimed_reads,
                });
            }
            Err(e) if reused && e.before_answer => continue,
            Err(e) => return Err(e),
        }
    }
    Err(failed("no connection answered", true))
}

/// Reads a response's status line and headers (the bytes after them stay in `pending`): the
/// head, when its last bytes arrived, and how many reads the kernel gave no receive time for.
async fn read_head(w: &mut Wire) -> Result<(Head, Instant, u64), WireError> {
    let mut buf = std::mem::take(&mut w.pending);
    let mut at = Instant::now();
    let mut untimed = 0;
    loop {
        if let Some((head, used)) = parse_head(&buf)? {
            w.pending = buf.split_off(used);
            return Ok((head, at, untimed));
        }
        if buf.len() > MAX_HEAD_BYTES {
            return Err(failed(
                format!("the response head is longer than {MAX_HEAD_BYTES} bytes"),
                false,
            ));
        }
        let (n, t, kernel) = w
            .read(&mut buf)
            .await
            .map_err(|e| failed(format!("reading the response: {e}"), buf.is_empty()))?;
        if n == 0 {
            return Err(failed(
                "the connection closed before a complete response head",
                buf.is_empty(),
            ));
        }
        at = t;
        untimed += u64::from(!kernel);
    }
}

/// A response's status line and headers at the start of `buf`: the head and its length, or
/// `None` while incomplete.
pub fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, WireError> {
    if buf.is_empty() {
        return Ok(None);
    }
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut headers);
    match resp.parse(buf) {
        Ok(httparse::Status::Complete(used)) => Ok(Some((head_of(&resp)?, used))),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(e) => Err(failed(
            format!("the response head is not HTTP/1.1: {e}"),
            false,
        )),
    }
}

fn head_of(resp: &httparse::Response<'_, '_>) -> Result<Head, WireError> {
    let status = resp.code.unwrap_or(0);
    let mut framing = Framing::Close;
    let mut keep_alive = resp.version == Some(1);
    for h in resp.headers.iter() {
        let value = String::from_utf8_lossy(h.value).to_ascii_lowercase();
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // Chunked must be the last coding; any other coding is not read.
            if value.trim().ends_with("chunked") {
                framing = Framing::Chunked;
            } else {
                return Err(failed(
                    format!("unsupported transfer-encoding: {value}"),
                    false,
                ));
            }
        } else if h.name.eq_ignore_ascii_case("content-length") && framing != Framing::Chunked {
            let n = value.trim().parse().map_err(|_| {
                failed(
                    format!("the content-length is not a number: {value}"),
                    false,
                )
            })?;
            framing = Framing::Length(n);
        } else if h.name.eq_ignore_ascii_case("connection") && value.contains("close") {
            keep_alive = false;
        }
    }
    keep_alive &= framing != Framing::Close;
    Ok(Head {
        status,
        framing,
        keep_alive,
    })
}

impl Exchange<'_> {
    /// When the kernel received the bytes of the last read (at the body's end: its end).
    pub fn last_read(&self) -> Instant {
        self.at
    }

    /// How many of the exchange's reads the kernel gave no receive time for: those were timed
    /// when the read returned, so they carry the client's own queueing.
    pub fn untimed_reads(&self) -> u64 {
        self.untimed_reads
    }

    /// The body's next bytes, decoded, and when the kernel received them; `None` at the
    /// body's end (the connection then goes back to the pool when it can serve another).
    pub async fn next(&mut self, out: &mut Vec<u8>) -> Result<Option<Instant>, WireError> {
        loop {
            // What is left of the last read first (the body's start came with the head).
            let before = out.len();
            if !self.raw.is_empty() {
                self.body.decode(&mut self.raw, out)?;
            }
            if out.len() > before {
                return Ok(Some(self.at));
            }
            if self.body.ended {
                self.release();
                return Ok(None);
            }
            let Some(w) = self.wire.as_mut() else {
                return Ok(None);
            };
            let (n, at, kernel) = w
                .read(&mut self.raw)
                .await
                .map_err(|e| failed(format!("stream broken: {e}"), false))?;
            self.at = at;
            self.untimed_reads += u64::from(!kernel);
            if n == 0 {
                self.wire = None;
                self.body.end_of_input()?;
            }
        }
    }

    /// Gives the connection back to the pool when the response ended cleanly and it can
    /// serve another request; otherwise it is closed.
    fn release(&mut self) {
        if let Some(mut w) = self.wire.take() {
            if self.body.ended && self.head.keep_alive && self.raw.is_empty() {
                w.pending.clear();
                self.pool.keep(&self.authority, w);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }

    /// A server that writes `parts` (one write each, `gap` apart) to its first connection.
    fn writer(parts: Vec<Vec<u8>>, gap: Duration) -> String {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = l.local_addr().expect("addr").to_string();
        std::thread::spawn(move || {
            if let Ok((mut c, _)) = l.accept() {
                let _ = c.set_nodelay(true);
                // The request read first (a socket closed with unread bytes is reset).
                let _ = c.read(&mut [0u8; 4096]);
                for p in parts {
                    let _ = c.write_all(&p);
                    std::thread::sleep(gap);
                }
            }
        });
        addr
    }

    #[test]
    fn a_read_is_timed_when_the_bytes_arrived_not_when_read() {
        let addr = writer(vec![b"hello".to_vec()], Duration::ZERO);
        runtime().block_on(async {
            let mut w = Wire::connect(&addr).await.expect("connect");
            w.sock
                .write_all(b"GET / HTTP/1.1\r\n\r\n")
                .await
                .expect("write");
            // The client busy elsewhere: the bytes wait in the socket for 200 ms.
            std::thread::sleep(Duration::from_millis(200));
            let mut out = Vec::new();
            let (n, at, kernel) = w.read(&mut out).await.expect("read");
            let waited = Instant::now().saturating_duration_since(at);
            assert_eq!((n, &out[..]), (5, &b"hello"[..]));
            if kernel {
                assert!(waited >= Duration::from_millis(150), "{waited:?}");
            } else {
                // Sandboxes (gVisor among them) take SO_TIMESTAMPNS but send no timestamp:
                // the read is timed when it returned, and says so.
                eprintln!("this kernel gives no receive time: the read is timed on return");
                assert!(waited < Duration::from_millis(150), "{waited:?}");
            }
        });
    }

    /// The decoded body of a response sent as `parts`, with each piece's arrival.
    fn body_of(parts: Vec<Vec<u8>>) -> Result<(u16, Vec<u8>, usize), String> {
        let addr = writer(parts, Duration::from_millis(5));
        let to = Plain::of(&format!("http://{addr}/v1/completions")).expect("plain");
        runtime().block_on(async {
            let pool = Pool::default();
            let mut x = post(&pool, &to, b"{}").await.map_err(|e| e.message)?;
            let (mut out, mut pieces) = (Vec::new(), 0);
            while x.next(&mut out).await.map_err(|e| e.message)?.is_some() {
                pieces += 1;
            }
            Ok((x.head.status, out, pieces))
        })
    }

    #[test]
    fn chunked_bodies_split_anywhere_decode_whole() {
        let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        let body = b"5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n".to_vec();
        // The whole response in one write, then split at every byte of the body.
        let mut one = head.clone();
        one.extend_from_slice(&body);
        let r = body_of(vec![one]).expect("one write");
        assert_eq!((r.0, &r.1[..]), (200, &b"hello world"[..]));
        for cut in 1..body.len() {
            let mut first = head.clone();
            first.extend_from_slice(&body[..cut]);
            let r = body_of(vec![first, body[cut..].to_vec()]).expect("split");
            assert_eq!(&r.1[..], b"hello world", "cut at {cut}");
        }
    }

    #[test]
    fn lengths_closes_and_bad_framing() {
        let r = body_of(vec![
            b"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabcdef".to_vec(),
        ])
        .expect("length");
        assert_eq!((r.0, &r.1[..]), (404, &b"abc"[..]));
        let r = body_of(vec![
            b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nda".to_vec(),
            b"ta".to_vec(),
        ])
        .expect("close-delimited");
        assert_eq!(&r.1[..], b"data");
        let e = body_of(vec![
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".to_vec(),
        ])
        .expect_err("bad size");
        assert!(e.contains("chunk size"), "{e}");
        let e = body_of(vec![
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel".to_vec(),
        ])
        .expect_err("cut mid-chunk");
        assert!(e.contains("closed mid-body"), "{e}");
        let e = body_of(vec![b"SSH-2.0-OpenSSH\r\n\r\n".to_vec()]).expect_err("not HTTP");
        assert!(e.contains("not HTTP/1.1"), "{e}");
        let e = body_of(vec![vec![b'a'; MAX_HEAD_BYTES + 10]]).expect_err("endless head");
        assert!(e.contains("head"), "{e}");
    }

    #[test]
    fn only_plain_http_urls_are_taken() {
        let p = Plain::of("http://127.0.0.1:8000/v1/completions?x=1").expect("plain");
        assert_eq!(p.authority, "127.0.0.1:8000");
        assert_eq!(p.host, "127.0.0.1:8000");
        assert_eq!(p.target, "/v1/completions?x=1");
        assert_eq!(
            Plain::of("http://[::1]/a").map(|p| p.authority),
            Some("[::1]:80".into())
        );
        assert!(Plain::of("https://example.com/v1").is_none());
        assert!(Plain::of("http://user:pw@example.com/v1").is_none());
    }
}
