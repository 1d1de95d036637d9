"""The two graph programs of bench/h100/graph_trace/ (issue 44): a chain of operators, and one
whose capture forks onto a second stream so that its branches run side by side (the order of
start on the GPU is then not the order of capture), with their inputs and the warm-up
torch.cuda.graphs asks for."""
import torch

torch.manual_seed(0)
x = torch.randn(2048, 2048, device="cuda")
w1 = torch.randn(2048, 2048, device="cuda")
w2 = torch.randn(2048, 2048, device="cuda")
side = torch.cuda.Stream()


def chain(x):
    h = torch.relu(x @ w1)
    return torch.softmax(h @ w2, dim=-1) + x


def forked(x):
    # Two branches on two streams, joined: their kernels overlap on the GPU.
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        a = torch.tanh(x @ w2)
    b = torch.sigmoid(x @ w1)
    torch.cuda.current_stream().wait_stream(side)
    return a * b


def warm(fn):
    """Runs `fn` three times on a side stream, as torch.cuda.graphs asks before a capture."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn(x)
    torch.cuda.current_stream().wait_stream(s)
