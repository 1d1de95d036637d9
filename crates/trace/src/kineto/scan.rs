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
pub(super) fn is_ws(c: u8) -> bool {
    CLASS[c as usize] == WS
}

/// True for a byte that can be part of a number, `true`, `false` or `null`.
pub(super) fn is_scalar(c: u8) -> bool {
    CLASS[c as usize] == SCALAR
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `x` that equals `c`, exactly (no false positives).
#[inline(always)]
fn eq_bytes(x: u64, c: u8) -> u64 {
    let y = x ^ (LO * u64::from(c));
    !(((y & !HI) + !HI) | y) & HI
}

/// The index in `t` of the first byte equal to one of `needles` (one, two or three bytes;
/// repeat a byte to use fewer). JSON keys and values are mostly short, where calling `memchr`
/// costs more than the search: the first 32 bytes are tested 8 at a time in a `u64`, and only
/// longer runs (kernel names) go to `memchr2`/`memchr3`, which search 16 or 32 bytes per step
/// with SIMD.
#[inline(always)]
fn find(t: &[u8], needles: [u8; 3]) -> Option<usize> {
    let [a, b, c] = needles;
    let mut k = 0;
    while let Some(w) = t.get(k..k + 8) {
        let mut x = [0u8; 8];
        x.copy_from_slice(w);
        let x = u64::from_le_bytes(x);
        let m = eq_bytes(x, a) | eq_bytes(x, b) | eq_bytes(x, c);
        if m != 0 {
            return Some(k + (m.trailing_zeros() / 8) as usize);
        }
        k += 8;
        if k == 32 {
            let rest = t.get(k..)?;
            let found = if b == c {
                memchr::memchr2(a, b, rest)
            } else {
                memchr::memchr3(a, b, c, rest)
            };
            return found.map(|j| k + j);
        }
    }
    let rest = t.get(k..)?;
    rest.iter()
        .position(|&x| x == a || x == b || x == c)
        .map(|j| k + j)
}

/// Why a scan stopped before the end of the value.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Stop {
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
pub(super) type Scan<T> = std::result::Result<T, Stop>;

/// One member's value, as a byte range of the scanned slice (which the window keeps under
/// [`super::window::MAX_VALUE_BYTES`], so `u32` offsets suffice).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Val {
    /// First byte (for a string, the one after the opening quote).
    pub start: u32,
    /// Exclusive end (for a string, the closing quote).
    pub end: u32,
    /// The value is a string: the range is its content, with escapes still in it.
    pub string: bool,
    /// The string holds at least one backslash escape.
    pub escaped: bool,
}

impl Val {
    /// The range as a `Range`.
    pub(super) fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Members of the event's `args` object that some reader uses.
#[derive(Clone, Debug, Default)]
pub(super) struct Args {
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
    /// `Input Dims` (operator input shapes).
    pub input_dims: Option<Val>,
    /// `kernel_flop` (PyTorch Inductor: FLOPs of the launch).
    pub kernel_flop: Option<Val>,
    /// `kernel_num_gb` (PyTorch Inductor: GB the launch moves).
    pub kernel_num_gb: Option<Val>,
    /// `External id` (the operator a launch call or kernel belongs to).
    pub external_id: Option<Val>,
}

/// The members of a trace event that kernelab reads; the last of duplicate keys wins.
#[derive(Clone, Debug, Default)]
pub(super) struct Fields {
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
    /// `args` may hold members of an earlier event (cleared only when used, to save time).
    args_dirty: bool,
}

/// A scan of one slice. Steps return the index they reached, or `None` when they stop: then
/// `invalid` says why (`None`: the slice ended first). Small return values stay in registers.
struct Scanner<'a> {
    b: &'a [u8],
    /// Set by [`Scanner::string_end`]: the string held an escape.
    escaped: bool,
    invalid: Option<(usize, &'static str)>,
    /// The current member's key, as a range of `b`.
    key: (usize, usize),
    /// The current key decoded, when it has escapes.
    decoded: Option<String>,
    /// The object being walked is done (or its rest is to be skipped).
    closed: bool,
}

impl<'a> Scanner<'a> {
    fn new(b: &'a [u8]) -> Self {
        Scanner {
            b,
            escaped: false,
            invalid: None,
            key: (0, 0),
            decoded: None,
            closed: false,
        }
    }

    fn fail(&mut self, at: usize, expected: &'static str) -> Option<usize> {
        self.invalid = Some((at, expected));
        None
    }

    fn stop(&self) -> Stop {
        match self.invalid {
            Some((at, expected)) => Stop::Invalid { at, expected },
            None => Stop::Incomplete,
        }
    }

    /// From `i` (just after an opening quote): the index after the closing quote.
    #[inline]
    fn string_end(&mut self, mut i: usize) -> Option<usize> {
        self.escaped = false;
        loop {
            i += find(self.b.get(i..)?, [b'"', b'\\', b'\\'])?;
            if *self.b.get(i)? == b'"' {
                return Some(i + 1);
            }
            // A backslash: the next byte is escaped, whatever it is.
            self.escaped = true;
            self.b.get(i + 1)?;
            i += 2;
        }
    }

    /// From `j`, outside strings and inside `depth` levels of `open`…`close` brackets: the
    /// index after the bracket that closes the outermost (see [`super::skip`]).
    #[inline]
    fn close_from(&mut self, j: usize, open: u8, close: u8, depth: u64) -> Option<usize> {
        super::skip::close_from(self.b, j, open, close, depth)
    }

    /// From `i`: the index of the next byte that is not whitespace.
    #[inline]
    fn ws(&self, mut i: usize) -> Option<usize> {
        while is_ws(*self.b.get(i)?) {
            i += 1;
        }
        Some(i)
    }

    /// The end of the value that starts at `b[i]` (not whitespace); a string's escapes are
    /// noted in `escaped`.
    #[inline]
    fn value_end(&mut self, i: usize) -> Option<usize> {
        let c = *self.b.get(i)?;
        match c {
            b'"' => self.string_end(i + 1),
            b'{' => self.close_from(i + 1, b'{', b'}', 1),
            b'[' => self.close_from(i + 1, b'[', b']', 1),
            _ if is_scalar(c) => {
                let mut j = i + 1;
                while is_scalar(*self.b.get(j)?) {
                    j += 1;
                }
                Some(j)
            }
            _ => self.fail(i, "expected value"),
        }
    }

    /// The value at `i` that ends at `end`, as a [`Val`].
    fn val(&self, i: usize, end: usize) -> Val {
        // Offsets fit: the window never holds a value of MAX_VALUE_BYTES (256 MiB) or more.
        let string = self.b.get(i) == Some(&b'"');
        let s = usize::from(string);
        Val {
            start: (i + s) as u32,
            end: (end - s) as u32,
            string,
            escaped: string && self.escaped,
        }
    }

    /// Reads a key at `i` (its opening quote) up to its value: returns the index of the value,
    /// with `key` (and `decoded`, for a key with escapes) naming the key.
    #[inline]
    fn member(&mut self, i: usize) -> Option<usize> {
        if *self.b.get(i)? != b'"' {
            return self.fail(i, "expected a key string");
        }
        let key_end = self.string_end(i + 1)?;
        self.key = (i + 1, key_end - 1);
        self.decoded = None;
        if self.escaped {
            // Rare: a key spelled with escapes still names the member it decodes to.
            match serde_json::from_slice::<String>(self.b.get(i..key_end)?) {
                Ok(k) => self.decoded = Some(k),
                Err(_) => return self.fail(i, "expected a valid key string"),
            }
        }
        let colon = self.ws(key_end)?;
        if self.b.get(colon) != Some(&b':') {
            return self.fail(colon, "expected `:`");
        }
        self.ws(colon + 1)
    }

    /// The key of the member being read.
    fn key(&self) -> &[u8] {
        match &self.decoded {
            Some(k) => k.as_bytes(),
            None => self.b.get(self.key.0..self.key.1).unwrap_or_default(),
        }
    }

    /// After a member's value ending at `end`: the index of the next key, or of the byte after
    /// the closing brace with `closed` set.
    #[inline]
    fn next_member(&mut self, end: usize) -> Option<usize> {
        let i = self.ws(end)?;
        match self.b[i] {
            b',' => self.ws(i + 1),
            b'}' => {
                self.closed = true;
                Some(i + 1)
            }
            _ => self.fail(i, "expected `,` or `}`"),
        }
    }

    /// Walks the object whose `{` is at `open`, calling `member(self, key, at)` with each key
    /// and the index of its value; `member` returns the end of the value, and sets `closed` to
    /// skip the rest of the object. Returns the index after the closing brace.
    #[inline]
    fn object<K: Copy>(
        &mut self,
        open: usize,
        keys: fn(&[u8]) -> K,
        mut member: impl FnMut(&mut Self, K, usize) -> Option<usize>,
    ) -> Option<usize> {
        let mut i = self.ws(open + 1)?;
        if self.b.get(i) == Some(&b'}') {
            return Some(i + 1);
        }
        loop {
            let at = self.member(i)?;
            let key = keys(self.key());
            let end = member(self, key, at)?;
            if self.closed {
                // The rest of the object is not needed.
                self.closed = false;
                return self.close_from(end, b'{', b'}', 1);
            }
            i = self.next_member(end)?;
            if self.closed {
                self.closed = false;
                return Some(i);
            }
        }
    }
}

/// The top-level members kernelab reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Top {
    Cat,
    Ph,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    Other,
}

fn top_key(k: &[u8]) -> Top {
    match k {
        b"cat" => Top::Cat,
        b"ph" => Top::Ph,
        b"name" => Top::Name,
        b"pid" => Top::Pid,
        b"tid" => Top::Tid,
        b"ts" => Top::Ts,
        b"dur" => Top::Dur,
        b"args" => Top::Args,
        _ => Top::Other,
    }
}

/// The `args` members kernelab reads, as a field of [`Args`].
fn arg_key(k: &[u8]) -> Option<fn(&mut Args) -> &mut Option<Val>> {
    Some(match k {
        b"device" => |a| &mut a.device,
        b"stream" => |a| &mut a.stream,
        b"correlation" => |a| &mut a.correlation,
        b"registers per thread" => |a| &mut a.registers,
        b"shared memory" => |a| &mut a.shared,
        b"grid" => |a| &mut a.grid,
        b"block" => |a| &mut a.block,
        b"bytes" => |a| &mut a.bytes,
        b"name" => |a| &mut a.name,
        b"BeginNs" => |a| &mut a.begin_ns,
        b"EndNs" => |a| &mut a.end_ns,
        b"dev-id" => |a| &mut a.dev_id,
        b"queue-id" => |a| &mut a.queue_id,
        b"Input Dims" => |a| &mut a.input_dims,
        b"kernel_flop" => |a| &mut a.kernel_flop,
        b"kernel_num_gb" => |a| &mut a.kernel_num_gb,
        b"External id" => |a| &mut a.external_id,
        _ => return None,
    })
}

/// Scans the value that starts at `b[i]` (not whitespace) and returns it with the index after it.
pub(super) fn value(b: &[u8], i: usize) -> Scan<(Val, usize)> {
    let mut s = Scanner::new(b);
    match s.value_end(i) {
        Some(end) => Ok((s.val(i, end), end)),
        None => Err(s.stop()),
    }
}

/// Scans the value at `b[0]` (not whitespace) and returns the index after it. For an object,
/// fills `f` with its members (and those of its `args` object). The rest of the object is
/// skipped unread once it cannot be used: `ph` neither `X` (a complete event) nor `M`
/// (metadata, used only without `cat`), or a `cat` string that `keep` refuses.
pub(super) fn event(b: &[u8], f: &mut Fields, keep: impl Fn(&[u8]) -> bool) -> Scan<usize> {
    f.cat = None;
    f.ph = None;
    f.name = None;
    f.pid = None;
    f.tid = None;
    f.ts = None;
    f.dur = None;
    if f.args_dirty {
        f.args = Args::default();
        f.args_dirty = false;
    }
    let mut s = Scanner::new(b);
    let end = if b.first() == Some(&b'{') {
        s.object(0, top_key, |s, key, at| {
            if key == Top::Args && s.b.get(at) == Some(&b'{') {
                f.args_dirty = true;
                let args = &mut f.args;
                return s.object(at, arg_key, |s, key, at| {
                    let end = s.value_end(at)?;
                    if let Some(slot) = key {
                        *slot(args) = Some(s.val(at, end));
                    }
                    Some(end)
                });
            }
            let end = s.value_end(at)?;
            let v = s.val(at, end);
            match key {
                Top::Cat | Top::Ph if v.string => {
                    *(if key == Top::Cat {
                        &mut f.cat
                    } else {
                        &mut f.ph
                    }) = Some(v);
                    // Only complete events (`X`) are read, and metadata (`M`) without `cat`.
                    let ph = f.ph.map(|p| b.get(p.range()).unwrap_or_default());
                    s.closed = match (f.cat, ph) {
                        (_, Some(p)) if p != b"X" && p != b"M" => true,
                        (Some(_), Some(b"M")) => true,
                        (Some(c), _) => !keep(b.get(c.range()).unwrap_or_default()),
                        (None, _) => false,
                    };
                }
                Top::Name => f.name = Some(v),
                Top::Pid => f.pid = Some(v),
                Top::Tid => f.tid = Some(v),
                Top::Ts => f.ts = Some(v),
                Top::Dur => f.dur = Some(v),
                _ => {}
            }
            Some(end)
        })
    } else {
        s.value_end(0)
    };
    end.ok_or_else(|| s.stop())
}

#[cfg(test)]
#[path = "scan_tests.rs"]
mod tests;
