//! Generates a synthetic PyTorch-profiler (Kineto) trace with a realistic event mix, laid out
//! the way Kineto writes it: per `cpu_op` one to three launched kernels, each with a `cuda_runtime`
//! launch, the `kernel`, and an `ac2g` flow pair; memcpy/memset now and then; `user_annotation` and
//! `gpu_user_annotation` ranges per step. Deterministic (fixed-seed LCG).
//!
//! With `--long`, the trace looks like a PyTorch profile taken with `record_shapes` and
//! `with_stack`: long templated kernel names (200–400 characters, 48 distinct), `args` of 10 to
//! 15 keys, and a Python call stack of `python_function` events around every `cpu_op`, so most
//! events and bytes are not kernels (see `long.rs` beside this file).
//!
//! Usage: `cargo run --release -p kernelab-trace --example gen_kineto -- [--long] SIZE_MB OUT.json [KERNEL_EVERY]`
//! Prints the number of events, kernels and the exact kernel time (for checking the reader).
// An example, not the library: it prints and may stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

mod long;

use std::fmt::Write as _;
use std::io::{BufWriter, Write};

const NAMES: [&str; 8] = [
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctorOnSelf_add<c10::BFloat16>, std::array<char*, 2ul> >(int, at::native::CUDAFunctorOnSelf_add<c10::BFloat16>, std::array<char*, 2ul>)",
    "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    "recompute_w_u_fwd_kernel",
    "chunk_gated_delta_rule_fwd_kernel_h_blockdim64",
    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::gemm::GroupProblemShape<cute::tuple<int, int, int> >, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90ArrayTmaGmmaWarpSpecialized<4, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, cutlass::gemm::KernelPtrArrayTmaWarpSpecializedCooperative> > > >(cutlass::gemm::kernel::GemmUniversal<...>::Params)",
    "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4>)",
    "l2norm_fwd_kernel",
    "void at::native::(anonymous namespace)::CatArrayBatchedCopy_vectorized<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 3, 128, 1, 16, 8>(char*, at::native::(anonymous namespace)::CatArrInputTensorMetadata<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 128, 1>, at::native::(anonymous namespace)::TensorSizeStride<unsigned int, 4u>, int, unsigned int)",
];

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

fn ts(ns: u64) -> String {
    format!("{}.{:03}", ns / 1000, ns % 1000)
}

fn main() -> std::io::Result<()> {
    let mut args: Vec<String> = std::env::args().collect();
    let long = args.iter().any(|a| a == "--long");
    args.retain(|a| a != "--long");
    if args.len() != 3 && args.len() != 4 {
        eprintln!("usage: gen_kineto [--long] SIZE_MB OUT.json [KERNEL_EVERY]");
        std::process::exit(2);
    }
    if long {
        let target: u64 = args[1].parse::<u64>().unwrap_or(1000) * 1_000_000;
        let every: u64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1).max(1);
        return long::generate(target, &args[2], every);
    }
    let target: u64 = args[1].parse::<u64>().unwrap_or(1000) * 1_000_000;
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(&args[2])?);
    // Emit the GPU side (kernel + flow end) of only every Nth launch, to vary the share of
    // non-kernel events at a fixed file size.
    let every: u64 = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(1).max(1);
    let mut launch_index: u64 = 0;
    let mut rng = Lcg(42);
    let mut written: u64 = 0;
    let mut buf = String::with_capacity(1 << 16);
    buf.push_str("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\", \"numSms\": 132}],\n  \"baseTimeNanoseconds\": 1790857026000000000,\n  \"traceEvents\": [\n");
    let (mut events, mut kernels, mut kernel_ns) = (0u64, 0u64, 0u64);
    let mut cpu_t: u64 = 5_076_618_402_287_977;
    let mut gpu_t: u64 = cpu_t + 50_000;
    let mut corr: u64 = 1000;
    let mut step = 0u64;
    while written < target {
        // One step: annotations around 400 CPU ops, each launching 1 to 3 kernels.
        let step_cpu_start = cpu_t;
        let step_gpu_start = gpu_t;
        for _ in 0..400 {
            corr += 1;
            let launch = 3_000 + rng.next() % 6_000;
            let mut ev = String::with_capacity(2048);
            let _ = write!(
                ev,
                "  {{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 524, \"tid\": 524,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {corr},\"Record function id\": 0, \"Ev Idx\": {corr}, \"Input Dims\": [[8192, 2048], [8192, 2048], []], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"], \"Input Strides\": [[2048, 1], [2048, 1], []], \"Concrete Inputs\": [\"\", \"\", \"1\"]\n    }}\n  }},\n",
                ts(cpu_t),
                ts(launch + 2_000)
            );
            events += 1;
            let launches = 1 + rng.next() % 3;
            for _ in 0..launches {
                corr += 1;
                let k = (rng.next() % NAMES.len() as u64) as usize;
                let dur = 800 + rng.next() % 200_000;
                let _ = write!(
                ev,
                "  {{\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 524, \"tid\": 524,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {corr},      \"cbid\": 211, \"correlation\": {corr}\n    }}\n  }},\n",
                ts(cpu_t + 1_000),
                ts(launch)
            );
                let _ = write!(
                ev,
                "  {{\n    \"ph\": \"s\", \"id\": {corr}, \"pid\": 524, \"tid\": 524, \"ts\": {},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }},\n",
                ts(cpu_t + 1_000)
            );
                events += 2;
                launch_index += 1;
                if launch_index % every == 0 {
                    let _ = write!(
                ev,
                "  {{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{}\", \"pid\": 0, \"tid\": 7,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {corr},      \"queued\": 0, \"device\": 0, \"context\": 1,      \"stream\": 7, \"correlation\": {corr},      \"registers per thread\": 32,      \"shared memory\": 0,      \"blocks per SM\": 62.060608,      \"warps per SM\": 496.484863,      \"grid\": [8192, 1, 1],      \"block\": [256, 1, 1],      \"est. achieved occupancy %\": 100\n    }}\n  }},\n",
                NAMES[k],
                ts(gpu_t),
                ts(dur)
            );
                    let _ = write!(
                ev,
                "  {{\n    \"ph\": \"f\", \"id\": {corr}, \"pid\": 0, \"tid\": 7, \"ts\": {},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }},\n",
                ts(gpu_t)
            );
                    events += 2;
                    kernels += 1;
                    kernel_ns += dur;
                }
                gpu_t += dur + 1_500 + rng.next() % 3_000;
            }
            if rng.next() % 50 == 0 {
                let _ = write!(
                    ev,
                    "  {{\n    \"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoD (Device -> Device)\", \"pid\": 0, \"tid\": 7,\n    \"ts\": {}, \"dur\": 3.200,\n    \"args\": {{\n      \"External id\": {corr},      \"device\": 0, \"context\": 1,      \"stream\": 7, \"correlation\": {corr},      \"bytes\": 1048576, \"memory bandwidth (GB/s)\": 327.68\n    }}\n  }},\n",
                    ts(gpu_t + 10)
                );
                events += 1;
                gpu_t += 3_500;
            }
            cpu_t += launch + 4_000;
            buf.push_str(&ev);
            if buf.len() > 1 << 16 {
                out.write_all(buf.as_bytes())?;
                written += buf.len() as u64;
                buf.clear();
            }
        }
        step += 1;
        let _ = write!(
            buf,
            "  {{\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#{step}\", \"pid\": 524, \"tid\": 524,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {corr}\n    }}\n  }},\n  {{\n    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#{step}\", \"pid\": 0, \"tid\": 7,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {corr}\n    }}\n  }},\n",
            ts(step_cpu_start),
            ts(cpu_t - step_cpu_start),
            ts(step_gpu_start),
            ts(gpu_t - step_gpu_start)
        );
        events += 2;
    }
    buf.push_str("  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": 1\n  }\n],\n  \"traceName\": \"synthetic.json\"\n}\n");
    events += 1;
    out.write_all(buf.as_bytes())?;
    written += buf.len() as u64;
    out.flush()?;
    println!("bytes {written} events {events} kernels {kernels} kernel_time_ns {kernel_ns}");
    Ok(())
}
