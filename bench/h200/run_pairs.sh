#!/usr/bin/env bash
# On the H200 (through the device tool): three configs of recompute_w_u_fwd_kernel, three
# fresh processes each, interleaved; the traces come back as $OUT/gdn_traces.tar.
set -euo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
mkdir -p /tmp/traces
for run in 1 2 3; do
  for cfg in "4 3" "8 2" "2 4"; do
    set -- $cfg
    python3 bench/h200/gdn_profile.py --warps "$1" --stages "$2" --iters 5 --out "/tmp/traces/gdn_w$1s$2_run$run.json.gz"
  done
done
tar cf "$OUT/gdn_traces.tar" -C /tmp/traces .
ls -la /tmp/traces "$OUT"
