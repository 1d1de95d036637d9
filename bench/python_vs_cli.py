#!/usr/bin/env python3
"""The 1.1× target of bench/python.sh, measured interleaved in one process so that the shared
machine's load falls on both sides alike: `kernelab profile FILE --format json` as a process
(its whole wall time, start-up included) against `kernelab.profile(FILE)` into pandas (the
kernel table, and every dispatch), REPEATS times each, alternating. Prints medians and ratios.
Usage: python_vs_cli.py KERNELAB_BINARY FILE [REPEATS]"""
import statistics
import subprocess
import sys
import time

import pandas  # noqa: F401
import pyarrow  # noqa: F401

import kernelab

binary, path = sys.argv[1], sys.argv[2]
repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 9
# One warm-up of each, so that neither pays the page cache's first read.
subprocess.run([binary, "profile", path, "--format", "json"], stdout=subprocess.DEVNULL, check=True)
kernelab.profile(path).dispatches.to_pandas()
cli, kernels, dispatches = [], [], []
for _ in range(repeats):
    t0 = time.perf_counter()
    subprocess.run([binary, "profile", path, "--format", "json"], stdout=subprocess.DEVNULL, check=True)
    t1 = time.perf_counter()
    kernelab.profile(path).kernels.to_pandas()
    t2 = time.perf_counter()
    df = kernelab.profile(path).dispatches.to_pandas()
    t3 = time.perf_counter()
    cli.append(t1 - t0)
    kernels.append(t2 - t1)
    dispatches.append(t3 - t2)
c, k, d = (statistics.median(x) for x in (cli, kernels, dispatches))
print(f"| `kernelab profile --format json` (process) | {c:.3f} | 1.00 |")
print(f"| `kernelab.profile(f).kernels.to_pandas()` | {k:.3f} | {k / c:.2f} |")
print(f"| `kernelab.profile(f).dispatches.to_pandas()` ({len(df)} rows) | {d:.3f} | {d / c:.2f} |")
