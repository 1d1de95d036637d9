#!/usr/bin/env bash
# The README's first command on fresh clones of this checkout's HEAD, each with an empty cargo
# target folder, side by side in one run (issue 30): the command as the README gives it (dev
# profile), the same in release (the README's command before), then the README's second
# command's build (`cargo test --workspace --no-run`) in the clone of the first, to show what
# it reuses. Crate sources come from the local cargo registry (downloads are not timed).
# Usage: bench/first_build.sh [WORK_DIR]   (default: a temporary folder, removed at the end)
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
WORK=${1:-$(mktemp -d)}
EXAMPLE=examples/kineto_qwen3next_4l_prompt8192_baseline.json.gz
cargo fetch -q
echo "# $(date -u +%FT%TZ), $(git rev-parse --short HEAD), $(nproc) cores, $(uptime | sed 's/.*load/load/')"
echo "| step | wall | user s | sys s | peak RSS MB |"
echo "|---|---:|---:|---:|---:|"
# timed NAME DIR CMD...: one run, /usr/bin/time's figures as a table row.
timed() {
  local name=$1 dir=$2; shift 2
  (cd "$dir" && /usr/bin/time -f "%E %U %S %M" -o "$WORK/time.txt" "$@" > "$WORK/out.txt" 2> "$WORK/err.txt") ||
    { cat "$WORK/err.txt" >&2; exit 1; }
  read -r wall user sys rss < "$WORK/time.txt"
  printf '| %s | %s | %s | %s | %d |\n' "$name" "$wall" "$user" "$sys" "$((rss / 1024))"
}
for kind in dev release; do
  rm -rf "$WORK/$kind"
  git clone -q "$SRC" "$WORK/$kind"
done
timed "\`cargo run -- profile EXAMPLE\` (the README's first command, dev profile)" "$WORK/dev" \
  env -u CARGO_TARGET_DIR cargo run -q -- profile "$EXAMPLE"
timed "\`cargo run --release -- profile EXAMPLE\` (release profile)" "$WORK/release" \
  env -u CARGO_TARGET_DIR cargo run -q --release -- profile "$EXAMPLE"
timed "then \`cargo test --workspace --no-run\` in the dev clone (the README's second command's build)" "$WORK/dev" \
  env -u CARGO_TARGET_DIR cargo test -q --workspace --no-run
echo "(after the run: $(uptime | sed 's/.*load/load/'))"
[ $# -ge 1 ] || rm -rf "$WORK"
