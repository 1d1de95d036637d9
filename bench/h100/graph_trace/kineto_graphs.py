"""PyTorch profiler (Kineto) traces of CUDA graph replays whose kernels carry their graph and
graph node ids (issue 44, `profile --by-graph` from node ids). Two graphs: a chain, and one
whose capture forks onto a second stream so that its branches run side by side (the order
of start on the GPU is then not the order of capture). One trace profiles the captures and
the replays, one only the replays. Run through the device tool:
    python3 bench/h100/graph_trace/kineto_graphs.py   (writes under $OUT)
"""
import os

import torch
from torch.profiler import ProfilerActivity, profile, record_function

from graph_models import chain, forked, warm, x

out = os.environ.get("OUT", "/tmp/kineto_graphs")
os.makedirs(out, exist_ok=True)


def capture(fn):
    g = torch.cuda.CUDAGraph()
    with record_function(f"capture {fn.__name__}"):
        with torch.cuda.graph(g):
            y = fn(x)
    return g, y


def replay(g1, g2):
    with record_function("decode loop"):
        for _ in range(20):
            g1.replay()
    with record_function("prefill loop"):
        for _ in range(10):
            g2.replay()
    with record_function("eager"):
        for _ in range(3):
            chain(x)
    torch.cuda.synchronize()


warm(chain)
warm(forked)
acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
with profile(activities=acts) as p:
    g1, y1 = capture(chain)
    g2, y2 = capture(forked)
    torch.cuda.synchronize()
    replay(g1, g2)
p.export_chrome_trace(f"{out}/kineto_graphs_with_capture.json")
with profile(activities=acts) as p:
    replay(g1, g2)
p.export_chrome_trace(f"{out}/kineto_graphs_replays_only.json")
print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name())
print("checksums", float(y1.sum()), float(y2.sum()))
