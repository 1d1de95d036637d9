#!/usr/bin/env python3
"""Independent oracle for `kernelab profile`: recomputes per-kernel and whole-trace figures
from the same fixture files with the Python standard library (json with Decimal timestamps,
csv with exact Fraction timestamps, sqlite3), sharing no code with kernelab. Fractional times
are summed exactly and every figure is rounded once, half up. Writes tests/expected/<fixture>.oracle.json.

Usage: python3 tests/oracle/profile_oracle.py FIXTURE... [--out-dir tests/expected]
"""
import csv
import gzip
import json
import math
import re
import sqlite3
import statistics
import sys
from decimal import Decimal
from fractions import Fraction
from pathlib import Path


def open_text(path):
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw


def us_to_ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value())


def timeline(intervals):
    """intervals: list of (device, start, end). Busy = union per device, summed."""
    busy = gap = gaps = 0
    by_dev = {}
    for d, s, e in intervals:
        by_dev.setdefault(d, []).append((s, e))
    for ivs in by_dev.values():
        ivs.sort()
        cs, ce = ivs[0]
        for s, e in ivs[1:]:
            if s > ce:
                busy += ce - cs
                gap += s - ce
                gaps += 1
                cs, ce = s, e
            elif e > ce:
                ce = e
        busy += ce - cs
    first = min(s for _, s, _ in intervals)
    last = max(e for _, _, e in intervals)
    return busy, last - first, gap, gaps, first


def rnd(x):
    """Rounds an exact value (int or Fraction) once, half up, to whole nanoseconds."""
    return math.floor(Fraction(x) + Fraction(1, 2))


def finish(dispatches, memcpy, memset):
    """Times may be Fractions (fractional timestamps): every figure is computed exactly and
    rounded once, half up. memcpy and memset None: the input holds no record of copies (their
    figures are null, not 0)."""
    kernels = {}
    for name, dev, s, e in dispatches:
        kernels.setdefault(name, []).append(e - s)
    out = {
        name: {
            "calls": len(d),
            "total_ns": rnd(sum(d)),
            "min_ns": rnd(min(d)),
            "max_ns": rnd(max(d)),
            "median_ns": float(statistics.median(d)),
        }
        for name, d in kernels.items()
    }
    busy, wall, gap, gaps, first = timeline([(dev, s, e) for _, dev, s, e in dispatches])
    return {
        "summary": {
            "kernel_time_ns": rnd(sum(e - s for _, _, s, e in dispatches)),
            "busy_ns": rnd(busy),
            "wall_ns": rnd(wall),
            "gap_ns": rnd(gap),
            "gap_count": gaps,
            "kernel_count": len(dispatches),
            "distinct_kernels": len(kernels),
            "memcpy_ns": None if memcpy is None else rnd(sum(memcpy)),
            "memcpy_count": None if memcpy is None else len(memcpy),
            "memset_ns": None if memset is None else rnd(sum(memset)),
            "memset_count": None if memset is None else len(memset),
            "first_start_ns": rnd(first),
        },
        "kernels": out,
    }


def innermost(ranges, t):
    """ranges: list of (start, end, name); the enclosing range that starts last (then shortest)."""
    best = None
    for s, e, n in ranges:
        if s <= t < e and (best is None or (s, -(e - s)) > (best[0], -(best[1] - best[0]))):
            best = (s, e, n)
    return best[2] if best else None


def kineto_phases(events):
    """Kernel time per innermost annotated range: GPU ranges by kernel start on the same
    device and stream (a GPU range's stream is its tid); otherwise host ranges by the launch
    call (same correlation) on the same thread."""
    gpu, cpu, launches = {}, {}, {}
    for ev in events:
        if ev.get("ph") != "X":
            continue
        cat, args = ev.get("cat"), ev.get("args", {})
        if cat == "gpu_user_annotation":
            s = us_to_ns(ev["ts"])
            key = (args.get("device", ev.get("pid")), args.get("stream", ev.get("tid")))
            gpu.setdefault(key, []).append((s, s + us_to_ns(ev["dur"]), ev["name"]))
        elif cat == "user_annotation":
            s = us_to_ns(ev["ts"])
            cpu.setdefault((ev.get("pid"), ev.get("tid")), []).append((s, s + us_to_ns(ev["dur"]), ev["name"]))
        elif cat in ("cuda_runtime", "cuda_driver") and "correlation" in args:
            launches[args["correlation"]] = (ev.get("pid"), ev.get("tid"), us_to_ns(ev["ts"]))
    phases = {}
    for ev in events:
        if ev.get("ph") != "X" or ev.get("cat") not in ("kernel", "Kernel"):
            continue
        args = ev.get("args", {})
        s = us_to_ns(ev["ts"])
        key = (args.get("device", ev.get("pid")), args.get("stream", ev.get("tid")))
        name = innermost(gpu.get(key, []), s)
        if name is None and args.get("correlation") in launches:
            pid, tid, t = launches[args["correlation"]]
            name = innermost(cpu.get((pid, tid), []), t)
        p = phases.setdefault(name or "(no phase)", {"calls": 0, "total_ns": 0})
        p["calls"] += 1
        p["total_ns"] += us_to_ns(ev["dur"])
    return phases


def kineto(path):
    doc = json.loads(open_text(path), parse_float=Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    result = kineto_events(events)
    result["phases"] = kineto_phases(events)
    return result


def kineto_events(events):
    dispatches, memcpy, memset = [], [], []
    for ev in events:
        if ev.get("ph") != "X":
            continue
        cat = ev.get("cat")
        s = us_to_ns(ev["ts"]) if cat in ("kernel", "Kernel", "gpu_memcpy", "gpu_memset") else None
        if cat in ("kernel", "Kernel"):
            args = ev.get("args", {})
            dev = args.get("device", ev.get("pid"))
            dispatches.append((ev.get("name", ""), dev, s, s + us_to_ns(ev["dur"])))
        elif cat == "gpu_memcpy":
            memcpy.append(us_to_ns(ev["dur"]))
        elif cat == "gpu_memset":
            memset.append(us_to_ns(ev["dur"]))
    return finish(dispatches, memcpy, memset)


def pick(row, *names):
    low = {k.lower(): v for k, v in row.items()}
    for n in names:
        if n.lower() in low:
            return low[n.lower()]
    return None


def rocprof_trace(path):
    rows = list(csv.DictReader(open_text(path).decode().splitlines()))
    dispatches = []
    for r in rows:
        agent = pick(r, "Agent_Id", "GPU_ID") or "0"
        dev = int(re.search(r"(\d+)$", agent).group(1))
        # rocprof-compute averages its passes: timestamps may be fractional, kept exact.
        s = Fraction(Decimal(pick(r, "Start_Timestamp", "BeginNs")))
        e = Fraction(Decimal(pick(r, "End_Timestamp", "EndNs")))
        dispatches.append((pick(r, "Kernel_Name", "KernelName"), dev, s, e))
    # A rocprof-compute timestamps.csv (or rocprof results.csv) holds no copies: null, not 0.
    cols = set(rows[0].keys()) if rows else set()
    rocprofv3 = cols & {"Guid", "Stream_Id", "Kind"} or {"Dispatch_Id", "Thread_Id"} <= cols
    return finish(dispatches, [] if rocprofv3 else None, [] if rocprofv3 else None)


def stats_csv(path):
    rows = list(csv.DictReader(open_text(path).decode().splitlines()))
    kernels = {}
    for r in rows:
        k = kernels.setdefault(r["Name"], {"calls": 0, "total_ns": 0})
        k["calls"] += int(r["Calls"])
        k["total_ns"] += int(r["TotalDurationNs"])
        if "MinNs" in r:
            k["min_ns"] = int(r["MinNs"])
            k["max_ns"] = int(r["MaxNs"])
    return {
        "summary": {
            "kernel_time_ns": sum(k["total_ns"] for k in kernels.values()),
            "kernel_count": sum(k["calls"] for k in kernels.values()),
            "distinct_kernels": len(kernels),
        },
        "kernels": kernels,
    }


def rocpd(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    q = 'SELECT name, agent_type_index, start, "end" FROM kernels'
    dispatches = [(n, d, s, e) for n, d, s, e in con.execute(q)]
    memcpy = [e - s for s, e in con.execute('SELECT start, "end" FROM memory_copies')]
    # No copy rows: the run was not traced for copies; null, not 0.
    return finish(dispatches, memcpy or None, [] if memcpy else None)


def rocprof_compute_db(path):
    """rocprof-compute analysis database: compute_dispatch joined to compute_kernel by
    kernel_uuid; no copies recorded (null)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    q = """SELECT k.kernel_name, d.gpu_id, d.start_timestamp, d.end_timestamp
           FROM compute_dispatch d JOIN compute_kernel k ON k.kernel_uuid = d.kernel_uuid"""
    return finish([tuple(r) for r in con.execute(q)], None, None)


def rocprofv3_json(path):
    """rocprofv3 `-f json` (`*_results.json`): dispatches from buffer_records.kernel_dispatch,
    names from kernel_symbols (formatted_kernel_name, by kernel_id), the GPU index from the
    agent's logical_node_type_id; copies from buffer_records.memory_copy."""
    doc = json.loads(open_text(path))
    dispatches, memcpy = [], []
    for tool in doc["rocprofiler-sdk-tool"]:
        gpu = {a["id"]["handle"]: a.get("logical_node_type_id", 0) for a in tool.get("agents", [])}
        names = {k["kernel_id"]: k.get("formatted_kernel_name") or k["kernel_name"]
                 for k in tool.get("kernel_symbols", [])}
        records = tool.get("buffer_records", {})
        for r in records.get("kernel_dispatch", []):
            info = r["dispatch_info"]
            dispatches.append((names[info["kernel_id"]], gpu[info["agent_id"]["handle"]],
                               r["start_timestamp"], r["end_timestamp"]))
        memcpy += [r["end_timestamp"] - r["start_timestamp"] for r in records.get("memory_copy", [])]
    return finish(dispatches, memcpy, [])


def proton(path):
    """Triton Proton hatchet JSON: every tree node whose metrics have a device_id is a kernel
    (count launches, time (ns) in all), summed by frame name; FLOPs and bytes summed too."""
    tree, devices = json.loads(open_text(path))[:2]
    kernels, work, stack = {}, {}, [tree]
    while stack:
        node = stack.pop()
        m = node.get("metrics", {})
        if "device_id" in m:
            k = kernels.setdefault(node["frame"]["name"], {"calls": 0, "total_ns": 0})
            k["calls"] += m["count"]
            k["total_ns"] += m["time (ns)"]
            for key, v in m.items():
                if key == "bytes" or key.startswith("flops"):
                    work[key] = work.get(key, 0) + v
        stack.extend(node.get("children", []))
    return {"summary": {"kernel_time_ns": sum(k["total_ns"] for k in kernels.values()),
                        "kernel_count": sum(k["calls"] for k in kernels.values()),
                        "distinct_kernels": len(kernels)},
            "kernels": kernels, "work": work,
            "devices": {f"{kind} {i}": d["arch"] for kind, ds in devices.items() for i, d in ds.items()}}


def proton_trace(path):
    """Triton Proton Chrome trace (data="trace"): every complete kernel event, named by the
    innermost frame of its args.call_stack (not its name member), times in µs."""
    doc = json.loads(open_text(path), parse_float=Decimal)
    dispatches = []
    for ev in doc["traceEvents"]:
        if ev.get("ph") == "X" and ev.get("cat") == "kernel":
            s = us_to_ns(ev["ts"])
            dev = ev.get("args", {}).get("device", ev.get("pid"))
            dispatches.append((ev["args"]["call_stack"][-1], dev, s, s + us_to_ns(ev["dur"])))
    return finish(dispatches, [], [])


def nsys(path):
    """Per-kernel figures with the query of NVIDIA's cuda_gpu_kern_sum report (nvidia.md §2.2):
    GROUP BY the demangled name from StringIds; medians computed here."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    q = """SELECT s.value, k.deviceId, k.start, k."end"
           FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName"""
    dispatches = [(n, d, s, e) for n, d, s, e in con.execute(q)]
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    memcpy = [e - s for s, e in con.execute('SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMCPY')] if "CUPTI_ACTIVITY_KIND_MEMCPY" in tables else []
    memset = [e - s for s, e in con.execute('SELECT start, "end" FROM CUPTI_ACTIVITY_KIND_MEMSET')] if "CUPTI_ACTIVITY_KIND_MEMSET" in tables else []
    result = finish(dispatches, memcpy, memset)
    kern_sum = con.execute(
        """SELECT s.value, count(*), sum(k."end" - k.start), min(k."end" - k.start), max(k."end" - k.start)
           FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName
           GROUP BY s.value ORDER BY 3 DESC, 2, 1"""
    ).fetchall()
    for name, calls, total, mn, mx in kern_sum:
        k = result["kernels"][name]
        assert (k["calls"], k["total_ns"], k["min_ns"], k["max_ns"]) == (calls, total, mn, mx)
    return result


def ncu(path):
    """Nsight Compute CSV: per launch, gpu__time_duration.sum (or the SpeedOfLight Duration),
    thousands separators removed; no timeline, so only per-kernel figures and totals."""
    lines = open_text(path).decode().splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith('"ID",'))
    rows = [r for r in csv.reader(l for l in lines[start:] if l and not l.startswith("=="))]
    header, body = rows[0], rows[1:]
    scale = {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6}
    launches = {}
    if "Metric Name" in header:
        mi, ui, vi = header.index("Metric Name"), header.index("Metric Unit"), header.index("Metric Value")
        for r in body:
            if len(r) > vi and r[mi] in ("gpu__time_duration.sum", "Duration"):
                launches[(r[0], r[header.index("Kernel Name")])] = float(r[vi].replace(",", "")) * scale[r[ui]]
    else:
        units, values = body[0], body[1:]
        ti = header.index("gpu__time_duration.sum")
        for r in values:
            launches[(r[0], r[header.index("Kernel Name")])] = float(r[ti].replace(",", "")) * scale[units[ti]]
    kernels = {}
    for (_, name), ns in launches.items():
        kernels.setdefault(name, []).append(round(ns))
    out = {n: {"calls": len(d), "total_ns": sum(d), "min_ns": min(d), "max_ns": max(d),
               "median_ns": float(statistics.median(d))} for n, d in kernels.items()}
    return {"summary": {"kernel_time_ns": sum(sum(d) for d in kernels.values()),
                        "kernel_count": len(launches), "distinct_kernels": len(kernels),
                        "busy_ns": None, "wall_ns": None, "gap_ns": None},
            "kernels": out}


def oracle(path):
    raw = open_text(path)
    if b'"ID","Process ID"' in raw[:1 << 16]:
        return ncu(path)
    if raw.startswith(b"SQLite format 3\0") and b"StringIds" in raw[:1 << 20]:
        return nsys(path)
    if raw.startswith(b"SQLite format 3\0") and b"compute_dispatch" in raw[:1 << 20]:
        return rocprof_compute_db(path)
    if raw.startswith(b"SQLite format 3\0"):
        return rocpd(path)
    if b'"rocprofiler-sdk-tool"' in raw[:64]:
        return rocprofv3_json(path)
    if re.match(rb'\s*\[\s*\{\s*"(children|frame|metrics)"', raw):
        return proton(path)
    if raw.startswith(b'{"displayTimeUnit":"us","traceEvents":[') and b'"call_stack":[' in raw[:1 << 16]:
        return proton_trace(path)
    if raw.lstrip()[:1] in (b"{", b"["):
        return kineto(path)
    header = raw.split(b"\n", 1)[0].decode()
    if "TotalDurationNs" in header:
        return stats_csv(path)
    return rocprof_trace(path)


def main(argv):
    out_dir = Path("tests/expected")
    files = []
    it = iter(argv)
    for a in it:
        if a == "--out-dir":
            out_dir = Path(next(it))
        else:
            files.append(a)
    out_dir.mkdir(parents=True, exist_ok=True)
    for f in files:
        result = oracle(f)
        result["fixture"] = Path(f).name
        dest = out_dir / (Path(f).name + ".oracle.json")
        dest.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
        print(f"{dest}: {result['summary']['kernel_count']} kernels")


if __name__ == "__main__":
    main(sys.argv[1:])
