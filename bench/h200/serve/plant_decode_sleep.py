"""A planted, known slowdown for `kernelab serve`'s H200 test (issue 25): imported before
`transformers serve` starts, it wraps `LlamaForCausalLM.forward` so that every decode step (a
forward pass over one new token per sequence) sleeps `PLANT_SLEEP_MS` milliseconds (default 1)
after the model's own work. Prefill (more than one new token) is left alone, so TTFT barely
moves and TPOT grows by about the planted time per token. The first planted step and every
1,000th after it are written to stderr (the server's log), so the log shows that it fired.

usage (the candidate's argv): python3 -c "import plant_decode_sleep; from
transformers.cli.transformers import app; app()" serve ... with this folder on PYTHONPATH.
"""

import os
import sys
import time

from transformers.models.llama import modeling_llama

SLEEP_S = float(os.environ.get("PLANT_SLEEP_MS", "1")) / 1e3
_forward = modeling_llama.LlamaForCausalLM.forward
_steps = 0


def forward(self, *args, **kwargs):
    global _steps
    out = _forward(self, *args, **kwargs)
    ids = kwargs.get("input_ids")
    if ids is None and args:
        ids = args[0]
    if ids is None:
        ids = kwargs.get("inputs_embeds")
    if ids is not None and ids.shape[1] == 1:
        time.sleep(SLEEP_S)
        if _steps % 1000 == 0:
            print(f"plant_decode_sleep: decode step {_steps + 1}, slept {SLEEP_S * 1e3:.3f} ms",
                  file=sys.stderr, flush=True)
        _steps += 1
    return out


modeling_llama.LlamaForCausalLM.forward = forward
