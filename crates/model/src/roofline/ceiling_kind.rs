//! Which ceiling, and the two ways a figure of it is known: measured here or quoted from a
//! datasheet. The ceilings document and the datasheet table both speak these.

use serde::{Deserialize, Serialize};

/// Which ceiling.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CeilingKind {
    /// DRAM bandwidth of a device-to-device copy (bytes read + written per second).
    DramCopy,
    /// DRAM bandwidth of a read-only pass (bytes read per second).
    DramRead,
    /// L2 read bandwidth (a buffer that fits in L2, read repeatedly).
    L2Read,
    /// FP32 FMA peak, FLOP/s (an FMA counts 2).
    Fp32Fma,
    /// Dense BF16 matrix peak, FLOP/s.
    Bf16Tensor,
    /// Dense FP16 matrix peak, FLOP/s.
    Fp16Tensor,
    /// Dense FP8 (e4m3) matrix peak, FLOP/s.
    Fp8Tensor,
    /// Time from one empty kernel launch to the next, seconds.
    LaunchOverhead,
}

impl CeilingKind {
    /// Every kind, in report order.
    pub const ALL: [CeilingKind; 8] = [
        CeilingKind::DramCopy,
        CeilingKind::DramRead,
        CeilingKind::L2Read,
        CeilingKind::Fp32Fma,
        CeilingKind::Bf16Tensor,
        CeilingKind::Fp16Tensor,
        CeilingKind::Fp8Tensor,
        CeilingKind::LaunchOverhead,
    ];
    /// The unit of its value.
    pub fn unit(self) -> &'static str {
        match self {
            CeilingKind::DramCopy | CeilingKind::DramRead | CeilingKind::L2Read => "byte/second",
            CeilingKind::LaunchOverhead => "second",
            _ => "flop/second",
        }
    }
    /// A short label.
    pub fn label(self) -> &'static str {
        match self {
            CeilingKind::DramCopy => "DRAM copy",
            CeilingKind::DramRead => "DRAM read",
            CeilingKind::L2Read => "L2 read",
            CeilingKind::Fp32Fma => "FP32 FMA",
            CeilingKind::Bf16Tensor => "BF16 matrix",
            CeilingKind::Fp16Tensor => "FP16 matrix",
            CeilingKind::Fp8Tensor => "FP8 matrix",
            CeilingKind::LaunchOverhead => "launch overhead",
        }
    }
}

/// A figure measured on this device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Measured {
    /// The value in the kind's unit.
    pub value: f64,
    /// How it was measured (kernel, sizes, repetitions, statistic).
    pub method: String,
}

/// A figure quoted from a datasheet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Quoted {
    /// The value in the kind's unit.
    pub value: f64,
    /// Where it comes from.
    pub source: String,
}
