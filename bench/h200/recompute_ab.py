#!/usr/bin/env python3
"""Times fla's recompute_w_u_fwd_kernel (B1/T8192/HV32/H16/K128/V128/BT64, bf16) with CUDA events
in two Triton configs (num_warps, num_stages).

  inproc: one process, ABBA-interleaved pairs of runs (a run = median of K launches after
          warm-ups), an A/A control first; writes the paired samples CSV `a,b,order,aa` (µs)
          that `kernelab ab analyze` reads.
  proc:   one run of one config; prints `median_us=...` (for `kernelab ab` and hyperfine).
"""
import argparse
import random
import statistics

import torch
import triton
import fla.ops.gated_delta_rule.wy_fast as wy


def autotuner(obj):
    while obj is not None:
        if hasattr(obj, "configs") and hasattr(obj, "cache"):
            return obj
        obj = getattr(obj, "fn", None)
    raise SystemExit("no autotuner on recompute_w_u_fwd_kernel")


AT = autotuner(wy.recompute_w_u_fwd_kernel)


def use(cfg):
    w, s = int(cfg[1]), int(cfg[3])
    AT.configs = [triton.Config({}, num_warps=w, num_stages=s)]
    AT.cache.clear()


def inputs():
    torch.manual_seed(0)
    B, T, H, HV, K, V, BT = 1, 8192, 16, 32, 128, 128, 64
    d = "cuda"
    k = torch.randn(B, T, H, K, device=d, dtype=torch.bfloat16)
    v = torch.randn(B, T, HV, V, device=d, dtype=torch.bfloat16)
    beta = torch.rand(B, T, HV, device=d, dtype=torch.bfloat16)
    A = torch.randn(B, T, HV, BT, device=d, dtype=torch.bfloat16) * 0.1
    g = torch.randn(B, T, HV, device=d, dtype=torch.float32) * 0.01
    return k, v, beta, A, g


def run(cfg, x, launches=20, warmup=3):
    use(cfg)
    for _ in range(warmup):
        wy.recompute_w_u_fwd(*x)
    times = []
    for _ in range(launches):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        wy.recompute_w_u_fwd(*x)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1000.0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["inproc", "proc"])
    ap.add_argument("--base", default="w4s3")
    ap.add_argument("--cand", default="w8s2")
    ap.add_argument("--cfg", default="w4s3")
    ap.add_argument("--pairs", type=int, default=64)
    ap.add_argument("--aa", type=int, default=16)
    ap.add_argument("--out")
    a = ap.parse_args()
    x = inputs()
    if a.mode == "proc":
        print(f"median_us={run(a.cfg, x):.3f}")
        return
    rng = random.Random(1)
    start_ab = rng.random() < 0.5
    rows = []
    for phase, n, b_cfg in (("1", a.aa, a.base), ("0", a.pairs, a.cand)):
        for k in range(n):
            ab = start_ab if k % 2 == 0 else not start_ab
            if ab:
                ta = run(a.base, x)
                tb = run(b_cfg, x)
            else:
                tb = run(b_cfg, x)
                ta = run(a.base, x)
            rows.append(f"{ta:.3f},{tb:.3f},{'AB' if ab else 'BA'},{phase}")
    with open(a.out, "w") as f:
        f.write("a,b,order,aa\n" + "\n".join(rows) + "\n")
    print(f"wrote {a.out}: {a.aa} A/A pairs and {a.pairs} pairs, {a.base} vs {a.cand}")


if __name__ == "__main__":
    main()
