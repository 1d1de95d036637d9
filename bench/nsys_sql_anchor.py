#!/usr/bin/env python3
"""The SQL anchor of issue 30: the plain per-kernel aggregation of an Nsight Systems export
through Python's sqlite3, `SELECT shortName, count(*), sum(end - start) ... GROUP BY shortName`.
Prints the group count, the kernel count and the summed kernel time (which kernelab must match).

Usage: bench/nsys_sql_anchor.py EXPORT.sqlite
"""
import sqlite3
import sys

db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = db.execute(
    'SELECT shortName, count(*), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY shortName'
).fetchall()
print(f"groups {len(rows)} dispatches {sum(r[1] for r in rows)} kernel_time_ns {sum(r[2] for r in rows)}")
