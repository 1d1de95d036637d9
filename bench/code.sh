#!/usr/bin/env bash
# Benchmarks of `kernelab code`: classifying 100 MB of disassembly text (SASS and AMDGCN), and a
# 72-build matrix. Inputs are generated from fixtures into bench/out/ (git-ignored).
# Usage: bench/code.sh [REPEATS]
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-3}
OUT=bench/out/code
mkdir -p "$OUT"
cargo build --release -q -p kernelab
BIN=target/release/kernelab
F=tests/fixtures/code
# 100 MB of SASS: the sm_75 and H200 dumps repeated with distinct function names.
if [ ! -s "$OUT/big.sass" ]; then
  python3 - "$OUT/big.sass" "$F/cuassembler-mandelbrot.sm_75.cuobjdump-sass.txt" "$F/recompute_w_u_fwd_kernel_w4s3.sass.txt" <<'PY'
import sys
out, *srcs = sys.argv[1:]
texts = [open(s).read() for s in srcs]
with open(out, "w") as f:
    n, i = 0, 0
    while n < 100_000_000:
        t = texts[i % len(texts)].replace("Function : ", f"Function : v{i}_")
        f.write(t); n += len(t); i += 1
PY
fi
# 100 MB of llvm-objdump text of the gfx942 aiter kernel, repeated with distinct symbols.
if [ ! -s "$OUT/big.amdgcn.txt" ] && command -v llvm-objdump-19 >/dev/null; then
  llvm-objdump-19 -d "$F/hsaco_gfx942_aiter_bf16gemm_32x64_splitk.co" > "$OUT/one.amdgcn.txt"
  python3 - "$OUT/big.amdgcn.txt" "$OUT/one.amdgcn.txt" <<'PY'
import sys, re
out, src = sys.argv[1:]
text = open(src).read()
head, body = text.split("Disassembly of section .text:", 1)
with open(out, "w") as f:
    f.write(head + "Disassembly of section .text:")
    n, i = 0, 0
    while n < 100_000_000:
        b = re.sub(r"<([^>+]+)>:", lambda m: f"<v{i}_{m.group(1)}>:", body)
        f.write(b); n += len(b); i += 1
PY
fi
# A 72-build matrix: 72 cubins per side (copies of the Triton and nvcc fixtures), a third of
# them changed in the candidate.
if [ ! -d "$OUT/matrix/base" ]; then
  mkdir -p "$OUT/matrix/base" "$OUT/matrix/cand"
  for i in $(seq 1 72); do
    case $((i % 3)) in
      0) b=recompute_w_u_fwd_kernel_w4s3.cubin; c=recompute_w_u_fwd_kernel_w8s2.cubin ;;
      1) b=recompute_w_u_fwd_kernel_w4s4.cubin; c=recompute_w_u_fwd_kernel_w4s4.cubin ;;
      2) b=copy_variants_sm90.cubin; c=copy_variants_sm90.cubin ;;
    esac
    cp "$F/$b" "$OUT/matrix/base/build_$i.cubin"; cp "$F/$c" "$OUT/matrix/cand/build_$i.cubin"
  done
fi
run() {
  local name=$1 bytes=$2; shift 2
  local best=""
  for _ in $(seq "$REPEATS"); do
    /usr/bin/time -f "%e %M" -o "$OUT/time.txt" "$@" > /dev/null
    read -r w m < "$OUT/time.txt"
    if [ -z "$best" ] || awk "BEGIN{exit !($w < $best)}"; then best=$w; rss=$m; fi
  done
  if [ "$bytes" -gt 0 ]; then
    printf '| %s | %s | %d | %.0f MB/s |\n' "$name" "$best" "$((rss / 1024))" "$(awk "BEGIN{print $bytes/1e6/$best}")"
  else
    printf '| %s | %s | %d | – |\n' "$name" "$best" "$((rss / 1024))"
  fi
}
echo "| case | wall s (best of $REPEATS) | peak RSS MB | throughput |"
echo "|---|---:|---:|---:|"
run "code show, 100 MB SASS text, 1 core" "$(stat -c %s "$OUT/big.sass")" taskset -c 0 "$BIN" code show "$OUT/big.sass" --format csv
if [ -s "$OUT/big.amdgcn.txt" ]; then
  run "code show, 100 MB llvm-objdump text, 1 core" "$(stat -c %s "$OUT/big.amdgcn.txt")" taskset -c 0 "$BIN" code show "$OUT/big.amdgcn.txt" --format csv
fi
run "code matrix, 72 cubins per side, 1 core" 0 taskset -c 0 "$BIN" code matrix "$OUT/matrix/base" "$OUT/matrix/cand"
"$BIN" code matrix "$OUT/matrix/base" "$OUT/matrix/cand" --format md | grep "code objects changed"
