//! A refillable window over the input, in which each trace event is scanned as a whole slice.
//!
//! Refills read until the buffer is full, and a buffer full of one unfinished value doubles:
//! an event that crosses the end of the buffer is scanned again from its start after the refill,
//! so a value of `n` bytes costs at most about `4n` scanned bytes however small the reads are
//! (a 4 MiB buffer re-scans one event per 4 MiB: a few hundred bytes, under 0.01%).

use super::scan::{self, Fields, Stop};
use crate::error::{snippet, Error, ErrorKind, Result};
use kernelab_model::Location;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;

/// The largest single JSON value (one trace event or top-level member) kernelab reads: the
/// scanning window never grows past it, which bounds memory whatever the file holds.
pub(super) const MAX_VALUE_BYTES: usize = 256 << 20;

/// Bytes an error's snippet may show (24 characters of up to 4 bytes, and the byte that says
/// whether more follow).
const SNIPPET_BYTES: usize = 24 * 4 + 1;

/// A refillable window over a reader, with the stream offset of its first byte.
pub(crate) struct Window<R> {
    reader: R,
    buf: Vec<u8>,
    /// Index of the next unread byte in `buf`.
    pub pos: usize,
    len: usize,
    base: u64,
    eof: bool,
}

impl<R: Read> Window<R> {
    /// A window with a 4 MiB buffer.
    pub(crate) fn new(reader: R) -> Self {
        Self::at(reader, 0, 4 << 20)
    }

    /// A window with a buffer of `capacity` bytes (at least 64; it doubles for a longer
    /// value) over a reader whose first byte is stream offset `base` (a part of a file read
    /// from there), so errors name the offset in the whole stream.
    pub(super) fn at(reader: R, base: u64, capacity: usize) -> Self {
        Window {
            reader,
            buf: vec![0; capacity.clamp(64, MAX_VALUE_BYTES)],
            pos: 0,
            len: 0,
            base,
            eof: false,
        }
    }

    /// The stream offset of index `i` of the window.
    pub(crate) fn offset(&self, i: usize) -> u64 {
        self.base + i as u64
    }

    /// The unread bytes.
    pub(super) fn rest(&self) -> &[u8] {
        self.buf.get(self.pos..self.len).unwrap_or_default()
    }

    /// Bytes `r` relative to `pos` (empty if out of the window).
    pub(crate) fn slice(&self, r: Range<usize>) -> &[u8] {
        self.buf
            .get(self.pos + r.start..self.pos + r.end)
            .unwrap_or_default()
    }

    /// Moves the unread bytes to the front and reads until the buffer is full (doubling it
    /// first when the unread bytes fill it); returns false when nothing more came.
    fn fill(&mut self) -> Result<bool> {
        if self.eof {
            return Ok(false);
        }
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.len, 0);
            self.base += self.pos as u64;
            self.len -= self.pos;
            self.pos = 0;
        }
        if self.len == self.buf.len() {
            if self.buf.len() >= MAX_VALUE_BYTES {
                return Err(Error::new(
                    Location::byte(self.offset(self.pos)),
                    ErrorKind::TooLarge {
                        what: "a single JSON value (trace event or top-level member)".into(),
                        limit: MAX_VALUE_BYTES as u64,
                    },
                ));
            }
            let new_len = (self.buf.len() * 2).min(MAX_VALUE_BYTES);
            self.buf.resize(new_len, 0);
        }
        let before = self.len;
        while self.len < self.buf.len() {
            let Some(free) = self.buf.get_mut(self.len..) else {
                break;
            };
            match self.reader.read(free) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => self.len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::new(
                        Location::byte(self.offset(self.len)),
                        ErrorKind::Io(e),
                    ))
                }
            }
        }
        Ok(self.len > before)
    }

    /// Skips whitespace and returns the next byte without consuming it (`None` at end).
    pub(crate) fn peek(&mut self) -> Result<Option<u8>> {
        loop {
            if let Some(k) = self.rest().iter().position(|&c| !scan::is_ws(c)) {
                self.pos += k;
                return Ok(self.buf.get(self.pos).copied());
            }
            self.pos = self.len;
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Consumes the next non-whitespace byte, which must be one of `allowed`.
    pub(crate) fn expect(&mut self, allowed: &[u8], what: &str) -> Result<u8> {
        match self.peek()? {
            Some(c) if allowed.contains(&c) => {
                self.pos += 1;
                Ok(c)
            }
            Some(_) => {
                self.top_up(0);
                Err(Error::syntax(
                    Location::byte(self.offset(self.pos)),
                    what,
                    snippet(self.rest(), 24),
                ))
            }
            None => Err(Error::new(
                Location::byte(self.offset(self.pos)),
                ErrorKind::Truncated {
                    expected: what.to_string(),
                },
            )),
        }
    }

    /// Scans the next value (after whitespace) as a trace event (see [`scan::event`]) until
    /// it is complete in the window; returns its end relative to `pos`, with `f` holding its
    /// members. The caller consumes it with [`Window::consume`].
    pub(super) fn next_event(
        &mut self,
        f: &mut Fields,
        keep: impl Fn(&[u8]) -> bool,
    ) -> Result<usize> {
        self.scan_next("a valid trace event", |b| scan::event(b, f, &keep))
    }

    /// Scans the next value (after whitespace) until it is complete in the window; returns
    /// its end relative to `pos`.
    pub(crate) fn next_value(&mut self) -> Result<usize> {
        self.scan_next("a JSON value", |b| scan::value(b, 0).map(|(_, end)| end))
    }

    fn scan_next(
        &mut self,
        what: &str,
        mut scan: impl FnMut(&[u8]) -> scan::Scan<usize>,
    ) -> Result<usize> {
        if self.peek()?.is_none() {
            return Err(Error::new(
                Location::byte(self.offset(self.pos)),
                ErrorKind::Truncated {
                    expected: "a JSON value".into(),
                },
            ));
        }
        loop {
            match scan(self.rest()) {
                Ok(end) => return Ok(end),
                Err(Stop::Invalid { at, expected }) => {
                    self.top_up(at);
                    let at_abs = self.pos + at;
                    let found = snippet(self.buf.get(at_abs..self.len).unwrap_or_default(), 24);
                    return Err(Error::syntax(
                        Location::byte(self.offset(at_abs)),
                        what,
                        format!("invalid JSON ({expected}) at {found}"),
                    ));
                }
                Err(Stop::Incomplete) => {
                    if !self.fill()? {
                        // A number or literal at the very end of input is complete.
                        let rest = self.rest();
                        if !rest.is_empty() && rest.iter().all(|&c| scan::is_scalar(c)) {
                            return Ok(rest.len());
                        }
                        return Err(Error::new(
                            Location::byte(self.offset(self.len)),
                            ErrorKind::Truncated {
                                expected: "the rest of a JSON value (the file may be cut off)"
                                    .into(),
                            },
                        ));
                    }
                }
            }
        }
    }

    /// Reads on (when it can) until the window holds the [`SNIPPET_BYTES`] after `at`
    /// (relative to `pos`), so an error's snippet of the input there is the same whatever
    /// the window held when the error was found.
    fn top_up(&mut self, at: usize) {
        while self.rest().len() < at.saturating_add(SNIPPET_BYTES) {
            match self.fill() {
                Ok(true) => {}
                _ => break,
            }
        }
    }

    /// Marks `n` bytes after `pos` as read.
    pub(crate) fn consume(&mut self, n: usize) {
        self.pos += n;
    }
}

impl<R: Read + Seek> Window<R> {
    /// Drops the window's bytes and goes on reading at stream offset `offset` (the reader's
    /// offset 0 being stream offset 0).
    pub(super) fn restart_at(&mut self, offset: u64) -> Result<()> {
        self.reader
            .seek(SeekFrom::Start(offset))
            .map_err(|e| Error::new(Location::byte(offset), ErrorKind::Io(e)))?;
        self.pos = 0;
        self.len = 0;
        self.base = offset;
        self.eof = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }
    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.step).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn long_values_in_small_reads_are_scanned_in_linear_time() {
        // 16 MiB arriving 4 KiB at a time: rescanning from the start after every read would
        // read ~3·10¹⁰ bytes, minutes even in a release build; refills that fill the buffer
        // and doubling keep it to a few passes, well under the generous bound.
        let len = 16 << 20;
        let mut text = Vec::with_capacity(len + 64);
        text.extend_from_slice(b"[{\"cat\":\"kernel\",\"name\":\"");
        text.resize(len, b'a');
        text.extend_from_slice(b"\\\"\"}, \"");
        text.resize(2 * len + 1, b'\\');
        text.extend_from_slice(b"\"]");
        let t = std::time::Instant::now();
        let mut w = Window::new(Trickle {
            data: &text,
            step: 4096,
        });
        w.expect(b"[", "[").expect("array");
        let mut f = Fields::default();
        let end = w.next_event(&mut f, |_| true).expect("event");
        let cat = f.cat.map(|v| w.slice(v.range()).to_vec());
        assert_eq!(cat, Some(b"kernel".to_vec()));
        assert_eq!(f.name.map(|v| v.range().len()), Some(len - 25 + 2));
        w.consume(end);
        w.expect(b",", ",").expect("comma");
        let end = w.next_value().expect("string of backslashes");
        assert_eq!(end, len - 4);
        assert!(t.elapsed().as_secs_f64() < 120.0, "{:?}", t.elapsed());
    }

    #[test]
    fn a_value_past_the_limit_is_refused() {
        struct Endless;
        impl Read for Endless {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                buf.fill(b'7');
                Ok(buf.len())
            }
        }
        let mut w = Window::new(Endless);
        let err = w.next_value().expect_err("too large");
        assert!(
            err.to_string()
                .contains("a single JSON value (trace event or top-level member) is larger than the limit of 268435456 bytes"),
            "{err}"
        );
    }

    #[test]
    fn window_refills_across_small_reads() {
        let text = br#"  [{"cat":"kernel","ts":1}, 2]"#;
        let mut w = Window::new(Trickle {
            data: text,
            step: 3,
        });
        w.expect(b"[", "[").expect("array");
        let mut f = Fields::default();
        let end = w.next_event(&mut f, |_| true).expect("value");
        let cat = f.cat.map(|v| w.slice(v.range()).to_vec());
        assert_eq!(cat, Some(b"kernel".to_vec()));
        assert_eq!(
            f.ts.map(|v| w.slice(v.range()).to_vec()),
            Some(b"1".to_vec())
        );
        w.consume(end);
        w.expect(b",", ",").expect("comma");
        let end = w.next_value().expect("scalar");
        assert_eq!(w.slice(0..end), b"2");
        w.consume(end);
        w.expect(b"]", "]").expect("close");
        assert_eq!(w.peek().expect("eof"), None);
    }

    #[test]
    fn errors_name_the_stream_byte() {
        let text = br#"[{"cat": "kernel", "ts": 1}, {"cat": "kernel", "dur": }]"#;
        let mut w = Window::new(Trickle {
            data: text,
            step: 5,
        });
        w.expect(b"[", "[").expect("array");
        let mut f = Fields::default();
        let end = w.next_event(&mut f, |_| true).expect("first");
        w.consume(end);
        w.expect(b",", ",").expect("comma");
        let e = w.next_event(&mut f, |_| true).expect_err("second");
        let at = text.iter().rposition(|&c| c == b'}').expect("brace");
        assert_eq!(e.location(), &Location::byte(at as u64));
        assert!(
            e.to_string()
                .contains("expected a valid trace event, found invalid JSON (expected value)"),
            "{e}"
        );
        let cut = br#"[{"cat": "kernel", "name": "abc"#;
        let mut w = Window::new(&cut[..]);
        w.expect(b"[", "[").expect("array");
        let e = w.next_event(&mut f, |_| true).expect_err("cut");
        assert_eq!(e.location(), &Location::byte(cut.len() as u64));
        assert!(e.to_string().contains("input ends early"), "{e}");
    }
}
