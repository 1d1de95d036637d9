#!/usr/bin/env bash
# Runs `kernelab kernel run` on every launch spec of tests/fixtures/kernel on an H200 and
# writes Markdown, JSON and the samples JSONL under $OUT (default bench/out/kernel).
# Usage (through the device tool): bench/h200/run_kernel.sh [path/to/kernelab]
set -u
KL=${1:-target/release/kernelab}
OUT=${OUT:-bench/out/kernel}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>&1
for spec in tests/fixtures/kernel/*.toml; do
  name=$(basename "$spec" .toml)
  echo "== $name"
  "$KL" kernel run "$spec" --samples "$OUT/all.samples.jsonl" --format json --out "$OUT/$name.json" 2> /tmp/err.txt
  echo "exit $?"; cat /tmp/err.txt
done
