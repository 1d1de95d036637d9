#!/usr/bin/env bash
# On an H200, in one call: `kernelab ceilings`, PyTorch's own measurement of the same ceilings
# (a copy of a 4 GiB tensor and a dense 8192³ bf16 matmul, CUDA events), and Nsight Compute's
# DRAM bytes of the recompute_w_u specs of tests/fixtures/kernel beside the modelled bytes of
# examples/roofline/work.toml. Writes everything under $OUT (default bench/out/ceilings).
# Usage (through the device tool, the release binary carried):
#   bench/h200/ceilings.sh [path/to/kernelab]
set -u
KL=${1:-target/release/kernelab}
OUT=${OUT:-bench/out/ceilings}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv 2>&1

# cuBLASLt for the matrix peaks: the toolkit's, else the one in PyTorch's wheels.
if [ -z "${KERNELAB_CUBLASLT:-}" ]; then
  for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu; do
    f=$(ls "$d"/libcublasLt.so.1[0-9]* 2>/dev/null | head -1)
    [ -n "$f" ] && { export KERNELAB_CUBLASLT="$f"; break; }
  done
fi
if [ -z "${KERNELAB_CUBLASLT:-}" ]; then
  f=$(find /opt /usr/local -name 'libcublasLt.so.1[0-9]*' 2>/dev/null | head -1)
  [ -n "$f" ] && export KERNELAB_CUBLASLT="$f"
fi
echo "KERNELAB_CUBLASLT=${KERNELAB_CUBLASLT:-unset}"

echo "== kernelab ceilings"
"$KL" ceilings --format json --out "$OUT/ceilings.json" --force 2> "$OUT/ceilings.err"
echo "exit $?"; cat "$OUT/ceilings.err"
python3 - "$OUT/ceilings.json" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    sys.exit(f"no ceilings document: {e}")
print(d["device"]["name"], d["device"].get("arch"), d["clocks"])
for c in d["ceilings"]:
    m = c.get("measured")
    v = m["value"] if m else None
    unit = c["unit"]
    scale = 1e12 if unit != "second" else 1e-6
    shown = f"{v/scale:.3f}" if v is not None else f"not measured ({c.get('not_measured')})"
    print(f"  {c['kind']:16s} {shown} {'TB/s' if unit=='byte/second' else 'TFLOP/s' if unit=='flop/second' else 'us'}")
PY

echo "== PyTorch, same call"
python3 - <<'PY'
import torch
dev = "cuda"
def timed(fn, warm=3, reps=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps):
        fn()
    e.record(); e.synchronize()
    return s.elapsed_time(e) / 1e3 / reps
x = torch.empty(4 << 30, dtype=torch.uint8, device=dev).random_()
y = torch.empty_like(x)
t = timed(lambda: y.copy_(x))
print(f"torch copy of 4 GiB: {t*1e3:.3f} ms = {2 * x.numel() / t / 1e12:.3f} TB/s (read + written)")
del x, y
n = 8192
a = torch.randn(n, n, dtype=torch.bfloat16, device=dev)
b = torch.randn(n, n, dtype=torch.bfloat16, device=dev)
t = timed(lambda: a @ b)
print(f"torch bf16 {n}^3 matmul: {t*1e3:.3f} ms = {2 * n**3 / t / 1e12:.1f} TFLOP/s")
PY

echo "== Nsight Compute DRAM bytes of recompute_w_u"
for spec in tests/fixtures/kernel/recompute_*.toml; do
  name=$(basename "$spec" .toml)
  ncu --csv --clock-control none --metrics dram__bytes.sum,gpu__time_duration.sum \
      -k regex:recompute_w_u --launch-count 6 \
      "$KL" kernel run "$spec" --rounds 2 --samples "$OUT/$name.samples.jsonl" \
      --format json --out "$OUT/$name.kernel.json" --force > "$OUT/ncu_$name.csv" 2> "$OUT/ncu_$name.err"
  echo "$name: ncu exit $?"; tail -3 "$OUT/ncu_$name.err"
  "$KL" roofline "$OUT/ncu_$name.csv" --work examples/roofline/work.toml \
      --ceilings "$OUT/ceilings.json" --spec "$spec" --ncu "$OUT/ncu_$name.csv" --format md 2>&1
done
