#!/usr/bin/env bash
# Kineto on every core (issue 30): the one-thread reader against the parallel one on a generated
# uncompressed trace, side by side in one run (interleaved), with Python's json.load as the anchor
# and the gzip input (still one scanning thread beside decompression) for reference.
# Usage: bench/kineto_parallel.sh [SIZE_MB] [REPEATS]   (defaults: 200 MB, 5 repeats)
# The trace goes to bench/out/ (git-ignored). `kernelab profile` is timed too when
# $CARGO_TARGET_DIR/release/kernelab (or $KERNELAB_BIN) exists.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-200}
REPEATS=${2:-5}
T=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p kernelab-trace --example gen_kineto --example read_trace
OUT=bench/out
mkdir -p "$OUT"
JSON=$OUT/synthetic_${SIZE}MB.json
[ -s "$JSON" ] || "$T/release/examples/gen_kineto" "$SIZE" "$JSON" >&2
[ -s "$JSON.gz" ] || gzip -6 -c "$JSON" > "$JSON.gz"
BIN=${KERNELAB_BIN:-$T/release/kernelab}
[ -x "$BIN" ] || BIN=
exec python3 bench/kineto_parallel.py "$JSON" "$REPEATS" "$T/release/examples/read_trace" "$BIN"
