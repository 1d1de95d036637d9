#!/usr/bin/env bash
# One device call (kind nvidia-h200, one experiment alone on the machine) for issue 25: planned
# looks over fresh-server rounds against real `transformers serve` servers on one H200.
#   planted: planted_tpot.toml, a candidate with a planted 1 ms sleep per decode step
#            (plant_decode_sleep.py), expected SLOWER on TPOT;
#   aa:      aa_planted.toml, its A/A control in the same placement, expected not called;
#   planted-together, aa-together: the same two with both servers of a round resident at once
#            ([placement] mode = "together", requests A B B A).
# The run stops at the plan's decision, at `max`, or at --budget (BUDGET, default 7m) and
# writes its record; results in $OUT/looks-NAME.tar.gz (samples, document, record, server logs).
# Usage (device tool, carry [".carry", ".whl"]): bash bench/h200/serve/looks_session.sh NAME
set -u
NAME=${1:?planted, aa, planted-together or aa-together}
case $NAME in
  planted) SPEC=planted_tpot ;;
  aa) SPEC=aa_planted ;;
  planted-together) SPEC=planted_together ;;
  aa-together) SPEC=aa_together ;;
  *) echo "planted, aa, planted-together or aa-together"; exit 2 ;;
esac
BUDGET=${BUDGET:-7m}
[ -f .carry/kernelab.gz ] && [ ! -f .carry/kernelab ] && gunzip -k .carry/kernelab.gz && chmod +x .carry/kernelab
KL=$(realpath .carry/kernelab)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
  --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p /tmp/plant && cp bench/h200/serve/plant_decode_sleep.py /tmp/plant/
export XDG_STATE_HOME=/tmp/looks/state
R=/tmp/looks/$NAME
mkdir -p "$R"
nvidia-smi -L
python3 -c 'import torch, transformers, fastapi, openai, uvicorn; print("torch", torch.__version__, "transformers", transformers.__version__, "gpus", torch.cuda.device_count())'
PYTHONPATH=/tmp/plant:/tmp/site python3 -c 'import plant_decode_sleep; print("plant imports")'
python3 bench/h200/serve/make_model.py /tmp/kl-model 2>&1 | tail -2
echo "== serve $SPEC (budget $BUDGET), load $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
timeout 560 "$KL" serve "bench/h200/serve/$SPEC.toml" --budget "$BUDGET" --samples "$R/samples.jsonl" \
  --format json --out "$R/result.json" --record "$R/bundle" --label "$NAME" >"$R/serve.log" 2>&1
echo "exit $? after $(( $(date +%s) - start )) s"
tail -30 "$R/serve.log"
"$KL" serve --resume "$R/samples.jsonl" --analyze --format md >"$R/result.md" 2>&1
head -80 "$R/result.md"
grep -h "plant_decode_sleep" -r /tmp/looks/state | head -3
cp -r /tmp/looks/state "$R/state" 2>/dev/null
tar -czf "$OUT/looks-$NAME.tar.gz" -C /tmp/looks "$NAME"
ls -la "$OUT"
