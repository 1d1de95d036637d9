#!/usr/bin/env bash
# The recompute_w_u configs as one sweep (bench/h200/sweep_recompute.toml: 9 builds × 4
# sequence lengths = 36 points, gates and 10 timed rounds each) on both GPUs of a two-H200
# machine, then the same sweep on one GPU; prints both wall times, the speed-up and the
# matrix (Markdown), and leaves the results folders and matrices under $OUT.
# Usage (through the device tool, kind nvidia-h200-x2, carrying the stripped binary):
#   bench/h200/sweep_2gpu.sh [path/to/kernelab]     (default .carry/kernelab)
set -u
KL=${1:-.carry/kernelab}
OUT=${OUT:-bench/out/sweep}
SWEEP=bench/h200/sweep_recompute.toml
mkdir -p "$OUT"
chmod +x "$KL" 2>/dev/null
nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv 2>&1
run() { # run NAME GPUS
  rm -rf "$OUT/$1"
  local t0 t1
  t0=$(date +%s.%N)
  "$KL" sweep "$SWEEP" --dir "$OUT/$1" --gpus "$2" --format md --out "$OUT/$1.md" 2> "$OUT/$1.err"
  echo "$1: exit $?"
  t1=$(date +%s.%N)
  cat "$OUT/$1.err"
  python3 -c "print(f'$1 wall {$t1 - $t0:.1f} s')" | tee "$OUT/$1.wall"
  cp "$OUT/$1/matrix.json" "$OUT/$1.matrix.json" 2>/dev/null
}
run two_gpus 0,1
run one_gpu 0
python3 - "$OUT" <<'PY'
import sys, json, pathlib
out = pathlib.Path(sys.argv[1])
w = {n: float((out / f"{n}.wall").read_text().split()[2]) for n in ("two_gpus", "one_gpu")}
print(f"speed-up of two GPUs over one: {w['one_gpu'] / w['two_gpus']:.2f}x "
      f"({w['one_gpu']:.1f} s on one GPU, {w['two_gpus']:.1f} s on two)")
for n in ("two_gpus", "one_gpu"):
    m = json.loads((out / f"{n}.matrix.json").read_text())
    print(n, "|", "; ".join(m["lines"]))
PY
echo "== matrix (two GPUs)"
cat "$OUT/two_gpus.md"
