"""Kernel A/B of Triton callables with `kernelab.kernel.compare`, beside `triton.testing.do_bench`
on the same pairs in the same process (issue 42; figures in docs/benchmarks.md).

The pair: `y = x * 1.5 + 0.25` over N fp32 elements (a memory-bound vector op), one Triton
kernel. The planted slowdowns launch 3% and 10% more programs, which redo blocks of the middle and
write the same values again: the same output, bitwise, and 3% / 10% more bytes moved. A fused
vs unfused pair (two PyTorch ops against the one kernel) is judged within a tolerance.

A second fused pair has Triton on both sides: two Triton kernels (a multiply, then an add)
against the one fused kernel. With `--capture DIR`, each pair's launches are captured into
DIR/<pair> and every launch spec written there is run again with `kernelab kernel run` (the
binary on PATH, no Python): its verdict and ratio beside the Python call's.

    python3 bench/triton_ab.py [--n 33554432] [--rounds 30] [--repeat 1] [--record DIR] [--json FILE]
                               [--capture DIR]
"""

import argparse
import json
import os
import re
import statistics
import subprocess

import torch
import triton
import triton.language as tl

import kernelab

BLOCK = 1024
N = 1 << 25


@triton.jit
def axpb_kernel(x_ptr, y_ptr, n, s, b, BLOCK: tl.constexpr):
    # Programs past the last block redo blocks from the middle (the planted extra work). Not
    # the first blocks: those are what the next call reads first, so back-to-back calls would
    # find them in L2 and the extra reads would cost nothing.
    pid = tl.program_id(0)
    nblocks = tl.cdiv(n, BLOCK)
    pid = tl.where(pid < nblocks, pid, pid - nblocks + nblocks // 2)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(y_ptr + offs, x * s + b, mask=m)


def _launch(x, y, extra):
    blocks = triton.cdiv(x.numel(), BLOCK)
    axpb_kernel[(blocks + round(extra * blocks),)](x, y, x.numel(), 1.5, 0.25, BLOCK=BLOCK)


def axpb(x, y):
    """The baseline: one program per block."""
    _launch(x, y, 0.0)


def axpb_3pct(x, y):
    """3% more programs (3% of the blocks done twice)."""
    _launch(x, y, 0.03)


def axpb_10pct(x, y):
    """10% more programs."""
    _launch(x, y, 0.10)


def axpb_unfused(x, y):
    """The same function as two PyTorch kernels (a multiply, then an add)."""
    torch.mul(x, 1.5, out=y)
    y.add_(0.25)


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, s, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m) * s, mask=m)


@triton.jit
def add_kernel(y_ptr, n, b, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(y_ptr + offs, mask=m) + b, mask=m)


def axpb_two_kernels(x, y):
    """The same function as two Triton kernels (a multiply, then an add in place)."""
    grid = (triton.cdiv(x.numel(), BLOCK),)
    scale_kernel[grid](x, y, x.numel(), 1.5, BLOCK=BLOCK)
    add_kernel[grid](y, x.numel(), 0.25, BLOCK=BLOCK)


def make():
    x = torch.randn(N, device="cuda", dtype=torch.float32)
    return x, torch.empty_like(x)


def do_bench_ratio(base, cand, args, times=7):
    """do_bench (median of its reps, L2 flushed before each) of both, alternated `times` times:
    the median of each and their ratio."""
    tb, tc = [], []
    for _ in range(times):
        tb.append(triton.testing.do_bench(lambda: base(*args), warmup=25, rep=300, return_mode="median"))
        tc.append(triton.testing.do_bench(lambda: cand(*args), warmup=25, rep=300, return_mode="median"))
    mb, mc = statistics.median(tb), statistics.median(tc)
    return mb * 1e3, mc * 1e3, mc / mb


def replay(spec):
    """`kernelab kernel run SPEC --format json` (no Python): verdict, ratio and interval."""
    p = subprocess.run(["kernelab", "kernel", "run", spec, "--format", "json"], capture_output=True, text=True)
    if p.returncode not in (0, 1):
        return dict(spec=spec, exit=p.returncode, error=p.stderr[-2000:])
    d = json.loads(p.stdout)
    an = d.get("analysis") or {}
    iv = an.get("interval") or {}
    return dict(spec=spec, exit=p.returncode, verdict=an.get("verdict"), ratio=an.get("ratio"),
                low=iv.get("low"), high=iv.get("high"), gates=[g["passed"] for g in d["gates"]],
                machine_code=p.stderr.strip().splitlines()[-1:] if p.stderr else [])


def main():
    global N
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=N)
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--record")
    p.add_argument("--json")
    p.add_argument("--repeat", type=int, default=1, help="measure every pair this many times")
    p.add_argument("--capture", help="capture each pair's launches into this folder and replay the specs")
    a = p.parse_args()
    N = a.n
    print(f"{torch.cuda.get_device_name()}; torch {torch.__version__}, triton {triton.__version__}; "
          f"N = {N} fp32 ({N * 8 / 1e6:.0f} MB read + written)", flush=True)
    pairs = [
        ("A/A", axpb, axpb, dict(aa=True)),
        ("+3% programs", axpb, axpb_3pct, {}),
        ("+10% programs", axpb, axpb_10pct, {}),
        ("+3%, L2 flushed", axpb, axpb_3pct, dict(l2_flush=True)),
        ("unfused vs fused", axpb_unfused, axpb, dict(rtol=1e-6, atol=1e-6)),
        ("two Triton kernels vs fused", axpb_two_kernels, axpb, dict(rtol=1e-6, atol=1e-6)),
    ]
    rows = []
    args = make()
    for k, (name, base, cand, kw) in enumerate(pairs * a.repeat):
        folder = None
        if a.capture:
            folder = os.path.join(a.capture, f"{k}_{re.sub('[^a-z0-9]+', '_', name.lower()).strip('_')}")
        d = kernelab.kernel.compare(base, cand, make, outputs=[1], rounds=a.rounds,
                                    record=a.record, label=f"triton axpb {name}", capture=folder, **kw)
        an = d["analysis"] or {}
        iv = an.get("interval") or {}
        db_b, db_c, db_r = do_bench_ratio(base, base if kw.get("aa") else cand, args)
        med = lambda f: statistics.median(f(r) for r in d["rounds"]) if d["rounds"] else float("nan")
        rows.append(dict(
            pair=name, gates=f"{sum(g['passed'] for g in d['gates'])}/{len(d['gates'])}",
            verdict=an.get("verdict"), ratio=an.get("ratio"), low=iv.get("low"), high=iv.get("high"),
            batch=d["batch"], noise_sd=an.get("noise_sd"), base_us=med(lambda r: r["baseline_ns"]) / 1e3,
            cand_us=med(lambda r: r["candidate_ns"]) / 1e3,
            do_bench_base_us=db_b, do_bench_cand_us=db_c, do_bench_ratio=db_r,
            gate_names=[g["name"] for g in d["gates"]],
            launched=d.get("launched"),
            replayed=[replay(p["spec"]) for p in (d.get("launched") or {}).get("pairs", []) if p.get("spec")]
            + [replay(n.split("kernelab kernel run ")[1]) for n in (d.get("launched") or {}).get("notes", [])
               if "kernelab kernel run " in n],
        ))
        r = rows[-1]
        print(f"{name:18} gates {r['gates']} {r['verdict']:12} ratio {r['ratio']:.4f} "
              f"[{r['low']:.4f}, {r['high']:.4f}] sd {100 * r['noise_sd']:.2f}% ({r['base_us']:.1f} -> {r['cand_us']:.1f} us, batch {r['batch']}); "
              f"do_bench {db_b:.1f} -> {db_c:.1f} us, ratio {db_r:.4f}; "
              f"diff {100 * (r['ratio'] / db_r - 1):+.2f}%", flush=True)
        for kern in (r["launched"] or {}).get("kernels", []):
            print(f"    {kern['side']:9} {kern['name']:14} x{kern['launches']:.2f} "
                  f"{(kern['ns'] or 0) / 1e3:9.2f} us  share {100 * (kern['share'] or 0):6.2f}%", flush=True)
        for pair in (r["launched"] or {}).get("pairs", []):
            print(f"    pair {pair['baseline']} / {pair['candidate']}: {pair['machine_code']}", flush=True)
        for note in (r["launched"] or {}).get("notes", []):
            print(f"    note: {note}", flush=True)
        for rp in r["replayed"]:
            print(f"    kernel run {rp}", flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
