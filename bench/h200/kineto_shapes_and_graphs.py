# Makes three Kineto traces (tests/fixtures/kineto_h200_*.json.gz; run with OUT=dir) on the local GPU: bf16 torch.mm at four shapes (one cuBLAS kernel may
# run several), and a CUDA graph captured once and replayed, beside eager launches.
import os, sys, json, torch
from torch.profiler import profile, ProfilerActivity, record_function
out = os.environ.get("OUT", ".")
dev = "cuda"
print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name(0))
shapes = [(4096, 4096, 4096), (8192, 8192, 8192), (2048, 8192, 4096), (8192, 2048, 8192)]
mats = [(torch.randn(m, k, device=dev, dtype=torch.bfloat16), torch.randn(k, n, device=dev, dtype=torch.bfloat16)) for m, n, k in shapes]
for a, b in mats:
    for _ in range(3):
        torch.mm(a, b)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as p:
    for a, b in mats:
        for _ in range(5):
            torch.mm(a, b)
    torch.cuda.synchronize()
p.export_chrome_trace(os.path.join(out, "kineto_h200_mm_bf16_four_shapes.json"))
# CUDA graphs: a small MLP step captured, replayed 8 times; a second graph of another shape, 5 times.
def make(n):
    x = torch.randn(256, n, device=dev)
    w1 = torch.randn(n, 4 * n, device=dev)
    w2 = torch.randn(4 * n, n, device=dev)
    def step():
        return torch.relu(x @ w1) @ w2 + x
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = step()
    return g, step
g1, s1 = make(1024)
g2, s2 = make(512)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as p:
    for i in range(8):
        with record_function("replay_g1"):
            g1.replay()
    for i in range(5):
        with record_function("replay_g2"):
            g2.replay()
    for i in range(2):
        s1()
    torch.cuda.synchronize()
p.export_chrome_trace(os.path.join(out, "kineto_h200_cuda_graph_replay.json"))
# The capture itself, profiled (graph capture under the profiler).
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as p:
    g3 = torch.cuda.CUDAGraph()
    x = torch.randn(128, 256, device=dev)
    w = torch.randn(256, 256, device=dev)
    torch.cuda.synchronize()
    with torch.cuda.graph(g3):
        y = torch.relu(x @ w)
    for i in range(4):
        g3.replay()
    torch.cuda.synchronize()
p.export_chrome_trace(os.path.join(out, "kineto_h200_cuda_graph_capture_and_replay.json"))
for f in os.listdir(out):
    os.system(f"gzip -9 {os.path.join(out, f)}")
