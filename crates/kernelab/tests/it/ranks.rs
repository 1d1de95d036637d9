//! `kernelab profile --by-rank` (issue 26): several rocpd databases ranked together, with each
//! input's part. Two public rocprofv3 databases from MI300X (no licence stated: read from the
//! shared fixtures, skipped when absent); ground truth from SQLite itself:
//! `select count(*), sum(end - start) from kernels` gives (301, 2594734) and (151, 2604546).

use super::{kernelab, shared};

#[test]
fn two_rocpd_databases_ranked_together_with_each_ranks_part() {
    let (Some(a), Some(b)) = (
        shared("external/batched_gemm/bmm_20251230_0632_15_results.db"),
        shared("amd/rocpd_rocm7_gfx942_att_results.db"),
    ) else {
        return;
    };
    let out = kernelab()
        .args(["profile", "--by-rank", "--format", "json"])
        .arg(&a)
        .arg(&b)
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let ranks = v["ranks"].as_array().expect("ranks");
    assert_eq!(ranks.len(), 2);
    assert_eq!(ranks[0]["kernels"], 301);
    assert_eq!(ranks[0]["kernel_ns"], 2_594_734);
    assert_eq!(ranks[0]["rank"], "7c54742d4e55/15");
    assert_eq!(ranks[1]["kernels"], 151);
    assert_eq!(ranks[1]["kernel_ns"], 2_604_546);
    assert_eq!(ranks[1]["rank"], "37ca13315e70/28");
    let share = ranks[0]["share"].as_f64().expect("share");
    assert!((share - 2_594_734.0 / 5_199_280.0).abs() < 1e-12, "{share}");
    // Ranked together: the whole-trace figures are the sum of both.
    assert_eq!(v["summary"]["kernel_count"], 452);
    assert_eq!(v["summary"]["kernel_time_ns"], 5_199_280);
    assert_eq!(ranks[1]["top"][0][0], "ck_tile::kentry");
    // Without --by-rank, no `ranks` key.
    let out = kernelab()
        .args(["profile", "--format", "json"])
        .arg(&a)
        .output()
        .expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(v.get("ranks").is_none());
}
