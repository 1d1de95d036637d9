//! NVIDIA inputs beyond Kineto: Nsight Compute CSV (metric tables, units, separators) and
//! Nsight Systems exports.

use super::{fixture, kernelab, profile_json};

fn metrics_json(args: &[&str]) -> serde_json::Value {
    super::json_of("metrics", args)
}

#[test]
fn ncu_details_page_with_thousands_separators_and_short_rows() {
    let doc = metrics_json(&[fixture("ncu_recompute_metrics.csv").to_str().expect("p")]);
    let l = &doc["launches"][0];
    assert_eq!(l["kernel"], "recompute_w_u_fwd_kernel");
    // "dram__bytes_read.sum","byte","171,353,344"
    assert_eq!(l["metrics"]["dram__bytes_read.sum"]["value"], 171_353_344.0);
    assert_eq!(l["metrics"]["gpu__time_duration.sum"]["unit"], "ns");
    assert_eq!(l["metrics"]["gpu__time_duration.sum"]["value"], 82_432.0);
    assert_eq!(l["grid"], serde_json::json!([128, 32, 1]));
    // Section rows are 16 fields against a 20-field header; rule rows carry no metric.
    let doc = metrics_json(&[fixture("ncu_chunk_sections.csv").to_str().expect("p")]);
    assert_eq!(doc["launches"].as_array().expect("launches").len(), 3);
    assert_eq!(
        doc["launches"][0]["metrics"]["Elapsed Cycles"]["value"],
        14_259.0
    );
    assert_eq!(
        doc["launches"][0]["metrics"]["DRAM Frequency"]["value"],
        3_192_477_876.11
    );
}

#[test]
fn ncu_raw_page_uses_its_units_row() {
    let doc = metrics_json(&[fixture("ncu_recompute_raw.csv").to_str().expect("p")]);
    let m = &doc["launches"][0]["metrics"];
    assert_eq!(m["gpu__time_duration.sum"]["value"], 83_520.0);
    assert_eq!(m["launch__block_dim_x"]["unit"], "block");
    assert_eq!(
        m["launch__cluster_scheduling_policy"]["value"],
        "PolicySpread"
    );
    assert!(m.as_object().expect("metrics").len() > 200);
}

#[test]
fn ncu_cuda_11_4_details_page() {
    let f = fixture("ncu-csv-details-cuda11.4-bert_flashattn.csv");
    let doc = metrics_json(&[f.to_str().expect("p")]);
    let launches = doc["launches"].as_array().expect("launches");
    assert_eq!(launches.len(), 10);
    assert_eq!(launches[0]["metrics"]["dram__bytes.sum"]["value"], 384.0);
    assert_eq!(launches[0]["ids"]["Kernel Time"], "2023-May-09 15:22:21");
    // No duration was collected: profile refuses and says which metric to collect.
    let out = kernelab().arg("profile").arg(&f).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("gpu__time_duration.sum"));
}

#[test]
fn ncu_profile_has_no_timeline() {
    let doc = profile_json(&[fixture("ncu_chunk_sections.csv").to_str().expect("p")]);
    assert!(doc["summary"]["busy_ns"].is_null());
    assert!(doc["summary"]["memcpy_ns"].is_null());
    assert_eq!(doc["kernels"][0]["registers"]["max"], 116);
    // Static Shared Memory Per Block "0" + Dynamic Shared Memory Per Block "156,428".
    assert_eq!(doc["kernels"][0]["shared_bytes"]["max"], 156_428);
}

#[test]
fn nsys_export_versions_and_nvtx_phases() {
    let doc = profile_json(&[
        fixture("nsys-2022.2-a100-saxpy-mpi-cuda.sqlite")
            .to_str()
            .expect("p"),
        "--by-phase",
    ]);
    assert_eq!(
        doc["inputs"][0]["facts"]["nsys_product_version"],
        "2022.2.1.31"
    );
    // 22 NVTX push/pop ranges named "saxpy" enclose all five kernel launches.
    assert_eq!(doc["phases"][0]["phase"], "saxpy");
    assert_eq!(doc["phases"][0]["calls"], 5);
    let doc = profile_json(&[
        fixture("nsys-2024.5-a100-cloverleaf-cuda.sqlite")
            .to_str()
            .expect("p"),
        "--group",
        "none",
        "--top",
        "1",
    ]);
    assert_eq!(doc["inputs"][0]["facts"]["nsys_schema_version"], "3.13.2");
    // The top row of NVIDIA's cuda_gpu_kern_sum report on this file (docs/formats/nvidia.md §2.2).
    let r = &doc["kernels"][0];
    assert_eq!(
        (
            r["calls"].as_u64(),
            r["total_ns"].as_u64(),
            r["min_ns"].as_u64(),
            r["max_ns"].as_u64()
        ),
        (Some(10), Some(19_404_589), Some(1_929_242), Some(1_946_587))
    );
    assert_eq!(r["median_ns"], 1_941_003.0);
    assert!((r["stddev_ns"].as_f64().expect("sd") - 5133.7).abs() < 0.05);
}

#[test]
fn nsys_stats_csv_is_read_as_aggregates() {
    let dir = tempfile::tempdir().expect("tmp");
    let p = dir.path().join("report_cuda_gpu_kern_sum.csv");
    // Header and the first row of cuda_gpu_kern_sum on the 2022.2 fixture (docs/formats/nvidia.md §2.2).
    std::fs::write(
        &p,
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name\n100.0,88573480,5,17714696.0,17713960.0,17700808,17733416,12992.1,\"saxpy(double *, double *, double *, double, int)\"\n",
    )
    .expect("write");
    let doc = profile_json(&[p.to_str().expect("p")]);
    let r = &doc["kernels"][0];
    assert_eq!(r["name"], "saxpy");
    assert_eq!(
        (r["calls"].as_u64(), r["total_ns"].as_u64()),
        (Some(5), Some(88_573_480))
    );
    assert_eq!(r["median_ns"], 17_713_960.0);
    // The same figures from the SQLite export of the same run.
    let sql = profile_json(&[fixture("nsys-2022.2-a100-saxpy-mpi-cuda.sqlite")
        .to_str()
        .expect("p")]);
    assert_eq!(sql["kernels"][0]["total_ns"], r["total_ns"]);
    assert_eq!(sql["kernels"][0]["median_ns"], r["median_ns"]);
}
