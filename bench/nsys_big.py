#!/usr/bin/env python3
"""Builds a large Nsight Systems SQLite export from the repository's cloverleaf fixture by
doubling its kernel table: each round appends a copy of every kernel row, shifted later in time
by the table's whole span (so rows stay in start order) with new correlation and grid ids.

Usage: bench/nsys_big.py OUT.sqlite DOUBLINGS
DOUBLINGS may have a fraction: 13.2 doubles 13 times, then appends a copy of the first 20% of
the rows (13.2 gives a file of about 1.06 GB, 12.9 M kernels).
Prints the file size, the kernel count and the exact kernel time (sum of end - start), which
`kernelab profile OUT.sqlite` must report.
"""
import os
import shutil
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, "..", "tests", "fixtures", "nsys-2024.5-a100-cloverleaf-cuda.sqlite")
TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
# Columns shifted per copy: times by the span, ids by their range.
TIMES = ("start", "end")
IDS = ("correlationId", "gridId")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, rounds = sys.argv[1], float(sys.argv[2])
    shutil.copyfile(FIXTURE, out)
    db = sqlite3.connect(out)
    cols = [r[1] for r in db.execute(f"PRAGMA table_info({TABLE})")]
    full = int(rounds)
    for i in range(full + 1):
        part = 1.0 if i < full else rounds - full
        if part <= 0:
            break
        lo, hi = db.execute(f'SELECT min(start), max("end") FROM {TABLE}').fetchone()
        span = hi - lo + 1000
        shifts = {c: f'"{c}" + {span}' for c in TIMES}
        for c in IDS:
            top = db.execute(f'SELECT coalesce(max("{c}"), 0) FROM {TABLE}').fetchone()[0]
            shifts[c] = f'"{c}" + {top + 1}'
        select = ", ".join(shifts.get(c, f'"{c}"') for c in cols)
        n = db.execute(f"SELECT count(*) FROM {TABLE}").fetchone()[0]
        limit = n if part >= 1.0 else int(n * part)
        db.execute(f"INSERT INTO {TABLE} SELECT {select} FROM {TABLE} ORDER BY rowid LIMIT {limit}")
        db.commit()
    n, total = db.execute(f'SELECT count(*), sum("end" - start) FROM {TABLE}').fetchone()
    db.close()
    print(f"bytes {os.path.getsize(out)} kernels {n} kernel_time_ns {total}")


if __name__ == "__main__":
    main()
