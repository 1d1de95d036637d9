#!/usr/bin/env bash
# The noise floor from identical-code runs (issue 43): `kernel run --controls LEDGER` of the
# fixture A/A spec (fla recompute_w_u_fwd_kernel w4s3 as both builds, T = 8192) six times,
# then the w4s3-vs-w4s4 spec (the same kernel symbol and sizes, other code), whose verdict is
# shown beside the floor the six calibrated. Through the device tool, with the binary carried
# gzipped (KERNELAB_GZ, default .carry/kernelab.gz):
#   bash bench/h100/controls/run.sh [ROUNDS]
set -uo pipefail
rounds=${1:-10}
out=${OUT:-/tmp/controls-out}
mkdir -p "$out" /tmp/kbin
s=$(mktemp -d)
gunzip -c "${KERNELAB_GZ:-.carry/kernelab.gz}" > /tmp/kbin/kernelab && chmod +x /tmp/kbin/kernelab
k=/tmp/kbin/kernelab
ledger="$out/controls.jsonl"
for i in 1 2 3 4 5 6; do
  $k kernel run tests/fixtures/kernel/recompute_w4s3_aa.toml --rounds "$rounds" --controls "$ledger" \
    --samples "$s/aa_$i.jsonl" --format json --out "$out/aa_$i.json" 2>/dev/null
  echo "A/A run $i: exit $? $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); a=d['analysis']; print(a['verdict'], round(a['ratio'],4), d.get('noise_floor'))" "$out/aa_$i.json")"
done
$k kernel run tests/fixtures/kernel/recompute_w4s3_vs_w4s4.toml --rounds "$rounds" --controls "$ledger" \
  --samples "$s/real.jsonl" --format md --out "$out/w4s3_vs_w4s4.md" 2>&1 | tail -3
grep -A4 -E "^#+ (Noise floor|Verdict)" "$out/w4s3_vs_w4s4.md"
wc -l "$ledger"
