//! The numbers of one line of a note, as a person writes them: thousands separators, `+`, `-`,
//! `−` (U+2212) and `±`, the units ns / µs / ms / s, `%`, percentage points and `x` / `×`, and
//! the rounding each number was printed with. Numbers inside words (`gfx1151`, `w8s2`,
//! `0.1.0`, `2026-06-20`, hashes) are not numbers.

/// What a number measures, by its unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unit {
    /// No unit: a count, a ratio in a ratio column, or something the audit does not read.
    None,
    /// A duration; the value is in nanoseconds.
    Time,
    /// A percentage; the value is a fraction.
    Percent,
    /// Percentage points; the value is a fraction.
    Points,
    /// A factor written `1.164x` or `1.164×`.
    Times,
    /// Bytes per second (`GB/s`, `TB/s`); the value is in byte/s.
    ByteRate,
    /// Floating-point operations per second (`TFLOP/s`, `GFLOP/s`); the value is in FLOP/s.
    FlopRate,
    /// Tokens per second (`tok/s`).
    TokenRate,
    /// Requests per second (`req/s`).
    RequestRate,
    /// A clock (`MHz`); the value is in Hz.
    Frequency,
    /// A temperature (`°C`).
    Temperature,
    /// A power (`W`).
    Power,
    /// Bytes (`B`), a count.
    Bytes,
    /// Work per launch or per byte (a roofline's `GFLOP/launch`, `MB/launch`, `FLOP/byte`
    /// columns; only a column header gives it).
    Work,
}

/// One number as written, with its value in base units (ns, fractions) and half of its last
/// printed digit in the same units: the number matches any true value within `value ± half`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Num {
    /// Byte offset of its first character (its sign) in the line.
    pub start: usize,
    /// Byte offset past its last character (its unit).
    pub end: usize,
    /// The number as written, with its sign and unit.
    pub text: String,
    /// Its value as printed, before the unit's scale.
    pub raw: f64,
    /// Digits after the decimal point.
    pub decimals: i32,
    /// The unit.
    pub unit: Unit,
    /// The unit's scale to base units (1e6 for `ms`, 0.01 for `%`).
    pub scale: f64,
    /// Written with `+`, `-` or `−`.
    pub signed: bool,
    /// Written with `±`.
    pub plus_minus: bool,
    /// Followed by the word `calls`.
    pub calls: bool,
    /// `N/M` written as one token (gates passed / gates run).
    pub gates: Option<(u64, u64)>,
}

impl Num {
    /// The value in base units (ns for durations, fractions for percentages).
    pub(crate) fn value(&self) -> f64 {
        self.raw * self.scale
    }

    /// Half of the last printed digit, in base units.
    pub(crate) fn half(&self) -> f64 {
        0.5 * 10f64.powi(-self.decimals) * self.scale.abs()
    }

    /// Whether a true value `x` (base units) prints as this number.
    pub(crate) fn matches(&self, x: f64) -> bool {
        let tol = self.half() + 1e-9 * x.abs().max(self.value().abs()) + 1e-12;
        (x - self.value()).abs() <= tol
    }

    /// Whether the interval `[lo, hi]` (base units) meets this number's rounding interval.
    pub(crate) fn meets(&self, lo: f64, hi: f64) -> bool {
        let tol = self.half() + 1e-9 * lo.abs().max(hi.abs()).max(self.value().abs()) + 1e-12;
        self.value() + tol >= lo && self.value() - tol <= hi
    }

    /// A decimal written with a fractional part.
    pub(crate) fn is_decimal(&self) -> bool {
        self.decimals > 0
    }

    /// Gives this number the unit of `other` (for `1,211.134 → 1,304.738 ms`).
    fn take_unit(&mut self, other: &Num) {
        self.unit = other.unit;
        self.scale = other.scale;
    }
}

fn word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The units, longest spelling first: (spelling, unit, scale, may follow a space).
const UNITS: &[(&str, Unit, f64, bool)] = &[
    ("TFLOP/s", Unit::FlopRate, 1e12, true),
    ("GFLOP/s", Unit::FlopRate, 1e9, true),
    ("TB/s", Unit::ByteRate, 1e12, true),
    ("GB/s", Unit::ByteRate, 1e9, true),
    ("MB/s", Unit::ByteRate, 1e6, true),
    ("tok/s", Unit::TokenRate, 1.0, true),
    ("req/s", Unit::RequestRate, 1.0, true),
    ("MHz", Unit::Frequency, 1e6, true),
    ("°C", Unit::Temperature, 1.0, true),
    ("W", Unit::Power, 1.0, true),
    ("GiB", Unit::Bytes, 1073741824.0, true),
    ("MiB", Unit::Bytes, 1048576.0, true),
    ("KiB", Unit::Bytes, 1024.0, true),
    ("B", Unit::Bytes, 1.0, true),
    ("nanoseconds", Unit::Time, 1.0, true),
    ("microseconds", Unit::Time, 1e3, true),
    ("milliseconds", Unit::Time, 1e6, true),
    ("seconds", Unit::Time, 1e9, true),
    ("points", Unit::Points, 0.01, true),
    ("sec", Unit::Time, 1e9, true),
    ("ns", Unit::Time, 1.0, true),
    ("µs", Unit::Time, 1e3, true),
    ("μs", Unit::Time, 1e3, true),
    ("us", Unit::Time, 1e3, true),
    ("ms", Unit::Time, 1e6, true),
    ("pp", Unit::Points, 0.01, true),
    ("s", Unit::Time, 1e9, true),
    ("%", Unit::Percent, 0.01, true),
    ("x", Unit::Times, 1.0, false),
    ("×", Unit::Times, 1.0, false),
];

/// The unit a table column's header names as its last word (`baseline µs`, `SM MHz`, `°C`,
/// `W`): bare numbers in that column are in it. `None` for a header without one (a `%` or a
/// factor is never implied).
pub(crate) fn header_unit(header: &str) -> Option<(Unit, f64)> {
    // A qualifier in parentheses after the unit (`MB/launch (model)`) is not the unit.
    let mut words = header
        .split_whitespace()
        .rev()
        .skip_while(|w| w.starts_with('('));
    let last = words.next()?;
    // Work per launch and per byte: counts in their scale (the roofline's columns).
    for (spelling, scale) in [
        ("GFLOP/launch", 1e9),
        ("MB/launch", 1e6),
        ("FLOP/byte", 1.0),
    ] {
        if last == spelling {
            return Some((Unit::Work, scale));
        }
    }
    UNITS
        .iter()
        .find(|(spelling, unit, _, _)| {
            *spelling == last && !matches!(unit, Unit::Percent | Unit::Times | Unit::Points)
        })
        .map(|&(_, unit, scale, _)| (unit, scale))
}

impl Num {
    /// Gives a bare number the unit its column's header names.
    pub(crate) fn in_unit(&mut self, (unit, scale): (Unit, f64)) {
        if self.unit == Unit::None && self.gates.is_none() && !self.calls {
            self.unit = unit;
            self.scale = scale;
        }
    }
}

/// The unit at the start of `rest` (after the number), with the bytes it takes.
fn unit_at(rest: &str) -> Option<(Unit, f64, usize)> {
    let spaced = rest.strip_prefix(' ');
    for (spelling, unit, scale, space_ok) in UNITS {
        for (text, skip) in [(Some(rest), 0), (spaced.filter(|_| *space_ok), 1)] {
            let Some(text) = text else { continue };
            let Some(after) = text.strip_prefix(spelling) else {
                continue;
            };
            let letter_unit = spelling.chars().all(char::is_alphabetic);
            if letter_unit && after.chars().next().is_some_and(word_char) {
                continue;
            }
            return Some((*unit, *scale, skip + spelling.len()));
        }
    }
    None
}

/// Digits (with `,` thousands groups when the first group has at most three digits) from byte
/// `i`; returns the end and the digits without separators.
/// A count of a total written from `start` to `end` of `line` (`6/6`, `3 of 4`).
fn count_of(line: &str, start: usize, end: usize, part: u64, total: u64) -> Num {
    Num {
        start,
        end,
        text: line[start..end].to_string(),
        raw: part as f64,
        decimals: 0,
        unit: Unit::None,
        scale: 1.0,
        signed: false,
        plus_minus: false,
        calls: false,
        gates: Some((part, total)),
    }
}

/// The nouns after a bare integer that make it a count.
const COUNTED: [&str; 7] = [
    "calls",
    "call ",
    "invocations",
    "counter change",
    "profiler processes",
    "repeats",
    "values",
];

/// The nouns whose "K of N" claims are checked (singular and plural).
const OF_NOUNS: [&str; 20] = [
    "configs",
    "config",
    "builds",
    "build",
    "kernels",
    "kernel",
    "gates",
    "gate",
    "requests",
    "request",
    "points",
    "point",
    "tensors",
    "tensor",
    "elements",
    "element",
    "profiler processes",
    "processes",
    "records",
    "record",
];

fn digits(s: &str, i: usize) -> (usize, String) {
    let b = s.as_bytes();
    let mut j = i;
    let mut out = String::new();
    while j < b.len() && b[j].is_ascii_digit() {
        out.push(b[j] as char);
        j += 1;
    }
    if out.len() <= 3 {
        while j + 3 < b.len() + 1
            && b.get(j) == Some(&b',')
            && b.get(j + 1..j + 4)
                .is_some_and(|g| g.iter().all(u8::is_ascii_digit))
            && !b.get(j + 4).is_some_and(u8::is_ascii_digit)
        {
            out.push_str(&s[j + 1..j + 4]);
            j += 4;
        }
    }
    (j, out)
}

/// The end of the word that holds byte `i` (the next whitespace or `|`).
fn word_end(s: &str, i: usize) -> usize {
    s[i..]
        .find(|c: char| c.is_whitespace() || c == '|')
        .map_or(s.len(), |k| i + k)
}

/// Every number of `line`, in order.
pub(crate) fn numbers(line: &str) -> Vec<Num> {
    let mut out: Vec<Num> = Vec::new();
    let mut i = 0;
    while i < line.len() {
        let Some(c) = line[i..].chars().next() else {
            break;
        };
        let prev = line[..i].chars().next_back();
        let next = line[i + c.len_utf8()..].chars().next();
        let sign = match c {
            '+' | '-' | '−' | '±' if next.is_some_and(|n| n.is_ascii_digit()) => Some(c),
            _ => None,
        };
        let starts = (c.is_ascii_digit() || sign.is_some())
            && !prev.is_some_and(|p| word_char(p) || p == '.' || p == ',')
            && !(sign == Some('-')
                && prev.is_some_and(|p| !p.is_whitespace() && !"([{|=:;/".contains(p)));
        if !starts {
            i += c.len_utf8();
            continue;
        }
        match number_at(line, i, sign) {
            Ok(n) => {
                i = n.end;
                out.push(n);
            }
            Err(end) => i = end.max(i + c.len_utf8()),
        }
    }
    carry_units(line, &mut out);
    out
}

/// The number starting at byte `start`, or the end of the word to skip.
fn number_at(line: &str, start: usize, sign: Option<char>) -> Result<Num, usize> {
    let b = line.as_bytes();
    let first = start + sign.map_or(0, char::len_utf8);
    let (mut j, mut text) = digits(line, first);
    let mut decimals = 0;
    if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(u8::is_ascii_digit) {
        let (k, frac) = digits(line, j + 1);
        if frac.len() != k - j - 1 {
            return Err(word_end(line, start));
        }
        decimals = frac.len() as i32;
        text.push('.');
        text.push_str(&frac);
        j = k;
    }
    // Scientific notation: read and then ignored (no unit, no rounding that the audit uses).
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let k = j + 1 + usize::from(matches!(b.get(j + 1), Some(b'+' | b'-')));
        if b.get(k).is_some_and(u8::is_ascii_digit) {
            return Err(word_end(line, start));
        }
    }
    let rest = &line[j..];
    // "K of N configs" (builds, kernels, gates, requests, points, tensors) in words: a count
    // of a total, checked like N/M.
    if decimals == 0 && sign.is_none() {
        if let Some(after) = rest.strip_prefix(" of ") {
            if after.starts_with(|c: char| c.is_ascii_digit()) {
                let at = j + 4;
                let (k, m) = digits(line, at);
                let noun = line[k..].trim_start_matches(' ');
                let counted = OF_NOUNS.iter().any(|w| {
                    noun.strip_prefix(w)
                        .is_some_and(|r| !r.starts_with(|c: char| c.is_alphanumeric()))
                });
                if let (true, Ok(p), Ok(t)) = (counted, text.parse::<u64>(), m.parse::<u64>()) {
                    return Ok(count_of(line, start, k, p, t));
                }
            }
        }
    }
    // N/M: gates.
    if decimals == 0 && sign.is_none() {
        if let Some(after) = rest.strip_prefix('/') {
            if after.starts_with(|c: char| c.is_ascii_digit()) {
                let (k, m) = digits(line, j + 1);
                let ok = !line[k..].starts_with(|c: char| word_char(c) || c == '.' || c == '/');
                if let (true, Ok(p), Ok(t)) = (ok, text.parse::<u64>(), m.parse::<u64>()) {
                    return Ok(count_of(line, start, k, p, t));
                }
                return Err(word_end(line, start));
            }
        }
    }
    let (unit, scale, ulen) = unit_at(rest).unwrap_or((Unit::None, 1.0, 0));
    let end = j + ulen;
    let after = &line[end..];
    let glued = after.starts_with(word_char)
        || ([".", "-", ":", "/", ","].iter().any(|p| {
            after
                .strip_prefix(p)
                .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        }))
        || (ulen == 0 && after.starts_with('-') && after[1..].starts_with(word_char));
    if glued {
        return Err(word_end(line, start));
    }
    let Ok(mut raw) = text.parse::<f64>() else {
        return Err(word_end(line, start));
    };
    if matches!(sign, Some('-' | '−')) {
        raw = -raw;
    }
    // A count by its noun (`5 calls`, `0 counter changes`) or its sign (`n=6`).
    let calls = unit == Unit::None && decimals == 0 && {
        let w = after.trim_start();
        COUNTED.iter().any(|noun| w.starts_with(noun)) || sample_size(&line[..start])
    };
    Ok(Num {
        start,
        end,
        text: line[start..end].to_string(),
        raw,
        decimals,
        unit,
        scale,
        signed: matches!(sign, Some('+' | '-' | '−')),
        plus_minus: sign == Some('±'),
        calls,
        gates: None,
    })
}

/// Whether `before` (the text before a number) ends in a sample size's `n=` written as a word
/// of its own (`(n=6)`, `n=6`), not inside a name (`flip-n=3`, a sweep point's id).
fn sample_size(before: &str) -> bool {
    before.strip_suffix("n=").is_some_and(|b| {
        b.chars()
            .next_back()
            .is_none_or(|c| c.is_whitespace() || matches!(c, '(' | '[' | ','))
    })
}

/// `1,211.134 → 1,304.738 ms` and `22.144–24.152 s`: the first number takes the unit of the
/// second.
fn carry_units(line: &str, nums: &mut [Num]) {
    for k in (1..nums.len()).rev() {
        let between = line[nums[k - 1].end..nums[k].start].trim();
        if nums[k - 1].unit == Unit::None
            && nums[k - 1].gates.is_none()
            && nums[k].unit != Unit::None
            && ["→", "->", "–", "to"].contains(&between)
        {
            let (a, b) = nums.split_at_mut(k);
            a[k - 1].take_unit(&b[0]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Num {
        let n = numbers(s);
        assert_eq!(n.len(), 1, "{s}: {n:?}");
        n.into_iter().next().expect("one number")
    }

    #[test]
    fn a_sample_size_is_a_count_but_not_inside_a_name() {
        assert!(one("(n=6)").calls && one("n=6").calls);
        // A sweep point's id (`flip-n=3`) is a name, not a count of 3.
        let n = numbers("| flip-n=3 | FAIL |");
        assert!(n.iter().all(|n| !n.calls), "{n:?}");
    }

    #[test]
    fn units_signs_and_rounding() {
        let n = one("took 415.486 µs");
        assert_eq!(n.unit, Unit::Time);
        assert!(n.matches(415_486.0) && n.matches(415_486.4) && !n.matches(415_487.0));
        let n = one("ratio 1.164x");
        assert_eq!(n.unit, Unit::Times);
        assert!(n.matches(1.16362));
        let n = one("(+16.4%)");
        assert!(n.signed && n.matches(0.16362) && !n.matches(-0.16362));
        let n = one("a −2.8% change");
        assert!(n.signed && n.matches(-0.028));
        let n = one("1,221.134 ms total");
        assert!(n.matches(1_221_134_000.0));
        let n = one("resolution ±3.14%");
        assert!(n.plus_minus && n.matches(0.0314));
        let n = one("| 17.6 % |");
        assert!(n.matches(0.176));
        let n = one("12.8 s total");
        assert!(n.matches(12.8e9));
        assert!(one("| 6/6 |").gates == Some((6, 6)));
        assert_eq!(one("3 of 4 configs passed").gates, Some((3, 4)));
        assert_eq!(one("2 of 3 builds changed").gates, Some((2, 3)));
        assert!(numbers("2 of 3 days").iter().all(|n| n.gates.is_none()));
        assert!(one("5 calls").calls);
        assert_eq!(one("-3.404 points").unit, Unit::Points);
    }

    #[test]
    fn numbers_inside_words_are_not_numbers() {
        for s in [
            "gfx1151 w8s2 sm90 B1/T8192 run1.json",
            "kernelab 0.1.0 at 2026-06-20T08:00:00Z",
            "sha256 5a7c059cbbdaf48a 1e5abc 16K 2x1",
            "max abs error 7.760e-3 qwen3next_4l",
        ] {
            assert!(numbers(s).is_empty(), "{s}: {:?}", numbers(s));
        }
    }

    #[test]
    fn ranges_carry_the_unit_back() {
        let n = numbers("1,211.134 → 1,304.738 ms and 22.144–24.152 seconds");
        assert_eq!(n.len(), 4);
        assert!(n.iter().all(|n| n.unit == Unit::Time));
        assert!(n[0].matches(1_211_134_000.0));
        assert!(n[2].matches(22.144e9));
        let n = numbers("[1.1599, 1.1681] and 8, 16 and 32,658");
        assert_eq!(n.len(), 5);
        assert!(n[4].matches(32_658.0));
    }
}
