//! The tolerances of a close comparison, as a user asks for them.

use crate::dtype::DType;
use serde::{Deserialize, Serialize};

/// Tolerances of a close comparison: |a − b| ≤ atol + rtol·|b|, or a ULP limit.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Tolerance {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Instead, at most this many units in the last place (same dtype only).
    pub ulp: Option<u64>,
    /// NaN compares equal to NaN.
    pub nan_equal: bool,
}

impl Tolerance {
    /// The tolerance a user asked for: `None` when no limit was given (each tensor then uses
    /// its own dtype's defaults); otherwise the limits given, the rest from `dtype`'s defaults
    /// (`torch.testing.assert_close`'s; 0 when the dtype is unknown).
    pub fn requested(
        dtype: Option<DType>,
        rtol: Option<f64>,
        atol: Option<f64>,
        ulp: Option<u64>,
        nan_equal: bool,
    ) -> Option<Tolerance> {
        if rtol.is_none() && atol.is_none() && ulp.is_none() {
            return None;
        }
        let (dr, da) = dtype.map_or((0.0, 0.0), DType::default_tolerance);
        Some(Tolerance {
            rtol: rtol.unwrap_or(dr),
            atol: atol.unwrap_or(da),
            ulp,
            nan_equal,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Tolerance;
    use crate::dtype::DType;

    #[test]
    fn requested_fills_missing_limits_from_the_dtype() {
        assert_eq!(
            Tolerance::requested(Some(DType::BF16), None, None, None, false),
            None
        );
        let t = Tolerance::requested(Some(DType::BF16), None, Some(0.5), None, true)
            .expect("one limit given");
        assert_eq!(
            (t.rtol, t.atol, t.ulp, t.nan_equal),
            (1.6e-2, 0.5, None, true)
        );
        let t = Tolerance::requested(None, None, None, Some(4), false).expect("ulp given");
        assert_eq!((t.rtol, t.atol, t.ulp), (0.0, 0.0, Some(4)));
    }
}
