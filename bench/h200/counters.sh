#!/usr/bin/env bash
# `kernelab counters` on an H200 (issue #17): copy_scalar vs copy_vec4 and recompute_w_u w4s3 vs
# w8s2 under Nsight Compute, one process per metric group (all metrics in one group), 3 repeats
# per build, JSON and Markdown under $OUT, with every ncu process's CSV and stderr, the
# `ncu --query-metrics` listing and `ncu --version`.
# Usage (through the device tool, the release binary carried as .carry/kernelab):
#   bench/h200/counters.sh [path/to/kernelab]
set -u
KL=${1:-.carry/kernelab}
OUT=${OUT:-bench/out/counters}
mkdir -p "$OUT"
METRICS=dram__bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum
METRICS=$METRICS,sm__throughput.avg.pct_of_peak_sustained_elapsed
METRICS=$METRICS,lts__t_sector_hit_rate.pct,lts__t_sectors_lookup_hit.sum,lts__t_sectors_lookup_miss.sum
METRICS=$METRICS,sm__warps_active.avg.pct_of_peak_sustained_active
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv
  command -v ncu; ncu --version
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
ncu --query-metrics > "$OUT/ncu_query_metrics.txt" 2> "$OUT/ncu_query_metrics.stderr"
echo "query-metrics exit $? ($(wc -l < "$OUT/ncu_query_metrics.txt") lines)"
for pair in copy_scalar_vs_vec4 recompute_w4s3_vs_w8s2; do
  spec=tests/fixtures/kernel/$pair.toml
  echo "== $pair"
  "$KL" --record "$OUT/bundle" --label "$pair" counters "$spec" --metrics "$METRICS" \
    --repeats 3 --timeout 300 --work-dir "$OUT/work_$pair" --format json --out "$OUT/$pair.json" \
    2> "$OUT/$pair.stderr"
  echo "exit $?"; cat "$OUT/$pair.stderr"
done
# Markdown rendered from the JSON records (no second profiling run).
"$KL" report "$OUT/bundle" --format md --out "$OUT/counters.md" 2>&1
ls -la "$OUT"
