"""The benchmark file of the `[python]` gate test repository (bench/h100/gate/run.sh): one
Triton kernel, `y = x * 1.5 + 0.25` over 2^25 fp32 elements; EXTRA is the share of blocks done
twice (the same output, that much more memory traffic). run.sh commits it with EXTRA = 0 on
`main` and with a planted EXTRA on a branch."""

import torch
import triton
import triton.language as tl

BLOCK = 1024
N = 1 << 25
EXTRA = 0.0


@triton.jit
def axpb_kernel(x_ptr, y_ptr, n, s, b, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    nblocks = tl.cdiv(n, BLOCK)
    pid = tl.where(pid < nblocks, pid, pid - nblocks + nblocks // 2)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, x * s + b, mask=m)


def make():
    g = torch.Generator(device="cuda").manual_seed(3)
    x = torch.randn(N, device="cuda", generator=g)
    return x, torch.empty_like(x)


def run(x, y):
    blocks = triton.cdiv(x.numel(), BLOCK)
    axpb_kernel[(blocks + round(EXTRA * blocks),)](x, y, x.numel(), 1.5, 0.25, BLOCK=BLOCK)
