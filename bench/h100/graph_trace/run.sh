#!/usr/bin/env bash
# Nsight Systems traces of graphs.py on the device machine (issue 44): one with each replayed
# kernel as its graph node (`--cuda-graph-trace=node`), one with the graph as one launch
# (`graph`), each exported to SQLite. Run through the device tool:
#   bash bench/h100/graph_trace/run.sh        (writes under $OUT)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/graph_trace}
mkdir -p "$out"
nsys=$(command -v nsys || ls /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)
echo "nsys: ${nsys:-not found}"
[ -n "$nsys" ] || { find / -name 'nsys' -type f 2>/dev/null | head; exit 3; }
"$nsys" --version
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)"
for mode in node graph; do
  "$nsys" profile --force-overwrite=true --trace=cuda,nvtx --cuda-graph-trace=$mode \
    -o "$out/graph_$mode" python3 "$here/graphs.py" || exit 1
  "$nsys" export --type sqlite --force-overwrite=true -o "$out/graph_$mode.sqlite" "$out/graph_$mode.nsys-rep" || exit 1
  python3 - "$out/graph_$mode.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in db.execute("PRAGMA table_info(CUPTI_ACTIVITY_KIND_KERNEL)")]
print(sys.argv[1], "kernel columns:", cols)
print(db.execute("SELECT count(*), count(graphNodeId), count(DISTINCT graphNodeId), count(DISTINCT graphId) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall())
print([r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")])
PY
done
ls -la "$out"
