#!/usr/bin/env bash
# Nsight Systems captures of a graph program on the device machine (issue 44, `--by-graph` from
# graph node ids), each exported to SQLite. The `nsys` there (2025.3.1, in Nsight Compute's host
# folder) imports its capture with the QdstrmImporter beside it, which needs elfutils' libdw:
# that machine lacks it, so it is carried in .carry/libdw (or $LIBDW). Through the device tool,
# carrying .carry/libdw (here: mkdir -p .carry/libdw && cp -L /usr/lib/x86_64-linux-gnu/{libdw.so.1,libelf.so.1,liblzma.so.5,libbz2.so.1.0} .carry/libdw/):
#   bash bench/h100/graph_trace/capture_import.sh   (writes under $OUT; SCRIPT= another program)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/graph_capture}
script=${SCRIPT:-graphs_nvtx.py}
mkdir -p "$out"
libdw=${LIBDW:-.carry/libdw}
[ -d "$libdw" ] && export LD_LIBRARY_PATH=$(cd "$libdw" && pwd)${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
host=$(ls -d /opt/nvidia/nsight-compute/*/host | head -1)
nsys=$host/target-linux-x64/nsys
"$nsys" --version
python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)"
for mode in ${MODES:-node graph}; do
  base=$out/${script%.py}_$mode
  "$nsys" profile --force-overwrite=true --trace=cuda,nvtx --sample=none --cpuctxsw=none \
    --cuda-graph-trace=$mode -o "$base" python3 "$here/$script" || exit 1
  "$nsys" export --type sqlite --force-overwrite=true -o "$base.sqlite" "$base.nsys-rep" >/dev/null || exit 1
  python3 - "$base.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(sys.argv[1], db.execute("SELECT count(*), count(graphNodeId), count(DISTINCT graphNodeId) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchall())
print([r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table' AND name LIKE '%GRAPH%'")])
PY
done
rm -f "$out"/*.qdstrm
ls -la "$out"
