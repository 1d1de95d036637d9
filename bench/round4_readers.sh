#!/usr/bin/env bash
# Issue 44's readers on their real files, each beside an independent reading of the same file
# in one run (best of 3 wall times, peak RSS from /usr/bin/time): `kernelab profile --format
# json` (release build) against Python's json/sqlite3 reading the same records.
#   cargo build --release -p kernelab && bash bench/round4_readers.sh
set -euo pipefail
k=${KERNELAB:-target/release/kernelab}
fx=tests/fixtures
run() { # label command...
  local label=$1 best=999999 rss=0
  shift
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o /tmp/round4.time "$@" > /dev/null
    read -r s m < /tmp/round4.time
    best=$(python3 -c "print(min($best, $s))"); rss=$m
  done
  printf '%-60s %8s s %6s MB\n' "$label" "$best" "$((rss / 1024))"
}
json=$fx/rocprofv3-json-rocm7-mi350x-908_results.json.gz
run "kernelab profile rocprofv3 JSON (MI350X, 43,915 dispatches)" $k profile "$json" --format json
run "python3 gzip+json.load of the same file" python3 -c "import gzip,json,sys; d=json.load(gzip.open(sys.argv[1])); print(len(d['rocprofiler-sdk-tool'][0]['buffer_records']['kernel_dispatch']))" "$json"
node=$fx/nsys-2025.3-h100-torch_graphs_node.sqlite
run "kernelab profile --by-graph nsys graph export (204 kernels)" $k profile "$node" --by-graph --format json
run "python3 sqlite3: kernels, node creations and NVTX ranges" python3 -c "
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for t in ('CUPTI_ACTIVITY_KIND_KERNEL', 'CUDA_GRAPH_NODE_EVENTS', 'NVTX_EVENTS', 'CUPTI_ACTIVITY_KIND_RUNTIME'):
    db.execute(f'SELECT * FROM {t}').fetchall()" "$node"
