//! Element types and their decoding.

use serde::{Deserialize, Serialize};

/// An element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum DType {
    /// IEEE binary64.
    F64,
    /// IEEE binary32.
    F32,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    BF16,
    /// OCP FP8 E4M3 (finite, NaN only, as `float8_e4m3fn`).
    F8E4M3,
    /// OCP FP8 E5M2.
    F8E5M2,
    /// Signed integers.
    I8,
    /// 16-bit signed.
    I16,
    /// 32-bit signed.
    I32,
    /// 64-bit signed.
    I64,
    /// Unsigned 8-bit.
    U8,
    /// Unsigned 16-bit.
    U16,
    /// Unsigned 32-bit.
    U32,
    /// Unsigned 64-bit.
    U64,
    /// Booleans (one byte).
    Bool,
}

impl DType {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F64 | DType::I64 | DType::U64 => 8,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F16 | DType::BF16 | DType::I16 | DType::U16 => 2,
            _ => 1,
        }
    }

    /// True for floating-point types.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            DType::F64 | DType::F32 | DType::F16 | DType::BF16 | DType::F8E4M3 | DType::F8E5M2
        )
    }

    /// Parses a user-facing name: `bf16`, `bfloat16`, `f16`, `half`, `f32`, `float32`, `f64`,
    /// `f8e4m3fn`, `f8e5m2`, `i8`…`i64`, `u8`…`u64`, `int32`, `bool`.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name.to_ascii_lowercase().as_str() {
            "f64" | "float64" | "double" => DType::F64,
            "f32" | "float32" | "float" => DType::F32,
            "f16" | "float16" | "half" => DType::F16,
            "bf16" | "bfloat16" => DType::BF16,
            "f8e4m3fn" | "f8e4m3" | "float8_e4m3fn" | "e4m3" => DType::F8E4M3,
            "f8e5m2" | "float8_e5m2" | "e5m2" => DType::F8E5M2,
            "i8" | "int8" => DType::I8,
            "i16" | "int16" => DType::I16,
            "i32" | "int32" => DType::I32,
            "i64" | "int64" => DType::I64,
            "u8" | "uint8" => DType::U8,
            "u16" | "uint16" => DType::U16,
            "u32" | "uint32" => DType::U32,
            "u64" | "uint64" => DType::U64,
            "bool" => DType::Bool,
            _ => return None,
        })
    }

    /// From a little-endian NumPy `descr` (`<f4`, `|u1`, `<u2`, `|V2`, `|b1`). Two-byte void
    /// and `uint16` are how bf16 is stored; `bf16_as` says which type they really hold.
    pub fn from_numpy(descr: &str) -> Option<Self> {
        // By characters, not bytes: a descr may hold any text (a non-ASCII first character).
        let mut chars = descr.chars();
        let order = chars.next().unwrap_or(' ');
        let code = chars.as_str();
        if !matches!(order, '<' | '>' | '|' | '=') {
            return None;
        }
        if order == '>' && !code.ends_with('1') {
            return None; // big-endian multi-byte data
        }
        Some(match code {
            "f8" => DType::F64,
            "f4" => DType::F32,
            "f2" => DType::F16,
            "i1" => DType::I8,
            "i2" => DType::I16,
            "i4" => DType::I32,
            "i8" => DType::I64,
            "u1" => DType::U8,
            "u2" | "V2" => DType::U16,
            "u4" => DType::U32,
            "u8" => DType::U64,
            "b1" => DType::Bool,
            _ => return None,
        })
    }

    /// From a safetensors dtype.
    pub fn from_safetensors(d: safetensors::Dtype) -> Option<Self> {
        use safetensors::Dtype as S;
        Some(match d {
            S::F64 => DType::F64,
            S::F32 => DType::F32,
            S::F16 => DType::F16,
            S::BF16 => DType::BF16,
            S::F8_E4M3 => DType::F8E4M3,
            S::F8_E5M2 => DType::F8E5M2,
            S::I8 => DType::I8,
            S::I16 => DType::I16,
            S::I32 => DType::I32,
            S::I64 => DType::I64,
            S::U8 => DType::U8,
            S::U16 => DType::U16,
            S::U32 => DType::U32,
            S::U64 => DType::U64,
            S::BOOL => DType::Bool,
            _ => return None,
        })
    }

    /// Default (rtol, atol) of a close comparison, as `torch.testing.assert_close` uses them
    /// (fp8: one quarter of the type's relative precision, not defined by torch).
    pub fn default_tolerance(self) -> (f64, f64) {
        match self {
            DType::F16 => (1e-3, 1e-5),
            DType::BF16 => (1.6e-2, 1e-5),
            DType::F32 => (1.3e-6, 1e-5),
            DType::F64 => (1e-7, 1e-7),
            DType::F8E4M3 => (0.125, 1e-3),
            DType::F8E5M2 => (0.25, 1e-3),
            _ => (0.0, 0.0),
        }
    }

    /// The value of element `b` (exactly `size()` bytes, little endian) as f64.
    #[inline]
    pub fn value(self, b: &[u8]) -> f64 {
        match self {
            DType::F64 => f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
            DType::F32 => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            DType::F16 => half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f64(),
            DType::BF16 => half::bf16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f64(),
            DType::F8E5M2 => decode_e5m2(b[0]),
            DType::F8E4M3 => e4m3(b[0]),
            DType::I8 => f64::from(b[0] as i8),
            DType::I16 => f64::from(i16::from_le_bytes([b[0], b[1]])),
            DType::I32 => f64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            DType::I64 => {
                i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f64
            }
            DType::U8 | DType::Bool => f64::from(b[0]),
            DType::U16 => f64::from(u16::from_le_bytes([b[0], b[1]])),
            DType::U32 => f64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            DType::U64 => {
                u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) as f64
            }
        }
    }

    /// The raw bits of a float element, widened (for ULP distance and ±0 / NaN checks).
    #[inline]
    pub fn bits(self, b: &[u8]) -> u64 {
        let mut v = [0u8; 8];
        v[..self.size()].copy_from_slice(&b[..self.size()]);
        u64::from_le_bytes(v)
    }

    /// Maps float bits to an integer whose order is the order of the values, so that the ULP
    /// distance of two finite values is the difference of their keys.
    #[inline]
    pub fn ulp_key(self, b: &[u8]) -> i64 {
        let bits = self.bits(b);
        let width = self.size() * 8;
        let sign = 1u64 << (width - 1);
        let mag = (bits & (sign - 1)) as i64;
        if bits & sign != 0 {
            -mag
        } else {
            mag
        }
    }
}

/// An OCP FP8 format: exponent bias, mantissa bits, and the largest finite code magnitude.
struct Fp8 {
    bias: i32,
    mantissa: u32,
    max_finite: u32,
    /// The code magnitude an overflow becomes: NaN (E4M3FN has no infinity) or infinity.
    overflow: u8,
    /// The code magnitude of NaN.
    nan: u8,
}

const E4M3FN: Fp8 = Fp8 {
    bias: 7,
    mantissa: 3,
    max_finite: 0x7e,
    overflow: 0x7f,
    nan: 0x7f,
};

const E5M2: Fp8 = Fp8 {
    bias: 15,
    mantissa: 2,
    max_finite: 0x7b,
    overflow: 0x7c,
    nan: 0x7e,
};

/// Encodes `v` in `f`: `v` is first rounded to f32 (as ml_dtypes and PyTorch convert a
/// float64), then to the nearest code, ties to even.
fn encode_fp8(v: f64, f: &Fp8) -> u8 {
    let x = v as f32;
    let sign = if x.is_sign_negative() { 0x80 } else { 0 };
    if x.is_nan() {
        return sign | f.nan;
    }
    if x.is_infinite() {
        return sign | f.overflow;
    }
    let a = f64::from(x.abs());
    let m = f.mantissa as i32;
    let min_normal_exp = 1 - f.bias;
    // The binade of `a` (subnormals share the smallest one) and the spacing of codes in it.
    let exp = if a < pow2(min_normal_exp) {
        min_normal_exp
    } else {
        ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023
    };
    // Exact: scaling by a power of two. `steps` counts code spacings from zero in this binade.
    let steps = (a / pow2(exp - m)).round_ties_even() as u32;
    // Codes are contiguous in value: a subnormal's code is its step count, a normal's is the
    // biased exponent above the mantissa plus the fraction; rounding up to the next binade
    // (steps = 2^(m+1)) lands on that binade's first code.
    let code = if a < pow2(min_normal_exp) {
        steps
    } else {
        (((exp + f.bias) as u32) << m) + steps - (1 << m)
    };
    if code > f.max_finite {
        sign | f.overflow
    } else {
        sign | code as u8
    }
}

/// 2^e for the small exponents of the fp8 formats.
fn pow2(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// The OCP FP8 E4M3 (`float8_e4m3fn`) code of `v`, as ml_dtypes casts a float32 or float64:
/// `v` is rounded to f32, then to the nearest code with ties to even; magnitudes from 464 up
/// (past the largest finite value 448 by half a step or more), ±infinity and NaN give NaN
/// (`0x7f`, or `0xff` with the sign bit); the sign of zero is kept.
pub fn encode_e4m3fn(v: f64) -> u8 {
    encode_fp8(v, &E4M3FN)
}

/// The OCP FP8 E5M2 (`float8_e5m2`) code of `v`, as ml_dtypes casts a float32 or float64:
/// `v` is rounded to f32, then to the nearest code with ties to even; magnitudes from 61440 up
/// (past the largest finite value 57344 by half a step or more) give ±infinity (`0x7c`,
/// `0xfc`); NaN gives `0x7e` (`0xfe` with the sign bit); the sign of zero is kept.
pub fn encode_e5m2(v: f64) -> u8 {
    encode_fp8(v, &E5M2)
}

/// The value of an OCP FP8 E4M3 (`float8_e4m3fn`) code: no infinities, `0x7f` and `0xff` NaN.
pub fn decode_e4m3fn(b: u8) -> f64 {
    e4m3(b)
}

/// The value of an OCP FP8 E5M2 (`float8_e5m2`) code: the top byte of an IEEE binary16.
pub fn decode_e5m2(b: u8) -> f64 {
    half::f16::from_bits(u16::from(b) << 8).to_f64()
}

fn e4m3(b: u8) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = i32::from((b >> 3) & 0xf);
    let m = f64::from(b & 0x7);
    if e == 15 && b & 7 == 7 {
        return f64::NAN;
    }
    if e == 0 {
        sign * m / 8.0 * 2f64.powi(-6)
    } else {
        sign * (1.0 + m / 8.0) * 2f64.powi(e - 7)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes() {
        assert_eq!(DType::BF16.value(&0x3f80u16.to_le_bytes()), 1.0);
        assert_eq!(DType::F16.value(&0x3c00u16.to_le_bytes()), 1.0);
        assert_eq!(DType::F8E4M3.value(&[0x38]), 1.0);
        assert_eq!(DType::F8E4M3.value(&[0x7e]), 448.0);
        assert!(DType::F8E4M3.value(&[0x7f]).is_nan());
        assert_eq!(DType::F8E5M2.value(&[0x3c]), 1.0);
        assert_eq!(DType::I16.value(&(-3i16).to_le_bytes()), -3.0);
    }

    #[test]
    fn fp8_encoding_rounds_to_nearest_even() {
        // 1.2 lies between the E5M2 codes 1.0 (0x3c) and 1.25 (0x3d), nearer 1.25; truncating
        // the f16 bits gave 1.0.
        assert_eq!(encode_e5m2(1.2), 0x3d);
        assert_eq!(decode_e5m2(encode_e5m2(1.2)), 1.25);
        // E4M3 steps are 0.125 in [1, 2): 1.2 -> 1.25 (0x3a).
        assert_eq!(encode_e4m3fn(1.2), 0x3a);
        // Ties go to the even code: 1.0625 -> 1.0 (0x38), 1.1875 -> 1.25 (0x3a); E5M2 1.125 ->
        // 1.0 (0x3c), 1.375 -> 1.5 (0x3e).
        assert_eq!(encode_e4m3fn(1.0625), 0x38);
        assert_eq!(encode_e4m3fn(1.1875), 0x3a);
        assert_eq!(encode_e5m2(1.125), 0x3c);
        assert_eq!(encode_e5m2(1.375), 0x3e);
        // Subnormals: the smallest E4M3 step is 2^-9; half of it is a tie to +0, a little more
        // rounds up; negative values that round to zero keep their sign.
        assert_eq!(encode_e4m3fn(2f64.powi(-10)), 0x00);
        assert_eq!(encode_e4m3fn(2f64.powi(-10) * 1.001), 0x01);
        assert_eq!(encode_e4m3fn(-2f64.powi(-11)), 0x80);
        assert_eq!(encode_e5m2(-0.0), 0x80);
        // Rounding up past a binade's last code lands on the next binade's first.
        assert_eq!(encode_e4m3fn(1.96), 0x40);
        assert_eq!(decode_e4m3fn(0x40), 2.0);
    }

    #[test]
    fn fp8_overflow_nan_and_infinity_follow_ml_dtypes() {
        // E4M3FN: 448 is the largest value; up to the tie at 464 it rounds there, beyond it
        // (and for infinities) the result is NaN, signed.
        assert_eq!(encode_e4m3fn(464.0), 0x7e);
        assert_eq!(encode_e4m3fn(-464.0), 0xfe);
        assert_eq!(encode_e4m3fn(464.5), 0x7f);
        assert_eq!(encode_e4m3fn(-1e30), 0xff);
        assert_eq!(encode_e4m3fn(f64::INFINITY), 0x7f);
        assert_eq!(encode_e4m3fn(f64::NEG_INFINITY), 0xff);
        assert_eq!(encode_e4m3fn(f64::NAN), 0x7f);
        assert_eq!(encode_e4m3fn(-f64::NAN), 0xff);
        // E5M2: 57344 is the largest finite value; the tie at 61440 goes to the even code,
        // which is infinity.
        assert_eq!(encode_e5m2(61439.0), 0x7b);
        assert_eq!(encode_e5m2(61440.0), 0x7c);
        assert_eq!(encode_e5m2(-1e30), 0xfc);
        assert_eq!(encode_e5m2(f64::NAN), 0x7e);
        assert_eq!(encode_e5m2(-f64::NAN), 0xfe);
        assert_eq!(decode_e5m2(0x7c), f64::INFINITY);
    }

    #[test]
    fn fp8_float64_input_is_rounded_to_f32_first() {
        // 1 + 2^-4 + 2^-40 is above the E4M3 tie 1.0625, but its f32 rounding is the tie
        // itself, which goes to the even code 1.0: ml_dtypes' float64 cast gives 0x38 too.
        assert_eq!(encode_e4m3fn(1.0 + 2f64.powi(-4) + 2f64.powi(-40)), 0x38);
        assert_eq!(encode_e4m3fn(1.0 + 2f64.powi(-4) + 2f64.powi(-20)), 0x39);
        assert_eq!(encode_e5m2(1.0 + 2f64.powi(-3) + 2f64.powi(-40)), 0x3c);
    }

    #[test]
    fn ulp_keys_order_values() {
        let k = |x: f32| DType::F32.ulp_key(&x.to_le_bytes());
        assert_eq!(k(1.0) - k(f32::from_bits(1.0f32.to_bits() - 1)), 1);
        assert_eq!(k(0.0), k(-0.0));
        assert!(k(-1.0) < k(-0.5) && k(-0.5) < k(0.5));
    }

    #[test]
    fn names() {
        assert_eq!(DType::parse("bfloat16"), Some(DType::BF16));
        assert_eq!(DType::from_numpy("<f4"), Some(DType::F32));
        assert_eq!(DType::from_numpy("|V2"), Some(DType::U16));
        assert_eq!(DType::from_numpy(">f4"), None);
        // Non-ASCII text is refused, never sliced inside a character.
        assert_eq!(DType::from_numpy("éf4"), None);
        assert_eq!(DType::from_numpy("<é"), None);
        assert_eq!(DType::from_numpy(""), None);
    }
}
