#!/usr/bin/env python3
"""A two-stream Kineto trace for kernelab's --by-phase test: on the main stream, annotated
ranges `layer0` .. `layer3` (record_function, which Kineto writes as user_annotation on the CPU
and gpu_user_annotation on the main stream), each a bf16 GEMM and a softmax; on a side stream, a
loop of larger GEMMs launched before the layers so that it runs while their ranges are open:
three inside a range `side_loop` of its own, three in no range.

A kernel of the side stream that runs during `layer1`'s GPU range belongs to no layer: its own
stream has no range. Usage: python3 two_stream_profile.py --out two_stream.json.gz
"""
import argparse

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    torch.manual_seed(0)
    dev, dt = "cuda", torch.bfloat16
    x = torch.randn(4096, 4096, device=dev, dtype=dt)
    w = torch.randn(4096, 4096, device=dev, dtype=dt)
    big = torch.randn(8192, 8192, device=dev, dtype=dt)
    side = torch.cuda.Stream()
    for _ in range(3):
        (x @ w).softmax(-1)
        big @ big
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        with torch.cuda.stream(side):
            with torch.profiler.record_function("side_loop"):
                for _ in range(3):
                    big @ big
            for _ in range(3):
                big @ big
        for layer in range(4):
            with torch.profiler.record_function(f"layer{layer}"):
                y = x @ w
                y = y.softmax(-1)
        torch.cuda.synchronize()
    prof.export_chrome_trace(a.out)
    print(f"wrote {a.out}; main stream {torch.cuda.current_stream().cuda_stream}, side {side.cuda_stream}")


if __name__ == "__main__":
    main()
