#!/usr/bin/env bash
# Issue 15 performance figures: `kernelab profile` on generated Kineto traces (one core) and on
# a large Nsight Systems export beside the plain SQL aggregation through the sqlite3 CLI.
# Usage: bench/issue15.sh [KERNELAB_BINARY]   (default: target/release/kernelab, built here)
# Inputs are generated into bench/out/ (git-ignored) when missing. Prints one line per run:
#   case | wall s | user CPU s | sys CPU s | peak RSS KB
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/out
mkdir -p "$OUT"
if [ $# -ge 1 ]; then
  BIN=$1
else
  cargo build --release -q -p kernelab
  BIN=target/release/kernelab
fi
cargo build --release -q -p kernelab-trace --example gen_kineto
GEN=target/release/examples/gen_kineto

make_json() { # NAME SIZE_MB [--long]
  local f=$OUT/$1.json
  [ -s "$f" ] || "$GEN" ${3:-} "$2" "$f" >&2
}
make_json synthetic_250MB 250
make_json synthetic_1000MB 1000
make_json long_250MB 250 --long
make_json long_1000MB 1000 --long
[ -s "$OUT/nsys_x11.sqlite" ] || python3 bench/nsys_big.py "$OUT/nsys_x11.sqlite" 11 >&2
[ -s "$OUT/nsys_1GB.sqlite" ] || python3 bench/nsys_big.py "$OUT/nsys_1GB.sqlite" 13.2 >&2

run() { # NAME CMD...
  local name=$1; shift
  /usr/bin/time -f "%e|%U|%S|%M" -o "$OUT/time.txt" "$@" > /dev/null
  echo "$name|$(cat "$OUT/time.txt")"
}

echo "# $(date -u +%FT%TZ) $(uptime | sed 's/.*load/load/')"
echo "case|wall s|user s|sys s|peak RSS KB"
for f in synthetic_250MB synthetic_1000MB long_250MB long_1000MB; do
  run "profile $f.json, taskset -c 0" taskset -c 0 "$BIN" profile "$OUT/$f.json" --format json
done
SQL='SELECT s.value, count(*), sum(k."end" - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName'
for f in nsys_x11 nsys_1GB; do
  run "profile $f.sqlite" "$BIN" profile "$OUT/$f.sqlite" --format json
  run "sqlite3 $f.sqlite, GROUP BY k.demangledName" sqlite3 "$OUT/$f.sqlite" "$SQL GROUP BY k.demangledName"
  run "sqlite3 $f.sqlite, GROUP BY s.value" sqlite3 "$OUT/$f.sqlite" "$SQL GROUP BY s.value"
done
echo "# $(uptime | sed 's/.*load/load/')"
