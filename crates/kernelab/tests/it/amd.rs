//! AMD inputs: every rocprofv3 kernel-trace layout, API and marker traces, legacy rocprof and
//! rocprof-compute files, cross-checked against other files written by the same tool run.

use super::{fixture, profile_json, shared};

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).expect("write");
    p.to_str().expect("utf-8").to_string()
}

#[test]
fn layout_a_16_columns_and_layout_c_22_columns() {
    let dir = tempfile::tempdir().expect("tmp");
    // Layout A header (SDK tags rocm-6.2.x); the row values are layout B's docs row minus its
    // Thread_Id and Dispatch_Id.
    let a = write(
        &dir,
        "a.csv",
        "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"Private_Segment_Size\",\"Group_Segment_Size\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"\n\"KERNEL_DISPATCH\",1,1,16,\"void addition_kernel<float>(float*, float const*, float const*, int, int)\",1451,8819330200067564,8819330200116308,0,0,64,1,1,1024,1024,1\n",
    );
    let doc = profile_json(&[&a]);
    assert_eq!(doc["kernels"][0]["total_ns"], 48_744);
    assert_eq!(doc["kernels"][0]["name"], "addition_kernel");
    assert!(
        doc["kernels"][0]["registers"].is_null(),
        "layout A has no register columns"
    );
    // Layout C: the row printed on the rocprofv3 kernel-naming-filtering docs page.
    let c = write(
        &dir,
        "c.csv",
        "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"LDS_Block_Size\",\"Scratch_Size\",\"VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"\n\"KERNEL_DISPATCH\",\"Agent 4\",1,1,852831,1,10,\"void addition_kernel<float>(float*, float const*, float const*, int, int)\",1,1551874061244694,1551874061255734,0,0,8,0,16,64,1,1,1024,1024,1\n",
    );
    let doc = profile_json(&[&c]);
    let r = &doc["kernels"][0];
    assert_eq!(r["total_ns"], 11_040);
    assert_eq!(
        (
            r["registers"]["max"].as_u64(),
            r["agprs"]["max"].as_u64(),
            r["sgprs"]["max"].as_u64()
        ),
        (Some(8), Some(0), Some(16))
    );
    assert_eq!(doc["summary"]["devices"][0], 0); // "Agent 4" is GPU 0
    assert!(doc["inputs"][0]["facts"]["layout"]
        .as_str()
        .expect("layout")
        .contains("22-column"));
}

#[test]
fn memory_copy_trace_is_kept_apart() {
    let doc = profile_json(&[fixture("rocprofv3_sdk0.5_memory_copy_trace.csv")
        .to_str()
        .expect("p")]);
    // (14955950239443 - 14955949675563) + (14955953315285 - 14955952733485) = 563880 + 581800
    assert_eq!(doc["summary"]["memcpy_ns"], 1_145_680);
    assert_eq!(doc["summary"]["memcpy_count"], 2);
    assert_eq!(doc["summary"]["kernel_count"], 0);
    assert!(doc["summary"]["busy_ns"].is_null());
}

#[test]
fn marker_ranges_attribute_kernels_through_their_launch_calls() {
    let dir = tempfile::tempdir().expect("tmp");
    let kernels = write(
        &dir,
        "kernel_trace.csv",
        "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\"KERNEL_DISPATCH\",1,1,\"prefill\",1,1000,1500\n\"KERNEL_DISPATCH\",1,1,\"decode\",2,2000,2100\n\"KERNEL_DISPATCH\",1,1,\"decode\",3,3000,3100\n",
    );
    let api = write(
        &dir,
        "hip_api_trace.csv",
        "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\"HIP_RUNTIME_API\",\"hipLaunchKernel\",7,7,1,900,950\n\"HIP_RUNTIME_API\",\"hipLaunchKernel\",7,7,2,1900,1950\n\"HIP_RUNTIME_API\",\"hipLaunchKernel\",7,8,3,2900,2950\n",
    );
    let markers = write(
        &dir,
        "marker_api_trace.csv",
        "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\"MARKER_CORE_API\",\"prefill phase\",7,7,10,800,1000\n\"MARKER_CORE_API\",\"decode phase\",7,7,11,1800,3500\n",
    );
    let doc = profile_json(&[&kernels, &api, &markers, "--by-phase"]);
    let phases = doc["phases"].as_array().expect("phases");
    let get = |n: &str| {
        phases
            .iter()
            .find(|p| p["phase"] == n)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(get("prefill phase")["total_ns"], 500);
    assert_eq!(get("decode phase")["total_ns"], 100);
    // Launched from thread 8, outside any range on that thread.
    assert_eq!(get("(no phase)")["total_ns"], 100);
}

#[test]
fn hip_runtime_trace_is_read_as_launch_calls() {
    let Some(api) = shared("amd/rocprofv3_sdk0.5-era_docs/hip_runtime_trace.csv") else {
        return;
    };
    let doc = profile_json(&[
        api.to_str().expect("p"),
        fixture("rocprofv3_sdk0.5_kernel_trace.csv")
            .to_str()
            .expect("p"),
    ]);
    assert_eq!(doc["inputs"][0]["format"], "rocprofv3-api-trace");
    let lines = std::fs::read_to_string(&api).expect("read").lines().count() as u64 - 1;
    assert_eq!(doc["inputs"][0]["facts"]["api_calls"].as_u64(), Some(lines));
    assert_eq!(doc["summary"]["kernel_count"], 7);
}

#[test]
fn legacy_rocprof_trace_agrees_with_its_stats_files() {
    let (Some(json), Some(stats)) = (
        shared("amd/rocprofv1_gfx942_bmm_stats/results.json"),
        shared("amd/rocprofv1_gfx942_bmm_stats/results.stats.csv"),
    ) else {
        return;
    };
    let trace = profile_json(&[json.to_str().expect("p")]);
    assert_eq!(trace["inputs"][0]["format"], "rocprof-chrome-trace");
    let from_stats = profile_json(&[stats.to_str().expect("p")]);
    // The same rocprof run wrote both files: per-kernel totals and calls must agree.
    assert_eq!(
        trace["kernels"][0]["name"],
        from_stats["kernels"][0]["name"]
    );
    assert_eq!(
        trace["kernels"][0]["total_ns"],
        from_stats["kernels"][0]["total_ns"]
    );
    assert_eq!(
        trace["kernels"][0]["calls"],
        from_stats["kernels"][0]["calls"]
    );
    // results.copy_stats.csv of the same run: 25180001 + 948544 ns in 3 copies.
    assert_eq!(trace["summary"]["memcpy_ns"], 25_180_001 + 948_544);
    assert_eq!(trace["summary"]["memcpy_count"], 3);
}

#[test]
fn rocprof_compute_kernel_top_has_medians() {
    let Some(top) = shared("amd/rocprof-compute_gfx942_rocm7.1_bmm1/pmc_kernel_top.csv") else {
        return;
    };
    let doc = profile_json(&[top.to_str().expect("p")]);
    let r = &doc["kernels"][0];
    assert_eq!(r["calls"], 150);
    assert_eq!(r["total_ns"], 4_358_035); // Sum(ns) 4358035.0703125, rounded
    assert_eq!(r["median_ns"].as_f64(), Some(28_900.382_812_5));
    assert!(r["min_ns"].is_null());
    assert_eq!(doc["inputs"][0]["format"], "rocprof-compute-kernel-top");
}

/// A real rocprofv3 `-f json` file (AMD-AGI/TraceLens, 8 × MI350X, one GPU traced): read by
/// content, every dispatch named from `kernel_symbols`. The figures were read independently by
/// `tests/oracle/profile_oracle.py` (Python `json`; the whole per-kernel check is in
/// `oracle.rs`): 43,915 dispatches of 80 kernels, 4,441,741,378 ns in all, and the NCCL kernel
/// on top with 1,310 calls and 4,158,756,678 ns.
#[test]
fn rocprofv3_json_of_a_mi350x_run_is_ranked() {
    let path = fixture("rocprofv3-json-rocm7-mi350x-908_results.json.gz");
    let doc = profile_json(&[path.to_str().expect("p"), "--group", "none"]);
    let s = &doc["summary"];
    assert_eq!(s["kernel_count"], 43_915);
    assert_eq!(s["distinct_kernels"], 80);
    assert_eq!(s["kernel_time_ns"], 4_441_741_378u64);
    assert_eq!(s["busy_ns"], 4_233_112_334u64);
    let top = &doc["kernels"][0];
    assert_eq!(
        top["name"],
        "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)"
    );
    assert_eq!(
        (top["calls"].as_u64(), top["total_ns"].as_u64()),
        (Some(1_310), Some(4_158_756_678))
    );
    let input = &doc["inputs"][0];
    assert_eq!(input["format"], "rocprofv3-json");
    let device = input["facts"]["device"].as_str().expect("device");
    assert!(
        device.starts_with("AMD Instinct MI350X (gfx950)"),
        "{device}"
    );
    assert_eq!(s["devices"][0], 0);
}
