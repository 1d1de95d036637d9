#!/usr/bin/env bash
# The false-call rate of `kernel run` on identical machine code (issue 43): each Triton config of
# fla's recompute_w_u_fwd_kernel (tests/fixtures/code, sm_90) launched as both baseline and
# candidate, at 34 sequence lengths T = 1024 … 17920 (step 512), 10 ABBA rounds each. Every
# FASTER or SLOWER verdict is a false positive of the timing setup; kernelab flags it so (the
# builds' machine code is compared before timing). Stops starting runs after BUDGET seconds
# (default 540) so that one device call never passes its limit; prints one line per run and
# the tally, and writes the lines to $OUT/identical.tsv.
# Usage (through the device tool): bench/h100/identical_code.sh KERNELAB CONFIG...
#   e.g. bench/h100/identical_code.sh .carry/kernelab w4s3 w4s4
set -u
KL=$(realpath "$1"); shift
OUT=${OUT:-bench/out/identical}
BUDGET=${BUDGET:-540}
mkdir -p "$OUT"
[ -f "$KL.gz" ] && [ ! -x "$KL" ] && gunzip -k "$KL.gz"
chmod +x "$KL" 2>/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader 2>&1
start=$(date +%s)
dir=tests/fixtures/kernel
for cfg in "$@"; do
  for k in $(seq 2 35); do
    T=$((k * 512))
    if [ $(( $(date +%s) - start )) -gt "$BUDGET" ]; then
      echo "budget spent: stopped before $cfg T=$T"
      break 2
    fi
    spec=$dir/gen_identical_${cfg}_T$T.toml
    sed -e "s/^T = .*/T = $T/" \
      -e "/^\[candidate\]/,\$ s|^code = .*|code = \"../code/recompute_w_u_fwd_kernel_$cfg.cubin\"|" \
      -e "/^\[baseline\]/,/^\[candidate\]/ s|^code = .*|code = \"../code/recompute_w_u_fwd_kernel_$cfg.cubin\"|" \
      $dir/recompute_w4s3_vs_w8s2.toml > "$spec"
    "$KL" kernel run "$spec" --rounds 10 --format json --out "$OUT/${cfg}_T$T.json" \
      2> "$OUT/${cfg}_T$T.err"
    code=$?
    python3 - "$OUT/${cfg}_T$T.json" "$cfg" "$T" "$code" "$OUT/${cfg}_T$T.err" <<'PY' | tee -a "$OUT/identical.tsv"
import json, sys
path, cfg, T, code, err = sys.argv[1:]
try:
    d = json.load(open(path))
    a = d.get("analysis") or {}
    i = a.get("interval") or {}
    same = "identical machine code" in open(err).read()
    print(f"{cfg}\t{T}\t{code}\t{a.get('verdict')}\t{a.get('ratio', 0):.4f}\t"
          f"[{i.get('low', 0):.4f}, {i.get('high', 0):.4f}]\t{'identical' if same else 'code?'}")
except Exception as e:
    print(f"{cfg}\t{T}\t{code}\tERROR\t{e}")
PY
    rm -f "$spec"
  done
done
echo "== tally (config, verdict)"
cut -f1,4 "$OUT/identical.tsv" | sort | uniq -c
