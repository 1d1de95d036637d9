//! The one pass over a trace event: finds where the event ends and, on the way, where the
//! members kernelab reads are (`cat`, `ph`, `name`, times, ids, and those of `args`), so a kept
//! event is converted from these byte ranges without a second parse. Structural bytes are found
//! with `memchr` (SIMD): strings are skipped to their closing quote, and a value kernelab does
//! not read (a nested object or array, or the rest of an event whose `cat` is not kept) is
//! skipped by searching only for quotes and its own kind of bracket. Nothing is recursed into,
//! so nesting depth costs no stack.
//!
//! Written by hand because no well-kept crate streams the elements of one array inside a
//! top-level object with byte offsets and constant memory.

/// Byte classes outside strings.
const OTHER: u8 = 0;
const WS: u8 = 1;
const SCALAR: u8 = 2;

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
    t
}
static CLASS: [u8; 256] = classes();

/// True for JSON whitespace.
pub fn is_ws(c: u8) -> bool {
    CLASS[c as usize] == WS
}

/// True for a byte that can be part of a number, `true`, `false` or `null`.
pub fn is_scalar(c: u8) -> bool {
    CLASS[c as usize] == SCALAR
}

/// Why a scan stopped before the end of the value.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// The slice ends inside the value: scan again once more bytes are there.
    Incomplete,
    /// The value is malformed at index `at`.
    Invalid {
        /// Index of the offending byte.
        at: usize,
        /// What JSON wanted there, e.g. "expected value".
        expected: &'static str,
    },
}

/// The result of a scan step.
pub type Scan<T> = std::result::Result<T, Stop>;

fn invalid<T>(at: usize, expected: &'static str) -> Scan<T> {
    Err(Stop::Invalid { at, expected })
}

/// One member's value, as a byte range of the scanned slice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Val {
    /// First byte (for a string, the one after the opening quote).
    pub start: usize,
    /// Exclusive end (for a string, the closing quote).
    pub end: usize,
    /// The value is a string: the range is its content, with escapes still in it.
    pub string: bool,
    /// The string holds at least one backslash escape.
    pub escaped: bool,
}

impl Val {
    /// The range as a `Range`.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}

/// Members of the event's `args` object that some reader uses.
#[derive(Clone, Debug, Default)]
pub struct Args {
    /// `device`.
    pub device: Option<Val>,
    /// `stream`.
    pub stream: Option<Val>,
    /// `correlation`.
    pub correlation: Option<Val>,
    /// `registers per thread`.
    pub registers: Option<Val>,
    /// `shared memory`.
    pub shared: Option<Val>,
    /// `grid`.
    pub grid: Option<Val>,
    /// `block`.
    pub block: Option<Val>,
    /// `bytes`.
    pub bytes: Option<Val>,
    /// `name` (legacy rocprof process names).
    pub name: Option<Val>,
    /// `BeginNs` (legacy rocprof).
    pub begin_ns: Option<Val>,
    /// `EndNs` (legacy rocprof).
    pub end_ns: Option<Val>,
    /// `dev-id` (legacy rocprof).
    pub dev_id: Option<Val>,
    /// `queue-id` (legacy rocprof).
    pub queue_id: Option<Val>,
}

/// The members of a trace event that kernelab reads; the last of duplicate keys wins.
#[derive(Clone, Debug, Default)]
pub struct Fields {
    /// `cat`, when a string.
    pub cat: Option<Val>,
    /// `ph`, when a string.
    pub ph: Option<Val>,
    /// `name`.
    pub name: Option<Val>,
    /// `pid`.
    pub pid: Option<Val>,
    /// `tid`.
    pub tid: Option<Val>,
    /// `ts`.
    pub ts: Option<Val>,
    /// `dur`.
    pub dur: Option<Val>,
    /// Members of `args`, when it is an object.
    pub args: Args,
}

/// From `i` (just after an opening quote): the index after the closing quote, and whether
/// the string holds escapes.
pub fn string_end(b: &[u8], mut i: usize) -> Scan<(usize, bool)> {
    let mut escaped = false;
    loop {
        let Some(k) = b.get(i..).and_then(|t| memchr::memchr2(b'"', b'\\', t)) else {
            return Err(Stop::Incomplete);
        };
        i += k;
        if b.get(i) == Some(&b'"') {
            return Ok((i + 1, escaped));
        }
        escaped = true;
        // A backslash: the next byte is escaped, whatever it is.
        if i + 1 >= b.len() {
            return Err(Stop::Incomplete);
        }
        i += 2;
    }
}

/// From `j`, inside `depth` levels of `open`…`close` brackets: the index after the bracket
/// that closes the outermost. Strings are skipped whole; brackets of the other kind are not
/// looked at (in JSON they are balanced within), so each step is one `memchr3`.
fn close_from(b: &[u8], mut j: usize, open: u8, close: u8, mut depth: u64) -> Scan<usize> {
    loop {
        let Some(k) = b.get(j..).and_then(|t| memchr::memchr3(b'"', open, close, t)) else {
            return Err(Stop::Incomplete);
        };
        j += k;
        match b.get(j) {
            Some(b'"') => j = string_end(b, j + 1)?.0,
            Some(&c) if c == open => {
                depth += 1;
                j += 1;
            }
            _ => {
                depth -= 1;
                j += 1;
                if depth == 0 {
                    return Ok(j);
                }
            }
        }
    }
}

/// From `i`: the index of the next byte that is not whitespace.
fn ws(b: &[u8], mut i: usize) -> Scan<usize> {
    loop {
        match b.get(i) {
            None => return Err(Stop::Incomplete),
            Some(&c) if is_ws(c) => i += 1,
            Some(_) => return Ok(i),
        }
    }
}

/// The value that starts at `b[i]` (not whitespace), and the index after it.
pub fn value(b: &[u8], i: usize) -> Scan<(Val, usize)> {
    match b.get(i) {
        None => Err(Stop::Incomplete),
        Some(b'"') => {
            let (end, escaped) = string_end(b, i + 1)?;
            let v = Val {
                start: i + 1,
                end: end - 1,
                string: true,
                escaped,
            };
            Ok((v, end))
        }
        Some(&c) => {
            let end = match c {
                b'{' => close_from(b, i + 1, b'{', b'}', 1)?,
                b'[' => close_from(b, i + 1, b'[', b']', 1)?,
                _ if is_scalar(c) => {
                    let n = b.get(i..).unwrap_or_default();
                    match n.iter().position(|&c| !is_scalar(c)) {
                        Some(k) => i + k,
                        None => return Err(Stop::Incomplete),
                    }
                }
                _ => return invalid(i, "expected value"),
            };
            let v = Val {
                start: i,
                end,
                string: false,
                escaped: false,
            };
            Ok((v, end))
        }
    }
}

/// What to do after a member.
enum Next {
    /// Go on after the value, which ends here.
    After(usize),
    /// Skip the rest of the object from here (the value ended here).
    SkipRest(usize),
}

/// Walks the members of the object whose `{` is at `b[open]`: `member(b, key, at)` gets each
/// key (unescaped) and the index of its value, and says where the value ends. Returns the
/// index after the closing brace.
fn object(
    b: &[u8],
    open: usize,
    mut member: impl FnMut(&[u8], &[u8], usize) -> Scan<Next>,
) -> Scan<usize> {
    let mut i = ws(b, open + 1)?;
    if b.get(i) == Some(&b'}') {
        return Ok(i + 1);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return invalid(i, "expected a key string");
        }
        let (key_end, escaped) = string_end(b, i + 1)?;
        let key_at = i;
        i = ws(b, key_end)?;
        if b.get(i) != Some(&b':') {
            return invalid(i, "expected `:`");
        }
        i = ws(b, i + 1)?;
        let raw_key = b.get(key_at + 1..key_end - 1).unwrap_or_default();
        let next = if escaped {
            // Rare: a key spelled with escapes still names the member it decodes to.
            let text = b.get(key_at..key_end).unwrap_or_default();
            let Ok(key) = serde_json::from_slice::<String>(text) else {
                return invalid(key_at, "expected a valid key string");
            };
            member(b, key.as_bytes(), i)?
        } else {
            member(b, raw_key, i)?
        };
        let end = match next {
            Next::After(end) => end,
            Next::SkipRest(end) => return close_from(b, end, b'{', b'}', 1),
        };
        i = ws(b, end)?;
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1)?,
            Some(b'}') => return Ok(i + 1),
            _ => return invalid(i, "expected `,` or `}`"),
        }
    }
}

/// Records a member of `args`.
fn args_member(a: &mut Args, b: &[u8], key: &[u8], at: usize) -> Scan<Next> {
    let (v, end) = value(b, at)?;
    let slot = match key {
        b"device" => &mut a.device,
        b"stream" => &mut a.stream,
        b"correlation" => &mut a.correlation,
        b"registers per thread" => &mut a.registers,
        b"shared memory" => &mut a.shared,
        b"grid" => &mut a.grid,
        b"block" => &mut a.block,
        b"bytes" => &mut a.bytes,
        b"name" => &mut a.name,
        b"BeginNs" => &mut a.begin_ns,
        b"EndNs" => &mut a.end_ns,
        b"dev-id" => &mut a.dev_id,
        b"queue-id" => &mut a.queue_id,
        _ => return Ok(Next::After(end)),
    };
    *slot = Some(v);
    Ok(Next::After(end))
}

/// Scans the value at `b[0]` (not whitespace) and returns the index after it. For an object,
/// fills `f` with its members (and those of its `args` object); when `cat` is a string that
/// `keep` refuses, or `ph` is not `X` where `cat` is kept, the rest of the object is skipped
/// unread.
pub fn event(b: &[u8], f: &mut Fields, keep: impl Fn(&[u8]) -> bool) -> Scan<usize> {
    *f = Fields::default();
    if b.first() != Some(&b'{') {
        return value(b, 0).map(|(_, end)| end);
    }
    object(b, 0, |b, key, at| {
        if key == b"args" && b.get(at) == Some(&b'{') {
            let end = object(b, at, |b, key, at| args_member(&mut f.args, b, key, at))?;
            return Ok(Next::After(end));
        }
        let (v, end) = value(b, at)?;
        match key {
            b"cat" | b"ph" if v.string => {
                if key == b"cat" {
                    f.cat = Some(v);
                } else {
                    f.ph = Some(v);
                }
                if let Some(cat) = f.cat {
                    let text = b.get(cat.range()).unwrap_or_default();
                    let not_x = f
                        .ph
                        .is_some_and(|p| b.get(p.range()).unwrap_or_default() != b"X");
                    if not_x || !keep(text) {
                        return Ok(Next::SkipRest(end));
                    }
                }
            }
            b"name" => f.name = Some(v),
            b"pid" => f.pid = Some(v),
            b"tid" => f.tid = Some(v),
            b"ts" => f.ts = Some(v),
            b"dur" => f.dur = Some(v),
            _ => {}
        }
        Ok(Next::After(end))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keep_all(_: &[u8]) -> bool {
        true
    }

    fn text(s: &str, v: Option<Val>) -> Option<&str> {
        v.map(|v| &s[v.range()])
    }

    fn scan(s: &str) -> (Scan<usize>, Fields) {
        let mut f = Fields::default();
        let r = event(s.as_bytes(), &mut f, keep_all);
        (r, f)
    }

    #[test]
    fn finds_members_at_top_level_and_in_args_only() {
        let s = r#"{"ph": "X", "args": {"cat": "no", "grid": [1, 2, 3], "x": {"device": 9}, "device": 1}, "cat": "kernel", "name": "a\"b", "ts": 12.5} , "#;
        let (r, f) = scan(s);
        assert_eq!(r, Ok(s.find(" , ").expect("end")));
        assert_eq!(text(s, f.cat), Some("kernel"));
        assert_eq!(text(s, f.ph), Some("X"));
        assert_eq!(text(s, f.name), Some("a\\\"b"));
        assert!(f.name.is_some_and(|v| v.escaped && v.string));
        assert_eq!(text(s, f.ts), Some("12.5"));
        assert_eq!(text(s, f.args.grid), Some("[1, 2, 3]"));
        assert_eq!(text(s, f.args.device), Some("1"));
        let s = r#"{"name": "cat", "x": ["cat", "y"]}"#;
        assert_eq!(scan(s).1.cat, None);
    }

    #[test]
    fn escaped_quotes_and_backslashes_before_quotes() {
        // `\\` ends in a real quote; `\"` does not; `\\\"` is a backslash and an escaped quote.
        for (s, name) in [
            (r#"{"name": "a\\", "ts": 1}"#, r"a\\"),
            (r#"{"name": "a\"}\"", "ts": 1}"#, r#"a\"}\""#),
            (r#"{"name": "\\\"{[", "ts": 1}"#, r#"\\\"{["#),
            (r#"{"name": "\u00e9\ud83d\ude00", "ts": 1}"#, r"\u00e9\ud83d\ude00"),
        ] {
            let (r, f) = scan(s);
            assert_eq!(r, Ok(s.len()), "{s}");
            assert_eq!(text(s, f.name), Some(name), "{s}");
            assert_eq!(text(s, f.ts), Some("1"), "{s}");
        }
    }

    #[test]
    fn strings_with_brackets_and_nested_args_are_skipped_whole() {
        let s = r#"{"cat": "kernel", "args": {"a": {"b": ["}", "]", {"c": "{"}]}, "s": "}}]]", "stream": 7}, "dur": 3}"#;
        let (r, f) = scan(s);
        assert_eq!(r, Ok(s.len()));
        assert_eq!(text(s, f.args.stream), Some("7"));
        assert_eq!(text(s, f.dur), Some("3"));
    }

    #[test]
    fn events_not_kept_skip_the_rest_unread() {
        let s = r#"{"ph": "X", "cat": "cpu_op", "name": "n", "args": {"x": "}", "y": [{}]}} "#;
        let mut f = Fields::default();
        let r = event(s.as_bytes(), &mut f, |c| c == b"kernel");
        assert_eq!(r, Ok(s.len() - 1));
        assert_eq!(f.name, None, "not read after `cat`");
        // A kept category with a phase other than X is skipped as well.
        let s = r#"{"ph": "f", "cat": "kernel", "name": "n"}"#;
        let r = event(s.as_bytes(), &mut f, keep_all);
        assert_eq!((r, f.name), (Ok(s.len()), None));
    }

    #[test]
    fn scalars_strings_and_errors() {
        let mut f = Fields::default();
        let mut one = |s: &str| event(s.as_bytes(), &mut f, keep_all);
        assert_eq!(one("123.5,"), Ok(5));
        assert_eq!(one("\"a\\\\\"]"), Ok(5));
        assert_eq!(one("[[1], {\"a\": \"]\"}],"), Ok(17));
        assert_eq!(one("{\"a\": 1"), Err(Stop::Incomplete));
        assert_eq!(one("123"), Err(Stop::Incomplete));
        assert_eq!(one("{\"a\": \"x\\"), Err(Stop::Incomplete));
        let bad = |at, expected| Err(Stop::Invalid { at, expected });
        assert_eq!(one("{\"a\": 1]"), bad(7, "expected `,` or `}`"));
        assert_eq!(one("{\"a\": X}"), bad(6, "expected value"));
        assert_eq!(one("{\"a\": }"), bad(6, "expected value"));
        assert_eq!(one("{\"a\" 1}"), bad(5, "expected `:`"));
        assert_eq!(one("{a: 1}"), bad(1, "expected a key string"));
        assert_eq!(one("{\"a\": 1,}"), bad(8, "expected a key string"));
        assert_eq!(one("{\"a\\x\": 1}"), bad(1, "expected a valid key string"));
        assert_eq!(one("}"), bad(0, "expected value"));
    }

    #[test]
    fn escaped_keys_name_their_member() {
        let s = r#"{"c\u0061t": "kernel", "\u0074s": 5}"#;
        let (r, f) = scan(s);
        assert_eq!(r, Ok(s.len()));
        assert_eq!(text(s, f.cat), Some("kernel"));
        assert_eq!(text(s, f.ts), Some("5"));
    }

    #[test]
    fn every_prefix_is_incomplete_never_a_panic() {
        let s = r#"{"ph": "X", "cat": "kernel", "name": "v\"{}[]\\", "ts": 1.5, "args": {"grid": [1, 2, 3], "deep": [[[{"a": "]"}]]]}}"#;
        for n in 0..s.len() {
            assert_eq!(scan(&s[..n]).0, Err(Stop::Incomplete), "{n}");
        }
        assert_eq!(scan(s).0, Ok(s.len()));
    }

    #[test]
    fn deep_nesting_needs_no_stack() {
        let depth = 1 << 20;
        let mut s = String::from(r#"{"cat": "kernel", "args": {"x": "#);
        s.extend(std::iter::repeat_n('[', depth));
        s.extend(std::iter::repeat_n(']', depth));
        s.push_str("}, \"ts\": 2}");
        let (r, f) = scan(&s);
        assert_eq!(r, Ok(s.len()));
        assert_eq!(text(&s, f.ts), Some("2"));
    }
}
