#!/usr/bin/env bash
# The fuzz campaign on the one-GPU device machine's cores (issue 46 asks for the 128-core kind;
# when only this one is lent): unpacks the `all` binary (built here with `cargo +nightly fuzz
# build -O all`, stripped and gzipped, carried as FUZZ_GZ), seeds the corpora with
# fuzz/seed.sh and runs every target through fuzz/campaign.sh, all at once, for SECONDS_EACH.
# Through the device tool, carrying the binary:
#   FUZZ_GZ=.carry/fuzz_all.gz SECONDS_EACH=160 bash bench/h100/fuzz/campaign.sh
# (docs/formats.md's figures of 2026-12-06 came from this script's first version at commit
# 08e7dba: 16 targets at a time, 160 s each.)
set -uo pipefail
bin=/tmp/kernelab-fuzz-all
gunzip -c "${FUZZ_GZ:-.carry/fuzz_all.gz}" > "$bin" && chmod +x "$bin" || exit 2
sh fuzz/seed.sh >/dev/null || exit 2
PACK_CORPUS=0 SECONDS_PER_TARGET=${SECONDS_EACH:-160} bash fuzz/campaign.sh "$bin" fuzz/corpus
