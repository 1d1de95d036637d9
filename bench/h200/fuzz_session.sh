#!/usr/bin/env bash
# One part of the fuzz campaign of issue 14 on the device machine's CPU cores: every target of
# the carried `all` binary (.carry/fuzz_all.gz) fuzzed in parallel for SECONDS_PER_TARGET from
# the carried corpora (.carry/corpus.tar.gz: fuzz/seed.sh's seeds, or the minimised corpora a
# previous part returned), through fuzz/campaign.sh. The grown corpora are then minimised with
# libFuzzer's -merge=1 so that they fit in what comes back, and returned with the campaign's
# table, logs and artifacts in $OUT/fuzz-part.tar.gz. Two parts in a row, the second carrying
# the first's corpora, give each target SECONDS_PER_TARGET x 2 of fuzzing on a growing corpus.
# Usage (device tool, carry [".carry"]): bash bench/h200/fuzz_session.sh SECONDS_PER_TARGET
set -u
S=${1:-300}
[ -f .carry/fuzz_all ] || { gunzip -k .carry/fuzz_all.gz && chmod +x .carry/fuzz_all; }
BIN=$(realpath .carry/fuzz_all)
W=/tmp/fz
rm -rf "$W" && mkdir -p "$W/in" "$W/out" "$W/min"
tar -xzf .carry/corpus.tar.gz -C "$W/in"
CORPUS=$W/in/corpus
echo "cores $(nproc); targets $(ls "$CORPUS" | wc -l); inputs $(find "$CORPUS" -type f | wc -l)"
OUT_CAMPAIGN=$W/out
OUT=$OUT_CAMPAIGN SECONDS_PER_TARGET=$S bash fuzz/campaign.sh "$BIN" "$CORPUS"
status=$?
echo "campaign exit $status"
for d in "$CORPUS"/*/; do
  t=$(basename "$d")
  mkdir -p "$W/min/corpus/$t"
  KERNELAB_FUZZ_TARGET=$t "$BIN" -merge=1 -rss_limit_mb=2048 -timeout=10 \
    "$W/min/corpus/$t" "$d" >"$W/min/$t.merge.log" 2>&1 &
done
wait
echo "minimised: $(find "$W/min/corpus" -type f | wc -l) inputs, $(du -sh "$W/min/corpus" | cut -f1)"
tar -czf "$W/min/corpus.tar.gz" -C "$W/min" corpus
mkdir -p "$W/pack"
tar -xzf "$W/out/fuzz-campaign.tar.gz" -C "$W/pack" && rm -rf "$W/pack/corpus"
cp "$W/min/corpus.tar.gz" "$W/pack/"
tar -czf "$OUT/fuzz-part.tar.gz" -C "$W" pack
ls -la "$OUT"
