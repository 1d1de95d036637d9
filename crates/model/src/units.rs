//! Integer-nanosecond time types and an exact decimal parser.

use serde::{Deserialize, Serialize};

/// A point in time in integer nanoseconds on the clock of the input (not necessarily Unix time).
#[derive(
    Copy,
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Timestamp(i64);

impl Timestamp {
    /// A timestamp from integer nanoseconds.
    pub const fn from_ns(ns: i64) -> Self {
        Timestamp(ns)
    }
    /// The timestamp in integer nanoseconds.
    pub const fn ns(self) -> i64 {
        self.0
    }
    /// The duration from `earlier` to `self`, or `None` if `earlier` is later.
    pub fn since(self, earlier: Timestamp) -> Option<Nanos> {
        let d = self.0.checked_sub(earlier.0)?;
        u64::try_from(d).ok().map(Nanos)
    }
    /// This timestamp moved later by `d` (saturating).
    pub fn plus(self, d: Nanos) -> Timestamp {
        Timestamp(
            self.0
                .saturating_add(i64::try_from(d.0).unwrap_or(i64::MAX)),
        )
    }
}

/// A non-negative duration in integer nanoseconds.
#[derive(
    Copy,
    Clone,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct Nanos(u64);

impl Nanos {
    /// A duration from integer nanoseconds.
    pub const fn from_ns(ns: u64) -> Self {
        Nanos(ns)
    }
    /// The duration in integer nanoseconds.
    pub const fn ns(self) -> u64 {
        self.0
    }
    /// The duration in milliseconds, as a float for display only.
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
}

/// Parses a JSON/CSV decimal number text (`"5076618402287.977"`, `"12"`, `"-3.5"`, `"1.5e3"`)
/// and returns its value multiplied by `10^scale`, rounded half away from zero, exactly
/// (no floating point). Kineto writes microseconds with three decimals, so `scale = 3`
/// turns them into integer nanoseconds. Returns `None` for text that is not a number or a
/// result that does not fit an `i64`.
pub fn parse_scaled_decimal(text: &str, scale: i32) -> Option<i64> {
    i64::try_from(parse_scaled_decimal_wide(text, scale)?).ok()
}

/// [`parse_scaled_decimal`] with an `i128` result, for exact sums of fractional values
/// (`scale = 9` keeps nine decimals of a nanosecond figure).
pub fn parse_scaled_decimal_wide(text: &str, scale: i32) -> Option<i128> {
    let bytes = text.trim().as_bytes();
    let (neg, mut rest) = match bytes.first()? {
        b'-' => (true, &bytes[1..]),
        b'+' => (false, &bytes[1..]),
        _ => (false, bytes),
    };
    let mut digits: Vec<u8> = Vec::with_capacity(24);
    let mut frac_digits: i32 = 0;
    let mut seen_dot = false;
    let mut any = false;
    while let Some((&c, tail)) = rest.split_first() {
        match c {
            b'0'..=b'9' => {
                any = true;
                // Leading zeros carry no value; after the dot they still count as decimals.
                if !(digits.is_empty() && c == b'0') {
                    digits.push(c - b'0');
                }
                if seen_dot {
                    frac_digits = frac_digits.checked_add(1)?;
                }
            }
            b'.' if !seen_dot => seen_dot = true,
            b'e' | b'E' => break,
            _ => return None,
        }
        rest = tail;
    }
    if !any {
        return None;
    }
    let mut exp: i32 = 0;
    if let Some((&c, tail)) = rest.split_first() {
        if c == b'e' || c == b'E' {
            let s = std::str::from_utf8(tail).ok()?;
            exp = s.parse::<i32>().ok()?;
        }
    }
    // value = digits * 10^(exp - frac_digits); result = value * 10^scale
    let shift = exp.checked_sub(frac_digits)?.checked_add(scale)?;
    let mut acc: i128 = 0;
    let keep = if shift >= 0 {
        digits.len()
    } else {
        digits.len().saturating_sub(usize::try_from(-shift).ok()?)
    };
    for &d in &digits[..keep] {
        acc = acc.checked_mul(10)?.checked_add(i128::from(d))?;
    }
    if shift > 0 && acc != 0 {
        // 10^39 overflows i128: a larger shift of a non-zero value never fits (and a huge
        // exponent such as `1e999999999` must not loop).
        if shift > 39 {
            return None;
        }
        for _ in 0..shift {
            acc = acc.checked_mul(10)?;
        }
    } else if keep < digits.len() && digits[keep] >= 5 {
        acc += 1;
    }
    if neg {
        acc = -acc;
    }
    Some(acc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nineteen_digit_microseconds_are_exact() {
        assert_eq!(
            parse_scaled_decimal("1712195495505582.988", 3),
            Some(1_712_195_495_505_582_988)
        );
        assert_eq!(
            parse_scaled_decimal("5076618402287.977", 3),
            Some(5_076_618_402_287_977)
        );
        assert_eq!(parse_scaled_decimal("4.928", 3), Some(4928));
        assert_eq!(parse_scaled_decimal("0.001", 3), Some(1));
        assert_eq!(parse_scaled_decimal("12", 3), Some(12_000));
        assert_eq!(parse_scaled_decimal("-3.5", 3), Some(-3500));
    }

    #[test]
    fn rounding_and_exponents() {
        assert_eq!(parse_scaled_decimal("1.2345", 3), Some(1235));
        assert_eq!(parse_scaled_decimal("1.2344", 3), Some(1234));
        assert_eq!(parse_scaled_decimal("1.5e3", 0), Some(1500));
        assert_eq!(
            parse_scaled_decimal("8.1097E+14", 0),
            Some(810_970_000_000_000)
        );
        assert_eq!(parse_scaled_decimal("2.5e-1", 3), Some(250));
        assert_eq!(parse_scaled_decimal("0.000", 3), Some(0));
    }

    #[test]
    fn rejects_garbage() {
        assert_eq!(parse_scaled_decimal("", 3), None);
        assert_eq!(parse_scaled_decimal("abc", 3), None);
        assert_eq!(parse_scaled_decimal("1.2.3", 3), None);
        assert_eq!(parse_scaled_decimal("\"1\"", 3), None);
        assert_eq!(parse_scaled_decimal("99999999999999999999999", 3), None);
    }

    #[test]
    fn huge_exponents_and_digit_runs_are_fast() {
        let t = std::time::Instant::now();
        assert_eq!(parse_scaled_decimal("1e999999999", 3), None);
        assert_eq!(parse_scaled_decimal("0e999999999", 3), Some(0));
        assert_eq!(parse_scaled_decimal("1e-999999999", 3), Some(0));
        assert_eq!(parse_scaled_decimal("1e99999999999999999999", 3), None);
        let digits = "7".repeat(1 << 20);
        assert_eq!(parse_scaled_decimal(&digits, 3), None);
        assert_eq!(parse_scaled_decimal(&format!("0.{digits}"), 3), Some(778));
        assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
    }

    #[test]
    fn timestamps_and_durations() {
        let a = Timestamp::from_ns(10);
        assert_eq!(Timestamp::from_ns(25).since(a), Some(Nanos::from_ns(15)));
        assert_eq!(a.since(Timestamp::from_ns(25)), None);
        assert_eq!(a.plus(Nanos::from_ns(5)), Timestamp::from_ns(15));
    }
}

/// Longest duration [`duration_clamped`] gives: ten years, far below what `Instant` arithmetic
/// can overflow on.
pub const MAX_DURATION_S: f64 = 315_360_000.0;

/// `secs` seconds as a [`std::time::Duration`], clamped to `[0, MAX_DURATION_S]` (NaN gives
/// zero): a conversion that never panics, for figures already checked against their range.
pub fn duration_clamped(secs: f64) -> std::time::Duration {
    let s = if secs.is_nan() {
        0.0
    } else {
        secs.clamp(0.0, MAX_DURATION_S)
    };
    std::time::Duration::try_from_secs_f64(s).unwrap_or_default()
}

/// Whole nanoseconds of `secs` seconds, for a measured wall time kept in a document: rounded
/// down, 0 for a negative or NaN value, `u64::MAX` beyond it.
pub fn seconds_to_ns(secs: f64) -> u64 {
    if secs.is_nan() || secs <= 0.0 {
        return 0;
    }
    std::time::Duration::try_from_secs_f64(secs).map_or(u64::MAX, |d| {
        u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
    })
}

#[cfg(test)]
mod duration_tests {
    use super::*;

    #[test]
    fn hostile_seconds_never_panic() {
        assert_eq!(duration_clamped(1e300).as_secs_f64(), MAX_DURATION_S);
        assert_eq!(duration_clamped(-1.0), std::time::Duration::ZERO);
        assert_eq!(duration_clamped(f64::NAN), std::time::Duration::ZERO);
        assert_eq!(duration_clamped(1.0 / 1e-300).as_secs_f64(), MAX_DURATION_S);
        assert_eq!(duration_clamped(1.5).as_millis(), 1500);
    }

    #[test]
    fn seconds_become_whole_nanoseconds() {
        assert_eq!(seconds_to_ns(1.5), 1_500_000_000);
        assert_eq!(seconds_to_ns(1.5e-6), 1500);
        assert_eq!(seconds_to_ns(-1.0), 0);
        assert_eq!(seconds_to_ns(f64::NAN), 0);
        assert_eq!(seconds_to_ns(f64::INFINITY), u64::MAX);
        assert_eq!(seconds_to_ns(1e300), u64::MAX);
    }
}
