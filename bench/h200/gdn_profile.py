#!/usr/bin/env python3
"""Profile fla's chunk_gated_delta_rule (B1/T8192/H32/K128/V128, bf16) with torch.profiler,
with recompute_w_u_fwd_kernel forced to one (num_warps, num_stages) config.

Usage: python3 gdn_profile.py --warps 4 --stages 3 --out trace.json.gz [--iters 5]
Used to make the baseline/candidate pair of docs/benchmarks.md (kernelab compare)."""
import argparse

import torch
import triton
from fla.ops.gated_delta_rule import chunk_gated_delta_rule
import fla.ops.gated_delta_rule.wy_fast as wy


def autotuner(obj):
    while obj is not None:
        if hasattr(obj, "configs") and hasattr(obj, "cache"):
            return obj
        obj = getattr(obj, "fn", None)
    raise SystemExit("recompute_w_u_fwd_kernel: no autotuner found")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--warps", type=int, required=True)
    ap.add_argument("--stages", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--iters", type=int, default=5)
    a = ap.parse_args()
    at = autotuner(wy.recompute_w_u_fwd_kernel)
    at.configs = [triton.Config({}, num_warps=a.warps, num_stages=a.stages)]
    at.cache.clear()
    torch.manual_seed(0)
    B, T, H, K, V = 1, 8192, 32, 128, 128
    dev, dt = "cuda", torch.bfloat16
    q = torch.randn(B, T, H, K, device=dev, dtype=dt)
    k = torch.nn.functional.normalize(torch.randn(B, T, H, K, device=dev, dtype=torch.float32), p=2, dim=-1).to(dt)
    v = torch.randn(B, T, H, V, device=dev, dtype=dt)
    g = torch.nn.functional.logsigmoid(torch.randn(B, T, H, device=dev, dtype=torch.float32))
    beta = torch.rand(B, T, H, device=dev, dtype=dt).sigmoid()
    for _ in range(3):
        chunk_gated_delta_rule(q, k, v, g, beta)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(a.iters):
            chunk_gated_delta_rule(q, k, v, g, beta)
        torch.cuda.synchronize()
    prof.export_chrome_trace(a.out)
    print(f"config w{a.warps}s{a.stages}: wrote {a.out}; autotuner configs now {at.configs}")


if __name__ == "__main__":
    main()
