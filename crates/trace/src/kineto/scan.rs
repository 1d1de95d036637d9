//! A streaming JSON scanner that finds the byte extent of one value without building it, so
//! that only the events kernelab needs are handed to `serde_json`. Written by hand because no
//! well-kept crate streams the elements of one array inside a top-level object with byte
//! offsets and constant memory (`serde_json::StreamDeserializer` reads whole top-level values).

use crate::error::{snippet, Error, ErrorKind, Result};
use kernelab_model::Location;
use std::io::Read;
use std::ops::Range;

/// Byte classes outside strings.
const OTHER: u8 = 0;
const WS: u8 = 1;
const SCALAR: u8 = 2;
const OPEN: u8 = 3;
const CLOSE: u8 = 4;
const QUOTE: u8 = 5;
const COMMA: u8 = 6;
const COLON: u8 = 7;

const fn classes() -> [u8; 256] {
    let mut t = [OTHER; 256];
    t[b' ' as usize] = WS;
    t[b'\t' as usize] = WS;
    t[b'\n' as usize] = WS;
    t[b'\r' as usize] = WS;
    let scalar = b"0123456789+-.eEtrufalsn";
    let mut i = 0;
    while i < scalar.len() {
        t[scalar[i] as usize] = SCALAR;
        i += 1;
    }
    t[b'{' as usize] = OPEN;
    t[b'[' as usize] = OPEN;
    t[b'}' as usize] = CLOSE;
    t[b']' as usize] = CLOSE;
    t[b'"' as usize] = QUOTE;
    t[b',' as usize] = COMMA;
    t[b':' as usize] = COLON;
    t
}
static CLASS: [u8; 256] = classes();

/// The result of scanning one value that starts at index 0 of a slice.
#[derive(Debug, PartialEq, Eq)]
pub enum Scan {
    /// The value ends at `end` (exclusive). For objects, `cat` and `ph` are the raw contents of
    /// those top-level string members when present.
    Complete {
        /// Exclusive end of the value.
        end: usize,
        /// Raw `cat` string content.
        cat: Option<Range<usize>>,
        /// Raw `ph` string content.
        ph: Option<Range<usize>>,
    },
    /// The slice ends inside the value.
    Incomplete,
    /// The value is malformed at `at`.
    Invalid {
        /// Index of the offending byte.
        at: usize,
        /// What was expected there.
        expected: &'static str,
    },
}

/// Continues a string from index `i` (after its opening quote): `Ok(end)` is the index after
/// the closing quote; `Err(resume)` means the slice ended inside the string, and scanning may
/// resume at `resume` once more bytes are there (never before bytes already read, except one
/// trailing backslash whose escaped byte is still missing).
fn string_from(b: &[u8], mut i: usize) -> std::result::Result<usize, usize> {
    loop {
        let Some(k) = b.get(i..).and_then(|t| memchr::memchr2(b'"', b'\\', t)) else {
            return Err(b.len());
        };
        i += k;
        if b.get(i) == Some(&b'"') {
            return Ok(i + 1);
        }
        if i + 1 >= b.len() {
            return Err(i);
        }
        i += 2;
    }
}

/// What kind of value a [`Scanner`] is in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Kind {
    /// Nothing read yet.
    #[default]
    Start,
    /// A top-level string.
    Str,
    /// A number, `true`, `false` or `null`.
    Scalar,
    /// An object or array.
    Nested,
}

/// The state of scanning one value, kept between calls so that a value that arrives in many
/// reads is scanned once: each call resumes where the last stopped (no rescans from the
/// start, so a long value costs time linear in its length).
#[derive(Debug, Default)]
pub struct Scanner {
    kind: Kind,
    /// The next index to read.
    i: usize,
    /// The opening quote of the string being read inside a nested value.
    in_string: Option<usize>,
    stack: Vec<u8>,
    expect_key: bool,
    last_key: Option<Range<usize>>,
    cat: Option<Range<usize>>,
    ph: Option<Range<usize>>,
}

/// Scans the JSON value starting at `b[0]` (no leading whitespace) in one call.
#[cfg(test)]
pub fn scan_value(b: &[u8]) -> Scan {
    Scanner::default().scan(b)
}

impl Scanner {
    /// Scans the value starting at `b[0]`; `b` must extend the slice of the previous call
    /// (same start, more bytes) when the previous call returned [`Scan::Incomplete`].
    pub fn scan(&mut self, b: &[u8]) -> Scan {
        if self.kind == Kind::Start {
            let Some(&first) = b.first() else {
                return Scan::Incomplete;
            };
            self.kind = match CLASS[first as usize] {
                QUOTE => Kind::Str,
                SCALAR => Kind::Scalar,
                OPEN => Kind::Nested,
                _ => {
                    return Scan::Invalid {
                        at: 0,
                        expected: "a JSON value",
                    }
                }
            };
            self.i = if self.kind == Kind::Scalar { 0 } else { 1 };
            if let Some(&c) = b.first().filter(|_| self.kind == Kind::Nested) {
                self.stack.push(c);
                self.expect_key = c == b'{';
            }
        }
        match self.kind {
            Kind::Str => match string_from(b, self.i) {
                Ok(end) => Scan::Complete {
                    end,
                    cat: None,
                    ph: None,
                },
                Err(resume) => {
                    self.i = resume;
                    Scan::Incomplete
                }
            },
            Kind::Scalar => {
                while let Some(&c) = b.get(self.i) {
                    match CLASS[c as usize] {
                        SCALAR => self.i += 1,
                        WS | COMMA | CLOSE => {
                            return Scan::Complete {
                                end: self.i,
                                cat: None,
                                ph: None,
                            }
                        }
                        _ => {
                            return Scan::Invalid {
                                at: self.i,
                                expected: "a number, true, false or null",
                            }
                        }
                    }
                }
                Scan::Incomplete
            }
            _ => self.nested(b),
        }
    }

    /// Records a string member `quote..end` of the top-level object (keys, `cat`, `ph`).
    fn on_string(&mut self, b: &[u8], quote: usize, end: usize) {
        if self.stack.len() == 1 && self.stack.first() == Some(&b'{') {
            if self.expect_key {
                self.last_key = Some(quote + 1..end - 1);
                self.expect_key = false;
            } else if let Some(k) = &self.last_key {
                match b.get(k.clone()) {
                    Some(b"cat") => self.cat = Some(quote + 1..end - 1),
                    Some(b"ph") => self.ph = Some(quote + 1..end - 1),
                    _ => {}
                }
            }
        }
    }

    fn nested(&mut self, b: &[u8]) -> Scan {
        if let Some(quote) = self.in_string {
            match string_from(b, self.i) {
                Ok(end) => {
                    self.in_string = None;
                    self.on_string(b, quote, end);
                    self.i = end;
                }
                Err(resume) => {
                    self.i = resume;
                    return Scan::Incomplete;
                }
            }
        }
        while let Some(&c) = b.get(self.i) {
            match CLASS[c as usize] {
                WS | SCALAR | COLON => self.i += 1,
                QUOTE => {
                    let quote = self.i;
                    match string_from(b, quote + 1) {
                        Ok(end) => {
                            self.on_string(b, quote, end);
                            self.i = end;
                        }
                        Err(resume) => {
                            self.in_string = Some(quote);
                            self.i = resume;
                            return Scan::Incomplete;
                        }
                    }
                }
                OPEN => {
                    self.stack.push(c);
                    self.i += 1;
                }
                CLOSE => {
                    let want = if c == b'}' { b'{' } else { b'[' };
                    if self.stack.pop() != Some(want) {
                        return Scan::Invalid {
                            at: self.i,
                            expected: "a matching bracket",
                        };
                    }
                    self.i += 1;
                    if self.stack.is_empty() {
                        return Scan::Complete {
                            end: self.i,
                            cat: self.cat.take(),
                            ph: self.ph.take(),
                        };
                    }
                }
                COMMA => {
                    if self.stack.len() == 1 && self.stack.first() == Some(&b'{') {
                        self.expect_key = true;
                        self.last_key = None;
                    }
                    self.i += 1;
                }
                _ => {
                    return Scan::Invalid {
                        at: self.i,
                        expected: "JSON text",
                    }
                }
            }
        }
        Scan::Incomplete
    }
}

/// The largest single JSON value (one trace event or top-level member) kernelab reads: the
/// scanning window never grows past it, which bounds memory whatever the file holds.
pub const MAX_VALUE_BYTES: usize = 256 << 20;

/// The end of a scanned value and the raw `cat` and `ph` strings, relative to the window.
pub type Extent = (usize, Option<Range<usize>>, Option<Range<usize>>);

/// A refillable window over a reader, with the stream offset of its first byte.
pub struct Window<R> {
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
    pub fn new(reader: R) -> Self {
        Window {
            reader,
            buf: vec![0; 4 << 20],
            pos: 0,
            len: 0,
            base: 0,
            eof: false,
        }
    }

    /// The stream offset of index `i` of the window.
    pub fn offset(&self, i: usize) -> u64 {
        self.base + i as u64
    }

    /// The unread bytes.
    pub fn rest(&self) -> &[u8] {
        self.buf.get(self.pos..self.len).unwrap_or_default()
    }

    /// Bytes `r` relative to `pos` (empty if out of the window).
    pub fn slice(&self, r: Range<usize>) -> &[u8] {
        self.buf
            .get(self.pos + r.start..self.pos + r.end)
            .unwrap_or_default()
    }

    /// Reads more input, moving unread bytes to the front; returns false at end of input.
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
        loop {
            match self.reader.read(&mut self.buf[self.len..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(n) => {
                    self.len += n;
                    return Ok(true);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::new(
                        Location::byte(self.offset(self.len)),
                        ErrorKind::Io(e),
                    ))
                }
            }
        }
    }

    /// Skips whitespace and returns the next byte without consuming it (`None` at end).
    pub fn peek(&mut self) -> Result<Option<u8>> {
        loop {
            while self.pos < self.len {
                let c = self.buf[self.pos];
                if CLASS[c as usize] != WS {
                    return Ok(Some(c));
                }
                self.pos += 1;
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    /// Consumes the next non-whitespace byte, which must be one of `allowed`.
    pub fn expect(&mut self, allowed: &[u8], what: &str) -> Result<u8> {
        match self.peek()? {
            Some(c) if allowed.contains(&c) => {
                self.pos += 1;
                Ok(c)
            }
            Some(_) => Err(Error::syntax(
                Location::byte(self.offset(self.pos)),
                what,
                snippet(self.rest(), 24),
            )),
            None => Err(Error::new(
                Location::byte(self.offset(self.pos)),
                ErrorKind::Truncated {
                    expected: what.to_string(),
                },
            )),
        }
    }

    /// Scans the next value (after whitespace) until it is complete in the window; returns its
    /// extent relative to `pos`. The caller consumes it with [`Window::consume`].
    pub fn next_value(&mut self) -> Result<Extent> {
        if self.peek()?.is_none() {
            return Err(Error::new(
                Location::byte(self.offset(self.pos)),
                ErrorKind::Truncated {
                    expected: "a JSON value".into(),
                },
            ));
        }
        let mut scanner = Scanner::default();
        loop {
            match scanner.scan(self.rest()) {
                Scan::Complete { end, cat, ph } => return Ok((end, cat, ph)),
                Scan::Invalid { at, expected } => {
                    let at_abs = self.pos + at;
                    return Err(Error::syntax(
                        Location::byte(self.offset(at_abs)),
                        expected,
                        snippet(self.buf.get(at_abs..self.len).unwrap_or_default(), 24),
                    ));
                }
                Scan::Incomplete => {
                    if !self.fill()? {
                        // A scalar at the very end of input is complete.
                        let rest = self.rest();
                        if !rest.is_empty()
                            && CLASS[rest[0] as usize] == SCALAR
                            && rest.iter().all(|&c| CLASS[c as usize] == SCALAR)
                        {
                            return Ok((rest.len(), None, None));
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

    /// Marks `n` bytes after `pos` as read.
    pub fn consume(&mut self, n: usize) {
        self.pos += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(s: &str) -> (usize, Option<String>, Option<String>) {
        match scan_value(s.as_bytes()) {
            Scan::Complete { end, cat, ph } => (
                end,
                cat.map(|r| s[r].to_string()),
                ph.map(|r| s[r].to_string()),
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn finds_cat_and_ph_at_top_level_only() {
        let s = r#"{"ph": "X", "args": {"cat": "no"}, "cat": "kernel", "name": "a\"b"} , "#;
        assert_eq!(complete(s), (67, Some("kernel".into()), Some("X".into())));
        let s = r#"{"name": "cat", "x": ["cat", "y"]}"#;
        assert_eq!(complete(s).1, None);
    }

    #[test]
    fn scalars_strings_and_errors() {
        assert_eq!(complete("123.5,").0, 5);
        assert_eq!(complete("\"a\\\\\"]").0, 5);
        assert_eq!(scan_value(b"{\"a\": 1"), Scan::Incomplete);
        assert!(matches!(
            scan_value(b"{\"a\": 1]"),
            Scan::Invalid { at: 7, .. }
        ));
        assert!(matches!(
            scan_value(b"{\"a\": X}"),
            Scan::Invalid { at: 6, .. }
        ));
    }

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
    fn long_values_in_small_reads_are_scanned_once() {
        // 16 MiB arriving 4 KiB at a time: rescanning from the start would read ~3·10¹⁰ bytes,
        // minutes even in a release build; a single pass is well under the generous bound.
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
        let (end, cat, _) = w.next_value().expect("event");
        assert_eq!(cat.map(|r| w.slice(r).to_vec()), Some(b"kernel".to_vec()));
        w.consume(end);
        w.expect(b",", ",").expect("comma");
        let (end, _, _) = w.next_value().expect("string of backslashes");
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
        struct Slow<'a>(&'a [u8]);
        impl Read for Slow<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = buf.len().min(3).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let text = br#"  [{"cat":"kernel","ts":1}, 2]"#;
        let mut w = Window::new(Slow(text));
        w.expect(b"[", "[").expect("array");
        let (end, cat, _) = w.next_value().expect("value");
        assert_eq!(cat.map(|r| w.slice(r).to_vec()), Some(b"kernel".to_vec()));
        w.consume(end);
        w.expect(b",", ",").expect("comma");
        let (end, _, _) = w.next_value().expect("scalar");
        assert_eq!(w.slice(0..end), b"2");
        w.consume(end);
        w.expect(b"]", "]").expect("close");
        assert_eq!(w.peek().expect("eof"), None);
    }
}
