#!/usr/bin/env bash
# One device call that does the H200 runs of issues 15-17 together, results in one archive
# ($OUT/results.tar.gz, since only a few files come back): the two-stream Kineto trace for
# --by-phase (bench/h200/two_stream_profile.py), kernelab ceilings beside PyTorch and Nsight
# Compute (bench/h200/ceilings.sh), and kernelab counters (bench/h200/counters.sh). When a fuzz
# binary is carried (.carry/fuzz_all with .carry/corpus.tar.gz), the fuzz campaign runs on the
# CPU cores at the same time (fuzz/campaign.sh).
# Usage (through the device tool): bench/h200/session.sh .carry/kernelab [seconds per fuzz target]
set -u
# The binaries travel gzipped (the working tree that travels is limited to 64 MiB).
for f in .carry/kernelab .carry/fuzz_all; do
  [ -f "$f.gz" ] && [ ! -f "$f" ] && gunzip -k "$f.gz" && chmod +x "$f"
done
KL=$(realpath "${1:-.carry/kernelab}")
FUZZ_S=${2:-540}
R=/tmp/results
mkdir -p "$R"
if [ -x .carry/fuzz_all ] && [ -f .carry/corpus.tar.gz ]; then
  mkdir -p /tmp/fuzz && tar -xzf .carry/corpus.tar.gz -C /tmp/fuzz
  mkdir -p "$R/fuzz"
  OUT=$R/fuzz SECONDS_PER_TARGET=$FUZZ_S nohup bash fuzz/campaign.sh "$(realpath .carry/fuzz_all)" \
    /tmp/fuzz/corpus > "$R/fuzz_campaign.log" 2>&1 &
  FUZZ_PID=$!
fi
echo "== two-stream trace"
python3 bench/h200/two_stream_profile.py --out "$R/two_stream_h200.json.gz" 2>&1 | tail -3
echo "== ceilings"
OUT=$R/ceilings bash bench/h200/ceilings.sh "$KL" 2>&1 | tail -60
echo "== counters"
OUT=$R/counters bash bench/h200/counters.sh "$KL" 2>&1 | tail -40
if [ -n "${FUZZ_PID:-}" ]; then
  echo "== waiting for the fuzz campaign"
  wait "$FUZZ_PID"
  tail -40 "$R/fuzz_campaign.log"
fi
# The grown corpora stay behind (the files that come back are limited to 16 MiB each): keep
# the table, the logs and any artifacts.
if [ -f "$R/fuzz/fuzz-campaign.tar.gz" ]; then
  mkdir -p /tmp/fz && tar -xzf "$R/fuzz/fuzz-campaign.tar.gz" -C /tmp/fz
  rm -rf /tmp/fz/corpus "$R/fuzz/fuzz-campaign.tar.gz"
  cp -r /tmp/fz "$R/fuzz/pack"
fi
rm -f "$R"/ceilings/*.samples.jsonl "$R"/counters/*.samples.jsonl
tar -czf "$OUT/results.tar.gz" -C /tmp results
ls -la "$OUT"
