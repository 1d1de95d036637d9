//! Element types and their decoding.

use serde::{Deserialize, Serialize};

/// An element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
        let (order, code) = descr.split_at(1.min(descr.len()));
        if order == ">" && !code.ends_with('1') {
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
            DType::F8E5M2 => half::f16::from_bits(u16::from(b[0]) << 8).to_f64(),
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
    }
}
