#!/usr/bin/env bash
# `kernelab gate` with a `[sweep]` benchmark on the GPU (issue 43): a throwaway repository of
# fla's recompute_w_u_fwd_kernel fixture cubins "built" by copying, measured over T in {2048,
# 4096, 8192, 16384} (10 ABBA rounds per config), the base's build against the head's. Heads:
# `same` (a README change: identical code), `retuned` (the w4s4 config for w4s3: code differs,
# speed about the same), `w8s2` (the w8s2 config: about 16% slower on an H200). The `same` gate
# runs six times into one controls ledger (each of its configs an A/A control); later gates
# state the floor. Through the device tool, with the release binary gzipped at
# .carry/kernelab.gz (or KERNELAB_GZ):
#   bash bench/h100/gate/sweep.sh
set -uo pipefail
top=$(pwd)
out=${OUT:-/tmp/gate-sweep-out}
mkdir -p "$out"
bin=/tmp/kbin
mkdir -p $bin
gunzip -c "${KERNELAB_GZ:-.carry/kernelab.gz}" > $bin/kernelab && chmod +x $bin/kernelab
export PATH=$bin:$PATH XDG_STATE_HOME=/tmp/state
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
r=/tmp/gs
rm -rf $r; mkdir -p $r/src $r/bench $r/.kernelab; cd $r
git init --quiet -b main; git config user.name t; git config user.email t@t.invalid
put() { for e in cubin json; do cp "$top/tests/fixtures/code/recompute_w_u_fwd_kernel_$1.$e" src/kernel.$e; done; }
put w4s3
sed 's|../code/recompute_w_u_fwd_kernel_w4s3.cubin|../build/kernel.cubin|' "$top"/tests/fixtures/kernel/recompute_w4s3_aa.toml > bench/k.toml
cat > bench/sweep.toml <<'TOML'
spec = "k.toml"
timing = true
rounds = 10

[grid.sizes]
T = [2048, 4096, 8192, 16384]

[[grid.build]]
key = "build"
baseline = "../build/kernel.cubin"
candidate = "../build/kernel.cubin"
TOML
echo 'mkdir -p build && cp src/kernel.cubin src/kernel.json build/' > build.sh
echo 'build/' > .gitignore
printf '[build]\ncommand = "sh build.sh"\n\n[sweep]\nfile = "bench/sweep.toml"\nthreshold = "1%%"\n' > .kernelab/gate.toml
git add -A; git commit --quiet -m main
git checkout --quiet -b same main; echo x > README; git add -A; git commit --quiet -m same
git checkout --quiet -b retuned main; put w4s4; git add -A; git commit --quiet -m retuned
git checkout --quiet -b w8s2 main; put w8s2; git add -A; git commit --quiet -m w8s2
git checkout --quiet main
ledger="$out/controls.jsonl"
gate() { # name head
  local t0=$(date +%s%N)
  kernelab gate --repo $r --base main --head "$2" --controls "$ledger" --format json --out "$out/$1.json" \
    --summary "$out/$1.md" --record "$out/bundle_$1" > "$out/$1.txt" 2>&1
  local code=$?
  echo "== $1 (head $2): exit $code in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  python3 - "$out/$1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gate"]
print(" ", g["decision"], "|", g.get("code"), "|", "; ".join(g["reasons"]))
for m in g["metrics"]:
    print("  ", m["metric"], m["verdict"], round(m["change"] * 100, 2), [round(x * 100, 2) for x in m["interval"]])
for p in d["sweep"]["points"]:
    f = p.get("noise_floor")
    if f:
        print("   floor", p["id"], round(f["largest_change"] * 100, 3), f["controls"])
PY
}
for i in 1 2 3 4 5 6; do gate "same_$i" same; done
gate retuned retuned
gate w8s2 w8s2
wc -l "$ledger"
cd "$top"
for b in "$out"/bundle_same_6 "$out"/bundle_retuned "$out"/bundle_w8s2; do
  kernelab report "$b" --format md > "$b.report.md" 2>&1
  kernelab report check --bundle "$b" "$b.report.md" > "$b.check.txt" 2>&1
  echo "$b report check exit $?"
done
# Keep what the device tool brings back small: the last A/A, the two changed heads.
rm -rf "$out"/same_[1-5].* "$out"/bundle_same_[1-5]
