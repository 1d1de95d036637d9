#!/usr/bin/env bash
# One device call (kind nvidia-h200-x2) for issue 12: `kernelab serve` against real
# `transformers serve` servers on H200s, plus the client-overhead benchmark on a quiet machine.
#   1. the client-overhead benchmark (.carry/serve_client_bench), nothing else running;
#   2. a random-initialised Llama model and word-level tokenizer (make_model.py);
#   3. eager vs SDPA attention on GPU 0 and the A/A control (SDPA vs SDPA) on GPU 1, at once,
#      each under `timeout $SERVE_S`; a cut run is continued with `kernelab serve --resume`
#      from the samples in .carry/serve-prev.tar.gz (this script's own archive of a cut run).
# Results in $OUT/serve.tar.gz. The serving packages that the machine lacks travel as wheels in
# .whl (fastapi, uvicorn, pydantic, openai and their needs: docs/benchmarks.md lists them).
# Usage (device tool, carry [".carry", ".whl"]): bash bench/h200/serve/session.sh [PAIR AA]
# PAIR and AA name the spec pair to run (default eager_vs_sdpa aa_sdpa, the .toml files here);
# CLIENT_BENCH=0 leaves out the client-overhead benchmark.
set -u
PAIR=${1:-eager_vs_sdpa}
AA=${2:-aa_sdpa}
SERVE_S=${SERVE_S:-460}
for f in .carry/kernelab .carry/serve_client_bench; do
  [ -f "$f.gz" ] && [ ! -f "$f" ] && gunzip -k "$f.gz" && chmod +x "$f"
done
KL=$(realpath .carry/kernelab)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
R=/tmp/serve
mkdir -p "$R"
nvidia-smi -L
python3 -c 'import torch, transformers, fastapi, openai, uvicorn; print("torch", torch.__version__, "transformers", transformers.__version__, "fastapi", fastapi.__version__, "openai", openai.__version__, "gpus", torch.cuda.device_count())'

if [ "${CLIENT_BENCH:-1}" != 0 ]; then
echo "== client overhead (quiet machine, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
B=.carry/serve_client_bench
{
  "$B" 1 16 64 256
  BENCH_TOKENS=200 BENCH_INTERVAL_US=2000 "$B" 256
  BENCH_TOKENS=100 BENCH_INTERVAL_US=10000 "$B" 256
} 2>&1 | tee "$R/client_overhead.txt"
fi

echo "== model"
python3 bench/h200/serve/make_model.py /tmp/kl-model 2>&1 | tail -2

run() { # name spec
  local name=$1 spec=$2 prev=/tmp/prev/serve/$1.samples.jsonl
  if [ -f "$prev" ]; then
    cp "$prev" "$R/$name.samples.jsonl"
    [ -d "$prev.logs" ] && cp -r "$prev.logs" "$R/$name.samples.jsonl.logs"
    timeout "$SERVE_S" "$KL" serve --resume "$R/$name.samples.jsonl" --format json \
      --out "$R/$name.json" --record "$R/bundle" --label "$name" >"$R/$name.log" 2>&1
  else
    timeout "$SERVE_S" "$KL" serve "$spec" --samples "$R/$name.samples.jsonl" --format json \
      --out "$R/$name.json" --record "$R/bundle" --label "$name" >"$R/$name.log" 2>&1
  fi
  echo "$name: exit $?" >>"$R/exits.txt"
}
if [ -f .carry/serve-prev.tar.gz ]; then
  mkdir -p /tmp/prev && tar -xzf .carry/serve-prev.tar.gz -C /tmp/prev
fi
echo "== serve (up to $SERVE_S s)"
run "$PAIR" "bench/h200/serve/$PAIR.toml" &
sleep 2
run "$AA" "bench/h200/serve/$AA.toml" &
wait
cat "$R/exits.txt"
for n in "$PAIR" "$AA"; do
  echo "== $n"
  tail -25 "$R/$n.log"
  [ -f "$R/$n.samples.jsonl" ] && "$KL" serve --resume "$R/$n.samples.jsonl" --analyze \
    --format md >"$R/$n.md" 2>&1
  head -60 "$R/$n.md" 2>/dev/null
done
tar -czf "$OUT/serve.tar.gz" -C /tmp serve
ls -la "$OUT"
