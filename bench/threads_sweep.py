#!/usr/bin/env python3
"""Scaling of the every-core readers (issue 30) with the thread count: the reader
(`read_trace`) and, when given, `kernelab profile --format json` with KERNELAB_THREADS set to
each count in THREADS, plus N independent one-thread reads at once (the machine's ceiling for N
cores) and, with --sql, the SQL anchor of an Nsight Systems export (bench/nsys_sql_anchor.py).
Cases run REPEATS times, interleaved, under /usr/bin/time (user, system seconds and peak RSS of
the command; wall by the clock here). Prints a Markdown table of medians: speed-up is the case's
one-thread wall over its N-thread wall; GB/s total is bytes / wall, per core bytes / CPU seconds
(a ceiling row: N files' bytes over the wall until the last read ends, and its speed-up is N
one-thread reads' time over that wall).
Checks that every count reports the same kernels and kernel time (and the SQL the same too), and
that `kernelab profile` writes the same bytes at every count.

Usage: bench/threads_sweep.py FILE REPEATS THREADS READER [KERNELAB] [--sql]
  e.g. bench/threads_sweep.py bench/out/nsys_x11.sqlite 7 1,2,4,8,16 \\
       target/release/examples/read_trace target/release/kernelab --sql
"""
import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from threads_env import env, warm

args = [a for a in sys.argv[1:] if a != "--sql"]
sql = "--sql" in sys.argv[1:]
if len(args) not in (4, 5):
    sys.exit(__doc__)
path, repeats, reader = args[0], int(args[1]), args[3]
counts = [int(n) for n in args[2].split(",")]
cli = args[4] if len(args) == 5 else ""
size = os.path.getsize(path)
cpus = sorted(os.sched_getaffinity(0))
tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)


def run(cmd, e):
    """Wall, user, sys, peak RSS MB, stdout of one command under /usr/bin/time."""
    tf = os.path.join(tmp, "time.txt")
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", tf] + cmd, env=e, stdout=subprocess.PIPE)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"{cmd}: exit status {p.returncode}")
    u, s, m = open(tf).read().split()[-3:]
    return wall, float(u), float(s), int(m) / 1024, p.stdout


def run_many(n):
    """n one-thread reads of the whole file at once: wall until the last ends, CPU per read."""
    t = time.perf_counter()
    ps = [subprocess.Popen([reader, path], env=env(1), stdout=subprocess.DEVNULL) for _ in range(n)]
    ru = []
    for p in ps:
        _, status, r = os.wait4(p.pid, 0)
        if status != 0:
            sys.exit(f"{reader}: exit status {status}")
        ru.append(r)
    wall = time.perf_counter() - t
    return wall, sum(r.ru_utime for r in ru) / n, sum(r.ru_stime for r in ru) / n, 0.0, b""


cases = []  # (group, threads, label, thunk)
for n in counts:
    cases.append(("reader", n, f"reader, KERNELAB_THREADS={n}", lambda n=n: run([reader, path], env(n))))
for n in counts:
    if cli:
        cases.append(("profile", n, f"kernelab profile, KERNELAB_THREADS={n}",
                      lambda n=n: run([cli, "profile", path, "--format", "json"], env(n))))
for n in counts:
    if n > 1:
        cases.append(("ceiling", n, f"ceiling: {n} one-thread reads at once (CPU per read)", lambda n=n: run_many(n)))
if sql:
    cases.append(("sql", 1, "SQL anchor, python3 sqlite3 `GROUP BY shortName`",
                  lambda: run([sys.executable, "bench/nsys_sql_anchor.py", path], env(None))))

warm(path)
results = {c[2]: [] for c in cases}
outputs = {}
for _ in range(repeats):
    for _, _, label, thunk in cases:
        r = thunk()
        results[label].append(r[:4])
        outputs.setdefault(label, r[4])

print("machine:", open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(" :\t"),
      f"| {len(cpus)} CPUs usable | load average before the summary: {os.getloadavg()[0]:.2f}")
print(f"input: {path}, {size:,} bytes; medians of {repeats} runs, interleaved")
print()
print("| case | wall s | user s | sys s | speed-up over 1 thread | GB/s total | GB/s per core | peak RSS MB |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
med = {}
base = {}
for group, n, label, _ in cases:
    rs = results[label]
    w, u, s = (statistics.median(r[i] for r in rs) for i in range(3))
    m = max(r[3] for r in rs)
    med[label] = w
    if n == 1 and group in ("reader", "profile"):
        base[group] = w
    if group == "ceiling":
        # n reads of the file in `w` seconds: the machine's rate with n cores busy.
        speed = f"{n * base['reader'] / w:.2f} (n reads)" if "reader" in base else "–"
        total = n * size / w
    else:
        speed = f"{base[group] / w:.2f}" if group in base else "–"
        total = size / w
    rss = f"{m:.1f}" if m else "–"
    per_core = f"{size / (u + s) / 1e9:.2f}" if u + s else "–"
    print(f"| {label} | {w:.3f} | {u:.3f} | {s:.3f} | {speed} | {total / 1e9:.2f} | {per_core} | {rss} |")
print()


def figures(out):
    words = out.decode().split()
    d = dict(zip(words[::2], words[1::2]))
    return d.get("dispatches"), d.get("kernel_time_ns")


readers = [c[2] for c in cases if c[0] == "reader"]
same = all(figures(outputs[k]) == figures(outputs[readers[0]]) for k in readers)
if sql:
    label = cases[-1][2]
    same = same and figures(outputs[label]) == figures(outputs[readers[0]])
    for group, n, name, _ in cases:
        if group in ("reader", "profile"):
            print(f"SQL anchor over {name}: {med[label] / med[name]:.2f}x")
print("kernels, kernel time:", figures(outputs[readers[0]]), "- identical at every count"
      + (" and in the SQL" if sql else "") + ":", same)
profiles = [c[2] for c in cases if c[0] == "profile"]
if profiles:
    same_cli = all(outputs[k] == outputs[profiles[0]] for k in profiles)
    print("kernelab profile output byte-identical at every count:", same_cli)
    same = same and same_cli
if not same:
    sys.exit(1)
