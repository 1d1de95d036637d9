//! Datasheet peaks of common GPUs, with their sources: the ceilings used when nothing was
//! measured. Tensor figures are dense (no structured sparsity), FP32 accumulation where a
//! datasheet gives both; bandwidths are decimal (10¹² byte/s = 1 TB/s).

use crate::roofline::ceiling_kind::{CeilingKind, Quoted};

/// One device's datasheet peaks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Datasheet {
    /// The entry's name.
    pub name: &'static str,
    /// Lower-case substrings of which a device name (or architecture) must hold one.
    pub any_of: &'static [&'static str],
    /// Lower-case substrings it must not hold.
    pub none_of: &'static [&'static str],
    /// DRAM bandwidth, TB/s.
    pub dram_tbs: f64,
    /// FP32 (non-matrix) peak, TFLOP/s.
    pub fp32_tflops: f64,
    /// Dense BF16 matrix peak, TFLOP/s.
    pub bf16_tflops: Option<f64>,
    /// Dense FP16 matrix peak, TFLOP/s.
    pub fp16_tflops: Option<f64>,
    /// Dense FP8 matrix peak, TFLOP/s.
    pub fp8_tflops: Option<f64>,
    /// Where the figures come from.
    pub source: &'static str,
}

impl Datasheet {
    /// The quoted figure of one ceiling kind, when the datasheet gives it.
    pub fn quote(&self, kind: CeilingKind) -> Option<Quoted> {
        let value = match kind {
            CeilingKind::DramCopy | CeilingKind::DramRead => self.dram_tbs * 1e12,
            CeilingKind::Fp32Fma => self.fp32_tflops * 1e12,
            CeilingKind::Bf16Tensor => self.bf16_tflops? * 1e12,
            CeilingKind::Fp16Tensor => self.fp16_tflops? * 1e12,
            CeilingKind::Fp8Tensor => self.fp8_tflops? * 1e12,
            CeilingKind::L2Read | CeilingKind::LaunchOverhead => return None,
        };
        Some(Quoted {
            value,
            source: format!("{} datasheet: {}", self.name, self.source),
        })
    }
}

/// The table (first match wins, so the more specific names come first).
pub const DATASHEETS: &[Datasheet] = &[
    Datasheet {
        name: "NVIDIA H200 SXM",
        any_of: &["h200"],
        none_of: &["nvl"],
        dram_tbs: 4.8,
        fp32_tflops: 67.0,
        bf16_tflops: Some(989.4),
        fp16_tflops: Some(989.4),
        fp8_tflops: Some(1979.0),
        source: "NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/h200), SXM column; tensor figures halved from the 'with sparsity' ones",
    },
    Datasheet {
        name: "NVIDIA H100 PCIe",
        any_of: &["h100 pcie"],
        none_of: &[],
        dram_tbs: 2.0,
        fp32_tflops: 51.0,
        bf16_tflops: Some(756.0),
        fp16_tflops: Some(756.0),
        fp8_tflops: Some(1513.0),
        source: "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/h100), PCIe column; tensor figures halved from the 'with sparsity' ones",
    },
    Datasheet {
        name: "NVIDIA H100 SXM",
        any_of: &["h100"],
        none_of: &["pcie", "nvl"],
        dram_tbs: 3.35,
        fp32_tflops: 67.0,
        bf16_tflops: Some(989.4),
        fp16_tflops: Some(989.4),
        fp8_tflops: Some(1979.0),
        source: "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/h100), SXM column; tensor figures halved from the 'with sparsity' ones",
    },
    Datasheet {
        name: "NVIDIA B200",
        any_of: &["b200"],
        none_of: &[],
        dram_tbs: 8.0,
        fp32_tflops: 75.0,
        bf16_tflops: Some(2250.0),
        fp16_tflops: Some(2250.0),
        fp8_tflops: Some(4500.0),
        source: "NVIDIA HGX B200 specifications (nvidia.com/hgx), one GPU = 1/8 of the 8-GPU figures; tensor figures halved from the sparse ones",
    },
    Datasheet {
        name: "NVIDIA A100 SXM 80GB",
        any_of: &["a100"],
        none_of: &["pcie"],
        dram_tbs: 2.039,
        fp32_tflops: 19.5,
        bf16_tflops: Some(312.0),
        fp16_tflops: Some(312.0),
        fp8_tflops: None,
        source: "NVIDIA A100 Tensor Core GPU datasheet, 80GB SXM column (no FP8 on Ampere)",
    },
    Datasheet {
        name: "NVIDIA L40S",
        any_of: &["l40s"],
        none_of: &[],
        dram_tbs: 0.864,
        fp32_tflops: 91.6,
        bf16_tflops: Some(362.05),
        fp16_tflops: Some(362.05),
        fp8_tflops: Some(733.0),
        source: "NVIDIA L40S datasheet; tensor figures halved from the 'with sparsity' ones",
    },
    Datasheet {
        name: "NVIDIA RTX 6000 Ada Generation",
        any_of: &["rtx 6000 ada"],
        none_of: &[],
        dram_tbs: 0.96,
        fp32_tflops: 91.1,
        bf16_tflops: Some(364.2),
        fp16_tflops: Some(364.2),
        fp8_tflops: Some(728.5),
        source: "NVIDIA RTX 6000 Ada Generation datasheet; tensor figures halved from the 'with sparsity' ones",
    },
    Datasheet {
        name: "NVIDIA GeForce RTX 4090",
        any_of: &["rtx 4090"],
        none_of: &[],
        dram_tbs: 1.008,
        fp32_tflops: 82.6,
        bf16_tflops: Some(165.2),
        fp16_tflops: Some(165.2),
        fp8_tflops: Some(330.3),
        source: "NVIDIA Ada Lovelace architecture whitepaper, appendix A (dense, FP32 accumulate)",
    },
    Datasheet {
        name: "AMD Instinct MI355X",
        any_of: &["mi355"],
        none_of: &[],
        dram_tbs: 8.0,
        fp32_tflops: 157.3,
        bf16_tflops: Some(2500.0),
        fp16_tflops: Some(2500.0),
        fp8_tflops: Some(5000.0),
        source: "AMD Instinct MI355X product page (amd.com), dense figures as rounded there",
    },
    Datasheet {
        name: "AMD Instinct MI325X",
        any_of: &["mi325"],
        none_of: &[],
        dram_tbs: 6.0,
        fp32_tflops: 163.4,
        bf16_tflops: Some(1307.4),
        fp16_tflops: Some(1307.4),
        fp8_tflops: Some(2614.9),
        source: "AMD Instinct MI325X datasheet (amd.com), dense; FP32 is the matrix figure",
    },
    Datasheet {
        name: "AMD Instinct MI300X",
        any_of: &["mi300x", "mi300"],
        none_of: &["mi300a"],
        dram_tbs: 5.3,
        fp32_tflops: 163.4,
        bf16_tflops: Some(1307.4),
        fp16_tflops: Some(1307.4),
        fp8_tflops: Some(2614.9),
        source: "AMD Instinct MI300X datasheet (amd.com), dense; FP32 is the matrix figure",
    },
    Datasheet {
        name: "AMD Radeon 8060S (Strix Halo, gfx1151)",
        any_of: &["8060s", "gfx1151"],
        none_of: &[],
        dram_tbs: 0.256,
        fp32_tflops: 29.7,
        bf16_tflops: Some(59.4),
        fp16_tflops: Some(59.4),
        fp8_tflops: None,
        source: "derived from AMD's Ryzen AI Max+ 395 specifications: 40 CUs at 2.9 GHz; FP16/BF16 WMMA 512 FLOP/clock/CU, FP32 256 FLOP/clock/CU (dual issue); LPDDR5X-8000 on a 256-bit bus = 256 GB/s; RDNA 3.5 has no FP8 matrix instructions",
    },
    Datasheet {
        name: "AMD Radeon PRO W7900",
        any_of: &["w7900"],
        none_of: &[],
        dram_tbs: 0.864,
        fp32_tflops: 61.3,
        bf16_tflops: Some(122.6),
        fp16_tflops: Some(122.6),
        fp8_tflops: None,
        source: "AMD Radeon PRO W7900 specifications (amd.com)",
    },
];

/// The datasheet entry for a device name or architecture, when the table has one.
pub fn datasheet_for(device: &str) -> Option<&'static Datasheet> {
    let d = device.to_lowercase();
    DATASHEETS.iter().find(|s| {
        s.any_of.iter().any(|p| d.contains(p)) && !s.none_of.iter().any(|p| d.contains(p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_their_entries() {
        let name = |d: &str| datasheet_for(d).map(|s| s.name);
        assert_eq!(name("NVIDIA H200"), Some("NVIDIA H200 SXM"));
        assert_eq!(name("NVIDIA H100 80GB HBM3"), Some("NVIDIA H100 SXM"));
        assert_eq!(name("NVIDIA H100 PCIe"), Some("NVIDIA H100 PCIe"));
        assert_eq!(name("AMD Instinct MI300X"), Some("AMD Instinct MI300X"));
        assert_eq!(
            name("gfx1151"),
            Some("AMD Radeon 8060S (Strix Halo, gfx1151)")
        );
        assert_eq!(name("Tesla V100"), None);
        // Ridge points cross-checked by hand: H200 bf16 989.4 / 4.8 ≈ 206 FLOP/byte.
        let h200 = datasheet_for("NVIDIA H200").expect("h200");
        let ridge = h200.bf16_tflops.unwrap_or(0.0) / h200.dram_tbs;
        assert!((ridge - 206.1).abs() < 0.1, "{ridge}");
        // The 8060S figures are the products they claim to be.
        let s = datasheet_for("Radeon 8060S").expect("8060s");
        assert!((s.bf16_tflops.unwrap_or(0.0) - 40.0 * 2.9e9 * 512.0 / 1e12).abs() < 0.05);
        assert!((s.dram_tbs - 8000e6 * 32.0 / 1e12).abs() < 1e-9);
    }
}
