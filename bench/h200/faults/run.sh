#!/usr/bin/env bash
# GPU faults through kernelab kernel run on an H200: builds fault_kernels.cu, then runs a
# kernel that writes to an illegal address and one that never returns (with --timeout 5).
# Usage (through the device tool): bench/h200/faults/run.sh [path/to/kernelab]
set -u
KL=$(realpath "${1:-target/release/kernelab}")
OUT=${OUT:-bench/out/faults}
mkdir -p "$OUT"
cd "$(dirname "$0")"
nvcc --version | tail -2
nvcc -cubin -arch=sm_90 -o fault_kernels.cubin fault_kernels.cu && cp fault_kernels.cubin "$OUT/"
for v in illegal hang; do
  echo "== copy_ok vs copy_$v"
  start=$(date +%s%N)
  timeout 120 "$KL" kernel run "ok_vs_$v.toml" --timeout 5 --samples /tmp/s.jsonl --format md > "$OUT/$v.md" 2> "$OUT/$v.err"
  code=$?
  echo "exit $code after $(( ($(date +%s%N) - start) / 1000000 )) ms"
  cat "$OUT/$v.err"
done
nvidia-smi --query-gpu=name,memory.used --format=csv
