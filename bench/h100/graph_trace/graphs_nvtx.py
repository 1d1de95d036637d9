"""Two captured CUDA graphs, profiled by Nsight Systems with each replayed kernel as its graph
node (issue 44, `profile --by-graph` from graph node ids): a chain, and one whose capture forks
onto a second stream so that its branches run side by side. The captures run under
`torch.autograd.profiler.emit_nvtx`, so every operator is an NVTX range around the launch
that made its graph node. Run by capture_import.sh with SCRIPT=graphs_nvtx.py."""
import torch

from graph_models import chain, forked, warm, x


warm(chain)
warm(forked)
graphs = []
with torch.autograd.profiler.emit_nvtx():
    for fn in (chain, forked):
        g = torch.cuda.CUDAGraph()
        torch.cuda.nvtx.range_push(f"capture {fn.__name__}")
        with torch.cuda.graph(g):
            y = fn(x)
        torch.cuda.nvtx.range_pop()
        graphs.append((g, y))
torch.cuda.synchronize()
for name, (g, _), n in (("decode loop", graphs[0], 20), ("prefill loop", graphs[1], 10)):
    torch.cuda.nvtx.range_push(name)
    for _ in range(n):
        g.replay()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
torch.cuda.nvtx.range_push("eager")
for _ in range(3):
    chain(x)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
print("checksums", [float(y.sum()) for _, y in graphs])
