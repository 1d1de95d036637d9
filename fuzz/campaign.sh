#!/usr/bin/env bash
# A fuzzing campaign with the one `all` binary: every target (or the ones named) fuzzed in
# parallel for SECONDS_PER_TARGET (default 600) each, from CORPUS/<target>, which grows in place.
# After a crash, timeout or out-of-memory a target is restarted for the time it has left (at most
# MAX_RESTARTS times), so one finding does not end its campaign. Prints a table of target,
# executions (libFuzzer's final stat::number_of_executed_units, summed over restarts), corpus
# size and findings (artifact files), and writes $OUT/fuzz-campaign.tar.gz holding the table,
# the logs, the artifacts and (unless PACK_CORPUS=0) the grown corpora.
#
#   fuzz/campaign.sh ALL_BINARY CORPUS [TARGET...]
#
# Targets default to those in the corpus folder. $OUT defaults to the current folder. Exit 1 when
# any target found something.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 ALL_BINARY CORPUS [TARGET...]" >&2
  exit 2
fi
bin=$(realpath "$1")
corpus=$(realpath "$2")
shift 2
seconds=${SECONDS_PER_TARGET:-600}
restarts=${MAX_RESTARTS:-5}
out=${OUT:-$PWD}
if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for d in "$corpus"/*/; do targets+=("$(basename "$d")"); done
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/logs" "$work/artifacts" "$out"

run_target() { # target: runs until its time is spent, restarting after findings
  local t=$1 deadline=$((SECONDS + seconds)) runs=0 left n
  mkdir -p "$corpus/$t" "$work/artifacts/$t"
  for ((n = 0; n <= restarts; n++)); do
    left=$((deadline - SECONDS))
    [ "$left" -ge 1 ] || break
    if KERNELAB_FUZZ_TARGET=$t "$bin" "$corpus/$t" -max_total_time="$left" \
      -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$work/artifacts/$t/" >"$work/logs/$t.$n.log" 2>&1; then
      break
    fi
    # A target that cannot start (unknown name, no corpus folder) is not restarted.
    grep -q '^stat::number_of_executed_units' "$work/logs/$t.$n.log" ||
      grep -q 'Test unit written to' "$work/logs/$t.$n.log" || break
  done
  runs=$(cat "$work/logs/$t".*.log | sed -n 's/^stat::number_of_executed_units: *//p' |
    awk '{s += $1} END {print s + 0}')
  echo "$runs" >"$work/logs/$t.runs"
}

pids=()
for t in "${targets[@]}"; do
  run_target "$t" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done

table="$work/table.txt"
{
  printf '%-16s %14s %8s %8s\n' target executions corpus findings
  for t in "${targets[@]}"; do
    findings=$(find "$work/artifacts/$t" -type f \
      \( -name 'crash-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'leak-*' \) | wc -l)
    [ "$findings" -eq 0 ] || echo "$t" >>"$work/found"
    printf '%-16s %14s %8s %8s\n' "$t" "$(cat "$work/logs/$t.runs" 2>/dev/null || echo '?')" \
      "$(find "$corpus/$t" -type f | wc -l)" "$findings"
  done
  echo "($seconds s per target, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(basename "$bin"))"
} | tee "$table"

mkdir -p "$work/pack"
cp "$table" "$work/pack/table.txt"
cp -r "$work/logs" "$work/artifacts" "$work/pack/"
# PACK_CORPUS=0 leaves the grown corpora out of the tarball (they stay in CORPUS).
if [ "${PACK_CORPUS:-1}" != 0 ]; then
  mkdir -p "$work/pack/corpus"
  for t in "${targets[@]}"; do cp -r "$corpus/$t" "$work/pack/corpus/"; done
fi
tar czf "$out/fuzz-campaign.tar.gz" -C "$work/pack" .
echo "wrote $out/fuzz-campaign.tar.gz ($(du -h "$out/fuzz-campaign.tar.gz" | cut -f1))"
# Exit 1 when any target found something (the table and the tarball say what).
[ ! -s "$work/found" ]
