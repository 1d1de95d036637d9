#!/usr/bin/env bash
# The Python module (#29) on a generated Kineto trace, beside the CLI and HTA's loader, in one
# run: `kernelab.profile` into pandas against `kernelab profile --format json` (the 1.1× target),
# peak memory against the dispatch store plus the frame.
# Usage: bench/python.sh [SIZE_MB] [REPEATS]   (defaults: 100 MB, 3 repeats)
# Builds the release wheel into bench/out/venv (with HolisticTraceAnalysis from PyPI when it
# installs) and target/release/kernelab; the trace goes to bench/out/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE=${1:-100}
REPEATS=${2:-3}
OUT=bench/out
mkdir -p "$OUT"
cargo build --release -q -p kernelab
cargo build --release -q -p kernelab-trace --example gen_kineto
VENV=$OUT/venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q -r tests/python/requirements.txt
"$VENV/bin/pip" install -q HolisticTraceAnalysis==0.5.0 || echo "HolisticTraceAnalysis did not install: its case is skipped" >&2
# AMD's TraceLens is not on PyPI (PyPI's `tracelens` is an unrelated package): from its
# repository at the commit measured (or a copy of it: TRACELENS_SRC=DIR), without its optional
# stacks (xprof, SharePoint clients).
"$VENV/bin/pip" install -q --no-deps "${TRACELENS_SRC:-TraceLens @ git+https://github.com/AMD-AGI/TraceLens@171dd747}" \
  && "$VENV/bin/pip" install -q orjson tqdm tabulate openpyxl pyyaml matplotlib \
  || echo "TraceLens did not install: its case is skipped" >&2
PATH="$PWD/$VENV/bin:$PATH" CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}" "$VENV/bin/pip" install -q --no-build-isolation --force-reinstall --no-deps .
DIR=$OUT/py_${SIZE}MB
mkdir -p "$DIR"
JSON=$DIR/rank-0.json
[ -s "$JSON" ] || target/release/examples/gen_kineto "$SIZE" "$JSON" >&2
BIN=target/release/kernelab

# run NAME CMD...: median wall seconds and the largest peak RSS (MB) over REPEATS runs.
run() {
  local name=$1; shift
  local walls=() rss=0 extra=""
  for _ in $(seq "$REPEATS"); do
    /usr/bin/time -f "%e %M" -o "$OUT/time.txt" "$@" > "$OUT/stdout.txt"
    read -r w m < "$OUT/time.txt"
    walls+=("$w")
    [ "$m" -gt "$rss" ] && rss=$m
    extra=$(tail -1 "$OUT/stdout.txt" | awk -F'|' 'NF==4 {printf "%s rows, frame %s MB, load %s s", $3, $4, $2}')
  done
  local med
  med=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf '| %s | %s | %d | %s |\n' "$name" "$med" "$((rss / 1024))" "$extra"
}

echo "# $(date -u +%FT%TZ), $(du -m "$JSON" | cut -f1) MB trace, $(nproc) cores, $(uptime | sed 's/.*load/load/')"
echo "| case | wall s (median of $REPEATS) | peak RSS MB | rows, frame, load time in Python |"
echo "|---|---:|---:|---|"
PY=$VENV/bin/python
run "python -c 'import kernelab, pandas, pyarrow' (start-up only)" "$PY" -c "import kernelab, pandas, pyarrow"
run "kernelab profile --format json (CLI)" "$BIN" profile "$JSON" --format json
run "kernelab.profile → kernels.to_pandas()" "$PY" bench/python_load.py kernelab-kernels "$JSON"
run "kernelab.profile → dispatches.to_pandas()" "$PY" bench/python_load.py kernelab-dispatches "$JSON"
if "$PY" -c "import hta" 2>/dev/null; then
  run "HTA TraceAnalysis(trace_dir) (all events)" "$PY" bench/python_load.py hta "$JSON"
fi
if "$PY" -c "from TraceLens import TreePerfAnalyzer" 2>/dev/null; then
  run "TraceLens TreePerfAnalyzer.from_file → get_df_kernels()" "$PY" bench/python_load.py tracelens "$JSON"
fi
run "json.load + DataFrame of kernel events" "$PY" bench/python_load.py json "$JSON"
KERNELS=$("$BIN" profile "$JSON" --format json | "$PY" -c "import json,sys; print(json.load(sys.stdin)['summary']['kernel_count'])")
echo
echo "dispatch store with correlation ids: $KERNELS dispatches × 28 bytes = $(awk -v k="$KERNELS" 'BEGIN {printf "%.1f", k * 28 / 1048576}') MB"
echo
echo "Interleaved in one process, median of 9 (seconds; ratio to the CLI):"
echo
echo "| case | s | × CLI |"
echo "|---|---:|---:|"
"$PY" bench/python_vs_cli.py "$BIN" "$JSON" 9
echo
echo "Memory in one process, growth over a control run on a small real trace (bench/python_memory.py):"
echo
for split in True False; do
  "$PY" bench/python_memory.py tests/fixtures/kineto-cuda-simple_add-benchmark_trace.json.gz "$JSON" "split_blocks=$split"
  echo
done
