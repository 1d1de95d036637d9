#!/usr/bin/env bash
# Nsight Systems on every core (issue 30): the kernel table read on one thread against the
# rowid ranges read on every core, side by side in one run (interleaved), with the plain SQL
# `GROUP BY shortName` through Python's sqlite3 as the anchor, two one-thread reads at once
# (the machine's ceiling for two cores) and peak RSS at two sizes (bytes per kernel).
# Usage: bench/nsys_parallel.sh [DOUBLINGS] [REPEATS] [LARGE_DOUBLINGS]
#   (defaults: 11 = the issue's 214 MB export, 5 repeats, 13 for the bytes-per-kernel slope;
#    LARGE_DOUBLINGS 0 skips the second size)
# Exports go to bench/out/ (git-ignored), built by bench/nsys_big.py. `kernelab profile` is
# timed too when $CARGO_TARGET_DIR/release/kernelab (or $KERNELAB_BIN) exists. Set
# KERNELAB_BENCH_NOBUILD=1 to use the binaries already built (e.g. on a machine without cargo).
set -euo pipefail
cd "$(dirname "$0")/.."
DOUBLINGS=${1:-11}
REPEATS=${2:-5}
LARGE=${3:-13}
T=${CARGO_TARGET_DIR:-target}
[ -n "${KERNELAB_BENCH_NOBUILD:-}" ] || cargo build --release -q -p kernelab-trace --example read_trace
OUT=bench/out
mkdir -p "$OUT"
DB=$OUT/nsys_x$DOUBLINGS.sqlite
[ -s "$DB" ] || python3 bench/nsys_big.py "$DB" "$DOUBLINGS" >&2
BIG=
if [ "$LARGE" != 0 ]; then
  BIG=$OUT/nsys_x$LARGE.sqlite
  [ -s "$BIG" ] || python3 bench/nsys_big.py "$BIG" "$LARGE" >&2
fi
BIN=${KERNELAB_BIN:-$T/release/kernelab}
[ -x "$BIN" ] || BIN=
exec python3 bench/nsys_parallel.py "$DB" "$REPEATS" "$T/release/examples/read_trace" "$BIN" "$BIG"
