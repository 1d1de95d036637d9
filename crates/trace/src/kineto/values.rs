//! Converting the member values the scanner found (byte ranges of one event) into numbers and
//! text: each value is read once, from its bytes, without building a JSON tree.

use super::scan::Val;
use crate::error::{snippet, Error, Result};
use kernelab_model::{parse_scaled_decimal, Location};
use std::borrow::Cow;

/// The bytes of `v` in `ev` (a string's content, escapes still in it).
pub(crate) fn raw(ev: &[u8], v: Val) -> &[u8] {
    ev.get(v.range()).unwrap_or_default()
}

/// The value as JSON text, quotes included for a string (for error messages).
fn json_text(ev: &[u8], v: Val) -> &[u8] {
    if v.string {
        let r = v.range();
        ev.get(r.start.saturating_sub(1)..r.end + 1)
            .unwrap_or_default()
    } else {
        raw(ev, v)
    }
}

/// A string member's text, escapes decoded; `None` when the value is not a string.
pub(crate) fn text<'a>(ev: &'a [u8], v: Val, at: u64, field: &str) -> Result<Option<Cow<'a, str>>> {
    if !v.string {
        return Ok(None);
    }
    let bad = |what: &str| {
        Error::syntax(
            Location::byte(at).with_field(field),
            "a valid trace event",
            format!("invalid JSON ({what}) in {}", snippet(json_text(ev, v), 24)),
        )
    };
    if v.escaped {
        let s: String =
            serde_json::from_slice(json_text(ev, v)).map_err(|_| bad("invalid escape"))?;
        Ok(Some(Cow::Owned(s)))
    } else {
        let s = std::str::from_utf8(raw(ev, v)).map_err(|_| bad("invalid UTF-8"))?;
        Ok(Some(Cow::Borrowed(s)))
    }
}

/// Microseconds written as `123.456` (at most three decimals, no sign or exponent) in integer
/// nanoseconds; `None` for any other spelling, which the exact general parser then reads.
fn micros_fast(t: &[u8]) -> Option<i64> {
    let mut acc: u64 = 0;
    let mut frac: Option<u32> = None;
    let mut digits = 0;
    for &c in t {
        match c {
            b'0'..=b'9' => {
                acc = acc.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
                digits += 1;
                if let Some(f) = frac.as_mut() {
                    *f += 1;
                }
            }
            b'.' if frac.is_none() => frac = Some(0),
            _ => return None,
        }
    }
    let frac = frac.unwrap_or(0);
    if digits == 0 || frac > 3 {
        return None;
    }
    i64::try_from(acc.checked_mul(10u64.pow(3 - frac))?).ok()
}

/// A time member (`ts`, `dur`) in microseconds, as exact integer nanoseconds; a string holding
/// a number is read as that number.
pub(crate) fn time_field(ev: &[u8], v: Option<Val>, key: &str, at: u64) -> Result<i64> {
    let v = v.ok_or_else(|| {
        Error::syntax(
            Location::byte(at).with_field(key),
            format!("a \"{key}\" number"),
            "none",
        )
    })?;
    let t = raw(ev, v);
    if let Some(ns) = micros_fast(t) {
        return Ok(ns);
    }
    std::str::from_utf8(t)
        .ok()
        .and_then(|s| parse_scaled_decimal(s, 3))
        .ok_or_else(|| {
            let found = String::from_utf8_lossy(json_text(ev, v));
            let found = if found.chars().count() > 64 {
                format!("{}…", found.chars().take(64).collect::<String>())
            } else {
                found.into_owned()
            };
            Error::syntax(
                Location::byte(at).with_field(key),
                "a decimal number of microseconds",
                found,
            )
        })
}

/// An integer member: a number, or a string holding a decimal or `0x` hexadecimal integer
/// (ROCm writes streams as "0x0"); `None` for anything else.
pub(crate) fn int_of(ev: &[u8], v: Option<Val>) -> Option<i64> {
    let v = v?;
    if !v.string {
        return std::str::from_utf8(raw(ev, v)).ok()?.parse::<i64>().ok();
    }
    let s = text(ev, v, 0, "").ok()??;
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    s.parse::<i64>().ok()
}

/// An unsigned integer member of `args` (`correlation`, `bytes`, …), a number or a string
/// holding one (ROCm writes `"bytes": "9216"`): `null` or absent is `None`; anything but an
/// integer that fits `T` is an error located at the event.
pub(crate) fn uint<T: TryFrom<u64>>(
    ev: &[u8],
    v: Option<Val>,
    field: &str,
    at: u64,
) -> Result<Option<T>> {
    let Some(v) = v else { return Ok(None) };
    let t = raw(ev, v);
    if !v.string && t == b"null" {
        return Ok(None);
    }
    let digits = if v.string { t.trim_ascii() } else { t };
    let parsed = (!v.escaped && !digits.is_empty() && digits.iter().all(u8::is_ascii_digit))
        .then(|| std::str::from_utf8(digits).ok()?.parse::<u64>().ok())
        .flatten()
        .and_then(|x| T::try_from(x).ok());
    parsed.map(Some).ok_or_else(|| {
        Error::syntax(
            Location::byte(at).with_field(field),
            "a valid trace event",
            format!(
                "invalid JSON (an unsigned integer in range expected) in {}",
                snippet(json_text(ev, v), 24)
            ),
        )
    })
}

/// A non-negative finite number member of `args` (`kernel_flop`, `kernel_num_gb`): `null` or
/// absent is `None`; anything else (a string, a negative number, an exponent past `f64`) is an
/// error located at the event.
pub(crate) fn non_negative(ev: &[u8], v: Option<Val>, field: &str, at: u64) -> Result<Option<f64>> {
    let Some(v) = v else { return Ok(None) };
    let t = raw(ev, v);
    if !v.string && t == b"null" {
        return Ok(None);
    }
    let parsed = (!v.string)
        .then(|| std::str::from_utf8(t).ok()?.parse::<f64>().ok())
        .flatten()
        .filter(|x| x.is_finite() && *x >= 0.0);
    parsed.map(Some).ok_or_else(|| {
        Error::syntax(
            Location::byte(at).with_field(field),
            "a non-negative number",
            snippet(json_text(ev, v), 24),
        )
    })
}

/// A `[x, y, z]` member of unsigned integers (`grid`, `block`); `null` or absent is `None`.
pub(crate) fn triple(ev: &[u8], v: Option<Val>, field: &str, at: u64) -> Result<Option<[u32; 3]>> {
    let Some(v) = v else { return Ok(None) };
    let t = raw(ev, v);
    if !v.string && t == b"null" {
        return Ok(None);
    }
    let parse = || -> Option<[u32; 3]> {
        let inner = t.strip_prefix(b"[")?.strip_suffix(b"]")?;
        let mut out = [0u32; 3];
        let mut parts = inner.split(|&c| c == b',');
        for slot in &mut out {
            let p = std::str::from_utf8(parts.next()?).ok()?;
            *slot = p
                .trim_matches(|c: char| c.is_ascii_whitespace())
                .parse()
                .ok()?;
        }
        parts.next().is_none().then_some(out)
    };
    match (v.string, parse()) {
        (false, Some(x)) => Ok(Some(x)),
        _ => Err(Error::syntax(
            Location::byte(at).with_field(field),
            "a valid trace event",
            format!(
                "invalid JSON (an array of three unsigned integers expected) in {}",
                snippet(json_text(ev, v), 24)
            ),
        )),
    }
}

/// An operator's `Input Dims`: one list of dimensions per input, kept in input order so a work
/// model's `[input, dim]` indexes line up; an input that is not a list of integers (a scalar,
/// a tensor list, `null`) is an empty list. `None` when no input has a dimension, or the value
/// is not an array of JSON values (an `Input Dims` that is not an array of inputs is treated as
/// absent: the ranking does not depend on it).
pub(crate) fn input_dims(ev: &[u8], v: Option<Val>) -> Option<Vec<Vec<i64>>> {
    let v = v.filter(|v| !v.string)?;
    let inputs = serde_json::from_slice::<Vec<serde_json::Value>>(raw(ev, v)).ok()?;
    let dims: Vec<Vec<i64>> = inputs
        .iter()
        .map(|x| match x.as_array() {
            Some(a) => a
                .iter()
                .map(serde_json::Value::as_i64)
                .collect::<Option<Vec<i64>>>()
                .unwrap_or_default(),
            None => Vec::new(),
        })
        .collect();
    dims.iter().any(|d| !d.is_empty()).then_some(dims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn val(s: &str) -> Val {
        let string = s.starts_with('"');
        Val {
            start: u32::from(string),
            end: (s.len() - usize::from(string)) as u32,
            string,
            escaped: s.contains('\\'),
        }
    }

    #[test]
    fn times_are_exact_integer_nanoseconds() {
        for (s, ns) in [
            ("1.5", 1500),
            ("5076618404261.81", 5_076_618_404_261_810),
            ("1700000000123456.789", 1_700_000_000_123_456_789),
            ("\"2.25\"", 2250),
            ("0.0004", 0),
            ("0.0006", 1),
            ("1e3", 1_000_000),
            ("-5", -5000),
            (".5", 500),
            ("7.", 7000),
        ] {
            let t = time_field(s.as_bytes(), Some(val(s)), "ts", 0).expect(s);
            assert_eq!(t, ns, "{s}");
            let general = parse_scaled_decimal(s.trim_matches('"'), 3);
            assert_eq!(Some(t), general, "{s}: same as the general parser");
        }
        for s in [
            "9223372036854775.808",
            "1e999999999",
            "soon",
            "\"\"",
            "1.2.3",
        ] {
            assert!(
                time_field(s.as_bytes(), Some(val(s)), "ts", 0).is_err(),
                "{s}"
            );
        }
    }

    #[test]
    fn integers_unsigned_and_triples() {
        assert_eq!(int_of(b"7", Some(val("7"))), Some(7));
        assert_eq!(int_of(b"\"0x1f\"", Some(val("\"0x1f\""))), Some(31));
        assert_eq!(int_of(b"\" 12 \"", Some(val("\" 12 \""))), Some(12));
        assert_eq!(int_of(b"1.5", Some(val("1.5"))), None);
        let u = |s: &str| uint::<u32>(s.as_bytes(), Some(val(s)), "args.x", 0);
        assert_eq!(u("32").ok(), Some(Some(32)));
        assert_eq!(u("null").ok(), Some(None));
        assert!(u("4294967296").is_err());
        assert!(u("-1").is_err());
        assert_eq!(u("\"3\"").ok(), Some(Some(3)));
        assert!(u("\"3x\"").is_err());
        assert!(u("\"\"").is_err());
        assert!(u("+3").is_err());
        let t = |s: &str| triple(s.as_bytes(), Some(val(s)), "args.grid", 0);
        assert_eq!(t("[8192, 1,1]").ok(), Some(Some([8192, 1, 1])));
        assert_eq!(t("[ 1 ,\n 2 , 3 ]").ok(), Some(Some([1, 2, 3])));
        assert!(t("[1, 2]").is_err());
        assert!(t("[1, 2, 3, 4]").is_err());
        assert!(t("[1, -2, 3]").is_err());
    }

    #[test]
    fn input_dims_keep_input_positions() {
        let d = |s: &str| input_dims(s.as_bytes(), Some(val(s)));
        assert_eq!(
            d("[[4096, 8192], [], [[1, 2], [3]], [8192, 2048]]"),
            Some(vec![vec![4096, 8192], vec![], vec![], vec![8192, 2048]])
        );
        assert_eq!(d("[[], []]"), None);
        assert_eq!(d("\"[[1]]\""), None);
        assert_eq!(d("[[1.5]]"), None);
    }

    #[test]
    fn strings_decode_escapes_once() {
        let s = r#""a\"b\u00e9\ud83d\ude00\\""#;
        let got = text(s.as_bytes(), val(s), 0, "name").expect("valid");
        assert_eq!(got.as_deref(), Some("a\"bé😀\\"));
        let s = r#""bad \x""#;
        assert!(text(s.as_bytes(), val(s), 0, "name").is_err());
        let s = "\"plain\"";
        assert!(matches!(
            text(s.as_bytes(), val(s), 0, "name"),
            Ok(Some(Cow::Borrowed("plain")))
        ));
    }
}
