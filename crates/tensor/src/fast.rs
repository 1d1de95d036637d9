//! Monomorphic inner loops of the close comparison for the common float pairs (the generic
//! path decodes each element through a `match` on the dtype, about ten times slower).

use crate::tolerance::Tolerance;

/// A float element type decoded straight from little-endian bytes.
pub(crate) trait Elem {
    const SIZE: usize;
    /// For 2-byte floats, the exponent mask (all ones: Inf or NaN); 0 for other types.
    const EXP16: u16 = 0;
    /// The value.
    fn get(b: &[u8]) -> f64;
    /// A key whose order is the values' order (for ULP distances).
    fn key(b: &[u8]) -> i64;
}

macro_rules! half_elem {
    ($name:ident, $exp:expr, $decode:expr) => {
        pub(crate) struct $name;
        impl Elem for $name {
            const SIZE: usize = 2;
            const EXP16: u16 = $exp;
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

half_elem!(Bf16, 0x7f80, |bits: u16| f64::from(f32::from_bits(
    u32::from(bits) << 16
)));
half_elem!(F16, 0x7c00, |bits: u16| half::f16::from_bits(bits).to_f64());

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

/// Running figures of [`close_chunk`]: plain scalars, so that they live in registers.
struct Run {
    acc: Acc,
    max_abs: f64,
    max_at: usize,
}

/// Compares one element pair (flat index `at`).
#[inline(always)]
fn step<A: Elem, B: Elem>(
    ea: &[u8],
    eb: &[u8],
    at: usize,
    tol: &Tolerance,
    same: bool,
    r: &mut Run,
) {
    let acc = &mut r.acc;
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
        if d > r.max_abs {
            r.max_abs = d;
            r.max_at = at;
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

/// Elements per block of the equal-bytes fast path.
const BLOCK: usize = 16;

/// The fast path for 2-byte floats of the same type: a block whose bytes are equal and whose
/// values are all finite adds only `y²` terms and ULP-0 counts (difference 0, no mismatch
/// under any tolerance). Returns false, changing nothing, when the block does not qualify.
#[inline(always)]
fn equal_block<A: Elem>(xa: &[u8], yb: &[u8], at: usize, r: &mut Run) -> bool {
    if xa != yb {
        return false;
    }
    let mut finite = true;
    let mut part = [0.0f64; 4];
    for (k, e) in yb.chunks_exact(2).enumerate() {
        let bits = u16::from_le_bytes([e[0], e[1]]);
        finite &= bits & A::EXP16 != A::EXP16;
        let y = A::get(e);
        part[k % 4] += y * y;
    }
    if !finite {
        return false;
    }
    r.acc.ref2 += (part[0] + part[1]) + (part[2] + part[3]);
    r.acc.hist[0] += BLOCK as u64;
    if r.max_abs < 0.0 {
        r.max_abs = 0.0;
        r.max_at = at;
    }
    true
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
    let xs = &a[lo * A::SIZE..hi * A::SIZE];
    let ys = &b[lo * B::SIZE..hi * B::SIZE];
    let mut r = Run {
        acc: Acc::default(),
        max_abs: -1.0,
        max_at: 0,
    };
    let n = hi - lo;
    let fast = same && A::SIZE == 2 && A::EXP16 != 0;
    let mut i = 0;
    while i < n {
        if fast && i + BLOCK <= n {
            let (xa, yb) = (&xs[2 * i..2 * (i + BLOCK)], &ys[2 * i..2 * (i + BLOCK)]);
            if equal_block::<A>(xa, yb, lo + i, &mut r) {
                i += BLOCK;
                continue;
            }
            for k in 0..BLOCK {
                let j = i + k;
                step::<A, B>(
                    &xa[2 * k..2 * k + 2],
                    &yb[2 * k..2 * k + 2],
                    lo + j,
                    &tol,
                    same,
                    &mut r,
                );
            }
            i += BLOCK;
            continue;
        }
        let (ea, eb) = (
            &xs[i * A::SIZE..(i + 1) * A::SIZE],
            &ys[i * B::SIZE..(i + 1) * B::SIZE],
        );
        step::<A, B>(ea, eb, lo + i, &tol, same, &mut r);
        i += 1;
    }
    let mut acc = r.acc;
    if r.max_abs >= 0.0 {
        acc.max_abs = r.max_abs;
        acc.max_abs_at = Some(r.max_at);
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
    use super::{bucket, close_chunk, step, Bf16, Run};
    use crate::tolerance::Tolerance;

    /// The equal-block fast path gives what the element-by-element path gives, with equal
    /// blocks, blocks holding equal NaN / Inf bits, differing blocks and a ragged tail.
    #[test]
    fn equal_block_path_matches_the_element_path() {
        let n = 16 * 40 + 7;
        let mut state = 12345u64;
        let mut a = Vec::new();
        for _ in 0..n {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let bits = (((state >> 40) as u16) & 0x803f) | 0x3f80;
            a.extend_from_slice(&bits.to_le_bytes());
        }
        let mut b = a.clone();
        for i in [3usize, 16 * 7 + 2, 16 * 20, n - 2] {
            b[2 * i] ^= 1; // one ULP apart
        }
        for (i, bits) in [
            (16 * 11 + 5, 0x7fc0u16),
            (16 * 12 + 1, 0x7f80),
            (16 * 13, 0xff80),
        ] {
            a[2 * i..2 * i + 2].copy_from_slice(&bits.to_le_bytes());
            b[2 * i..2 * i + 2].copy_from_slice(&bits.to_le_bytes());
        }
        for nan_equal in [false, true] {
            let tol = Tolerance {
                rtol: 1e-3,
                atol: 1e-5,
                ulp: None,
                nan_equal,
            };
            let fast = close_chunk::<Bf16, Bf16>(&a, &b, 0, n, tol, true);
            let mut r = Run {
                acc: Default::default(),
                max_abs: -1.0,
                max_at: 0,
            };
            for i in 0..n {
                step::<Bf16, Bf16>(
                    &a[2 * i..2 * i + 2],
                    &b[2 * i..2 * i + 2],
                    i,
                    &tol,
                    true,
                    &mut r,
                );
            }
            let slow = r.acc;
            assert_eq!(fast.hist, slow.hist);
            assert_eq!(fast.mismatches, slow.mismatches);
            assert_eq!(fast.max_ulp, slow.max_ulp);
            assert_eq!((fast.max_abs, fast.max_abs_at), (r.max_abs, Some(r.max_at)));
            assert_eq!(fast.diff2, slow.diff2);
            assert!(
                (fast.ref2 - slow.ref2).abs() <= 1e-12 * slow.ref2,
                "{} vs {}",
                fast.ref2,
                slow.ref2
            );
            assert_eq!(fast.hist[8], 3, "NaN and the two infinities are non-finite");
            assert_eq!(fast.mismatches, u64::from(!nan_equal) + 4);
        }
    }

    #[test]
    fn buckets() {
        let got: Vec<usize> = [0u64, 1, 2, 3, 4, 5, 8, 9, 16, 17, 256, 257, u64::MAX]
            .iter()
            .map(|&u| bucket(u))
            .collect();
        assert_eq!(got, vec![0, 1, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7]);
    }
}
