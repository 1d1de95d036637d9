#!/usr/bin/env bash
# Exports the real JAX-Toolbox report (tests/fixtures/nsys-2025.5-…-stream_capture.nsys-rep)
# to SQLite with the device machine's Nsight Systems, and counts the kernels that carry graph
# node ids (issue 44, `--by-graph`). Through the device tool: bash bench/h100/graph_trace/export.sh
set -uo pipefail
out=${OUT:-/tmp/graph_export}
mkdir -p "$out"
nsys=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)
echo "nsys: ${nsys:-not found}"; "$nsys" --version
rep=tests/fixtures/nsys-2025.5-jaxtoolbox-cuda_graph_pdl_stream_capture.nsys-rep
"$nsys" export --type sqlite --force-overwrite=true -o "$out/jaxtoolbox.sqlite" "$rep"
echo "export exit $?"
python3 - "$out/jaxtoolbox.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
print(tables)
cols = [r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
print("kernel columns:", cols)
print(db.execute("SELECT count(*), count(graphNodeId), count(DISTINCT graphNodeId), count(DISTINCT graphId) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall())
for t in tables:
    if "GRAPH" in t:
        print(t, [r[1] for r in db.execute(f"PRAGMA table_info({t})")], db.execute(f"SELECT count(*) FROM {t}").fetchall())
PY
ls -la "$out"
