//! Comparisons of tensors: bitwise, close (tolerances or ULPs), finiteness and content hashes.
//! Work is split into chunks of elements compared on all cores (rayon); memory stays constant.

use crate::dtype::DType;
use crate::fast::{self, Acc};
use crate::tensor::Tensor;
pub use crate::tolerance::Tolerance;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

const CHUNK: usize = 1 << 20;

/// An element value for reports: a number, or `NaN` / `inf` / `-inf` / `-0` spelled out.
pub fn show(x: f64) -> String {
    if x.is_nan() {
        "NaN".into()
    } else if x.is_infinite() {
        if x > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else if x == 0.0 && x.is_sign_negative() {
        "-0".into()
    } else {
        format!("{x}")
    }
}

/// Options of a bitwise comparison (both off by default).
#[derive(Clone, Copy, Debug, Default)]
pub struct BitwiseOptions {
    /// Treat +0 and −0 as equal.
    pub zero_equal: bool,
    /// Treat NaNs with different payloads as equal.
    pub nan_equal: bool,
    /// How many differing elements to list.
    pub first: usize,
}

/// One differing element.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Mismatch {
    /// Flat (C-order) index.
    pub flat: usize,
    /// Multi-index.
    pub index: Vec<usize>,
    /// Value in A.
    pub a: String,
    /// Value in B.
    pub b: String,
}

/// The result of a bitwise comparison.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BitwiseReport {
    /// Elements compared.
    pub elements: u64,
    /// Elements that differ.
    pub differing: u64,
    /// The first differing elements (by index).
    pub first: Vec<Mismatch>,
}

fn chunks(n: usize) -> impl ParallelIterator<Item = (usize, usize)> {
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(move |c| (c * CHUNK, ((c + 1) * CHUNK).min(n)))
}

fn is_zero(dt: DType, e: &[u8]) -> bool {
    let bits = dt.bits(e);
    let sign = 1u64 << (dt.size() * 8 - 1);
    bits & !sign == 0
}

/// Compares two tensors of the same dtype and element count byte for byte.
pub fn bitwise(a: &Tensor, b: &Tensor, opt: BitwiseOptions) -> BitwiseReport {
    let (dt, s) = (a.dtype, a.dtype.size());
    let (ab, bb) = (a.bytes(), b.bytes());
    let n = a.elements().min(b.elements());
    let float = dt.is_float();
    let (differing, mut first) = chunks(n)
        .map(|(lo, hi)| {
            let (x, y) = (&ab[lo * s..hi * s], &bb[lo * s..hi * s]);
            let equal = x == y;
            let release = || {
                a.release(lo * s, hi * s);
                b.release(lo * s, hi * s);
            };
            if equal {
                release();
                return (0u64, Vec::new());
            }
            let mut count = 0u64;
            let mut first = Vec::new();
            // Whole sub-blocks compare as one memcmp; only a differing one goes element by
            // element (a few scattered differences then cost almost nothing).
            const SUB: usize = 64;
            let m = hi - lo;
            let differing_elements = (0..m.div_ceil(SUB)).flat_map(|k| {
                let (i, end) = (k * SUB, ((k + 1) * SUB).min(m));
                let same = x[i * s..end * s] == y[i * s..end * s];
                (i..end).filter(move |_| !same)
            });
            for i in differing_elements {
                let (ea, eb) = (&x[i * s..(i + 1) * s], &y[i * s..(i + 1) * s]);
                if ea == eb {
                    continue;
                }
                if float && opt.zero_equal && is_zero(dt, ea) && is_zero(dt, eb) {
                    continue;
                }
                if float && opt.nan_equal && dt.value(ea).is_nan() && dt.value(eb).is_nan() {
                    continue;
                }
                count += 1;
                if first.len() < opt.first {
                    first.push(lo + i);
                }
            }
            release();
            (count, first)
        })
        .reduce(
            || (0, Vec::new()),
            |(c1, mut f1), (c2, f2)| {
                f1.extend(f2);
                (c1 + c2, f1)
            },
        );
    first.sort_unstable();
    first.truncate(opt.first);
    let first = first
        .into_iter()
        .map(|i| Mismatch {
            flat: i,
            index: a.index_of(i),
            a: show(dt.value(&ab[i * s..(i + 1) * s])),
            b: show(dt.value(&bb[i * s..(i + 1) * s])),
        })
        .collect();
    BitwiseReport {
        elements: n as u64,
        differing,
        first,
    }
}

/// ULP-distance histogram bucket bounds (inclusive upper bounds).
pub const ULP_BUCKETS: [(&str, u64); 8] = [
    ("0", 0),
    ("1", 1),
    ("2", 2),
    ("3-4", 4),
    ("5-8", 8),
    ("9-16", 16),
    ("17-256", 256),
    (">256", u64::MAX),
];

/// One bucket of the ULP-distance histogram.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UlpBucket {
    /// The distances it holds: `0`, `1`, `2`, `3-4`, …, `>256`, `non-finite`.
    pub ulps: String,
    /// Element pairs in it.
    pub count: u64,
}

/// The result of a close comparison (B is the reference).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CloseReport {
    /// Elements compared.
    pub elements: u64,
    /// Largest |a − b| over finite pairs; null (reason in `unavailable`) when it overflows.
    pub max_abs_err: Option<f64>,
    /// Where it is.
    pub max_abs_index: Option<Vec<usize>>,
    /// Largest |a − b| / |b| over finite pairs with b ≠ 0; null when it overflows.
    pub max_rel_err: Option<f64>,
    /// ‖a − b‖₂ / ‖b‖₂ over finite pairs; null when the reference's norm is 0 and the outputs
    /// differ, or it overflows.
    pub rel_l2_err: Option<f64>,
    /// Why each null error figure is unavailable, by field name (JSON never holds NaN or
    /// infinity).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub unavailable: std::collections::BTreeMap<String, String>,
    /// Elements outside the tolerance (NaN in either counts unless both are NaN and `nan_equal`).
    pub mismatches: u64,
    /// The tolerance used.
    pub tolerance: Tolerance,
    /// ULP-distance histogram (same dtype only); pairs with a non-finite value are counted under
    /// the bucket "non-finite".
    pub ulp_histogram: Option<Vec<UlpBucket>>,
    /// Largest ULP distance (same dtype only).
    pub max_ulp: Option<u64>,
}

/// The monomorphic chunk comparison for a dtype pair, when there is one.
type ChunkFn = fn(&[u8], &[u8], usize, usize, Tolerance, bool) -> Acc;

fn fast_path(a: DType, b: DType) -> Option<ChunkFn> {
    use fast::{close_chunk as c, Bf16, F16, F32, F64};
    Some(match (a, b) {
        (DType::BF16, DType::BF16) => c::<Bf16, Bf16>,
        (DType::F16, DType::F16) => c::<F16, F16>,
        (DType::F32, DType::F32) => c::<F32, F32>,
        (DType::F64, DType::F64) => c::<F64, F64>,
        (DType::BF16, DType::F32) => c::<Bf16, F32>,
        (DType::BF16, DType::F64) => c::<Bf16, F64>,
        (DType::F16, DType::F32) => c::<F16, F32>,
        (DType::F16, DType::F64) => c::<F16, F64>,
        (DType::F32, DType::F64) => c::<F32, F64>,
        _ => return None,
    })
}

/// Compares `a` against the reference `b` (dtypes may differ: an output against a
/// higher-precision oracle).
pub fn close(a: &Tensor, b: &Tensor, tol: Tolerance) -> CloseReport {
    let (da, db) = (a.dtype, b.dtype);
    let (sa, sb) = (da.size(), db.size());
    let (ab, bb) = (a.bytes(), b.bytes());
    let n = a.elements().min(b.elements());
    let same = da == db && da.is_float();
    let fast = fast_path(da, db);
    let acc = chunks(n)
        .map(|(lo, hi)| {
            if let Some(f) = fast {
                let acc = f(ab, bb, lo, hi, tol, same);
                a.release(lo * sa, hi * sa);
                b.release(lo * sb, hi * sb);
                return acc;
            }
            let mut acc = Acc::default();
            for i in lo..hi {
                let (ea, eb) = (&ab[i * sa..(i + 1) * sa], &bb[i * sb..(i + 1) * sb]);
                let (x, y) = (da.value(ea), db.value(eb));
                let finite = x.is_finite() && y.is_finite();
                let ulp = if same && finite {
                    Some((da.ulp_key(ea) - db.ulp_key(eb)).unsigned_abs())
                } else {
                    None
                };
                if same {
                    let bucket = match ulp {
                        None => 8,
                        Some(u) => ULP_BUCKETS.iter().position(|(_, hi)| u <= *hi).unwrap_or(7),
                    };
                    acc.hist[bucket] += 1;
                    acc.max_ulp = acc.max_ulp.max(ulp.unwrap_or(0));
                }
                let ok = if x.is_nan() || y.is_nan() {
                    tol.nan_equal && x.is_nan() && y.is_nan()
                } else if !finite {
                    x == y
                } else if let Some(limit) = tol.ulp.filter(|_| same) {
                    ulp.is_some_and(|u| u <= limit)
                } else {
                    (x - y).abs() <= tol.atol + tol.rtol * y.abs()
                };
                if !ok {
                    acc.mismatches += 1;
                }
                if finite {
                    let d = (x - y).abs();
                    if d > acc.max_abs || acc.max_abs_at.is_none() {
                        acc.max_abs = d;
                        acc.max_abs_at = Some(i);
                    }
                    if y != 0.0 {
                        acc.max_rel = acc.max_rel.max(d / y.abs());
                    }
                    acc.diff2 += d * d;
                    acc.ref2 += y * y;
                }
            }
            a.release(lo * sa, hi * sa);
            b.release(lo * sb, hi * sb);
            acc
        })
        .reduce(Acc::default, fast::merge_into);
    let hist = same.then(|| {
        let mut v: Vec<UlpBucket> = ULP_BUCKETS
            .iter()
            .zip(acc.hist)
            .map(|((l, _), c)| UlpBucket {
                ulps: l.to_string(),
                count: c,
            })
            .collect();
        v.push(UlpBucket {
            ulps: "non-finite".into(),
            count: acc.hist[8],
        });
        v
    });
    let mut unavailable = std::collections::BTreeMap::new();
    let mut finite = |name: &str, x: f64, why: &str| {
        if x.is_finite() {
            Some(x)
        } else {
            unavailable.insert(name.to_string(), why.to_string());
            None
        }
    };
    let overflow = "a difference overflows f64";
    let max_abs_err = finite("max_abs_err", acc.max_abs, overflow);
    let max_rel_err = finite("max_rel_err", acc.max_rel, overflow);
    let rel_l2_err = if acc.ref2 > 0.0 {
        finite("rel_l2_err", (acc.diff2 / acc.ref2).sqrt(), overflow)
    } else if acc.diff2 == 0.0 {
        Some(0.0)
    } else {
        finite(
            "rel_l2_err",
            f64::INFINITY,
            "the reference's norm is 0 and the outputs differ",
        )
    };
    CloseReport {
        elements: n as u64,
        max_abs_err,
        max_abs_index: acc.max_abs_at.map(|i| a.index_of(i)),
        max_rel_err,
        rel_l2_err,
        unavailable,
        mismatches: acc.mismatches,
        tolerance: tol,
        ulp_histogram: hist,
        max_ulp: same.then_some(acc.max_ulp),
    }
}

/// NaN and infinity counts of one tensor.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FiniteReport {
    /// Elements checked.
    pub elements: u64,
    /// NaNs.
    pub nan: u64,
    /// +inf.
    pub pos_inf: u64,
    /// −inf.
    pub neg_inf: u64,
    /// The first non-finite element.
    pub first: Option<Vec<usize>>,
}

impl FiniteReport {
    /// True when every element is finite.
    pub fn all_finite(&self) -> bool {
        self.nan + self.pos_inf + self.neg_inf == 0
    }
}

/// Counts non-finite elements.
pub fn finite(a: &Tensor) -> FiniteReport {
    let dt = a.dtype;
    if !dt.is_float() {
        return FiniteReport {
            elements: a.elements() as u64,
            ..FiniteReport::default()
        };
    }
    let s = dt.size();
    let bytes = a.bytes();
    let (nan, pos, neg, first) = chunks(a.elements())
        .map(|(lo, hi)| {
            let (mut nan, mut pos, mut neg, mut first) = (0u64, 0u64, 0u64, None);
            for i in lo..hi {
                let x = dt.value(&bytes[i * s..(i + 1) * s]);
                if x.is_finite() {
                    continue;
                }
                if x.is_nan() {
                    nan += 1;
                } else if x > 0.0 {
                    pos += 1;
                } else {
                    neg += 1;
                }
                first.get_or_insert(i);
            }
            (nan, pos, neg, first)
        })
        .reduce(
            || (0, 0, 0, None),
            |a, b| {
                (
                    a.0 + b.0,
                    a.1 + b.1,
                    a.2 + b.2,
                    match (a.3, b.3) {
                        (Some(x), Some(y)) => Some(x.min(y)),
                        (x, y) => x.or(y),
                    },
                )
            },
        );
    FiniteReport {
        elements: a.elements() as u64,
        nan,
        pos_inf: pos,
        neg_inf: neg,
        first: first.map(|i| a.index_of(i)),
    }
}

/// SHA-256 of a tensor's bytes (hex).
pub fn content_hash(a: &Tensor) -> String {
    kernelab_model::sha256_hex(a.bytes())
}

#[cfg(test)]
mod unavailable_tests {
    use super::*;

    fn f32s(name: &str, v: &[f32]) -> Tensor {
        let bytes = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        Tensor::owned(name, DType::F32, vec![v.len()], bytes)
    }

    #[test]
    fn an_error_figure_without_a_value_is_null_with_its_reason() {
        let tol = Tolerance {
            rtol: 0.0,
            atol: 0.0,
            ulp: None,
            nan_equal: false,
        };
        let r = close(&f32s("a", &[1.0, 2.0]), &f32s("b", &[0.0, 0.0]), tol);
        assert_eq!(r.rel_l2_err, None);
        assert_eq!(
            r.unavailable.get("rel_l2_err").map(String::as_str),
            Some("the reference's norm is 0 and the outputs differ")
        );
        assert_eq!(r.max_abs_err, Some(2.0));
        let text = serde_json::to_string(&r).expect("writes");
        assert!(
            text.contains(r#""rel_l2_err":null"#) && !text.contains("inf"),
            "{text}"
        );
        let back: CloseReport = serde_json::from_str(&text).expect("reads back");
        assert_eq!(back, r);
        // Both references zero and equal outputs: 0, not unavailable.
        let r = close(&f32s("a", &[0.0]), &f32s("b", &[0.0]), tol);
        assert_eq!(r.rel_l2_err, Some(0.0));
        assert!(r.unavailable.is_empty());
    }
}
