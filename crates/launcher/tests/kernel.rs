//! The kernel launcher without a GPU: spec parsing, size expressions, argument marshalling
//! against the real Triton metadata and cubins of tests/fixtures, and the gate and timing
//! logic against a host mock of the GPU API.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_launcher::args::{self, pack, Param};
use kernelab_launcher::gpu::{DevicePtr, EventId, Geometry, Gpu, GraphId, KernelId, Telemetry};
use kernelab_launcher::run;
use kernelab_launcher::run::POISON;
use kernelab_launcher::spec::{eval, Size, Spec};
use kernelab_launcher::{Error, Result};
use kernelab_stats::Verdict;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

fn spec_file(name: &str) -> Spec {
    Spec::read(&fixtures().join("kernel").join(name)).expect("fixture spec parses")
}

#[test]
fn size_expressions() {
    let sizes: BTreeMap<String, i64> = [("T", 8192), ("BT", 64), ("B", 2), ("HV", 32)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let e = |s: &str| eval(&Size::Expr(s.into()), &sizes);
    assert_eq!(e("cdiv(T, BT)").ok(), Some(128));
    assert_eq!(e("cdiv(T + 1, BT)").ok(), Some(129));
    assert_eq!(e("B*HV").ok(), Some(64));
    assert_eq!(e("(T - 2) / 4 % 7").ok(), Some((8190 / 4) % 7));
    assert_eq!(e("max(B, min(HV, 3)) * -2").ok(), Some(-6));
    assert!(e("T / 0").is_err());
    assert!(e("NOPE")
        .expect_err("must fail")
        .to_string()
        .contains("unknown size `NOPE`"));
    assert!(e("T +").is_err());
    assert!(e("T $ 2")
        .expect_err("must fail")
        .to_string()
        .contains("unexpected character"));
}

#[test]
fn spec_errors_name_the_problem() {
    let dir = Path::new(".");
    let base = "[baseline]\ncode = \"a.cubin\"\n[candidate]\ncode = \"b.cubin\"\n";
    assert!(Spec::parse(base, dir)
        .expect_err("must fail")
        .to_string()
        .contains("no [[arg]]"));
    let twice = format!("{base}[[arg]]\nname = \"x\"\ntype = \"f32\"\nshape = [4]\n[[arg]]\nname = \"x\"\ntype = \"i32\"\nvalue = 1\n");
    assert!(Spec::parse(&twice, dir)
        .expect_err("must fail")
        .to_string()
        .contains("listed twice"));
    let bad_type = format!("{base}[[arg]]\nname = \"x\"\ntype = \"f33\"\nshape = [4]\n");
    assert!(Spec::parse(&bad_type, dir)
        .expect_err("must fail")
        .to_string()
        .contains("unknown type `f33`"));
    let bad_size = format!("{base}[[arg]]\nname = \"x\"\ntype = \"f32\"\nshape = [\"Q\"]\n");
    assert!(Spec::parse(&bad_size, dir)
        .expect_err("must fail")
        .to_string()
        .contains("unknown size `Q`"));
    let unknown_key = format!(
        "{base}[[arg]]\nname = \"x\"\ntype = \"f32\"\nshape = [4]\nrole = \"out\"\ncolour = 1\n"
    );
    let e = Spec::parse(&unknown_key, dir)
        .expect_err("must fail")
        .to_string();
    assert!(e.starts_with("line 10: unknown field `colour`"), "{e}");
    // Read from a file, every error names it (with the line where TOML gives one).
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("k.toml");
    for (text, expected) in [
        (unknown_key.as_str(), "line 10: unknown field `colour`"),
        (bad_size.as_str(), "argument `x` shape: unknown size `Q`"),
    ] {
        std::fs::write(&file, text).expect("write");
        let e = Spec::read(&file).expect_err("must fail").to_string();
        assert!(
            e.starts_with(&format!("{}: {expected}", file.display())),
            "{e}"
        );
    }
}

#[test]
fn triton_metadata_sets_block_shared_and_trailing_pointers() {
    let spec = spec_file("recompute_w4s3_vs_w8s2.toml");
    let a = args::resolve(&spec, &spec.baseline, "baseline").expect("baseline resolves");
    let b = args::resolve(&spec, &spec.candidate, "candidate").expect("candidate resolves");
    // From recompute_w_u_fwd_kernel_w4s3.json: num_warps 4, shared 32768; w8s2: 8 and 24576.
    assert_eq!((a.block, a.shared), ([128, 1, 1], 32768));
    assert_eq!((b.block, b.shared), ([256, 1, 1], 24576));
    assert_eq!(a.grid, [128, 32, 1]);
    assert_eq!(a.symbol, "recompute_w_u_fwd_kernel");
    // 7 pointers, T as i32, then Triton 3.6's global and profile scratch (size 0: null).
    let expected: Vec<Param> = (0..5)
        .map(Param::Buffer)
        .chain([
            Param::Buffer(5),
            Param::Buffer(6),
            Param::Scalar(8192i32.to_le_bytes().to_vec()),
            Param::Null,
            Param::Null,
        ])
        .collect();
    assert_eq!(a.params, expected);
    let packed = pack(&a.params, &[1, 2, 3, 4, 5, 6, 7], &[]).expect("packs");
    assert_eq!(
        packed.iter().map(Vec::len).collect::<Vec<_>>(),
        [8, 8, 8, 8, 8, 8, 8, 4, 8, 8]
    );
    assert_eq!(packed[6], 7u64.to_le_bytes());
    assert_eq!(packed[9], [0; 8]);
}

#[test]
fn per_build_values_and_grids() {
    let spec = spec_file("copy_scalar_vs_vec4.toml");
    let a = args::resolve(&spec, &spec.baseline, "baseline").expect("resolves");
    let b = args::resolve(&spec, &spec.candidate, "candidate").expect("resolves");
    assert_eq!(
        a.params[2],
        Param::Scalar(67_108_864u64.to_le_bytes().to_vec())
    );
    assert_eq!(
        b.params[2],
        Param::Scalar(16_777_216u64.to_le_bytes().to_vec())
    );
    assert_eq!((a.grid[0], b.grid[0]), (262_144, 65_536));
    assert_eq!(
        (a.symbol.as_str(), b.symbol.as_str()),
        ("copy_scalar", "copy_vec4")
    );
}

#[test]
fn seeded_initialisers_are_reproducible_and_distributed() {
    use kernelab_launcher::spec::Init;
    use kernelab_tensor::DType;
    let n = 100_000;
    let x = args::fill(
        &Init::Normal {
            mean: 1.0,
            std: 2.0,
        },
        DType::F32,
        n,
        7,
    );
    assert_eq!(
        x,
        args::fill(
            &Init::Normal {
                mean: 1.0,
                std: 2.0
            },
            DType::F32,
            n,
            7
        )
    );
    assert_ne!(
        x,
        args::fill(
            &Init::Normal {
                mean: 1.0,
                std: 2.0
            },
            DType::F32,
            n,
            8
        )
    );
    let v: Vec<f64> = x
        .chunks(4)
        .map(|c| f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]])))
        .collect();
    let mean = v.iter().sum::<f64>() / n as f64;
    let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    assert!(
        (mean - 1.0).abs() < 0.03 && (sd - 2.0).abs() < 0.03,
        "mean {mean} sd {sd}"
    );
    let ints = args::fill(&Init::Int { low: -3, high: 3 }, DType::I32, 1000, 1);
    let iv: Vec<i32> = ints
        .chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    assert!(iv.iter().all(|v| (-3..=3).contains(v)) && iv.contains(&-3) && iv.contains(&3));
    let bf = args::fill(&Init::Constant { value: 1.5 }, DType::BF16, 2, 0);
    assert_eq!(bf, [0xC0, 0x3F, 0xC0, 0x3F]);
}

/// A host "GPU": memory in a map, kernels that copy `src` to `dst` (optionally wrongly), and
/// a clock that advances by a per-kernel cost at each launch.
#[derive(Default)]
struct Mock {
    mem: BTreeMap<DevicePtr, Vec<u8>>,
    next: DevicePtr,
    kernels: Vec<String>,
    graphs: Vec<(KernelId, Vec<Vec<u8>>)>,
    clock_us: f64,
    events: Vec<f64>,
    launches: usize,
}

/// A failure of the mock GPU.
fn mock_error(message: String) -> Error {
    Error::Gpu {
        call: "mock".into(),
        message,
    }
}

impl Mock {
    fn buf(&mut self, p: DevicePtr) -> Result<&mut Vec<u8>> {
        self.mem
            .get_mut(&p)
            .ok_or_else(|| mock_error(format!("bad pointer {p:#x}")))
    }
    fn ptr(b: &[u8]) -> DevicePtr {
        u64::from_le_bytes(b[..8].try_into().expect("8-byte pointer"))
    }
}

impl Gpu for Mock {
    fn device_name(&self) -> String {
        "mock".into()
    }
    fn l2_bytes(&self) -> Option<usize> {
        Some(1024)
    }
    fn alloc(&mut self, bytes: usize) -> Result<DevicePtr> {
        self.next += 0x1_0000;
        self.mem.insert(self.next, vec![0xAB; bytes]);
        Ok(self.next)
    }
    fn upload(&mut self, dst: DevicePtr, data: &[u8]) -> Result<()> {
        self.buf(dst)?.copy_from_slice(data);
        Ok(())
    }
    fn download(&mut self, src: DevicePtr, out: &mut [u8]) -> Result<()> {
        out.copy_from_slice(self.buf(src)?);
        Ok(())
    }
    fn fill(&mut self, dst: DevicePtr, value: u8, bytes: usize) -> Result<()> {
        self.buf(dst)?[..bytes].fill(value);
        Ok(())
    }
    fn load(&mut self, _image: &[u8], symbol: &str, _shared: u32) -> Result<KernelId> {
        self.kernels.push(symbol.to_string());
        Ok(KernelId(self.kernels.len() - 1))
    }
    fn param_sizes(&mut self, _k: KernelId) -> Option<Vec<usize>> {
        None
    }
    fn launch(&mut self, k: KernelId, _g: Geometry, params: &[Vec<u8>]) -> Result<()> {
        let name = self.kernels[k.0].clone();
        let src = self.buf(Mock::ptr(&params[0]))?.clone();
        let flip = (self.launches % 2) as u8;
        let dst = self.buf(Mock::ptr(&params[1]))?;
        match name.as_str() {
            "copy" | "slow_copy" => dst.copy_from_slice(&src),
            "half_copy" => dst[..src.len() / 2].copy_from_slice(&src[..src.len() / 2]),
            "flaky_copy" => {
                dst.copy_from_slice(&src);
                dst[0] ^= flip;
            }
            other => return Err(mock_error(format!("mock has no kernel {other}"))),
        }
        self.launches += 1;
        self.clock_us += if name == "slow_copy" { 12.0 } else { 10.0 };
        Ok(())
    }
    fn capture(&mut self, k: KernelId, _g: Geometry, params: &[Vec<u8>]) -> Result<GraphId> {
        self.graphs.push((k, params.to_vec()));
        Ok(GraphId(self.graphs.len() - 1))
    }
    fn replay(&mut self, graph: GraphId) -> Result<()> {
        let (k, p) = self.graphs[graph.0].clone();
        self.launch(
            k,
            Geometry {
                grid: [1; 3],
                block: [1; 3],
                shared: 0,
            },
            &p,
        )
    }
    fn record(&mut self) -> Result<EventId> {
        self.events.push(self.clock_us);
        Ok(EventId(self.events.len() - 1))
    }
    fn elapsed_ms(&mut self, start: EventId, end: EventId) -> Result<f64> {
        Ok((self.events[end.0] - self.events[start.0]) / 1000.0)
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn telemetry(&mut self) -> Telemetry {
        Telemetry {
            sm_mhz: Some(1980),
            temp_c: None,
            power_w: None,
        }
    }
}

fn mock_spec(baseline: &str, candidate: &str) -> Spec {
    let code = fixtures().join("code/copy_variants_sm90.cubin");
    let text = format!(
        r#"
[sizes]
N = 1000
[launch]
grid = ["cdiv(N, 256)"]
block = [256]
[baseline]
code = {code:?}
symbol = "{baseline}"
[candidate]
code = {code:?}
symbol = "{candidate}"
[[arg]]
name = "src"
type = "f32"
shape = ["N"]
[[arg]]
name = "dst"
type = "f32"
shape = ["N"]
role = "out"
[timing]
rounds = 10
batch = 4
samples = 3
warmup = 2
"#
    );
    Spec::parse(&text, Path::new(".")).expect("mock spec parses")
}

fn run_mock(baseline: &str, candidate: &str) -> kernelab_launcher::KernelRun {
    let mut gpu = Mock::default();
    let mut samples = 0;
    let r = run::run(
        &mut gpu,
        &mock_spec(baseline, candidate),
        &mut |_| {
            samples += 1;
            Ok(())
        },
        &mut |_, _| {},
    )
    .expect("mock run completes");
    if r.gates_passed() {
        assert_eq!(samples, 10 * 2 * 3, "every sample reported");
    }
    r
}

#[test]
fn equal_builds_pass_every_gate_and_time_as_same() {
    let r = run_mock("copy", "copy");
    assert!(r.gates_passed(), "{:?}", r.gates);
    let names: Vec<&str> = r.gates.iter().map(|g| g.name.as_str()).collect();
    assert!(names
        .iter()
        .any(|n| n.contains("baseline vs candidate bitwise")));
    assert!(names.iter().any(|n| n.contains("graph replay")));
    assert_eq!(names.iter().filter(|n| n.contains("repeat")).count(), 2);
    assert_eq!(r.batch, 4);
    assert_eq!(r.rounds.len(), 10);
    assert!(r
        .rounds
        .iter()
        .all(|x| (x.baseline_ns - 10_000.0).abs() < 1e-9 && x.change.ratio() == Some(1.0)));
    // ABBA: the order alternates.
    assert_ne!(r.rounds[0].order, r.rounds[1].order);
    assert_eq!(r.analysis.expect("timed").verdict, Verdict::Same);
}

#[test]
fn a_slower_candidate_is_called_slower() {
    let r = run_mock("copy", "slow_copy");
    assert!(r.gates_passed());
    let a = r.analysis.expect("timed");
    assert_eq!(a.verdict, Verdict::Slower);
    let ratio = a.ratio().expect("estimate");
    assert!((ratio - 1.2).abs() < 1e-9, "ratio {ratio}");
}

#[test]
fn unwritten_outputs_show_as_nan_and_stop_timing() {
    let r = run_mock("copy", "half_copy");
    let finite = r
        .gates
        .iter()
        .find(|g| g.name.starts_with("candidate outputs all finite"))
        .expect("gate");
    assert!(!finite.passed);
    assert_eq!(finite.detail, "500 of 1000 elements NaN or infinite");
    let bitwise = r
        .gates
        .iter()
        .find(|g| g.name == "baseline vs candidate bitwise")
        .expect("gate");
    assert!(
        !bitwise.passed && bitwise.detail.starts_with("500 of 1000 elements differ"),
        "{}",
        bitwise.detail
    );
    assert!(r.rounds.is_empty() && r.analysis.is_none());
    assert_eq!(POISON, 0xFF);
}

#[test]
fn nondeterministic_candidate_fails_the_repeat_gate() {
    let r = run_mock("copy", "flaky_copy");
    let repeat = r
        .gates
        .iter()
        .find(|g| g.name.contains("repeat 2"))
        .expect("gate");
    assert!(!repeat.passed);
    assert!(
        repeat.detail.starts_with("1 of 1000 elements differ"),
        "{}",
        repeat.detail
    );
}

fn write_npy_f32(path: &Path, bytes: &[u8]) {
    let n = bytes.len() / 4;
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({n},), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(bytes);
    std::fs::write(path, out).expect("write npy");
}

/// Runs a spec on a fresh mock.
fn run_spec(spec: &Spec) -> kernelab_launcher::KernelRun {
    let mut gpu = Mock::default();
    run::run(&mut gpu, spec, &mut |_| Ok(()), &mut |_, _| {}).expect("runs")
}

/// The oracle gate of a run.
fn oracle_gate(r: &kernelab_launcher::KernelRun) -> &kernelab_launcher::Gate {
    r.gates
        .iter()
        .find(|g| g.name.contains("vs oracle"))
        .expect("oracle gate")
}

#[test]
fn oracle_gate_uses_the_file_and_its_tolerance() {
    use kernelab_launcher::spec::Init;
    use kernelab_tensor::DType;
    let dir = tempfile::tempdir().expect("tempdir");
    // The mock copies src (normal, seed 1 = its position + 1) into dst: the exact oracle.
    let exact = args::fill(
        &Init::Normal {
            mean: 0.0,
            std: 1.0,
        },
        DType::F32,
        1000,
        1,
    );
    let oracle = dir.path().join("dst.npy");
    write_npy_f32(&oracle, &exact);
    let mut spec = mock_spec("copy", "copy");
    spec.gates.oracle = Some(oracle.clone());
    let r = run_spec(&spec);
    let g = oracle_gate(&r);
    assert!(g.passed, "{}", g.detail);
    assert!(
        g.detail
            .starts_with("0 of 1000 elements outside; max abs error 0"),
        "{}",
        g.detail
    );
    // Shift every value by 0.01: outside f32's default tolerance, inside atol = 0.02.
    let shifted: Vec<u8> = exact
        .chunks(4)
        .flat_map(|c| (f32::from_le_bytes([c[0], c[1], c[2], c[3]]) + 0.01).to_le_bytes())
        .collect();
    write_npy_f32(&oracle, &shifted);
    let r = run_spec(&spec);
    let g = oracle_gate(&r);
    assert!(
        !g.passed && g.detail.starts_with("1000 of 1000 elements outside"),
        "{}",
        g.detail
    );
    assert!(r.analysis.is_none(), "no timing after a failed gate");
    spec.gates.atol = Some(0.02);
    let r = run_spec(&spec);
    assert!(r.gates_passed(), "{:?}", r.gates);
}

#[test]
fn float_scalars_and_file_initialisers() {
    use kernelab_launcher::spec::Init;
    use kernelab_tensor::DType;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = args::fill(
        &Init::Uniform {
            low: -1.0,
            high: 1.0,
        },
        DType::F32,
        6,
        3,
    );
    write_npy_f32(&dir.path().join("x.npy"), &data);
    let text = r#"
[launch]
symbol = "k"
grid = [1]
block = [32]
[baseline]
code = "a.cubin"
[candidate]
code = "a.cubin"
values = { scale = 0.25 }
[[arg]]
name = "x"
type = "f32"
shape = [2, 3]
init = { kind = "file", path = "x.npy" }
[[arg]]
name = "scale"
type = "f32"
value = 0.125
[[arg]]
name = "n"
type = "i64"
value = 6
"#;
    let spec = Spec::parse(text, dir.path()).expect("parses");
    let bufs = args::buffers(&spec).expect("buffers");
    assert_eq!(
        bufs[0].init.as_deref(),
        Some(&data[..]),
        "the file's bytes, unchanged"
    );
    let a = args::resolve(&spec, &spec.baseline, "baseline").expect("resolves");
    let b = args::resolve(&spec, &spec.candidate, "candidate").expect("resolves");
    assert_eq!(a.params[1], Param::Scalar(0.125f32.to_le_bytes().to_vec()));
    assert_eq!(b.params[1], Param::Scalar(0.25f32.to_le_bytes().to_vec()));
    assert_eq!(a.params[2], Param::Scalar(6i64.to_le_bytes().to_vec()));
    // A float for an integer scalar, and a file of the wrong size, are refused by name.
    let bad = text.replace("value = 6", "value = 6.5");
    let spec = Spec::parse(&bad, dir.path()).expect("parses");
    let e = args::resolve(&spec, &spec.baseline, "baseline")
        .expect_err("must fail")
        .to_string();
    assert!(
        e.contains("scalar `n`") && e.contains("expected an integer"),
        "{e}"
    );
    let wrong = text.replace("shape = [2, 3]", "shape = [7]");
    let spec = Spec::parse(&wrong, dir.path()).expect("parses");
    let e = args::buffers(&spec).expect_err("must fail").to_string();
    assert!(
        e.contains("x.npy") && e.contains("6 elements") && e.contains("with 7"),
        "{e}"
    );
}

#[test]
fn a_work_model_gives_achieved_rates_at_the_median_round() {
    use kernelab_launcher::spec::Work;
    let mut spec = mock_spec("copy", "slow_copy");
    // N = 1000 floats read and written: 8 N bytes; one FLOP per element for the arithmetic.
    spec.work = Some(Work {
        flops: Some(Size::Expr("N".into())),
        bytes: Some(Size::Expr("2 * 4 * N".into())),
        roof: None,
    });
    let r = run_spec(&spec);
    let w = r.work.expect("a work model gives achieved rates");
    assert_eq!((w.flops, w.bytes), (Some(1000.0), Some(8000.0)));
    // The mock's copy takes 10 µs a launch, slow_copy 12 µs.
    let close = |a: Option<f64>, b: f64| a.is_some_and(|a| (a - b).abs() <= 1e-9 * b);
    assert!(close(w.baseline_byte_per_s, 8000.0 / 10e-6), "{w:?}");
    assert!(close(w.candidate_byte_per_s, 8000.0 / 12e-6), "{w:?}");
    assert!(close(w.baseline_flop_per_s, 1000.0 / 10e-6), "{w:?}");
    // A size the model names but the spec lacks is an error naming it.
    spec.work = Some(Work {
        flops: None,
        bytes: Some(Size::Expr("4 * Q".into())),
        roof: None,
    });
    let e = spec
        .work_per_launch()
        .expect_err("unknown size")
        .to_string();
    assert!(
        e.contains("work.bytes") && e.contains("unknown size `Q`"),
        "{e}"
    );
    // Without [work], no rates (never a 0).
    spec.work = None;
    assert!(run_spec(&spec).work.is_none());
}

/// Issue 26: a build whose modelled bytes over its timed launch beat the device's bandwidth is
/// a timing or model error (work skipped, results replayed), not a speedup.
#[test]
fn a_build_beating_the_roof_is_flagged_as_a_timing_or_model_error() {
    use kernelab_launcher::spec::Work;
    use kernelab_model::roofline::{Ceilings, Roof};
    let mut spec = mock_spec("copy", "slow_copy");
    // 8·N bytes claimed as 8·10⁹ bytes per launch: 800 TB/s at the mock's 10 µs, far above an
    // H200's 4.8 TB/s; 12 µs for the candidate, also above.
    spec.work = Some(Work {
        flops: Some(Size::Expr("N".into())),
        bytes: Some(Size::Expr("8 * N * 1000000".into())),
        roof: Some(Roof::Bf16),
    });
    let r = run_spec(&spec);
    let w = r.work.expect("rates");
    let h200 = Ceilings::from_datasheet("H200").expect("a datasheet entry");
    let flags = kernelab_model::kernel_run::above_roof(&w, &h200, Some(Roof::Bf16), "datasheet");
    assert_eq!(flags.len(), 2, "{flags:?}");
    assert!(
        flags[0].starts_with("baseline: 800000.0 GB/s is above the DRAM bandwidth 4800.0 GB/s"),
        "{flags:?}"
    );
    assert!(flags[1].contains("timing error"), "{flags:?}");
    assert!(flags[1].contains("not a speedup"), "{flags:?}");
    // The honest model (8·N bytes, N FLOPs) is far under every roof: nothing flagged.
    spec.work = Some(Work {
        flops: Some(Size::Expr("N".into())),
        bytes: Some(Size::Expr("8 * N".into())),
        roof: None,
    });
    let w = run_spec(&spec).work.expect("rates");
    assert!(kernelab_model::kernel_run::above_roof(&w, &h200, None, "datasheet").is_empty());
}

/// A spec of two builds over the buffers `src`, `dst` and the scalars `n`, `stride`, with
/// `extra` appended to the `[candidate]` table.
fn own_args_spec(extra: &str) -> std::result::Result<Spec, Error> {
    own_args_spec_n(extra, "i32")
}

/// [`own_args_spec`] with `n` of type `n_type`.
fn own_args_spec_n(extra: &str, n_type: &str) -> std::result::Result<Spec, Error> {
    let code = fixtures().join("code/copy_variants_sm90.cubin");
    let text = format!(
        r#"
[sizes]
N = 1000
[launch]
grid = ["cdiv(N, 256)"]
block = [256]
[baseline]
code = {code:?}
symbol = "copy_scalar"
args = ["src", "dst", "n"]
[candidate]
code = {code:?}
symbol = "copy_scalar"
{extra}
[[arg]]
name = "src"
type = "f32"
shape = ["N"]
[[arg]]
name = "dst"
type = "f32"
shape = ["N"]
role = "out"
[[arg]]
name = "n"
type = "{n_type}"
value = "N"
[[arg]]
name = "stride"
type = "i64"
value = 4
"#
    );
    Spec::parse(&text, Path::new("."))
}

#[test]
fn a_build_gives_its_own_argument_list() {
    let spec = own_args_spec(r#"args = ["stride", "dst", "src", "n"]"#).expect("parses");
    let a = args::resolve(&spec, &spec.baseline, "baseline").expect("resolves");
    let b = args::resolve(&spec, &spec.candidate, "candidate").expect("resolves");
    let n = Param::Scalar(1000i32.to_le_bytes().to_vec());
    assert_eq!(a.params, [Param::Buffer(0), Param::Buffer(1), n.clone()]);
    assert_eq!(
        b.params,
        [
            Param::Scalar(4i64.to_le_bytes().to_vec()),
            Param::Buffer(1),
            Param::Buffer(0),
            n
        ]
    );
    // The dry run holds each build's list against the kernel's own parameters in the cubin
    // (copy_scalar takes three 8-byte parameters): the baseline's 4-byte `n` is refused,
    // naming both lists.
    let e = kernelab_launcher::plan::plan(&spec).expect_err("the cubin's parameters differ");
    assert!(
        e.to_string().contains(
            "kernel `copy_scalar` takes 3 parameters of sizes [8, 8, 8] bytes; the spec gives 3 \
             of sizes [8, 8, 4]"
        ),
        "{e}"
    );
    // Lists the cubin agrees with: the dry run names each build's own; the buffers stay
    // shared.
    let spec = own_args_spec_n(r#"args = ["dst", "src", "stride"]"#, "i64").expect("parses");
    let p = kernelab_launcher::plan::plan(&spec).expect("plans");
    assert_eq!(p.builds[0].params, ["src", "dst", "8-byte scalar"]);
    assert_eq!(p.builds[1].params, ["dst", "src", "8-byte scalar"]);
    assert_eq!(p.buffers.len(), 2);
    // Without its own list, a build takes every [[arg]] in order.
    let all = own_args_spec("").expect("parses");
    let c = args::resolve(&all, &all.candidate, "candidate").expect("resolves");
    assert_eq!(c.params.len(), 4);
}

#[test]
fn a_build_argument_list_names_declared_arguments_once() {
    let unknown = own_args_spec(r#"args = ["src", "nope"]"#).expect_err("must fail");
    assert!(
        unknown
            .to_string()
            .contains("candidate.args: `nope` is not an [[arg]]"),
        "{unknown}"
    );
    let twice = own_args_spec(r#"args = ["src", "src"]"#).expect_err("must fail");
    assert!(
        twice.to_string().contains("`src` is listed twice"),
        "{twice}"
    );
}

/// PTX text with one kernel, `entry`.
fn ptx(entry: &str) -> String {
    format!(
        "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.0\n.target sm_90\n.address_size 64\n\n\
         \t// .globl\t{entry}\n.visible .entry {entry}(\n\t.param .u64 {entry}_param_0\n)\n{{\n\tret;\n}}\n"
    )
}

#[test]
fn a_ptx_build_resolves_in_a_dry_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.ptx"), ptx("copy_ptx")).expect("write");
    let spec_text = |symbol: &str| {
        format!(
            "[launch]\ngrid = [1]\nblock = [32]\n[baseline]\ncode = \"a.ptx\"\nsymbol = \"{symbol}\"\n\
             [candidate]\ncode = \"a.ptx\"\nsymbol = \"{symbol}\"\n[[arg]]\nname = \"x\"\ntype = \"f32\"\nshape = [32]\n"
        )
    };
    let spec = Spec::parse(&spec_text("copy_ptx"), dir.path()).expect("parses");
    let p = kernelab_launcher::plan::plan(&spec).expect("a PTX build resolves");
    assert_eq!(p.builds[1].symbol, "copy_ptx");
    let wrong = Spec::parse(&spec_text("other"), dir.path()).expect("parses");
    let e = kernelab_launcher::plan::plan(&wrong).expect_err("no such kernel");
    assert!(
        e.to_string().contains("no kernel `other`") && e.to_string().contains("copy_ptx"),
        "{e}"
    );
    // Text that is not PTX is still refused as a code object.
    std::fs::write(dir.path().join("a.ptx"), "not a kernel").expect("write");
    assert!(kernelab_launcher::plan::plan(&spec).is_err());
    assert_eq!(
        kernelab_launcher::plan::ptx_entries(b".version 7.8\n.entry k1 (\n.weak .entry k2(\n"),
        Some(vec!["k1".to_string(), "k2".to_string()])
    );
}

#[test]
fn the_batch_rule_shared_with_python_callables() {
    use kernelab_launcher::run::batch_for;
    assert_eq!(batch_for(20.0), 1);
    assert_eq!(batch_for(500.0), 1);
    assert_eq!(batch_for(10.0), 20);
    assert_eq!(batch_for(0.1), 400, "at most 0.5 µs a call is assumed");
    assert_eq!(
        batch_for(f64::NAN),
        200,
        "an unreadable time counts as 1 µs"
    );
    assert_eq!(batch_for(-3.0), 400);
}

/// A spec of `scale_add(x, y, out, n, alpha, stride)` (tests/fixtures/triton/VERSION/) for
/// both builds, with `scalars` as its scalar arguments.
fn scale_add_spec(dir: &Path, version: &str, scalars: &str) -> Spec {
    let code = fixtures()
        .join("triton")
        .join(version)
        .join("scale_add.cubin");
    let text = format!(
        r#"
[sizes]
N = 4096
[launch]
grid = ["cdiv(N, 1024)"]
[baseline]
code = "{code}"
[candidate]
code = "{code}"
[[arg]]
name = "x"
type = "f32"
shape = ["N"]
[[arg]]
name = "y"
type = "f32"
shape = ["N"]
[[arg]]
name = "out"
type = "f32"
shape = ["N"]
role = "out"
{scalars}
"#,
        code = code.display()
    );
    let path = dir.join(format!("scale_add_{version}.toml"));
    std::fs::write(&path, text).expect("writes the spec");
    Spec::read(&path).expect("the spec parses")
}

#[test]
fn triton_3_0_to_3_6_metadata_gives_the_parameters_the_cubin_records() {
    // Real cache entries of one kernel compiled for sm_90 by Triton 3.0.0 … 3.6.0
    // (tests/fixtures/triton/README.md). Each cubin's EIATTR_KPARAM_INFO records the
    // parameters the launch must pass: the six of the Python signature, then the global
    // scratch pointer (Triton ≥ 3.3) and the profile scratch pointer (≥ 3.5).
    let dir = tempfile::tempdir().expect("temp dir");
    let scalars = "[[arg]]\nname = \"n\"\ntype = \"i32\"\nvalue = \"N\"\n\
                   [[arg]]\nname = \"alpha\"\ntype = \"f32\"\nvalue = 2.0\n\
                   [[arg]]\nname = \"stride\"\ntype = \"i32\"\nvalue = 1\n";
    for (version, scratch) in [
        ("3.0.0", 0),
        ("3.1.0", 0),
        ("3.2.0", 0),
        ("3.3.1", 1),
        ("3.4.0", 1),
        ("3.5.1", 2),
        ("3.6.0", 2),
    ] {
        let spec = scale_add_spec(dir.path(), version, scalars);
        let plan = kernelab_launcher::plan::plan(&spec)
            .unwrap_or_else(|e| panic!("Triton {version}: {e}"));
        let b = &plan.builds[0];
        assert_eq!(b.symbol, "scale_add", "Triton {version}");
        assert_eq!((b.block, b.shared), ([128, 1, 1], 0), "Triton {version}");
        assert_eq!(b.grid, [4, 1, 1]);
        assert_eq!(
            b.params.len(),
            6 + scratch,
            "Triton {version}: {:?}",
            b.params
        );
        assert_eq!(
            b.params[6..].iter().filter(|p| *p == "null").count(),
            scratch
        );
        // Without the stride argument the cubin's own parameter list refuses the spec, before
        // any GPU is opened.
        let short = scalars
            .rsplit_once("[[arg]]")
            .map(|(head, _)| head)
            .unwrap_or("");
        let spec = scale_add_spec(dir.path(), version, short);
        let e = kernelab_launcher::plan::plan(&spec).expect_err("a parameter missing");
        let message = e.to_string();
        assert!(
            message.contains(&format!("takes {} parameters", 6 + scratch))
                && message.contains("the spec gives"),
            "Triton {version}: {message}"
        );
    }
}
