#!/usr/bin/env bash
# One part of issue 39's fuzz campaign on the device machine's CPU cores: every target of the
# carried `all` binary (.carry/fuzz_all.gz, built by `cargo +nightly fuzz build -O all` and
# stripped) fuzzed at once through fuzz/campaign.sh for SECONDS_PER_TARGET. The corpora live
# in bench/out/fuzz-corpus (ignored, so a warm machine keeps them from one part to the next;
# the first part unpacks the seeds of .carry/corpus.tar.gz, made by fuzz/seed.sh). Each part
# returns only what is small: the table, the end of each target's log (executions, cov, ft,
# peak RSS) and any findings, in $OUT/part.tar.gz.
# Usage (device tool, carry [".carry"]): bash bench/h200/fuzz_round3.sh SECONDS_PER_TARGET
# [TARGET...] (default: every target with a corpus folder)
set -u
S=${1:-450}
shift || true
BIN=/tmp/fuzz_all
[ -x "$BIN" ] || { gunzip -c .carry/fuzz_all.gz >"$BIN" && chmod +x "$BIN"; }
CORPUS=$PWD/bench/out/fuzz-corpus
if [ ! -d "$CORPUS" ]; then
  mkdir -p bench/out/seeds && tar -xzf .carry/corpus.tar.gz -C bench/out/seeds
  mv bench/out/seeds/corpus "$CORPUS"
fi
echo "cores $(nproc); targets $(ls "$CORPUS" | wc -l); inputs $(find "$CORPUS" -type f | wc -l)"
W=$(mktemp -d)
OUT_CAMPAIGN=$W/campaign
mkdir -p "$OUT_CAMPAIGN"
PACK_CORPUS=0 OUT=$OUT_CAMPAIGN SECONDS_PER_TARGET=$S bash fuzz/campaign.sh "$BIN" "$CORPUS" "$@"
echo "campaign exit $?"
mkdir -p "$W/pack/logs"
tar -xzf "$OUT_CAMPAIGN/fuzz-campaign.tar.gz" -C "$W/pack" ./table.txt ./artifacts ./logs
for l in "$W"/pack/logs/*.log; do
  # Keep each log's end: libFuzzer's last status line and its final stats.
  tail -n 25 "$l" >"$l.tail" && mv "$l.tail" "$l"
done
echo "corpora now: $(find "$CORPUS" -type f | wc -l) inputs, $(du -sh "$CORPUS" | cut -f1)"
tar -czf "$OUT/part.tar.gz" -C "$W/pack" .
ls -la "$OUT"
