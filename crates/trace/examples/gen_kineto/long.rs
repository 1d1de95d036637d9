//! The `--long` mode: a trace shaped like `torch.profiler` output with `record_shapes=True` and
//! `with_stack=True` on a transformer: per operator a Python call stack (`python_function`), a
//! `cpu_op` with shapes, types, strides and concrete inputs (12 `args` keys), and per launch a
//! `cuda_runtime` call, the `kernel` (long templated name, 15 `args` keys) and the `ac2g` flow
//! pair. Deterministic; kernels carry exact integer-nanosecond times like the default mode.

use super::{ts, Lcg};
use std::fmt::Write as _;
use std::io::{BufWriter, Write};

/// Templated kernel names of 200–400 characters, the shapes CUTLASS, FlashAttention, cuBLAS
/// and ATen print: `{T}` is replaced by a type and `{N}` by a tile size to make 48 names.
const TEMPLATES: [&str; 6] = [
    "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int, int>, cutlass::gemm::collective::CollectiveMma<cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<{N}, cute::tuple<cute::C<2>, cute::C<1>, cute::C<1> >, cutlass::gemm::KernelTmaWarpSpecializedCooperative>, {T}, cute::tuple<long, cute::C<1>, long>, {T}> > >(cutlass::gemm::kernel::GemmUniversal<...>::Params)",
    "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, {N}, 64, 4, false, false, {T}, Flash_kernel_traits<128, {N}, 64, 4, {T}> >, false, true, false, false, true, true, false, false>(flash::Flash_fwd_params)",
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<{T}, {T}, {T}, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, at::native::BinaryFunctor<...> const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<...>::{lambda(int)#1})",
    "void at::native::(anonymous namespace)::cunn_SoftMaxForward<{N}, {T}, float, {T}, at::native::(anonymous namespace)::SoftMaxForwardEpilogue, at::native::(anonymous namespace)::SoftMaxForwardEpilogue<{T}, float, {T}> >({T}*, {T} const*, int)",
    "void at::native::reduce_kernel<{N}, 1, at::native::ReduceOp<{T}, at::native::func_wrapper_t<float, at::native::sum_functor<{T}, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(at::native::ReduceOp<{T}, at::native::func_wrapper_t<float, ...>, unsigned int, float, 4, 4>)",
    "void vllm::fused_add_rms_norm_kernel<{T}, {N}>({T}* __restrict__, long, {T}* __restrict__, {T} const* __restrict__, float, int, int) [with scalar_t = {T}; int width = {N}; typename std::enable_if<(width > 0) && _typeConvert<scalar_t>::exists>::type* = nullptr]",
];
const TYPES: [&str; 4] = [
    "cutlass::bfloat16_t",
    "c10::BFloat16",
    "cutlass::half_t",
    "float",
];
const TILES: [&str; 2] = ["128", "256"];

/// Python frames of a forward pass, outermost first.
const FRAMES: [&str; 6] = [
    "nn.Module: Qwen3NextDecoderLayer_3",
    "torch/nn/modules/module.py(1773): _wrapped_call_impl",
    "torch/nn/modules/module.py(1784): _call_impl",
    "transformers/models/qwen3_next/modeling_qwen3_next.py(412): forward",
    "nn.Module: Linear_17",
    "torch/nn/modules/linear.py(125): forward",
];

const OPS: [&str; 6] = [
    "aten::linear",
    "aten::mul",
    "aten::softmax",
    "aten::sum",
    "aten::add_",
    "aten::_scaled_dot_product_flash_attention",
];

fn names() -> Vec<String> {
    let mut out = Vec::new();
    for t in TEMPLATES {
        for ty in TYPES {
            for n in TILES {
                out.push(t.replace("{T}", ty).replace("{N}", n));
            }
        }
    }
    out
}

/// Writes a `--long` trace of about `target` bytes to `path`.
pub fn generate(target: u64, path: &str, every: u64) -> std::io::Result<()> {
    let names = names();
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut rng = Lcg(7);
    let mut buf = String::with_capacity(1 << 17);
    buf.push_str("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\", \"numSms\": 132}],\n  \"record_shapes\": 1,\n  \"with_stack\": 1,\n  \"traceEvents\": [\n");
    let (mut written, mut events, mut kernels, mut kernel_ns) = (0u64, 0u64, 0u64, 0u64);
    let mut cpu_t: u64 = 5_076_618_402_287_977;
    let mut gpu_t: u64 = cpu_t + 50_000;
    let (mut corr, mut py_id, mut launch_index, mut step) = (1000u64, 0u64, 0u64, 0u64);
    while written < target {
        let (step_cpu, step_gpu) = (cpu_t, gpu_t);
        for _ in 0..200 {
            let op = OPS[(rng.next() % OPS.len() as u64) as usize];
            let depth = 3 + (rng.next() % 4) as usize;
            let span = 20_000 + rng.next() % 40_000;
            for (d, frame) in FRAMES.iter().take(depth).enumerate() {
                py_id += 1;
                let _ = write!(buf, "  {{\n    \"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"{frame}\", \"pid\": 524, \"tid\": 524,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"Python parent id\": {}, \"Python id\": {py_id}, \"Python thread\": 0\n    }}\n  }},\n", ts(cpu_t + d as u64 * 100), ts(span - d as u64 * 200), py_id - 1);
                events += 1;
            }
            corr += 1;
            let seq = corr / 3;
            let _ = write!(buf, "  {{\n    \"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"{op}\", \"pid\": 524, \"tid\": 524,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {corr},\"Record function id\": 0, \"Sequence number\": {seq}, \"Fwd thread id\": 0, \"Ev Idx\": {corr}, \"Input Dims\": [[1, 8192, 2048], [4096, 2048], [4096]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\"], \"Input Strides\": [[16777216, 2048, 1], [2048, 1], [1]], \"Concrete Inputs\": [\"\", \"\", \"\"], \"Input Names\": [\"input\", \"weight\", \"bias\"], \"kernel_backend\": \"cuda\", \"Flops\": 137438953472\n    }}\n  }},\n", ts(cpu_t + 1_000), ts(span - 2_000));
            events += 1;
            for _ in 0..1 + rng.next() % 2 {
                corr += 1;
                let k = (rng.next() % names.len() as u64) as usize;
                let dur = 800 + rng.next() % 200_000;
                let launch_at = cpu_t + 2_000 + rng.next() % 1_000;
                let _ = write!(buf, "  {{\n    \"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 524, \"tid\": 524,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {corr},      \"cbid\": 211, \"correlation\": {corr}\n    }}\n  }},\n  {{\n    \"ph\": \"s\", \"id\": {corr}, \"pid\": 524, \"tid\": 524, \"ts\": {},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"\n  }},\n", ts(launch_at), ts(4_500), ts(launch_at));
                events += 2;
                launch_index += 1;
                if launch_index % every == 0 {
                    let _ = write!(buf, "  {{\n    \"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"{}\", \"pid\": 0, \"tid\": 7,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {corr},      \"queued\": 0, \"device\": 0, \"context\": 1,      \"stream\": 7, \"correlation\": {corr},      \"registers per thread\": 168,      \"shared memory\": 232448,      \"blocks per SM\": 1.000000,      \"warps per SM\": 12.000000,      \"grid\": [132, 1, 1],      \"block\": [384, 1, 1],      \"est. achieved occupancy %\": 19,      \"priority\": 0,      \"graph node id\": 0\n    }}\n  }},\n  {{\n    \"ph\": \"f\", \"id\": {corr}, \"pid\": 0, \"tid\": 7, \"ts\": {},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"\n  }},\n", names[k], ts(gpu_t), ts(dur), ts(gpu_t));
                    events += 2;
                    kernels += 1;
                    kernel_ns += dur;
                }
                gpu_t += dur + 1_500 + rng.next() % 3_000;
            }
            cpu_t += span + 1_000;
            if buf.len() > 1 << 16 {
                out.write_all(buf.as_bytes())?;
                written += buf.len() as u64;
                buf.clear();
            }
        }
        step += 1;
        let _ = write!(buf, "  {{\n    \"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#{step}\", \"pid\": 524, \"tid\": 524,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {corr}, \"Record function id\": 0, \"Ev Idx\": {corr}\n    }}\n  }},\n  {{\n    \"ph\": \"X\", \"cat\": \"gpu_user_annotation\", \"name\": \"ProfilerStep#{step}\", \"pid\": 0, \"tid\": 7,\n    \"ts\": {}, \"dur\": {},\n    \"args\": {{\n      \"External id\": {corr}\n    }}\n  }},\n", ts(step_cpu), ts(cpu_t - step_cpu), ts(step_gpu), ts(gpu_t - step_gpu));
        events += 2;
    }
    buf.push_str("  {\n    \"name\": \"Record Window End\", \"ph\": \"i\", \"s\": \"g\", \"pid\": \"\", \"tid\": \"\", \"ts\": 1\n  }\n],\n  \"traceName\": \"synthetic_long.json\"\n}\n");
    events += 1;
    out.write_all(buf.as_bytes())?;
    written += buf.len() as u64;
    out.flush()?;
    println!("bytes {written} events {events} kernels {kernels} kernel_time_ns {kernel_ns}");
    Ok(())
}
