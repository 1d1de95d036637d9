//! Roofline figures a rocprof-compute analysis database carries: the peaks its roofline
//! benchmark measured (`roofline_bench_extdata`) as ceilings, and each kernel's point
//! (`compute_kernel_roofline_data`: GFLOP/s and FLOP per HBM byte) placed under them as
//! stored, never recomputed from counts.

use kernelab_model::family_key;
use kernelab_model::roofline::{
    place, Ceiling, CeilingKind, Ceilings, DeviceIdentity, Figure, Measured, Placement, Roof,
};
use kernelab_trace::{ComputeAnalysis, ComputePoint};
use std::collections::BTreeMap;
use std::path::Path;

/// The ceilings of the database's roofline benchmark: HBM bandwidth (`HBMBw`), L2 (`L2Bw`),
/// FP32 on the vector units (`FP32Flops`) and FP16, BF16 and FP8 on the matrix units
/// (`MFMAF16Flops`, `MFMABF16Flops`, `MFMAF8Flops`), GB/s and GFLOP/s scaled to base units;
/// `None` when the database has no benchmark.
pub(super) fn ceilings(db: &ComputeAnalysis, path: &Path) -> Option<Ceilings> {
    if db.peaks.is_empty() {
        return None;
    }
    let kinds = [
        (CeilingKind::DramCopy, "HBMBw", "HBM bandwidth"),
        (CeilingKind::L2Read, "L2Bw", "L2 bandwidth"),
        (CeilingKind::Fp32Fma, "FP32Flops", "FP32 (vector) FLOP/s"),
        (CeilingKind::Bf16Tensor, "MFMABF16Flops", "BF16 MFMA FLOP/s"),
        (CeilingKind::Fp16Tensor, "MFMAF16Flops", "FP16 MFMA FLOP/s"),
        (CeilingKind::Fp8Tensor, "MFMAF8Flops", "FP8 MFMA FLOP/s"),
    ];
    let ceilings = kinds
        .iter()
        .map(|&(kind, key, what)| {
            let measured = db.peaks.get(key).map(|v| Measured {
                value: v * 1e9,
                method: format!(
                    "{what} measured by rocprof-compute's roofline benchmark on the profiled \
                     GPU ({key} in {}: compute_workload.roofline_bench_extdata)",
                    path.display()
                ),
            });
            Ceiling {
                kind,
                unit: kind.unit().to_string(),
                not_measured: measured
                    .is_none()
                    .then(|| format!("the database's roofline benchmark has no {key}")),
                measured,
                datasheet: None,
            }
        })
        .collect();
    Some(Ceilings {
        device: DeviceIdentity {
            name: db.device.clone().unwrap_or_else(|| "unknown".into()),
            ..DeviceIdentity::default()
        },
        ceilings,
        ..Ceilings::default()
    })
}

/// The roof the points run against: the data type the roofline was profiled for
/// (`roofline_data_type`), when it is one kernelab has a roof for; else why not.
pub(super) fn roof(db: &ComputeAnalysis) -> Result<Roof, String> {
    match db.roofline_data_types.as_slice() {
        [t] => match t.as_str() {
            "FP32" => Ok(Roof::Fp32),
            "FP16" => Ok(Roof::Fp16),
            "BF16" => Ok(Roof::Bf16),
            "FP8" => Ok(Roof::Fp8),
            other => Err(format!(
                "rocprof-compute's roofline data type is {other}: kernelab has no roof for it"
            )),
        },
        [] => Err("the database does not say the roofline's data type".into()),
        many => Err(format!(
            "rocprof-compute's roofline was asked for several data types ({}): no one roof",
            many.join(", ")
        )),
    }
}

/// Each family's points: the kernel names and their stored points, by family key.
pub(super) fn points(db: &ComputeAnalysis) -> BTreeMap<String, Vec<(String, ComputePoint)>> {
    let mut out: BTreeMap<String, Vec<(String, ComputePoint)>> = BTreeMap::new();
    for k in &db.kernels {
        if let Some(p) = &k.point {
            out.entry(family_key(&k.name))
                .or_default()
                .push((k.name.clone(), p.clone()));
        }
    }
    out
}

/// Places one stored point (GFLOP/s, FLOP per HBM byte) under `peak` and `bandwidth`: the
/// achieved rate and intensity as stored, byte/s = rate / intensity.
pub(super) fn place_point(p: &ComputePoint, peak: &Figure, bandwidth: &Figure) -> Placement {
    let unavailable = |why: &str| Figure::unavailable(why);
    let Some(gflops) = p.gflop_per_s.filter(|r| r.is_finite() && *r >= 0.0) else {
        let why = "rocprof-compute stored no performance (total_flops) for this kernel";
        return Placement {
            flop_per_s: unavailable(why),
            byte_per_s: unavailable(why),
            intensity: unavailable(why),
            fraction: unavailable(why),
            bound: None,
        };
    };
    let rate = gflops * 1e9;
    match p.ai_hbm.filter(|ai| ai.is_finite() && *ai > 0.0) {
        Some(ai) if rate > 0.0 => {
            // The FLOPs of one second and the HBM bytes they imply, placed as any family is;
            // the intensity shown is the stored one.
            let mut placed = place(
                &Figure::Value(rate),
                &Figure::Value(rate / ai),
                1.0,
                peak,
                bandwidth,
            );
            placed.intensity = Figure::Value(ai);
            placed
        }
        _ => {
            let why = format!(
                "rocprof-compute measured {gflops} GFLOP/s at {} FLOP per HBM byte: no FLOPs, \
                 so its point has no byte rate and no place under the roof",
                p.ai_hbm.map_or_else(|| "no".to_string(), |a| a.to_string())
            );
            Placement {
                flop_per_s: Figure::Value(rate),
                byte_per_s: Figure::unavailable(why.clone()),
                intensity: p
                    .ai_hbm
                    .map_or_else(|| Figure::unavailable(why.clone()), Figure::Value),
                fraction: Figure::unavailable(why),
                bound: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_keeps_its_rate_and_intensity_and_no_flops_is_no_place() {
        let v = Figure::Value;
        let p = ComputePoint {
            gflop_per_s: Some(468.1142857142857),
            ai_hbm: Some(0.49868738443275984),
            ..ComputePoint::default()
        };
        let placed = place_point(&p, &v(137_432.9e9), &v(4885.5e9));
        assert_eq!(placed.flop_per_s, v(468.1142857142857e9));
        assert_eq!(placed.intensity, v(0.49868738443275984));
        let bytes = placed.byte_per_s.value().expect("a byte rate");
        assert!((bytes - 468.1142857142857e9 / 0.49868738443275984).abs() < 1.0);
        // Memory-bound: 0.4987 × 4885.5 GB/s is far below the FP32 peak.
        let fraction = placed.fraction.value().expect("a fraction");
        assert!((fraction - 468.1142857142857 / (0.49868738443275984 * 4885.5)).abs() < 1e-9);
        let none = place_point(
            &ComputePoint {
                gflop_per_s: Some(0.0),
                ai_hbm: Some(0.0),
                ..ComputePoint::default()
            },
            &v(1e12),
            &v(1e12),
        );
        assert_eq!(none.flop_per_s, v(0.0));
        assert!(none.fraction.value().is_none() && none.bound.is_none());
    }
}
