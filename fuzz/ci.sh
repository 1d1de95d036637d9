#!/usr/bin/env bash
# CI fuzzing: seeds the corpora, builds the `all` target once (cargo-fuzz, nightly) and runs every
# target through it for FUZZ_SECONDS (default 20) each, as many at a time as there are cores.
# A crash, timeout or out-of-memory fails the run, printing the target's log and the input
# (fuzz/artifacts/<target>/). Installs cargo-fuzz when missing; skipped, saying so, without a
# nightly toolchain.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-20}
# fuzz/Cargo.lock is committed with the workspace's versions: a dependency added to a crate
# without updating it fails here, not silently in a fuzz build.
if ! cargo metadata --manifest-path fuzz/Cargo.toml --locked --format-version 1 >/dev/null; then
  echo "fuzz/ci.sh: fuzz/Cargo.lock is out of date: run \`cargo metadata\` in fuzz/ and commit it" >&2
  exit 1
fi
if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz/ci.sh: SKIPPED: no nightly toolchain (\`rustup toolchain install nightly\`);" \
    "no fuzzing was done"
  exit 0
fi
# cargo-fuzz itself builds from crates.io in well under a minute.
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked
fi
sh fuzz/seed.sh >/dev/null
cargo +nightly fuzz build -O all
# cargo fuzz builds under CARGO_TARGET_DIR when it is set, else fuzz/target.
bin=${CARGO_TARGET_DIR:-fuzz/target}/x86_64-unknown-linux-gnu/release/all
targets=$(sed -n 's/^    ("\([a-z_0-9]*\)", [a-z_0-9]*),$/\1/p' fuzz/src/lib.rs)
[ -n "$targets" ] || { echo "fuzz/ci.sh: no targets found in fuzz/src/lib.rs" >&2; exit 1; }
logs=fuzz/ci-logs
rm -rf "$logs"
mkdir -p "$logs"
# Targets that write files (confined_path) do so under TMPDIR: one scratch folder per run,
# removed at the end, so that nothing the fuzzer made stays behind in /tmp.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/kernelab-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
run_one() { # target
  mkdir -p "fuzz/artifacts/$1" "$scratch/$1"
  if TMPDIR="$scratch/$1" KERNELAB_FUZZ_TARGET=$1 "$bin" "fuzz/corpus/$1" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="fuzz/artifacts/$1/" >"$logs/$1.log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$1.log" | tail -1)
    echo "fuzz $1: ok, ${runs:-?} executions in ${seconds} s"
  else
    echo "fuzz $1: FAILED; log follows, input in fuzz/artifacts/$1/"
    tail -n 60 "$logs/$1.log"
    return 1
  fi
}
export -f run_one
export bin seconds logs scratch
# xargs exits 123 when any run failed; every target still runs.
printf '%s\n' $targets | xargs -P "$(nproc)" -I{} bash -c 'run_one {}'
