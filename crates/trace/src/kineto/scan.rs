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

/// Finds the end of the string whose opening quote is at `start`; returns the index after the
/// closing quote.
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        let k = memchr::memchr2(b'"', b'\\', &b[i..])?;
        i += k;
        if b[i] == b'"' {
            return Some(i + 1);
        }
        i += 2;
        if i > b.len() {
            return None;
        }
    }
}

/// Scans the JSON value starting at `b[0]` (no leading whitespace).
pub fn scan_value(b: &[u8]) -> Scan {
    let Some(&first) = b.first() else {
        return Scan::Incomplete;
    };
    match CLASS[first as usize] {
        QUOTE => match string_end(b, 0) {
            Some(end) => Scan::Complete {
                end,
                cat: None,
                ph: None,
            },
            None => Scan::Incomplete,
        },
        SCALAR => {
            let mut i = 0;
            while i < b.len() {
                match CLASS[b[i] as usize] {
                    SCALAR => i += 1,
                    WS | COMMA | CLOSE => {
                        return Scan::Complete {
                            end: i,
                            cat: None,
                            ph: None,
                        }
                    }
                    _ => {
                        return Scan::Invalid {
                            at: i,
                            expected: "a number, true, false or null",
                        }
                    }
                }
            }
            Scan::Incomplete
        }
        OPEN => scan_nested(b),
        _ => Scan::Invalid {
            at: 0,
            expected: "a JSON value",
        },
    }
}

fn scan_nested(b: &[u8]) -> Scan {
    let mut stack: Vec<u8> = Vec::with_capacity(8);
    let mut i = 0;
    let mut expect_key = false;
    let mut last_key: Option<Range<usize>> = None;
    let (mut cat, mut ph) = (None, None);
    while i < b.len() {
        let c = b[i];
        match CLASS[c as usize] {
            WS | SCALAR => i += 1,
            QUOTE => {
                let Some(end) = string_end(b, i) else {
                    return Scan::Incomplete;
                };
                if stack.len() == 1 && stack[0] == b'{' {
                    if expect_key {
                        last_key = Some(i + 1..end - 1);
                        expect_key = false;
                    } else if let Some(k) = &last_key {
                        match &b[k.clone()] {
                            b"cat" => cat = Some(i + 1..end - 1),
                            b"ph" => ph = Some(i + 1..end - 1),
                            _ => {}
                        }
                    }
                }
                i = end;
            }
            OPEN => {
                stack.push(c);
                if stack.len() == 1 {
                    expect_key = c == b'{';
                }
                i += 1;
            }
            CLOSE => {
                let want = if c == b'}' { b'{' } else { b'[' };
                if stack.pop() != Some(want) {
                    return Scan::Invalid {
                        at: i,
                        expected: "a matching bracket",
                    };
                }
                i += 1;
                if stack.is_empty() {
                    return Scan::Complete { end: i, cat, ph };
                }
            }
            COMMA => {
                if stack.len() == 1 && stack[0] == b'{' {
                    expect_key = true;
                    last_key = None;
                }
                i += 1;
            }
            COLON => i += 1,
            _ => {
                return Scan::Invalid {
                    at: i,
                    expected: "JSON text",
                }
            }
        }
    }
    Scan::Incomplete
}

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
        &self.buf[self.pos..self.len]
    }

    /// Bytes `r` relative to `pos`.
    pub fn slice(&self, r: Range<usize>) -> &[u8] {
        &self.buf[self.pos + r.start..self.pos + r.end]
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
            let new_len = self.buf.len() * 2;
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
        loop {
            match scan_value(self.rest()) {
                Scan::Complete { end, cat, ph } => return Ok((end, cat, ph)),
                Scan::Invalid { at, expected } => {
                    let at_abs = self.pos + at;
                    return Err(Error::syntax(
                        Location::byte(self.offset(at_abs)),
                        expected,
                        snippet(&self.buf[at_abs..self.len], 24),
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
