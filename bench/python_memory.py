#!/usr/bin/env python3
"""Memory of `kernelab.profile(...).dispatches.to_pandas()` (issue 29), measured as growth in one
process over a control: the same calls on a tiny trace first, so that what every first call
pays once (the extension's and pyarrow's code pages, pandas's lazy imports, allocator pools)
is not counted. Prints the process's resident memory (from /proc/self/statm) and peak
(`ru_maxrss`) before and after each step, the dispatch store's size (rows × 28 bytes: start,
duration, name and context ids, with correlation ids) and the frame's own size
(`memory_usage(deep=True)`).

Usage: python_memory.py TINY_TRACE BIG_TRACE [split_blocks=True|False]"""
import gc
import os
import resource
import sys

import pandas  # noqa: F401  (start-up, not measured)
import pyarrow

import kernelab

tiny, big = sys.argv[1], sys.argv[2]
split = (sys.argv[3] if len(sys.argv) > 3 else "split_blocks=True").split("=")[1] == "True"
PAGE = os.sysconf("SC_PAGE_SIZE")


try:
    import ctypes

    _trim = ctypes.CDLL("libc.so.6").malloc_trim
except (OSError, AttributeError):  # not glibc: RSS then includes freed heap pages
    _trim = None


def rss():
    """Resident bytes, after giving freed heap pages back to the system (glibc's
    `malloc_trim`), so that what is counted is what is held, not what the allocator keeps."""
    if _trim is not None:
        _trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


def peak():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def mb(x):
    return f"{x / 2**20:.1f}"


# The control: every step once on the tiny trace.
p = kernelab.profile(tiny)
df = p.dispatches.to_pandas(split_blocks=split)
del df, p
gc.collect()
r0, p0 = rss(), peak()
p = kernelab.profile(big)
r1, p1 = rss(), peak()
t = p.dispatches
r2 = rss()
df = t.to_pandas(split_blocks=split)
r3, p3 = rss(), peak()
del t
gc.collect()
r4 = rss()
rows = len(df)
store = rows * 28
frame = int(df.memory_usage(deep=True).sum())
print(f"rows {rows}; split_blocks={split}")
print(f"after the control: rss {mb(r0)} MB, peak {mb(p0)} MB")
print(f"read (store): rss +{mb(r1 - r0)} MB, peak +{mb(p1 - p0)} MB")
print(f"dispatches table: rss +{mb(r2 - r1)} MB")
print(f"to_pandas: rss +{mb(r3 - r2)} MB")
print(f"table dropped: rss +{mb(r4 - r0)} MB over the control, peak +{mb(p3 - p0)} MB")
print(f"store {mb(store)} MB, frame {mb(frame)} MB, store + frame {mb(store + frame)} MB")
print(f"growth over the control / (store + frame): {(r4 - r0) / (store + frame):.2f} after, "
      f"{(p3 - p0) / (store + frame):.2f} at peak")
print(f"RESULT|{rows}|{r4 - r0}|{p3 - p0}|{store}|{frame}|{split}")
