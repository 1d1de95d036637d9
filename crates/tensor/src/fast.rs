//! Monomorphic inner loops of the close comparison for the common float pairs (the generic
//! path decodes each element through a `match` on the dtype, about ten times slower).

use crate::compare::Tolerance;

/// A float element type decoded straight from little-endian bytes.
pub(crate) trait Elem {
    const SIZE: usize;
    /// The value.
    fn get(b: &[u8]) -> f64;
    /// A key whose order is the values' order (for ULP distances).
    fn key(b: &[u8]) -> i64;
}

macro_rules! half_elem {
    ($name:ident, $decode:expr) => {
        pub(crate) struct $name;
        impl Elem for $name {
            const SIZE: usize = 2;
            #[inline(always)]
            fn get(b: &[u8]) -> f64 {
                let bits = u16::from_le_bytes([b[0], b[1]]);
                $decode(bits)
            }
            #[inline(always)]
            fn key(b: &[u8]) -> i64 {
                let bits = u16::from_le_bytes([b[0], b[1]]);
                let mag = i64::from(bits & 0x7fff);
                if bits & 0x8000 != 0 {
                    -mag
                } else {
                    mag
                }
            }
        }
    };
}

half_elem!(Bf16, |bits: u16| f64::from(f32::from_bits(
    u32::from(bits) << 16
)));
half_elem!(F16, |bits: u16| half::f16::from_bits(bits).to_f64());

pub(crate) struct F32;
impl Elem for F32 {
    const SIZE: usize = 4;
    #[inline(always)]
    fn get(b: &[u8]) -> f64 {
        f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    #[inline(always)]
    fn key(b: &[u8]) -> i64 {
        let bits = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let mag = i64::from(bits & 0x7fff_ffff);
        if bits & 0x8000_0000 != 0 {
            -mag
        } else {
            mag
        }
    }
}

pub(crate) struct F64;
impl Elem for F64 {
    const SIZE: usize = 8;
    #[inline(always)]
    fn get(b: &[u8]) -> f64 {
        f64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
    #[inline(always)]
    fn key(b: &[u8]) -> i64 {
        let bits = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        let mag = (bits & 0x7fff_ffff_ffff_ffff) as i64;
        if bits & 0x8000_0000_0000_0000 != 0 {
            -mag
        } else {
            mag
        }
    }
}

/// Histogram bucket of a ULP distance: 0, 1, 2, 3-4, 5-8, 9-16, 17-256, >256.
#[inline(always)]
pub(crate) fn bucket(u: u64) -> usize {
    const BY_LOG: [u8; 65] = {
        let mut t = [7u8; 65];
        t[0] = 1; // u = 1
        t[1] = 2; // u = 2
        t[2] = 3; // 3..=4
        t[3] = 4; // 5..=8
        t[4] = 5; // 9..=16
        t[5] = 6;
        t[6] = 6;
        t[7] = 6;
        t[8] = 6; // 17..=256
        t
    };
    if u == 0 {
        0
    } else {
        BY_LOG[(64 - (u - 1).leading_zeros()) as usize] as usize
    }
}

/// Accumulated figures of one chunk.
#[derive(Default, Clone)]
pub(crate) struct Acc {
    pub max_abs: f64,
    pub max_abs_at: Option<usize>,
    pub max_rel: f64,
    pub diff2: f64,
    pub ref2: f64,
    pub mismatches: u64,
    pub hist: [u64; 9],
    pub max_ulp: u64,
}

/// Compares elements `lo..hi` of `a` (type A) against the reference `b` (type B).
#[inline(never)]
pub(crate) fn close_chunk<A: Elem, B: Elem>(
    a: &[u8],
    b: &[u8],
    lo: usize,
    hi: usize,
    tol: Tolerance,
    same: bool,
) -> Acc {
    let mut acc = Acc::default();
    let xs = &a[lo * A::SIZE..hi * A::SIZE];
    let ys = &b[lo * B::SIZE..hi * B::SIZE];
    let mut max_abs = -1.0f64;
    let mut max_at = 0usize;
    for (i, (ea, eb)) in xs
        .chunks_exact(A::SIZE)
        .zip(ys.chunks_exact(B::SIZE))
        .enumerate()
    {
        let (x, y) = (A::get(ea), B::get(eb));
        let d = (x - y).abs();
        if d.is_finite() && y.is_finite() {
            let mut bad = d > tol.atol + tol.rtol * y.abs();
            if same {
                let u = (A::key(ea) - B::key(eb)).unsigned_abs();
                acc.hist[bucket(u)] += 1;
                acc.max_ulp = acc.max_ulp.max(u);
                if let Some(limit) = tol.ulp {
                    bad = u > limit;
                }
            }
            acc.mismatches += u64::from(bad);
            if d > max_abs {
                max_abs = d;
                max_at = lo + i;
            }
            // Divide only when the ratio may beat the current maximum (rare).
            let ay = y.abs();
            if d > acc.max_rel * ay && ay != 0.0 {
                acc.max_rel = d / ay;
            }
            acc.diff2 += d * d;
            acc.ref2 += y * y;
        } else {
            if same {
                acc.hist[8] += 1;
            }
            let ok = if x.is_nan() || y.is_nan() {
                tol.nan_equal && x.is_nan() && y.is_nan()
            } else {
                x == y
            };
            acc.mismatches += u64::from(!ok);
        }
    }
    if max_abs >= 0.0 {
        acc.max_abs = max_abs;
        acc.max_abs_at = Some(max_at);
    }
    acc
}

/// Merges a chunk's figures into the running ones.
pub(crate) fn merge_into(mut x: Acc, o: Acc) -> Acc {
    if o.max_abs_at.is_some() && (x.max_abs_at.is_none() || o.max_abs > x.max_abs) {
        x.max_abs = o.max_abs;
        x.max_abs_at = o.max_abs_at;
    }
    x.max_rel = x.max_rel.max(o.max_rel);
    x.diff2 += o.diff2;
    x.ref2 += o.ref2;
    x.mismatches += o.mismatches;
    for (p, q) in x.hist.iter_mut().zip(o.hist) {
        *p += q;
    }
    x.max_ulp = x.max_ulp.max(o.max_ulp);
    x
}

#[cfg(test)]
mod tests {
    use super::bucket;

    #[test]
    fn buckets() {
        let got: Vec<usize> = [0u64, 1, 2, 3, 4, 5, 8, 9, 16, 17, 256, 257, u64::MAX]
            .iter()
            .map(|&u| bucket(u))
            .collect();
        assert_eq!(got, vec![0, 1, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]);
    }
}
