#!/usr/bin/env python3
"""One case of bench/python.sh: load a Kineto trace into pandas with one tool and print
`case|load s|rows|frame MB`. Cases: `kernelab-kernels` (kernelab.profile, the kernel table as a
DataFrame: what `kernelab profile` computes), `kernelab-dispatches` (every dispatch as a
DataFrame), `hta` (HolisticTraceAnalysis's TraceAnalysis, which loads every event of the trace
into DataFrames), `tracelens` (AMD TraceLens's TreePerfAnalyzer.from_file, which builds its
event tree with orjson, then its kernel DataFrame `get_df_kernels`), `json` (json.load and a
DataFrame of the kernel events, by hand)."""
import sys
import time

case, path = sys.argv[1], sys.argv[2]
# Imports are start-up, measured on their own by bench/python.sh: the load time is the call.
import pandas  # noqa: E402,F401
import pyarrow  # noqa: E402,F401

if case.startswith("kernelab"):
    import kernelab
elif case == "hta":
    import logging

    logging.disable(logging.WARNING)
    from hta.trace_analysis import TraceAnalysis
elif case == "tracelens":
    from TraceLens import TreePerfAnalyzer
t0 = time.perf_counter()
if case.startswith("kernelab"):
    p = kernelab.profile(path)
    table = p.dispatches if case == "kernelab-dispatches" else p.kernels
    df = table.to_pandas()
elif case == "hta":
    import os

    ta = TraceAnalysis(trace_dir=os.path.dirname(path))
    df = ta.t.get_trace(0)
elif case == "tracelens":
    df = TreePerfAnalyzer.from_file(path).get_df_kernels()
elif case == "json":
    import gzip
    import json

    import pandas as pd

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        doc = json.load(f)
    df = pd.DataFrame([e for e in doc["traceEvents"] if e.get("cat") == "kernel"])
else:
    sys.exit(f"unknown case {case}")
seconds = time.perf_counter() - t0
print(f"{case}|{seconds:.3f}|{len(df)}|{df.memory_usage(deep=True).sum() / 2**20:.1f}")
