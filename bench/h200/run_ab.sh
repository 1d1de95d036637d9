#!/usr/bin/env bash
# On the H200 (device tool): the A/B runs of docs/benchmarks.md for issue 6.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
K=.carry/kernelab
S=bench/h200/recompute_ab.py
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
# 1. In one process: 16 A/A pairs then 96 pairs, w4s3 vs w8s2; and an A/A-only file.
python3 $S inproc --base w4s3 --cand w8s2 --aa 16 --pairs 96 --out $OUT/inproc_w4s3_w8s2.csv
python3 $S inproc --base w4s3 --cand w4s3 --aa 0 --pairs 64 --out $OUT/inproc_aa_w4s3.csv
python3 $S inproc --base w4s3 --cand w4s4 --aa 0 --pairs 96 --out $OUT/inproc_w4s3_w4s4.csv
# 2. Fresh processes through kernelab ab, and hyperfine on the same two commands.
$K ab --baseline "python3 $S proc --cfg w4s3" --candidate "python3 $S proc --cfg w8s2" \
  --metric-regex 'median_us=median_us=([0-9.]+)' --aa-pairs 4 --max-pairs 8 --warmup 1 \
  --samples $OUT/ab_proc_w4s3_w8s2.jsonl --format md 2>&1 | tee $OUT/ab_proc.md
.carry/hyperfine -N --runs 5 --warmup 1 --export-json $OUT/hyperfine.json \
  "python3 $S proc --cfg w4s3" "python3 $S proc --cfg w8s2" 2>&1 | tail -12
ls -la $OUT
