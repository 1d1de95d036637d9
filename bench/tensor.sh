#!/usr/bin/env bash
# Benchmark of `kernelab check` on two raw bf16 tensors of SIZE_MIB each (default 4096 = 4 GiB):
# bitwise and close comparisons on 1 and 2 cores; wall time, throughput over both tensors'
# bytes, and peak RSS. Inputs are generated into bench/out/tensor/ (git-ignored).
# Usage: bench/tensor.sh [SIZE_MIB]
set -euo pipefail
cd "$(dirname "$0")/.."
MIB=${1:-4096}
OUT=bench/out/tensor
mkdir -p "$OUT"
cargo build --release -q -p kernelab -p kernelab-tensor --example gen_bf16
BIN=target/release/kernelab
A=$OUT/a_${MIB}.bf16; B=$OUT/b_${MIB}.bf16
[ -s "$A" ] || target/release/examples/gen_bf16 "$MIB" "$A"
[ -s "$B" ] || target/release/examples/gen_bf16 "$MIB" "$B" 1000003
C=$OUT/c_${MIB}.bf16   # every element one ULP away from A: the close comparison's worst case
[ -s "$C" ] || target/release/examples/gen_bf16 "$MIB" "$C" 1
N=$((MIB * 1048576 / 2))
cat "$A" "$B" "$C" > /dev/null   # warm the page cache: this measures compute, not the disk
BYTES=$((MIB * 1048576 * 2))
echo "| case | cores | wall s | GB/s (both tensors) | GB/s per core | peak RSS MB |"
echo "|---|---:|---:|---:|---:|---:|"
for mode in bitwise bitwise-all-differ close close-all-differ; do
  for cores in 1 2; do
    cpus=$( [ "$cores" = 1 ] && echo 0 || echo 0,1 )
    cmd=${mode%%-*}; other=$B; [ "$mode" != "$cmd" ] && other=$C
    /usr/bin/time -f "%e %M" -o "$OUT/time.txt" env RAYON_NUM_THREADS=$cores taskset -c "$cpus" \
      "$BIN" check "$cmd" "$A" "$other" --dtype bf16 --shape "$N" --format json > "$OUT/$mode.json" || true
    read -r w m < <(tail -1 "$OUT/time.txt")
    awk -v name="$mode" -v c="$cores" -v w="$w" -v b="$BYTES" -v m="$m" \
      'BEGIN { printf "| check %s | %d | %.2f | %.2f | %.2f | %d |\n", name, c, w, b/1e9/w, b/1e9/w/c, m/1024 }'
  done
done
python3 -c "import json; d=json.load(open('$OUT/bitwise.json')); print('bitwise: differing', d['tensors'][0]['result']['differing'], 'of', d['tensors'][0]['result']['elements'])"
