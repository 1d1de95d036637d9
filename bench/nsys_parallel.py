#!/usr/bin/env python3
"""Times the cases of bench/nsys_parallel.sh: each command REPEATS times, interleaved, under
/usr/bin/time (wall, user and system seconds, peak RSS); prints a Markdown table of medians
(peak RSS: the largest), the ratios against the SQL anchor and the two-core ceiling, and the
bytes per kernel between the two export sizes; checks that every reader reports the same
kernel count and kernel time as the SQL anchor."""
import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from threads_env import env, warm

db, repeats, reader, cli, big = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
cpus = sorted(os.sched_getaffinity(0))




ANCHOR = "SQL anchor: python3 sqlite3 `GROUP BY shortName`"
ONE, EVERY = "reader, one thread (KERNELAB_THREADS=1)", f"reader, every core ({len(cpus)} threads)"
PINNED = "reader, 2 threads pinned to one core (taskset): the split's own cost"
CLI1, CLIN = "kernelab profile, one thread", "kernelab profile, every core"


def cases_for(path, full):
    cs = [
        (ONE, [reader, path], env(1)),
        (EVERY, [reader, path], env(None)),
    ]
    if full:
        cs.append((PINNED, ["taskset", "-c", str(cpus[0]), reader, path], env(2)))
    if cli:
        cs += [
            (CLI1, [cli, "profile", path, "--format", "json"], env(1)),
            (CLIN, [cli, "profile", path, "--format", "json"], env(None)),
        ]
    cs.append((ANCHOR, [sys.executable, "bench/nsys_sql_anchor.py", path], env(None)))
    return cs


tmp = tempfile.mkdtemp()
atexit.register(shutil.rmtree, tmp, True)


def run(cmd, e):
    """Wall (by the clock here), user, sys, peak RSS MB (of the command alone), stdout."""
    tf = os.path.join(tmp, "time.txt")
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", tf] + cmd, env=e, stdout=subprocess.PIPE)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        sys.exit(f"{cmd}: exit status {p.returncode}")
    u, s, m = open(tf).read().split()[-3:]
    return wall, float(u), float(s), int(m) / 1024, p.stdout


PAIR = "ceiling: two one-thread readers at once, each the whole export (per read)"


def run_pair(path):
    t = time.perf_counter()
    ps = [subprocess.Popen([reader, path], env=env(1), stdout=subprocess.DEVNULL) for _ in range(2)]
    ru = [os.wait4(p.pid, 0)[2] for p in ps]
    wall = time.perf_counter() - t
    return wall, sum(r.ru_utime for r in ru) / 2, sum(r.ru_stime for r in ru) / 2, 0.0, b""


def measure(path, n, full):
    warm(path)
    cs = cases_for(path, full)
    results = {c[0]: [] for c in cs}
    outputs = {}
    if full:
        results[PAIR] = []
    for _ in range(n):
        for name, cmd, e in cs:
            r = run(cmd, e)
            results[name].append(r[:4])
            outputs.setdefault(name, r[4])
        if full:
            results[PAIR].append(run_pair(path)[:4])
    med = {}
    for name, rs in results.items():
        med[name] = (
            statistics.median(r[0] for r in rs),
            statistics.median(r[1] for r in rs),
            statistics.median(r[2] for r in rs),
            max(r[3] for r in rs),
        )
    return med, outputs


def figures(out):
    words = out.decode().split()
    d = dict(zip(words[::2], words[1::2]))
    return d.get("dispatches"), d.get("kernel_time_ns")


def table(path, med):
    size = os.path.getsize(path)
    print(f"export: {path}, {size:,} bytes")
    print()
    print("| case | wall s | user s | sys s | peak RSS MB |")
    print("|---|---:|---:|---:|---:|")
    for name, (w, u, s, m) in med.items():
        rss = f"{m:.1f}" if m else "–"
        print(f"| {name} | {w:.3f} | {u:.3f} | {s:.3f} | {rss} |")
    print()


print("machine:", open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(" :\t"),
      f"| {len(cpus)} CPUs usable: {cpus} | load average before: {os.getloadavg()[0]:.2f}")
print(f"medians of {repeats} runs, interleaved")
print()
med, outs = measure(db, repeats, True)
table(db, med)
n1, t1 = figures(outs[ONE])
same = all(figures(outs[k]) == (n1, t1) for k in (EVERY, PINNED, ANCHOR))
print(f"kernels {n1}, kernel time {t1} ns: reader (one thread, every core, pinned) and SQL anchor identical: {same}")
if cli:
    print("kernelab profile outputs identical (one thread, every core):", outs[CLI1] == outs[CLIN])
    same = same and outs[CLI1] == outs[CLIN]
one, every, anchor, pair = med[ONE][0], med[EVERY][0], med[ANCHOR][0], med[PAIR][0]
print(f"reader, every core over one thread: {one / every:.2f}x by the clock")
print(f"ceiling: two one-thread reads at once take {pair / one:.2f}x as long as one alone, "
      f"so two cores give at most {2 * one / pair:.2f}x on this machine")
print(f"SQL anchor over the reader: {anchor / every:.2f}x (every core), {anchor / one:.2f}x (one thread)")
if cli:
    print(f"SQL anchor over kernelab profile: {anchor / med[CLIN][0]:.2f}x (every core), "
          f"{anchor / med[CLI1][0]:.2f}x (one thread)")
print()
if big:
    nb = max(1, (repeats + 1) // 2)
    medb, outb = measure(big, nb, False)
    print(f"larger export, medians of {nb}:")
    table(big, medb)
    nb1, tb1 = figures(outb[ONE])
    sameb = all(figures(outb[k]) == (nb1, tb1) for k in (EVERY, ANCHOR))
    if cli:
        sameb = sameb and outb[CLI1] == outb[CLIN]
    print(f"kernels {nb1}, kernel time {tb1} ns: all identical: {sameb}")
    same = same and sameb
    dk = int(nb1) - int(n1)
    print()
    print("| case | bytes per kernel (RSS slope) | fixed base MB |")
    print("|---|---:|---:|")
    for name in [ONE, EVERY] + ([CLI1, CLIN] if cli else []) + [ANCHOR]:
        slope = (medb[name][3] - med[name][3]) * 1024 * 1024 / dk
        base = med[name][3] - slope * int(n1) / 1024 / 1024
        print(f"| {name} | {slope:.1f} | {base:.1f} |")
    print(f"peak RSS / kernels of the larger export, every core: "
          f"{medb[EVERY][3] * 1024 * 1024 / int(nb1):.1f} B (reader)"
          + (f", {medb[CLIN][3] * 1024 * 1024 / int(nb1):.1f} B (kernelab profile)" if cli else ""))
if not same:
    sys.exit(1)
