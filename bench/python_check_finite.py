"""`kernelab.check.finite` of a large float32 array: wall time of the call and how much it
raises the process's peak RSS (issue 39). Run with the wheel's interpreter:

    python bench/python_check_finite.py [MiB]     # default 400

Prints one JSON line: the array's size, the call's seconds, the peak RSS growth (MiB) and the
verdict (one NaN is planted, so `pass` is false).
"""

import json
import resource
import sys
import time

import numpy as np

import kernelab

mib = int(sys.argv[1]) if len(sys.argv) > 1 else 400
a = np.ones(mib * 2**20 // 4, dtype=np.float32)
a[-1] = np.nan
kernelab.check.finite(np.ones(4, dtype=np.float32))  # imports and threads, before the baseline
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
doc = kernelab.check.finite(a)
seconds = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"array_mib": a.nbytes / 2**20, "seconds": round(seconds, 3),
                  "peak_rss_growth_mib": round((peak - base) / 1024, 1), "pass": doc["pass"]}))
