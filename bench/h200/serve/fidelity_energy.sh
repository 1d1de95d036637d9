#!/usr/bin/env bash
# One device call (kind nvidia-h200) for issue 25: the client-fidelity benchmark on a quiet host
# (the client pinned to one core: a current-thread runtime; the scripted server's threads, in
# the same process, pinned to the other cores; then once unpinned for comparison) and a
# check that `kernelab serve` reads the GPU's energy over each point through NVML (a fixture
# server given GPU 0; the energy is device-wide, so the idle GPU's draw is what is read).
# Usage (device tool, carry [".carry"]): bash bench/h200/serve/fidelity_energy.sh
set -u
for f in .carry/kernelab .carry/serve_client_bench; do
  [ -f "$f.gz" ] && [ ! -f "$f" ] && gunzip -k "$f.gz" && chmod +x "$f"
done
echo "== client fidelity ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
B=.carry/serve_client_bench
BENCH_TOKENS=100 BENCH_INTERVAL_US=10000 "$B" 1 64 256 1000
BENCH_TOKENS=400 BENCH_INTERVAL_US=500 "$B" 1 16 64 256
echo "== the same at 1,000 streams x 100 tokens/s, not pinned"
BENCH_PIN=0 BENCH_TOKENS=100 BENCH_INTERVAL_US=10000 "$B" 1000
[ -f .carry/kernelab ] || { echo "== energy: skipped (no .carry/kernelab)"; exit 0; }
echo "== energy through NVML"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export XDG_STATE_HOME=/tmp/energy-state
S=/tmp/energy.toml
cat >"$S" <<TOML
[baseline]
argv = ["python3", "$(realpath tests/fixtures/serve/sse_server.py)", "{port}", "--delay-ms", "5"]
health_url = "http://127.0.0.1:{port}/health"
env = { CUDA_VISIBLE_DEVICES = "0" }
[candidate]
argv = ["python3", "$(realpath tests/fixtures/serve/sse_server.py)", "{port}", "--delay-ms", "5"]
health_url = "http://127.0.0.1:{port}/health"
env = { CUDA_VISIBLE_DEVICES = "0" }
[workload]
requests = 4
warmup = 1
[[workload.case]]
input_tokens = 16
output_tokens = 64
concurrency = [1]
[rounds]
count = 4
TOML
.carry/kernelab serve "$S" --samples /tmp/energy.jsonl --format md >/tmp/energy.md 2>/tmp/energy.err
echo "exit $?"
grep -E "energy|Metric" /tmp/energy.md | head
grep -o '"energy_mj":[0-9]*\|"energy_unavailable":"[^"]*"' /tmp/energy.jsonl | head -8
tail -3 /tmp/energy.err
cp /tmp/energy.jsonl /tmp/energy.md "$OUT/" 2>/dev/null
