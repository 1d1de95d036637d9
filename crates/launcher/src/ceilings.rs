//! `kernelab ceilings`: the device's peaks measured through the [`Gpu`] trait: DRAM copy and
//! read-only bandwidth, L2 read bandwidth and FP32 FMA rate with kernels written here as PTX
//! text (JIT-compiled by the driver, so no compiler is needed), matrix peaks through the
//! backend's matrix-product library, and launch overhead with an empty kernel.

use crate::error::{Error, Result};
use crate::gpu::{DevicePtr, GemmType, Geometry, Gpu, KernelId};
use kernelab_model::roofline::{CeilingKind, Measured};
use kernelab_stats::rank::median;

/// The measurement kernels, PTX ISA 7.0 for sm_70 and later (the driver compiles it for the
/// device at load time).
pub const PTX: &str = include_str!("ceilings.ptx");

/// Sizes and repetitions of the measurements.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Bytes of each DRAM buffer (source and destination of the copy).
    pub dram_bytes: usize,
    /// Timed launches per figure (the figure is their median).
    pub reps: usize,
    /// Untimed launches before the timed ones.
    pub warmup: usize,
    /// M = N = K of the matrix products.
    pub gemm_size: usize,
    /// FMA loop iterations per thread.
    pub fma_iters: u32,
    /// Passes over the L2-resident buffer per launch.
    pub l2_passes: u32,
    /// Empty-kernel launches per timed sample.
    pub nop_launches: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            dram_bytes: 1 << 30,
            reps: 20,
            warmup: 3,
            gemm_size: 8192,
            fma_iters: 4096,
            l2_passes: 100,
            nop_launches: 1000,
        }
    }
}

/// Threads per block of every measurement kernel.
pub const BLOCK: u32 = 256;
/// Blocks of the grid-stride read and FMA kernels.
pub const STRIDE_GRID: u32 = 4096;

/// Every figure measured, with how, or why it could not be.
pub type Figures = Vec<(CeilingKind, std::result::Result<Measured, String>)>;

struct Kernels {
    copy: KernelId,
    read: KernelId,
    fma: KernelId,
    nop: KernelId,
}

fn u64p(v: u64) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

fn u32p(v: u32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

fn grid(x: u32) -> Geometry {
    Geometry {
        grid: [x, 1, 1],
        block: [BLOCK, 1, 1],
        shared: 0,
    }
}

/// Times `launch` `reps` times after `warmup` untimed calls: the median seconds per call, each
/// call timed between its own pair of events.
fn time(
    gpu: &mut dyn Gpu,
    o: &Options,
    launch: &mut dyn FnMut(&mut dyn Gpu) -> Result<()>,
) -> Result<f64> {
    for _ in 0..o.warmup {
        launch(gpu)?;
    }
    gpu.sync()?;
    let mut s = Vec::with_capacity(o.reps);
    for _ in 0..o.reps.max(1) {
        let a = gpu.record()?;
        launch(gpu)?;
        let b = gpu.record()?;
        s.push(gpu.elapsed_ms(a, b)? / 1e3);
    }
    median(&s).ok_or_else(|| Error::Internal("no timed samples".into()))
}

fn loaded(gpu: &mut dyn Gpu) -> Result<Kernels> {
    let ptx = PTX.as_bytes();
    Ok(Kernels {
        copy: gpu.load(ptx, "kl_copy_f4", 0)?,
        read: gpu.load(ptx, "kl_read_f4", 0)?,
        fma: gpu.load(ptx, "kl_fma_f32", 0)?,
        nop: gpu.load(ptx, "kl_nop", 0)?,
    })
}

fn dram(gpu: &mut dyn Gpu, k: &Kernels, o: &Options, src: DevicePtr, dst: DevicePtr) -> Figures {
    let n4 = (o.dram_bytes / 16) as u64;
    let bytes = n4 * 16;
    let copy_grid = u32::try_from(n4.div_ceil(u64::from(BLOCK))).unwrap_or(u32::MAX >> 1);
    let copy = [u64p(src), u64p(dst), u64p(n4)];
    let read = [u64p(src), u64p(dst), u64p(n4), u32p(1)];
    let c = time(gpu, o, &mut |g| g.launch(k.copy, grid(copy_grid), &copy));
    let r = time(gpu, o, &mut |g| g.launch(k.read, grid(STRIDE_GRID), &read));
    let gib = bytes as f64 / (1u64 << 30) as f64;
    vec![
        (
            CeilingKind::DramCopy,
            c.map(|s| Measured {
                value: 2.0 * bytes as f64 / s,
                method: format!(
                    "float4 copy kernel (PTX, one element per thread, {copy_grid}×{BLOCK}) of {gib:.2} GiB to another buffer; bytes read + written over the CUDA-event time; median of {} launches after {} warm-up",
                    o.reps, o.warmup
                ),
            })
            .map_err(|e| e.to_string()),
        ),
        (
            CeilingKind::DramRead,
            r.map(|s| Measured {
                value: bytes as f64 / s,
                method: format!(
                    "float4 read-and-sum kernel (PTX, grid-stride, {STRIDE_GRID}×{BLOCK}) over {gib:.2} GiB; bytes read over the CUDA-event time; median of {} launches after {} warm-up",
                    o.reps, o.warmup
                ),
            })
            .map_err(|e| e.to_string()),
        ),
    ]
}

fn l2(gpu: &mut dyn Gpu, k: &Kernels, o: &Options, src: DevicePtr, dst: DevicePtr) -> Figures {
    let Some(l2) = gpu.l2_bytes() else {
        return vec![(
            CeilingKind::L2Read,
            Err("the device does not report its L2 size".into()),
        )];
    };
    // Half the L2, so that the buffer stays resident across passes.
    let n4 = ((l2 / 2).min(o.dram_bytes) / 16) as u64;
    let bytes = n4 * 16 * u64::from(o.l2_passes);
    let p = [u64p(src), u64p(dst), u64p(n4), u32p(o.l2_passes)];
    let t = time(gpu, o, &mut |g| g.launch(k.read, grid(STRIDE_GRID), &p));
    vec![(
        CeilingKind::L2Read,
        t.map(|s| Measured {
            value: bytes as f64 / s,
            method: format!(
                "float4 read-and-sum kernel (PTX, grid-stride, {STRIDE_GRID}×{BLOCK}) over {} bytes (half the {l2}-byte L2), {} passes per launch; bytes read over the CUDA-event time; median of {} launches",
                n4 * 16,
                o.l2_passes,
                o.reps
            ),
        })
        .map_err(|e| e.to_string()),
    )]
}

/// FLOPs of one FMA-kernel launch: threads × iterations × 16 FMAs × 2.
pub fn fma_flops(o: &Options) -> f64 {
    f64::from(STRIDE_GRID) * f64::from(BLOCK) * f64::from(o.fma_iters) * 16.0 * 2.0
}

fn fma(gpu: &mut dyn Gpu, k: &Kernels, o: &Options, out: DevicePtr) -> Figures {
    let p = [u64p(out), u32p(o.fma_iters)];
    let t = time(gpu, o, &mut |g| g.launch(k.fma, grid(STRIDE_GRID), &p));
    vec![(
        CeilingKind::Fp32Fma,
        t.map(|s| Measured {
            value: fma_flops(o) / s,
            method: format!(
                "FMA kernel (PTX, {STRIDE_GRID}×{BLOCK} threads, 8 independent fma.rn.f32 chains, {} iterations of 16 FMAs; an FMA counts 2 FLOP) over the CUDA-event time; median of {} launches",
                o.fma_iters, o.reps
            ),
        })
        .map_err(|e| e.to_string()),
    )]
}

fn launch_overhead(gpu: &mut dyn Gpu, k: &Kernels, o: &Options) -> Figures {
    let n = o.nop_launches.max(1);
    let t = time(gpu, o, &mut |g| {
        for _ in 0..n {
            g.launch(k.nop, grid(1), &[])?;
        }
        Ok(())
    });
    vec![(
        CeilingKind::LaunchOverhead,
        t.map(|s| Measured {
            value: s / n as f64,
            method: format!(
                "{n} back-to-back launches of an empty kernel (1×{BLOCK}) between two CUDA events, time per launch; median of {} samples",
                o.reps
            ),
        })
        .map_err(|e| e.to_string()),
    )]
}

/// FLOPs of one `n`×`n`×`n` matrix product.
pub fn gemm_flops(n: usize) -> f64 {
    2.0 * (n as f64).powi(3)
}

fn gemms(gpu: &mut dyn Gpu, o: &Options) -> Figures {
    let n = o.gemm_size;
    [
        (CeilingKind::Bf16Tensor, GemmType::Bf16, "bf16"),
        (CeilingKind::Fp16Tensor, GemmType::Fp16, "fp16"),
        (CeilingKind::Fp8Tensor, GemmType::Fp8, "fp8 e4m3 (bf16 output)"),
    ]
    .into_iter()
    .map(|(kind, ty, what)| {
        let r = gpu.gemm_prepare(ty, n, n, n).and_then(|id| {
            time(gpu, o, &mut |g| g.gemm_launch(id))
        });
        let m = r
            .map(|s| Measured {
                value: gemm_flops(n) / s,
                method: format!(
                    "dense {n}×{n}×{n} {what} matrix product (A transposed, FP32 accumulation) of uniform random inputs through cuBLASLt's first heuristic algorithm; 2·n³ FLOP over the CUDA-event time; median of {} products after {} warm-up",
                    o.reps, o.warmup
                ),
            })
            .map_err(|e| e.to_string());
        (kind, m)
    })
    .collect()
}

/// Measures every ceiling; a figure that cannot be measured says why, the others go on.
pub fn measure(gpu: &mut dyn Gpu, o: &Options) -> Result<Figures> {
    let k = loaded(gpu)?;
    let src = gpu.alloc(o.dram_bytes)?;
    let dst = gpu.alloc(o.dram_bytes)?;
    gpu.fill(src, 0x3C, o.dram_bytes)?;
    gpu.fill(dst, 0, o.dram_bytes)?;
    gpu.sync()?;
    let mut out = dram(gpu, &k, o, src, dst);
    out.extend(l2(gpu, &k, o, src, dst));
    out.extend(fma(gpu, &k, o, dst));
    out.extend(gemms(gpu, o));
    out.extend(launch_overhead(gpu, &k, o));
    Ok(out)
}
