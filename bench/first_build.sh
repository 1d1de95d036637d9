#!/usr/bin/env bash
# The README's first command as a new user meets it: a fresh clone of this checkout's HEAD in a
# temporary folder, built from cold into a target folder of its own (CARGO_TARGET_DIR), timed,
# and the figure printed as the README gives it (issues 30, 41). Crate sources come from the
# local cargo registry (`cargo fetch` first; downloads are not timed). Run it on a quiet machine:
# every other build on it slows the figure down.
#   bench/first_build.sh [--all] [WORK_DIR]
# --all adds, on further fresh clones, the same command in the release profile and then the
# README's second command's build (`cargo test --workspace --no-run`) in the first clone, to
# show what it reuses (the table of docs/benchmarks.md, "The README's first command").
# WORK_DIR (default: a temporary folder, removed at the end) keeps the clones.
set -euo pipefail
ALL=0
if [ "${1:-}" = "--all" ]; then ALL=1; shift; fi
cd "$(dirname "$0")/.."
SRC=$PWD
WORK=${1:-$(mktemp -d)}
EXAMPLE=examples/kineto_qwen3next_4l_prompt8192_baseline.json.gz
cargo fetch -q
echo "# $(date -u +%FT%TZ), $(git rev-parse --short HEAD), $(nproc) cores, $(uptime | sed 's/.*load/load/')"
echo "| step | wall | user s | sys s | peak RSS MB |"
echo "|---|---:|---:|---:|---:|"
# timed NAME DIR CMD...: one run in DIR with its own target folder DIR-target; /usr/bin/time's
# figures as a table row; the wall time in seconds in $WORK/seconds.
timed() {
  local name=$1 dir=$2; shift 2
  (cd "$dir" && CARGO_TARGET_DIR="$dir-target" /usr/bin/time -f "%e %E %U %S %M" -o "$WORK/time.txt" \
    "$@" > "$WORK/out.txt" 2> "$WORK/err.txt") || { cat "$WORK/err.txt" >&2; exit 1; }
  read -r secs wall user sys rss < "$WORK/time.txt"
  echo "$secs" > "$WORK/seconds"
  printf '| %s | %s | %s | %s | %d |\n' "$name" "$wall" "$user" "$sys" "$((rss / 1024))"
}
# clone NAME: a fresh clone of HEAD at $WORK/NAME, with no target folder.
clone() {
  rm -rf "$WORK/$1" "$WORK/$1-target"
  git clone -q "$SRC" "$WORK/$1"
}
clone dev
timed "\`cargo run -- profile EXAMPLE\` (the README's first command, dev profile)" "$WORK/dev" \
  cargo run -q -- profile "$EXAMPLE"
first=$(cat "$WORK/seconds")
if [ "$ALL" = 1 ]; then
  clone release
  timed "\`cargo run --release -- profile EXAMPLE\` (release profile)" "$WORK/release" \
    cargo run -q --release -- profile "$EXAMPLE"
  timed "then \`cargo test --workspace --no-run\` in the dev clone (the README's second command's build)" "$WORK/dev" \
    cargo test -q --workspace --no-run
fi
echo "(after the run: $(uptime | sed 's/.*load/load/'))"
# The figure for the README: whole minutes and seconds, and to the nearest half minute.
awk -v s="$first" -v n="$(nproc)" 'BEGIN {
  printf "README: the first command builds and runs in %d min %02d s from cold on %d cores (about %.1f minutes)\n",
    int(s / 60), int(s % 60), n, int(s / 30 + 0.5) / 2
}'
[ $# -ge 1 ] || rm -rf "$WORK"
