#!/usr/bin/env python3
"""The plain-Python baseline of bench/profile.sh: json.load a Kineto trace (gzip or not) and
aggregate kernel time per name, as a script written by hand would."""
import gzip
import json
import sys

path = sys.argv[1]
opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
with opener(path, "rb") as f:
    doc = json.load(f)
totals = {}
for ev in doc["traceEvents"]:
    if ev.get("ph") == "X" and ev.get("cat") == "kernel":
        t = totals.setdefault(ev["name"], [0, 0.0])
        t[0] += 1
        t[1] += ev["dur"]
kernel_time = sum(t[1] for t in totals.values())
print(f"kernels {sum(t[0] for t in totals.values())} kernel_time_us {kernel_time:.3f}")
