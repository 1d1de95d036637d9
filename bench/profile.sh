#!/usr/bin/env bash
# Whole-binary benchmark of `kernelab profile` on a generated Kineto trace.
# Usage: bench/profile.sh [SIZE_MB] [REPEATS]   (defaults: 1000 MB, 3 repeats)
# Prints a Markdown table: wall time (median of REPEATS) and peak RSS per case.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-1000}
REPEATS=${2:-3}
OUT=bench/out
mkdir -p "$OUT"
cargo build --release -q -p kernelab -p kernelab-trace --example gen_kineto
BIN=target/release/kernelab
JSON=$OUT/synthetic_${SIZE}MB.json
if [ ! -s "$JSON" ]; then
  echo "generating $JSON" >&2
  target/release/examples/gen_kineto "$SIZE" "$JSON" >&2
fi
if [ ! -s "$JSON.gz" ]; then
  echo "compressing $JSON.gz" >&2
  gzip -6 -c "$JSON" > "$JSON.gz"
fi

# run NAME CMD...: median wall seconds and max peak RSS (MB) over REPEATS runs.
run() {
  local name=$1; shift
  local walls=() rss=0
  for _ in $(seq "$REPEATS"); do
    /usr/bin/time -f "%e %M" -o "$OUT/time.txt" "$@" > /dev/null
    read -r w m < "$OUT/time.txt"
    walls+=("$w")
    [ "$m" -gt "$rss" ] && rss=$m
  done
  local med
  med=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf '| %s | %s | %d |\n' "$name" "$med" "$((rss / 1024))"
  echo "$name|$med" >> "$OUT/results.txt"
}

: > "$OUT/results.txt"
echo "| case | wall s (median of $REPEATS) | peak RSS MB |"
echo "|---|---:|---:|"
run "kernelab profile, ${SIZE} MB .json, 1 core" taskset -c 0 "$BIN" profile "$JSON" --format json
run "kernelab profile, .json.gz, 1 core" taskset -c 0 "$BIN" profile "$JSON.gz" --format json
run "kernelab profile, .json.gz, 2 cores" "$BIN" profile "$JSON.gz" --format json
run "zcat FILE.json.gz > /dev/null" zcat "$JSON.gz"
run "python3 json.load + aggregation, .json" python3 bench/python_profile.py "$JSON"
awk -F'|' '
  $1 ~ /MB .json, 1 core/ {json1=$2}
  $1 ~ /json.gz, 1 core/ {gz1=$2}
  $1 ~ /json.gz, 2 cores/ {gz2=$2}
  $1 ~ /^zcat/ {z=$2}
  $1 ~ /^python3/ {py=$2}
  END {
    printf "\n.json.gz read speed relative to zcat: %.0f%% (2 cores), %.0f%% (1 core)\n", 100*z/gz2, 100*z/gz1;
    printf "python3 json.load + aggregation takes %.1fx as long as kernelab (.json, 1 core)\n", py/json1;
  }' "$OUT/results.txt"
