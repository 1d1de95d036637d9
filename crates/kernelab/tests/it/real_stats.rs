//! Issue 15, items 4, 7 and 13: statistics files as real tools write them — legacy rocprof
//! kernel names with unquoted commas, host API / copy / domain statistics kept apart from kernel
//! time, and fractional rocprof-compute totals summed exactly.

use super::{profile_json, shared};

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let p = dir.path().join(name);
    std::fs::write(&p, text).expect("write");
    p.to_str().expect("utf-8 path").to_string()
}

/// The independent reading of a legacy stats line: the four numeric columns are the last
/// fields; everything before them, commas included, is the name.
fn split_from_right(line: &str) -> (String, u64, u64) {
    let parts: Vec<&str> = line.split(',').collect();
    let n = parts.len();
    let name = parts[..n - 4].join(",").trim_matches('"').to_string();
    (
        name,
        parts[n - 4].parse().expect("calls"),
        parts[n - 3].parse().expect("total"),
    )
}

const LEGACY: &str = "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n\
void Kokkos::Impl::launch<Kokkos::Impl::ParallelFor<loop(Kokkos::View<int**>, Kokkos::View<int*>)>, 1024u, 1u>(Kokkos::Impl::ParallelFor<int, int> const*),3,533601,177867,60.0\n\
\"quoted_kernel(float*, int)\",2,300000,150000,33.7\n\
plain_kernel,1,56789,56789,6.3\n";

#[test]
fn legacy_stats_names_with_unquoted_commas_are_read() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = write(&dir, "results.stats.csv", LEGACY);
    let doc = profile_json(&[&path, "--group", "none"]);
    let mut expected: Vec<(String, u64, u64)> =
        LEGACY.lines().skip(1).map(split_from_right).collect();
    expected.sort_by_key(|e| std::cmp::Reverse(e.2));
    let rows = doc["kernels"].as_array().expect("rows");
    assert_eq!(rows.len(), expected.len());
    for (row, (name, calls, total)) in rows.iter().zip(&expected) {
        assert_eq!(row["name"], name.as_str());
        assert_eq!(row["calls"], *calls);
        assert_eq!(row["total_ns"], *total);
    }
    assert_eq!(
        doc["summary"]["kernel_time_ns"],
        expected.iter().map(|e| e.2).sum::<u64>()
    );
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("1 rows had kernel names with unquoted commas"),
        "{notes}"
    );
}

#[test]
fn host_api_and_copy_stats_are_not_kernel_time() {
    let dir = tempfile::tempdir().expect("tmp");
    let header = "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n";
    let hip = format!(
        "{header}hipMemcpy,23,337619914,14679126,95.4\nhipLaunchKernel,12,5316060,443005,4.6\n"
    );
    let copy = format!("{header}CopyHostToDevice,10,5514590,551459,69.0\nCopyDeviceToHost,14,2447028,174787,30.6\nFillBuffer,6,27840,4640,0.4\n");
    let v3 = "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\",\"MinNs\",\"MaxNs\",\"StdDev\"\n";
    let domain = format!("{v3}\"HIP_RUNTIME_API\",40,900,22.5,90.0,1,100,3.0\n\"KERNEL_DISPATCH\",4,100,25.0,10.0,20,30,4.0\n");
    let api = format!("{v3}\"hipMalloc\",2,50,25.0,100.0,20,30,7.0\n");
    let paths = [
        write(&dir, "results.hip_stats.csv", &hip),
        write(&dir, "results.copy_stats.csv", &copy),
        write(&dir, "domain_stats.csv", &domain),
        write(&dir, "hip_api_stats.csv", &api),
    ];
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let doc = profile_json(&args);
    assert_eq!(doc["summary"]["kernel_time_ns"], 0);
    assert_eq!(doc["kernels"].as_array().map(Vec::len), Some(0));
    let formats: Vec<&str> = doc["inputs"]
        .as_array()
        .expect("inputs")
        .iter()
        .filter_map(|i| i["format"].as_str())
        .collect();
    assert_eq!(
        formats,
        [
            "rocprof-hip-stats",
            "rocprof-copy-stats",
            "rocprofv3-domain-stats",
            "rocprofv3-api-stats"
        ]
    );
    let acts = doc["activities"].as_array().expect("activities");
    let total = |kind: &str| -> u64 {
        acts.iter()
            .filter(|a| a["kind"] == kind)
            .filter_map(|a| a["total_ns"].as_u64())
            .sum()
    };
    // Independent: the TotalDurationNs column of each file, summed by hand above.
    assert_eq!(total("host_api"), 337_619_914 + 5_316_060 + 50);
    assert_eq!(total("copy"), 5_514_590 + 2_447_028 + 27_840);
    assert_eq!(total("domain"), 1000);
    assert_eq!(acts[0]["name"], "hipMemcpy");
    assert_eq!(acts[0]["calls"], 23);
    let out = super::kernelab()
        .arg("profile")
        .args(&args)
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("not kernel GPU time"), "{text}");
}

#[test]
fn fractional_totals_are_summed_exactly_and_rounded_once() {
    // Three variants of one family, each total ending in .4 ns: rounded one by one they sum
    // to 3 ns less than the exact sum rounded once.
    let dir = tempfile::tempdir().expect("tmp");
    let text = "Kernel_Name,Count,Sum(ns),Mean(ns),Median(ns),Pct\n\
gemm_kernel_1,1,1000.4,1000.4,1000.4,33.3\n\
gemm_kernel_2,1,2000.4,2000.4,2000.4,33.3\n\
gemm_kernel_3,1,3000.4,3000.4,3000.4,33.3\n";
    let path = write(&dir, "pmc_kernel_top.csv", text);
    let rules = write(
        &dir,
        "rules.toml",
        "[[family]]\nname = \"gemm\"\nmatch = \"^gemm_kernel\"\n",
    );
    let doc = profile_json(&[&path, "--rules", &rules]);
    // Independent: decimal sum of the Sum(ns) column, rounded once.
    let exact: f64 = [1000.4f64, 2000.4, 3000.4].iter().sum();
    assert_eq!(doc["kernels"][0]["total_ns"], exact.round() as u64);
    assert_eq!(doc["summary"]["kernel_time_ns"], 6001);
}

#[test]
fn kokkos_rocprof_v1_stats_from_a_public_repository() {
    let Some(dir) = shared("external/rocprof_v1") else {
        return;
    };
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("read");
    let stats = read("kokkos_6f0a1c4a_results.stats.csv");
    let lines: Vec<(String, u64, u64)> = stats.lines().skip(1).map(split_from_right).collect();
    let p = dir.join("kokkos_6f0a1c4a_results.stats.csv");
    let doc = profile_json(&[p.to_str().expect("p"), "--group", "none", "--top", "100"]);
    assert_eq!(
        doc["summary"]["kernel_time_ns"],
        lines.iter().map(|l| l.2).sum::<u64>()
    );
    assert_eq!(
        doc["summary"]["kernel_count"],
        lines.iter().map(|l| l.1).sum::<u64>()
    );
    assert_eq!(doc["kernels"].as_array().map(Vec::len), Some(lines.len()));
    for f in ["hip_stats", "copy_stats"] {
        let p = dir.join(format!("kokkos_6f0a1c4a_results.{f}.csv"));
        let text = read(&format!("kokkos_6f0a1c4a_results.{f}.csv"));
        let want: u64 = text.lines().skip(1).map(|l| split_from_right(l).2).sum();
        let doc = profile_json(&[p.to_str().expect("p")]);
        assert_eq!(doc["summary"]["kernel_time_ns"], 0, "{f}");
        let got: u64 = doc["activities"]
            .as_array()
            .expect("activities")
            .iter()
            .filter_map(|a| a["total_ns"].as_u64())
            .sum();
        assert_eq!(got, want, "{f}");
    }
}

/// Issue 26 item 1: the independent reading of a legacy stats file by Python's `csv` rules
/// (quoted names): (name, calls, total) per row.
fn csv_rows(text: &str) -> Vec<(String, u64, u64)> {
    text.lines()
        .skip(1)
        .filter(|l| l.starts_with('"'))
        .map(split_from_right)
        .collect()
}

const BARRIER_STATS: &str = "\"Name\",\"Calls\",\"TotalDurationNs\",\"AverageNs\",\"Percentage\"\n\
\"<barrier packet>\",40,8000000,200000,61.5\n\
\"gemm_kernel(float*, int)\",10,4000000,400000,30.8\n\
\"\"\"<barrier packet>\"\"\",2,1000,500,0.0\n\
\"<marker packet>\",3,3000,1000,0.0\n\
\"vector_add\",5,1000000,200000,7.7\n";

#[test]
fn issue26_barrier_and_marker_packets_are_queue_activity_not_kernels() {
    let dir = tempfile::tempdir().expect("tmp");
    let path = write(&dir, "results.stats.csv", BARRIER_STATS);
    let doc = profile_json(&[&path, "--group", "none"]);
    // Independent: the two kernel rows of the text above, by hand.
    assert_eq!(doc["summary"]["kernel_time_ns"], 4_000_000 + 1_000_000);
    assert_eq!(doc["summary"]["kernel_count"], 15);
    let rows = doc["kernels"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["name"], "gemm_kernel(float*, int)");
    assert!((rows[0]["share"].as_f64().expect("share") - 0.8).abs() < 1e-12);
    let queue: Vec<&serde_json::Value> = doc["activities"]
        .as_array()
        .expect("activities")
        .iter()
        .filter(|a| a["kind"] == "queue")
        .collect();
    // `"<barrier packet>"` with rocprof's own quotes kept is the same packet kind.
    assert_eq!(queue.len(), 2, "{queue:?}");
    assert_eq!(queue[0]["name"], "<barrier packet>");
    assert_eq!(queue[0]["calls"], 42);
    assert_eq!(queue[0]["total_ns"], 8_001_000);
    assert_eq!(queue[1]["name"], "<marker packet>");
    let notes = doc["notes"].to_string();
    assert!(
        notes.contains("45 barrier/marker packets (3 rows)"),
        "{notes}"
    );
    let out = super::kernelab()
        .args(["profile", &path])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("queue packets"), "{text}");
    assert!(text.contains("queue"), "{text}");
}

#[test]
fn issue26_legacy_chrome_trace_barrier_events_are_queue_activity() {
    // Both layouts rocprof's tblextr.py wrote: older ones put `"<barrier packet>"` events on
    // the `GPU<n>` process; newer ones on a `GPU Barriers<n>` process (pid 512 above).
    let trace = r#"{"traceEvents":[
{"args":{"name":"GPU0"},"ph":"M","pid":6,"name":"process_name"},
{"args":{"name":"GPU Barriers0"},"ph":"M","pid":518,"name":"process_name"},
{"ph":"X","name":"k1","pid":6,"tid":0,"ts":10,"dur":5,"args":{"BeginNs":"10000","EndNs":"15000"}},
{"ph":"X","name":"\"<barrier packet>\"","pid":6,"tid":0,"ts":20,"dur":2,"args":{"BeginNs":"20000","EndNs":"22000"}},
{"ph":"X","name":"<barrier packet>","pid":518,"tid":0,"ts":30,"dur":3,"args":{"BeginNs":"30000","EndNs":"33000"}},
{"ph":"X","name":"k1","pid":6,"tid":0,"ts":40,"dur":1,"args":{"BeginNs":"40000","EndNs":"41000"}}
]}"#;
    let dir = tempfile::tempdir().expect("tmp");
    let path = write(&dir, "results.json", trace);
    let doc = profile_json(&[&path, "--group", "none"]);
    assert_eq!(doc["summary"]["kernel_time_ns"], 6000);
    assert_eq!(doc["summary"]["kernel_count"], 2);
    let acts = doc["activities"].as_array().expect("activities");
    assert_eq!(acts.len(), 1, "{acts:?}");
    assert_eq!(acts[0]["kind"], "queue");
    assert_eq!(acts[0]["calls"], 2);
    assert_eq!(acts[0]["total_ns"], 5000);
}

#[test]
fn issue26_saltfish_mi300_stats_with_barrier_packets() {
    // anghostcici/saltfish @ 76a13266 : results.stats.csv (legacy `rocprof --stats`, gfx942 Tensile
    // kernels; no licence stated, so it stays in the shared folder).
    let Some(p) = shared("external/rocprof_v1/saltfish_76a13266_results.stats.csv") else {
        return;
    };
    let text = std::fs::read_to_string(&p).expect("read");
    let rows = csv_rows(&text);
    let (queue, kernels): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r.0 == "<barrier packet>");
    let doc = profile_json(&[p.to_str().expect("utf-8"), "--group", "none"]);
    let kernel_time: u64 = kernels.iter().map(|r| r.2).sum();
    // Python's csv module over the same file: 256,890,748,967 ns in 97 kernel rows.
    assert_eq!(kernel_time, 256_890_748_967);
    assert_eq!(doc["summary"]["kernel_time_ns"], kernel_time);
    assert_eq!(
        doc["summary"]["kernel_count"],
        kernels.iter().map(|r| r.1).sum::<u64>()
    );
    assert_eq!(doc["kernels"].as_array().map(Vec::len), Some(kernels.len()));
    let acts = doc["activities"].as_array().expect("activities");
    assert_eq!(acts[0]["kind"], "queue");
    assert_eq!(acts[0]["calls"], queue[0].1);
    assert_eq!(acts[0]["total_ns"], 142_976_988_030u64);
}
