//! The bodies of kernelab's fuzz targets, one public function per reader, so that each
//! `fuzz_targets/<name>.rs` and the dispatching `all` target share them. Every function takes
//! arbitrary bytes and must return without a panic, an abort, a hang or unbounded allocation.
//!
//! Readers that need a path (SQLite, samples files, bundles) get the input written to a file in
//! a per-process scratch folder that is removed again after each input.

use std::path::{Path, PathBuf};

/// Decompression limit given to readers that take one (the fuzzer's RSS limit is 2 GiB).
const MAX_DECOMPRESSED: u64 = 64 << 20;

/// A target's body.
pub type Target = fn(&[u8]);

/// Every target: its name and its function.
pub const TARGETS: &[(&str, Target)] = &[
    ("npy", npy),
    ("npz", npz),
    ("safetensors", safetensors),
    ("cubin", cubin),
    ("fatbin", fatbin),
    ("hsaco", hsaco),
    ("offload_bundle", offload_bundle),
    ("aks2", aks2),
    ("pe_hip_fat", pe_hip_fat),
    ("kineto", kineto),
    ("kineto_parallel", kineto_parallel),
    ("xplane", xplane),
    ("rocprofv3_json", rocprofv3_json),
    ("proton", proton),
    ("proton_trace", proton_trace),
    ("rocprof_csv", rocprof_csv),
    ("ncu_csv", ncu_csv),
    ("rocpd", rocpd),
    ("rocprof_compute_db", rocprof_compute_db),
    ("nsys", nsys),
    ("sqlite_leaf", sqlite_leaf),
    ("spec_toml", spec_toml),
    ("samples_jsonl", samples_jsonl),
    ("pairs", pairs),
    ("bundle_record", bundle_record),
    ("report_note", report_note),
    ("family_name", family_name),
    ("serve_spec", serve_spec),
    ("serve_samples", serve_samples),
    ("sse", sse),
    ("http_response", http_response),
    ("prometheus_metrics", prometheus_metrics),
    ("serve_trace", serve_trace),
    ("sweep_manifest", sweep_manifest),
    ("ceilings", ceilings),
    ("counter_csv", counter_csv),
    ("export_input", export_input),
    ("slurm_script", slurm_script),
    ("mcp_request", mcp_request),
    ("git_index", git_index),
    ("confined_path", confined_path),
    ("gate_config", gate_config),
    ("controls_ledger", controls_ledger),
];

/// The target function named `name`, if there is one.
pub fn target(name: &str) -> Option<Target> {
    TARGETS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// Reads tensors from `data` as `path` names them and runs the per-tensor checks on them.
fn tensors(path: &str, data: &[u8]) {
    let spec = kernelab_tensor::ReadSpec {
        max_decompressed: Some(MAX_DECOMPRESSED),
        ..kernelab_tensor::ReadSpec::default()
    };
    if let Ok(f) = kernelab_tensor::from_bytes(Path::new(path), data.to_vec(), &spec) {
        let _ = f.check_comparable();
        for t in &f.tensors {
            let _ = kernelab_tensor::finite(t);
            let _ = kernelab_tensor::content_hash(t);
        }
    }
}

/// The npy reader (inputs starting with the npy magic).
pub fn npy(data: &[u8]) {
    if data.starts_with(b"\x93NUMPY") {
        tensors("fuzz.npy", data);
    }
}

/// The npz reader (inputs starting with a zip local header).
pub fn npz(data: &[u8]) {
    if data.starts_with(b"PK\x03\x04") {
        tensors("fuzz.npz", data);
    }
}

/// The safetensors reader (inputs whose header starts at byte 8).
pub fn safetensors(data: &[u8]) {
    if data.get(8) == Some(&b'{') {
        tensors("fuzz.safetensors", data);
    }
}

/// The cubin reader and its `.nv.info` parser.
pub fn cubin(data: &[u8]) {
    let _ = kernelab_code::cubin::read("fuzz.cubin", data);
    let _ = kernelab_code::cubin::parse_nv_info(data, 0);
}

/// Fatbin containers (LZ4 and ZSTD entries) and loading their cubins.
pub fn fatbin(data: &[u8]) {
    let _ = kernelab_code::fatbin::entries_capped(data, MAX_DECOMPRESSED);
    let options = kernelab_code::LoadOptions {
        max_decompressed: Some(MAX_DECOMPRESSED),
        ..kernelab_code::LoadOptions::default()
    };
    let _ = kernelab_code::load_bytes("fuzz.fatbin", data, &options);
}

/// The HSACO reader (ELF, msgpack metadata note).
pub fn hsaco(data: &[u8]) {
    let _ = kernelab_code::hsaco::read("fuzz.co", data);
    let _ = kernelab_code::hsaco::function_ranges(data);
}

/// Clang offload bundles, compressed CCOB bundles included.
pub fn offload_bundle(data: &[u8]) {
    let _ = kernelab_code::offload_bundle::entries_capped(data, MAX_DECOMPRESSED);
    if let Some(b) = kernelab_code::offload_bundle::bundle_bytes(data) {
        let _ = kernelab_code::offload_bundle::entries_capped(&b, MAX_DECOMPRESSED);
    }
}

/// AOTriton `.aks2` archives: the directory and images inside the xz stream, then every HSACO
/// through the loader.
pub fn aks2(data: &[u8]) {
    let _ = kernelab_code::aks2::entries(data, MAX_DECOMPRESSED);
    let options = kernelab_code::LoadOptions {
        max_decompressed: Some(MAX_DECOMPRESSED),
        ..Default::default()
    };
    let _ = kernelab_code::load_bytes("fuzz.aks2", data, &options);
}

/// PE and COFF images with a `.hip_fat` / `.hip_fatbin` section, through the loader.
pub fn pe_hip_fat(data: &[u8]) {
    let options = kernelab_code::LoadOptions {
        max_decompressed: Some(MAX_DECOMPRESSED),
        ..Default::default()
    };
    let _ = kernelab_code::load_bytes("fuzz.dll", data, &options);
}

/// Ranks a profile that was read, per family and by phase, as `kernelab profile` does.
fn rank(profile: &kernelab_model::Profile) {
    let mut options = kernelab_trace::RankOptions::default();
    let _ = kernelab_trace::rank(profile, &options);
    options.by_phase = true;
    options.grouping = kernelab_model::Grouping::None;
    let _ = kernelab_trace::rank(profile, &options);
}

/// Reads `data` as `format` (host launches collected) and ranks what was read.
fn trace_as(data: &[u8], format: kernelab_trace::Format, metrics_only: bool) {
    let options = kernelab_trace::ReadOptions {
        host_launches: true,
        metrics_only,
        op_shapes: true,
        graphs: true,
        graph_operators: true,
        host_work: true,
        ..Default::default()
    };
    if let Ok(p) = kernelab_trace::read_bytes_as(data, format, &options) {
        rank(&p);
        let _ = kernelab_trace::launch_shapes(&p);
        let _ = kernelab_trace::graphs(&p);
    }
}

/// The Kineto (PyTorch profiler) JSON scanner.
pub fn kineto(data: &[u8]) {
    trace_as(data, kernelab_trace::Format::Kineto, false);
}

/// The Kineto reader on every core against the one-thread reader: the first byte sets the
/// chunk size (16 to 271 bytes, so cuts fall everywhere, inside strings too), the rest is the
/// trace. Both must read the same profile, or fail with the same error.
pub fn kineto_parallel(data: &[u8]) {
    let Some((&k, trace)) = data.split_first() else {
        return;
    };
    let Some(dir) = Scratch::new() else { return };
    let Some(path) = dir.file("fuzz.json", trace) else {
        return;
    };
    let options = kernelab_trace::ReadOptions {
        host_launches: true,
        op_shapes: true,
        graphs: true,
        graph_operators: true,
        host_work: true,
        ..Default::default()
    };
    let serial = kernelab_trace::read_bytes_as(trace, kernelab_trace::Format::Kineto, &options);
    let parallel = kernelab_trace::read_kineto_split(&path, 2, 16 + u64::from(k), &options);
    match (serial, parallel) {
        (Ok(a), Ok(b)) => {
            let names = |p: &kernelab_model::Profile| -> Vec<String> {
                (0..p.names.len())
                    .filter_map(|i| p.names.get(i as u32).cloned())
                    .collect()
            };
            assert_eq!(names(&a), names(&b), "names");
            assert!(a.dispatches == b.dispatches, "dispatches");
            assert_eq!(a.transfers, b.transfers, "transfers");
            assert_eq!(a.annotations, b.annotations, "annotations");
            assert_eq!(a.host_launches, b.host_launches, "host launches");
            assert_eq!(a.op_shapes, b.op_shapes, "op shapes");
            assert_eq!(a.graph_launches, b.graph_launches, "graph launches");
            assert_eq!(a.graph_captures, b.graph_captures, "graph captures");
            assert_eq!(a.kernel_launch_calls, b.kernel_launch_calls, "launch calls");
            assert_eq!(a.host_ops, b.host_ops, "host ops");
        }
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "errors"),
        (a, b) => panic!(
            "one-thread {:?} but parallel {:?}",
            a.err().map(|e| e.to_string()),
            b.err().map(|e| e.to_string())
        ),
    }
}

/// The XPlane protobuf reader (JAX / XLA profiles).
pub fn xplane(data: &[u8]) {
    trace_as(data, kernelab_trace::Format::Xplane, false);
}

/// The rocprofv3 `-f json` reader (`rocprofiler-sdk-tool`).
pub fn rocprofv3_json(data: &[u8]) {
    trace_as(data, kernelab_trace::Format::RocprofJson, false);
}

/// The Triton Proton hatchet JSON reader.
pub fn proton(data: &[u8]) {
    trace_as(data, kernelab_trace::Format::Proton, false);
}

/// Triton Proton's Chrome trace reader (`data="trace"`: the Kineto reader under its own name).
pub fn proton_trace(data: &[u8]) {
    trace_as(data, kernelab_trace::Format::ProtonTrace, false);
}

/// The rocprof CSV readers: the layout (kernel trace, kernel stats, `results.stats.csv`,
/// memory copy, API trace, kernel top, `nsys stats`) is detected from the header, as for a file.
pub fn rocprof_csv(data: &[u8]) {
    use kernelab_trace::Format;
    if let Ok(f @ (Format::RocprofCsv(_) | Format::NsysStatsCsv)) = kernelab_trace::detect(data) {
        trace_as(data, f, false)
    }
}

/// The Nsight Compute CSV reader, with and without durations required.
pub fn ncu_csv(data: &[u8]) {
    trace_as(data, kernelab_trace::Format::NcuCsv, false);
    trace_as(data, kernelab_trace::Format::NcuCsv, true);
}

/// A per-process scratch folder, removed (with what it holds) when dropped.
struct Scratch(PathBuf);

impl Scratch {
    /// Creates the scratch folder (empty).
    fn new() -> Option<Scratch> {
        let dir = std::env::temp_dir().join(format!("kernelab-fuzz-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).ok()?;
        Some(Scratch(dir))
    }
    /// Writes `data` to `name` inside the folder and returns its path.
    fn file(&self, name: &str, data: &[u8]) -> Option<PathBuf> {
        let p = self.0.join(name);
        std::fs::write(&p, data).ok()?;
        Some(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Reads a SQLite file through the profile reader (which tells rocpd from nsys by its tables).
fn sqlite(data: &[u8]) {
    if !data.starts_with(b"SQLite format 3\0") {
        return;
    }
    let Some(dir) = Scratch::new() else { return };
    let Some(path) = dir.file("fuzz.sqlite", data) else {
        return;
    };
    let options = kernelab_trace::ReadOptions {
        host_launches: true,
        ..Default::default()
    };
    let mut profile = kernelab_model::Profile::default();
    if kernelab_trace::read_file(&path, &options, &mut profile, &kernelab_trace::NoProgress).is_ok()
    {
        rank(&profile);
    }
    // Again for `--by-graph`: graph launches, captures, node ids and node creations.
    let options = kernelab_trace::ReadOptions {
        graphs: true,
        graph_operators: true,
        ..Default::default()
    };
    let mut profile = kernelab_model::Profile::default();
    if kernelab_trace::read_file(&path, &options, &mut profile, &kernelab_trace::NoProgress).is_ok()
    {
        let _ = kernelab_trace::graphs(&profile);
    }
}

/// The rocpd SQLite reader (seeded with rocpd databases).
pub fn rocpd(data: &[u8]) {
    sqlite(data);
}

/// The rocprof-compute analysis database readers (seeded with a cut of the MI350 fixture):
/// its dispatches, then its metric values, roofline points and peaks.
pub fn rocprof_compute_db(data: &[u8]) {
    sqlite(data);
    if !data.starts_with(b"SQLite format 3\0") {
        return;
    }
    let Some(dir) = Scratch::new() else { return };
    if let Some(path) = dir.file("fuzz.db", data) {
        let _ = kernelab_trace::read_compute_analysis(&path);
    }
}

/// The Nsight Systems SQLite export reader (seeded with nsys exports).
pub fn nsys(data: &[u8]) {
    sqlite(data);
}

/// Elements of a buffer filled from its initialiser here: enough to run every initialiser.
const FILL_ELEMENTS: usize = 16;

/// A SQLite table leaf page decoded as the Nsight Systems reader reads a kernel table from its
/// pages: the first byte picks the columns read (repeated, missing and past the record
/// included), the rest is the page.
pub fn sqlite_leaf(data: &[u8]) {
    let Some((&k, page)) = data.split_first() else {
        return;
    };
    let columns: &[Option<usize>] = match k % 4 {
        0 => &[
            Some(0),
            Some(1),
            Some(2),
            Some(5),
            None,
            Some(8),
            Some(14),
            Some(22),
        ],
        1 => &[Some(1), Some(0), Some(1)],
        2 => &[Some(40), None],
        _ => &[Some(0)],
    };
    let _ = kernelab_trace::sqlite_pages::decode_leaf(page, columns, usize::from(k >> 2));
}

/// A kernel spec (TOML): parsed and checked, every size expression evaluated, buffer sizes
/// computed with checked arithmetic and a few elements of each initialiser filled. Nothing
/// here allocates by a declared size (`args::buffers` would fill every buffer in host memory).
pub fn spec_toml(data: &[u8]) {
    use kernelab_launcher::spec::{eval, ArgKind, Init, Launch};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(spec) = kernelab_launcher::Spec::parse(text, Path::new("/nonexistent/kernelab-fuzz"))
    else {
        return;
    };
    let sizes = &spec.sizes;
    let launch = |l: &Launch| {
        for s in l.grid.iter().chain(&l.block).flatten().chain(&l.shared) {
            let _ = eval(s, sizes);
        }
        for s in l.values.values() {
            let _ = eval(s, sizes);
        }
    };
    launch(&spec.launch);
    launch(&spec.baseline.launch);
    launch(&spec.candidate.launch);
    for (i, a) in spec.args.iter().enumerate() {
        if let Some(v) = &a.value {
            let _ = eval(v, sizes);
        }
        let Ok(ArgKind::Buffer(dtype)) = ArgKind::of(a) else {
            continue;
        };
        let n = a.shape.iter().flatten().try_fold(1u64, |n, s| {
            let d = u64::try_from(eval(s, sizes).ok()?).ok()?;
            n.checked_mul(d)
        });
        let _bytes = n.and_then(|n| n.checked_mul(dtype.size() as u64));
        match &a.init {
            Some(Init::File { .. }) | None => {}
            Some(init) => {
                let n = n.map_or(0, |n| n.min(FILL_ELEMENTS as u64) as usize);
                let _ = kernelab_launcher::args::fill(init, dtype, n, a.seed.unwrap_or(i as u64));
            }
        }
    }
}

/// A kernelab samples file (JSONL records), read from a file.
pub fn samples_jsonl(data: &[u8]) {
    let Some(dir) = Scratch::new() else { return };
    if let Some(path) = dir.file("samples.jsonl", data) {
        if let Ok(records) = kernelab_runner::record::read(&path) {
            let _ = kernelab_runner::pairs_from(&records, false, "value");
        }
    }
}

/// Paired samples for `ab analyze` (samples JSONL, CSV or JSON), read and analysed.
pub fn pairs(data: &[u8]) {
    let Some(dir) = Scratch::new() else { return };
    let Some(path) = dir.file("pairs", data) else {
        return;
    };
    if let Ok(p) = kernelab_runner::pairs::read_pairs(&path, None) {
        let design = kernelab_stats::Design::default();
        if !p.main.is_empty() {
            let _ = kernelab_stats::analyze(&p.main, &design);
        }
        if !p.aa.is_empty() {
            let _ = kernelab_stats::aa_check(&p.aa, &design);
        }
    }
}

/// A small Kineto trace: three kernels of two families on one stream.
const NOTE_TRACE: &str = r#"{"traceEvents": [
{"ph": "X", "cat": "kernel", "name": "recompute_w_u_fwd_kernel", "pid": 0, "tid": 7, "ts": 10.0, "dur": 415.486, "args": {"device": 0, "stream": 7, "grid": [64, 32, 1], "block": [128, 1, 1]}},
{"ph": "X", "cat": "kernel", "name": "recompute_w_u_fwd_kernel", "pid": 0, "tid": 7, "ts": 500.0, "dur": 412.0, "args": {"device": 0, "stream": 7}},
{"ph": "X", "cat": "kernel", "name": "void add_kernel<float>(float*, int)", "pid": 0, "tid": 7, "ts": 1000.0, "dur": 54.88, "args": {"device": 0, "stream": 7}}
]}"#;

/// The bundle a note is audited against: the profile of [`NOTE_TRACE`] under the label `w8s2`.
fn note_bundle() -> Option<Vec<kernelab_report::bundle::Entry>> {
    let p = kernelab_trace::read_bytes_as(
        NOTE_TRACE.as_bytes(),
        kernelab_trace::Format::Kineto,
        &kernelab_trace::ReadOptions::default(),
    )
    .ok()?;
    let ranking = kernelab_trace::rank(&p, &kernelab_trace::RankOptions::default()).ok()?;
    let doc = kernelab_report::profile_document(&ranking, &p.sources, "family");
    let record = kernelab_report::bundle::RecordHead {
        schema_version: kernelab_model::SCHEMA_VERSION,
        kind: "profile".into(),
        label: "w8s2".into(),
        provenance: kernelab_model::Provenance::default(),
    };
    let result = serde_json::to_value(&doc.body).ok()?;
    let evidence = kernelab_report::documents::Evidence::read("profile", &result)?.ok()?;
    Some(vec![kernelab_report::bundle::Entry {
        path: PathBuf::from("0001-profile.json"),
        record,
        evidence,
    }])
}

/// `kernelab report check`: an arbitrary note (Markdown or plain text, read lossily as UTF-8)
/// audited against a one-record bundle, and the audit rendered.
pub fn report_note(data: &[u8]) {
    thread_local! {
        static BUNDLE: Option<Vec<kernelab_report::bundle::Entry>> = note_bundle();
    }
    let note = String::from_utf8_lossy(data);
    BUNDLE.with(|b| {
        for entries in [b.as_deref().unwrap_or(&[]), &[]] {
            let a = kernelab_report::audit::audit(&note, entries);
            let _ = kernelab_report::render(
                &kernelab_report::audit::audit_sections(&a),
                kernelab_report::OutputFormat::Markdown,
                None,
            );
        }
    });
}

/// An evidence bundle holding one record, read and rendered as `kernelab report` does.
pub fn bundle_record(data: &[u8]) {
    let Some(dir) = Scratch::new() else { return };
    if dir.file("0001-x.json", data).is_none() {
        return;
    }
    if let Ok(entries) = kernelab_report::bundle::read(&dir.0) {
        let report = kernelab_report::evidence(&entries);
        let _ = kernelab_report::pr_body(
            "fuzz",
            &report,
            kernelab_report::GITHUB_BODY_LIMIT,
            "appendix.md",
        );
        let _ = kernelab_report::evidence_html("fuzz", &report);
    }
}

/// Kernel-name normalisation and family keys on arbitrary UTF-8.
pub fn family_name(data: &[u8]) {
    let Ok(name) = std::str::from_utf8(data) else {
        return;
    };
    let _ = kernelab_model::normalize_kernel_name(name);
    let _ = kernelab_model::family_key(name);
}

/// The serve spec (TOML) parsed and validated, its points listed.
pub fn serve_spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = kernelab_runner::serve::spec::Spec::parse(text, Path::new("fuzz.toml")) {
        let _ = spec.points();
    }
}

/// A serve samples file (JSONL): its header's spec validated, every record read, analysed.
pub fn serve_samples(data: &[u8]) {
    let Some(dir) = Scratch::new() else { return };
    let Some(path) = dir.file("serve.jsonl", data) else {
        return;
    };
    if let Ok(records) = kernelab_runner::serve::samples::read(&path) {
        if let Some(kernelab_runner::serve::samples::ServeRecord::Header(h)) = records.first() {
            let _ = kernelab_runner::serve::analysis::analyse(&h.plan.spec, h.plan.start, &records);
        }
    }
}

/// A server's Prometheus text metrics, as `serve` scrapes them around each point: a scrape
/// differenced with itself has no preemptions.
pub fn prometheus_metrics(data: &[u8]) {
    use kernelab_runner::serve::server_metrics::{parse, PointMetrics};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(s) = parse(text) {
        let m = PointMetrics::between(&s, &s);
        assert!(m.preemptions.is_none_or(|p| p == 0.0), "{m:?}");
    }
}

/// A request trace for replay (CSV or JSONL): every request read has lengths in range and
/// times from 0 that never go back.
pub fn serve_trace(data: &[u8]) {
    use kernelab_runner::serve::trace::{parse, Take, TimeUnit};
    if let Ok(rows) = parse(data, TimeUnit::Auto, Take::All(10_000)) {
        assert!(rows.first().is_some_and(|r| r.at_s == 0.0));
        assert!(rows.windows(2).all(|w| w[1].at_s >= w[0].at_s));
        assert!(rows
            .iter()
            .all(|r| r.input_tokens >= 1 && r.output_tokens >= 1));
    }
}

/// The SSE parser fed the input split at the positions its first bytes choose; the events
/// must be the same as when it is fed whole.
pub fn sse(data: &[u8]) {
    use kernelab_runner::serve::client::SseParser;
    let (cuts, body) = data.split_at(data.len().min(4));
    let mut whole = SseParser::new(1 << 16);
    let all = whole.push(body);
    let mut split = SseParser::new(1 << 16);
    let mut got = Vec::new();
    let mut failed = false;
    let mut rest = body;
    for &c in cuts {
        let at = (c as usize).min(rest.len());
        let (a, b) = rest.split_at(at);
        match split.push(a) {
            Ok(e) => got.extend(e),
            Err(_) => failed = true,
        }
        rest = b;
    }
    match split.push(rest) {
        Ok(e) => got.extend(e),
        Err(_) => failed = true,
    }
    if let (Ok(all), false) = (all, failed) {
        assert_eq!(all, got, "split reads give the same events");
    }
}

/// A streamed HTTP/1.1 response as the serving client's own connections read it: the head
/// parsed, then the body decoded fed whole and fed split where the first byte says; both give
/// the same body (or both fail), never more bytes than came in.
pub fn http_response(data: &[u8]) {
    use kernelab_runner::serve::wire::{parse_head, Body};
    let Some((&cut, data)) = data.split_first() else {
        return;
    };
    let Ok(Some((head, used))) = parse_head(data) else {
        return;
    };
    let rest = &data[used..];
    let run = |parts: &[&[u8]]| {
        let mut body = Body::new(&head);
        let (mut raw, mut out) = (Vec::new(), Vec::new());
        for p in parts {
            raw.extend_from_slice(p);
            body.decode(&mut raw, &mut out).map_err(|e| e.message)?;
        }
        Ok::<_, String>((out, body.ended()))
    };
    let at = (cut as usize).min(rest.len());
    let whole = run(&[rest]);
    let split = run(&[&rest[..at], &rest[at..]]);
    assert_eq!(whole.is_ok(), split.is_ok(), "{whole:?} {split:?}");
    if let (Ok(w), Ok(s)) = (&whole, &split) {
        assert_eq!(w, s, "split reads give the same body");
        assert!(w.0.len() <= rest.len());
    }
}

/// A sweep file (TOML, tensor points only: no code objects are read), its points expanded and
/// the first few run when their files are in the scratch folder (the sweep file itself, or
/// missing: an error verdict).
pub fn sweep_manifest(data: &[u8]) {
    if data.windows(4).any(|w| w == b"spec") || data.windows(10).any(|w| w == b"build_dirs") {
        return;
    }
    let Some(dir) = Scratch::new() else { return };
    let Some(path) = dir.file("sweep.toml", data) else {
        return;
    };
    use kernelab_runner::sweep::{run_point, Sweep, MAX_POINTS};
    if let Ok(s) = Sweep::read(&path, Some(1 << 20)) {
        assert!(s.points.len() <= MAX_POINTS);
        let _ = s.ids();
        // Only points whose files stay in the scratch folder (no system files read).
        let inside = |f: &std::path::Path| {
            f.starts_with(&dir.0)
                && !f
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
        };
        for p in s.points.iter().take(4).filter(|p| {
            p.files.as_ref().is_some_and(|f| {
                inside(&f.baseline)
                    && inside(&f.candidate)
                    && f.repeats.iter().all(|r| inside(r))
                    && f.oracle.as_deref().is_none_or(inside)
            })
        }) {
            let _ = run_point(&s, p, "fuzz", &dir.0, None);
        }
    }
}

/// A ceilings document (JSON), its non-positive figures found, each family placed under it.
pub fn ceilings(data: &[u8]) {
    use kernelab_model::roofline::{place, Ceilings, Figure};
    let Ok(doc) = serde_json::from_slice::<kernelab_model::Document<Ceilings>>(data) else {
        return;
    };
    let c = doc.body;
    let _ = c.non_positive();
    let bw = c.bandwidth();
    for k in kernelab_model::roofline::CeilingKind::ALL {
        let p = place(
            &Figure::Value(1e9),
            &Figure::Value(1e6),
            1e-3,
            &c.used(k),
            &bw,
        );
        for f in [p.flop_per_s, p.byte_per_s, p.intensity, p.fraction] {
            assert!(
                f.value().is_none_or(f64::is_finite),
                "a placement is finite"
            );
        }
    }
}

/// A rocprofv3 counter_collection CSV, read, then the counter statistics over its rows.
pub fn counter_csv(data: &[u8]) {
    let Ok(rows) = kernelab_trace::read_counter_collection(data) else {
        return;
    };
    let samples: Vec<kernelab_model::counters::CounterSample> = rows
        .iter()
        .take(10_000)
        .enumerate()
        .map(|(i, r)| kernelab_model::counters::CounterSample {
            side: if i % 2 == 0 { "baseline" } else { "candidate" }.into(),
            kernel: r.kernel.clone(),
            metric: r.counter.clone(),
            unit: String::new(),
            repeat: i % 3,
            value: r.value,
        })
        .collect();
    let stats = kernelab_runner::counters::summary::stats(&samples, &[], 3);
    let _ = kernelab_runner::counters::summary::changes(&stats);
}

/// `export` of a samples file (JSONL, or gzip when it starts with the gzip magic) to Parquet.
pub fn export_input(data: &[u8]) {
    let Some(dir) = Scratch::new() else { return };
    let name = if data.starts_with(&[0x1f, 0x8b]) {
        "in.jsonl.gz"
    } else {
        "in.jsonl"
    };
    let Some(path) = dir.file(name, data) else {
        return;
    };
    let _ = kernelab_export::export(&dir.0.join("out"), &[path], false);
}

/// The Slurm batch script of arguments taken from the input's lines: either refused, or a
/// script of exactly its fixed lines (no argument starts a line of its own).
pub fn slurm_script(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.splitn(3, '\u{1}');
    let name = parts.next().unwrap_or("").to_string();
    let log_dir = parts.next().unwrap_or("").to_string();
    let argv: Vec<String> = parts
        .next()
        .unwrap_or("")
        .split('\u{2}')
        .map(str::to_string)
        .collect();
    let job = kernelab_runner::slurm::ArrayJob {
        script: "/x/s.sh".into(),
        log_dir: log_dir.into(),
        name,
        tasks: 1,
        throttle: None,
        argv,
        sbatch_args: Vec::new(),
    };
    if let Ok(s) = kernelab_runner::slurm::script_text(&job) {
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines.len() <= 4, "{s:?}");
        assert!(
            lines.last().is_some_and(|l| l.starts_with("exec ")),
            "{s:?}"
        );
        assert!(lines
            .iter()
            .skip(1)
            .take(lines.len().saturating_sub(2))
            .all(|l| l.starts_with("#SBATCH ")));
    }
}

/// A line of JSON-RPC as `kernelab mcp` reads it: refused with an error or passed on, never a
/// panic; a refusal is itself JSON-RPC with an error code. A progress line of a child and a
/// path under a scratch root are read the same way.
pub fn mcp_request(data: &[u8]) {
    if let Some(e) = kernelab_mcp::transport::refusal(data) {
        assert_eq!(e["jsonrpc"], "2.0");
        assert!(e["error"]["code"].is_i64(), "{e}");
    }
    let text = String::from_utf8_lossy(data);
    let _ = kernelab_mcp::exec::parse_progress(&text);
    let Some(dir) = Scratch::new() else { return };
    if let Ok(root) = kernelab_mcp::paths::Root::new(&dir.0) {
        if let Ok(p) = root.resolve(&text.replace('\0', "")) {
            assert!(p.starts_with(root.dir()), "{}", p.display());
        }
    }
}

/// The git index reader of provenance (and the pack-index lookup beside it).
pub fn git_index(data: &[u8]) {
    let _ = kernelab_runner::provenance::git::parse_index(data);
    let oid: [u8; 20] = std::array::from_fn(|i| data.get(i).copied().unwrap_or(0));
    let _ = kernelab_runner::provenance::git::pack_offset(data, &oid);
}

/// The scratch root the `confined_path` target confines this process to: `root/` holds a
/// file, a folder, and links out of it; `outside/secret` must never be read or changed.
fn confined_scratch() -> Option<&'static (PathBuf, PathBuf)> {
    static S: std::sync::OnceLock<Option<(PathBuf, PathBuf)>> = std::sync::OnceLock::new();
    S.get_or_init(|| {
        let base =
            std::env::temp_dir().join(format!("kernelab-fuzz-confine-{}", std::process::id()));
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(root.join("d/e")).ok()?;
        std::fs::create_dir_all(&outside).ok()?;
        std::fs::write(outside.join("secret"), b"SECRET").ok()?;
        std::fs::write(root.join("d/f"), b"inside").ok()?;
        let _ = std::os::unix::fs::symlink(&outside, root.join("out"));
        let _ = std::os::unix::fs::symlink("../outside/secret", root.join("rel"));
        let _ = std::os::unix::fs::symlink("d", root.join("in"));
        kernelab_model::confine_to(&root).ok()?;
        Some((root, outside))
    })
    .as_ref()
}

/// The confined file layer: the input is a path (relative to the root, or absolute); reading,
/// checking, listing, making folders and writing through it must never read the outside
/// secret or change anything outside the root.
pub fn confined_path(data: &[u8]) {
    use std::os::unix::ffi::OsStrExt;
    let Some((root, outside)) = confined_scratch() else {
        return;
    };
    let raw = std::ffi::OsStr::from_bytes(data.get(..data.len().min(512)).unwrap_or_default());
    if raw.as_bytes().contains(&0) {
        return;
    }
    let path = root.join(raw);
    if let Ok(b) = kernelab_model::read_regular(&path, 64) {
        assert_ne!(b, b"SECRET", "read outside the root through {path:?}");
    }
    let _ = kernelab_model::confined(&path);
    let _ = kernelab_model::list_dir(&path, 16);
    let _ = kernelab_model::lstat(&path);
    if data.first() == Some(&b'w') {
        let _ = kernelab_model::write_file(&path, b"w", false);
        let _ = kernelab_model::create_dir_all(&path);
    }
    let names: Vec<_> = std::fs::read_dir(outside)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert_eq!(
        names.len(),
        1,
        "something was made outside the root: {names:?}"
    );
    assert_eq!(
        std::fs::read(outside.join("secret")).unwrap_or_default(),
        b"SECRET"
    );
}

/// The gate's configuration (`.kernelab/gate.toml`): parsed and checked, or refused.
pub fn gate_config(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(c) = kernelab_commands::gate::config::Config::parse(text) {
            let _ = (c.threshold(), c.budget(), c.gated(), c.metric_names());
        }
    }
}

/// The controls ledger of `kernel run --controls` (JSON lines): its controls of a key, and the
/// noise floor they give.
pub fn controls_ledger(data: &[u8]) {
    use kernelab_commands::controls;
    if let Ok(text) = std::str::from_utf8(data) {
        let path = std::path::Path::new("controls.jsonl");
        if let Ok(none) = controls::parse(text, path, Some("")) {
            assert!(none.iter().all(|c| c.key.is_empty() && c.change.is_finite()));
        }
        if let Ok(all) = controls::parse(text, path, None) {
            assert!(all.iter().all(|c| c.change.is_finite()));
        }
        if let Some(key) = text.split('"').nth(3) {
            if let Ok(found) = controls::parse(text, path, Some(key)) {
                assert!(found.iter().all(|c| c.key == key));
                let _ = controls::floor(&found, key, path);
            }
        }
    }
}
