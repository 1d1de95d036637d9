"""A small PyTorch program whose kernels run inside a captured CUDA graph: the input of
bench/h100/graph_trace/run.sh, which profiles it with Nsight Systems so that each replayed
kernel carries its graph node id (`--cuda-graph-trace=node`)."""
import torch

torch.manual_seed(0)
x = torch.randn(1024, 1024, device="cuda")
w1 = torch.randn(1024, 1024, device="cuda")
w2 = torch.randn(1024, 1024, device="cuda")


def step(x):
    h = torch.relu(x @ w1)
    return torch.softmax(h @ w2, dim=-1) + x


# Warm up on a side stream, as torch.cuda.graphs asks, then capture one step.
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        step(x)
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
torch.cuda.nvtx.range_push("capture")
with torch.cuda.graph(g):
    y = step(x)
torch.cuda.nvtx.range_pop()
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("replay")
for _ in range(20):
    g.replay()
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
torch.cuda.nvtx.range_push("eager")
for _ in range(5):
    step(x)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
print("checksum", float(y.sum()))
