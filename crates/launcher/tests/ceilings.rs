//! `kernelab ceilings` arithmetic without a GPU: a host mock whose kernels take the time a
//! device of known peaks would take, from the parameters they are launched with; the measured
//! figures must come back as those peaks.
// Tests, not the library: they may print what they skip and stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use kernelab_launcher::ceilings::{measure, Options, BLOCK, PTX, STRIDE_GRID};
use kernelab_launcher::gpu::{
    DevicePtr, EventId, GemmId, GemmType, Geometry, Gpu, GraphId, KernelId, Telemetry,
};
use kernelab_launcher::{Error, Result};
use kernelab_model::roofline::CeilingKind;

const COPY_BW: f64 = 4.2e12;
const READ_BW: f64 = 4.5e12;
const L2_BW: f64 = 11.0e12;
const FMA: f64 = 60e12;
const LAUNCH_S: f64 = 2.5e-6;
const BF16: f64 = 780e12;

#[derive(Default)]
struct Mock {
    kernels: Vec<String>,
    gemms: Vec<(GemmType, usize)>,
    clock_s: f64,
    events: Vec<f64>,
    next: DevicePtr,
    l2: Option<usize>,
}

fn u64_at(p: &[Vec<u8>], i: usize) -> u64 {
    u64::from_le_bytes(p[i][..8].try_into().expect("8 bytes"))
}

fn u32_at(p: &[Vec<u8>], i: usize) -> u32 {
    u32::from_le_bytes(p[i][..4].try_into().expect("4 bytes"))
}

impl Gpu for Mock {
    fn device_name(&self) -> String {
        "NVIDIA H200".into()
    }
    fn l2_bytes(&self) -> Option<usize> {
        self.l2
    }
    fn alloc(&mut self, _bytes: usize) -> Result<DevicePtr> {
        self.next += 1 << 40;
        Ok(self.next)
    }
    fn upload(&mut self, _dst: DevicePtr, _data: &[u8]) -> Result<()> {
        Ok(())
    }
    fn download(&mut self, _src: DevicePtr, _out: &mut [u8]) -> Result<()> {
        Ok(())
    }
    fn fill(&mut self, _dst: DevicePtr, _value: u8, _bytes: usize) -> Result<()> {
        Ok(())
    }
    fn load(&mut self, image: &[u8], symbol: &str, _shared: u32) -> Result<KernelId> {
        assert_eq!(image, PTX.as_bytes());
        let entry = format!(".visible .entry {symbol}(");
        assert!(PTX.contains(&entry), "the PTX defines {symbol}");
        self.kernels.push(symbol.to_string());
        Ok(KernelId(self.kernels.len() - 1))
    }
    fn param_sizes(&mut self, _k: KernelId) -> Option<Vec<usize>> {
        None
    }
    fn launch(&mut self, k: KernelId, g: Geometry, p: &[Vec<u8>]) -> Result<()> {
        assert_eq!(g.block, [BLOCK, 1, 1]);
        let l2 = self.l2.unwrap_or(0) as u64;
        self.clock_s += match self.kernels[k.0].as_str() {
            "kl_copy_f4" => {
                // One float4 per thread: the grid covers n.
                assert!(u64::from(g.grid[0]) * u64::from(BLOCK) >= u64_at(p, 2));
                2.0 * 16.0 * u64_at(p, 2) as f64 / COPY_BW
            }
            "kl_read_f4" => {
                let bytes = 16 * u64_at(p, 2) * u64::from(u32_at(p, 3));
                let bw = if 16 * u64_at(p, 2) <= l2 {
                    L2_BW
                } else {
                    READ_BW
                };
                bytes as f64 / bw
            }
            "kl_fma_f32" => {
                let threads = f64::from(g.grid[0]) * f64::from(BLOCK);
                threads * f64::from(u32_at(p, 1)) * 32.0 / FMA
            }
            "kl_nop" => LAUNCH_S,
            other => return Err(Error::Internal(format!("no kernel {other}"))),
        };
        Ok(())
    }
    fn capture(&mut self, _k: KernelId, _g: Geometry, _p: &[Vec<u8>]) -> Result<GraphId> {
        Err(Error::Internal("no graphs".into()))
    }
    fn replay(&mut self, _graph: GraphId) -> Result<()> {
        Err(Error::Internal("no graphs".into()))
    }
    fn record(&mut self) -> Result<EventId> {
        self.events.push(self.clock_s);
        Ok(EventId(self.events.len() - 1))
    }
    fn elapsed_ms(&mut self, a: EventId, b: EventId) -> Result<f64> {
        Ok((self.events[b.0] - self.events[a.0]) * 1e3)
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn telemetry(&mut self) -> Telemetry {
        Telemetry::default()
    }
    fn gemm_prepare(&mut self, dtype: GemmType, m: usize, n: usize, k: usize) -> Result<GemmId> {
        assert!(m == n && n == k);
        if dtype != GemmType::Bf16 {
            return Err(Error::Internal("mock: bf16 only".into()));
        }
        self.gemms.push((dtype, n));
        Ok(GemmId(self.gemms.len() - 1))
    }
    fn gemm_launch(&mut self, id: GemmId) -> Result<()> {
        let n = self.gemms[id.0].1 as f64;
        // Independently of the measurement code: 2·n³ FLOP at the mock's rate.
        self.clock_s += 2.0 * n * n * n / BF16;
        Ok(())
    }
}

fn close(a: f64, b: f64) -> bool {
    (a / b - 1.0).abs() < 1e-9
}

#[test]
fn measured_figures_are_the_mock_device_peaks() {
    let mut gpu = Mock {
        l2: Some(60 << 20),
        ..Mock::default()
    };
    let o = Options {
        dram_bytes: 1 << 30,
        reps: 5,
        warmup: 1,
        gemm_size: 8192,
        ..Options::default()
    };
    let figures = measure(&mut gpu, &o).expect("measured");
    let value = |k: CeilingKind| {
        figures
            .iter()
            .find(|(x, _)| *x == k)
            .and_then(|(_, m)| m.as_ref().ok())
            .map(|m| m.value)
    };
    for (k, want) in [
        (CeilingKind::DramCopy, COPY_BW),
        (CeilingKind::DramRead, READ_BW),
        (CeilingKind::L2Read, L2_BW),
        (CeilingKind::Fp32Fma, FMA),
        (CeilingKind::Bf16Tensor, BF16),
        (CeilingKind::LaunchOverhead, LAUNCH_S),
    ] {
        let got = value(k).unwrap_or(f64::NAN);
        assert!(close(got, want), "{k:?}: {got} vs {want}");
    }
    let fp8 = figures
        .iter()
        .find(|(x, _)| *x == CeilingKind::Fp8Tensor)
        .map(|(_, m)| m.clone());
    assert!(matches!(fp8, Some(Err(e)) if e.contains("bf16 only")));
    // Every figure says how it was measured.
    for (k, m) in &figures {
        if let Ok(m) = m {
            assert!(m.method.contains("median"), "{k:?}: {}", m.method);
        }
    }
    assert_eq!(STRIDE_GRID, 4096);
}

#[test]
fn no_l2_size_is_said_not_zero() {
    let mut gpu = Mock::default();
    let o = Options {
        dram_bytes: 1 << 20,
        reps: 3,
        ..Options::default()
    };
    let figures = measure(&mut gpu, &o).expect("measured");
    let l2 = figures
        .iter()
        .find(|(k, _)| *k == CeilingKind::L2Read)
        .map(|(_, m)| m.clone());
    assert_eq!(
        l2,
        Some(Err("the device does not report its L2 size".to_string()))
    );
}
