#!/usr/bin/env python3
"""Times the cases of bench/kineto_parallel.sh: each command REPEATS times, interleaved, with
wall, user and system seconds of the child (os.wait4) and its peak RSS; prints a Markdown table
of medians with GB/s in total (bytes / wall) and per core (bytes / CPU seconds)."""
import os
import statistics
import subprocess
import sys
import time
from threads_env import env, warm

path, repeats, reader, cli = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
size = os.path.getsize(path)
gz_size = os.path.getsize(path + ".gz")
warm(path)


cases = [
    ("reader, .json, one thread (KERNELAB_THREADS=1)", [reader, path], env(1), size),
    ("reader, .json, every core (default)", [reader, path], env(None), size),
]
if cli:
    cases += [
        ("kernelab profile, .json, one thread", [cli, "profile", path, "--format", "json"], env(1), size),
        ("kernelab profile, .json, every core", [cli, "profile", path, "--format", "json"], env(None), size),
    ]
ONE_CORE = "reader, .json, 2 threads pinned to one core (taskset -c 0): the split's own cost"
cases.append((ONE_CORE, ["taskset", "-c", "0", reader, path], env(2), size))
cases.append(("reader, .json.gz (decompressed bytes)", [reader, path + ".gz"], env(None), size))
anchor = ("python3 json.load + Counter, .json", [sys.executable, "bench/python_profile.py", path], env(None), size)

results = {c[0]: [] for c in cases + [anchor]}
outputs = {}


def run(name, cmd, e):
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=e, stdout=subprocess.PIPE)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        sys.exit(f"{name}: exit status {status}")
    # A child's rusage peak starts from the parent's size: the reader prints its own (VmHWM).
    rss = ru.ru_maxrss / 1024
    for word, value in zip(out.split()[::1], out.split()[1:]):
        if word == b"peak_rss_kb":
            rss = int(value) / 1024
    results[name].append((wall, ru.ru_utime, ru.ru_stime, rss))
    outputs.setdefault(name, out)


PAIR = "ceiling: two one-thread readers at once, each the whole file (per file)"
results[PAIR] = []


def run_pair():
    """Two independent one-thread reads at once: how two cores of this machine scale at all."""
    t = time.perf_counter()
    ps = [subprocess.Popen([reader, path], env=env(1), stdout=subprocess.DEVNULL) for _ in range(2)]
    ru = [os.wait4(p.pid, 0)[2] for p in ps]
    wall = time.perf_counter() - t
    results[PAIR].append((wall, sum(r.ru_utime for r in ru) / 2, sum(r.ru_stime for r in ru) / 2, 0.0))


for _ in range(repeats):
    for name, cmd, e, _ in cases:
        run(name, cmd, e)
    run_pair()
run(anchor[0], anchor[1], anchor[2])

print("machine:", open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(" :\t"), "| affinity:", sorted(os.sched_getaffinity(0)))
print(f"input: {path}, {size:,} bytes ({gz_size:,} gzip); {len(os.sched_getaffinity(0))} CPUs usable; medians of {repeats} runs (anchor: 1)")
print()
print("| case | wall s | user s | sys s | GB/s total | GB/s per core | peak RSS MB |")
print("|---|---:|---:|---:|---:|---:|---:|")
med = {}
for name, _, _, nbytes in cases + [(PAIR, None, None, size)] + [anchor]:
    rs = results[name]
    w = statistics.median(r[0] for r in rs)
    u = statistics.median(r[1] for r in rs)
    s = statistics.median(r[2] for r in rs)
    m = max(r[3] for r in rs)
    med[name] = w
    print(f"| {name} | {w:.3f} | {u:.3f} | {s:.3f} | {nbytes / w / 1e9:.2f} | {nbytes / (u + s) / 1e9:.2f} | {m:.1f} |")
print()
one, every = cases[0][0], cases[1][0]
print(f"reader speed-up, every core over one thread: {med[one] / med[every]:.2f}x by the clock")
print(f"ceiling: two one-thread reads at once take {med[PAIR] / med[one]:.2f}x as long as one alone, "
      f"so two cores give at most {2 * med[one] / med[PAIR]:.2f}x on this machine")
if cli:
    print(f"kernelab profile speed-up: {med[cases[2][0]] / med[cases[3][0]]:.2f}x")
print(f"json.load anchor takes {med[anchor[0]] / med[every]:.1f}x as long as the parallel reader")
print()
def figures(out):
    return [line.split(" read_s")[0] for line in out.decode().splitlines()]



same = figures(outputs[one]) == figures(outputs[every]) == figures(outputs[cases[-1][0]])
print("reader figures (dispatches, kernel time, names) identical in all three:", same, "-", figures(outputs[one])[0])
if cli:
    print("kernelab profile outputs identical:", outputs[cases[2][0]] == outputs[cases[3][0]])
if not same:
    sys.exit(1)
