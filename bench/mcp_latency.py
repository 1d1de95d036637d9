"""Tool-call latency of `kernelab mcp` beside the same command run directly, in one run.

python3 bench/mcp_latency.py [KERNELAB] (default target/release/kernelab). Needs the MCP Python
SDK (`python3 -m pip install 'mcp==2.3.0'`). Copies two fixtures into a temporary root, calls
`profile` and `check_bitwise` N times through a real MCP client (the official Python SDK) and
runs the same command lines N times as plain processes; prints the medians (docs/benchmarks.md).
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

N = 20
here = os.path.dirname(os.path.abspath(__file__))
repo = os.path.dirname(here)
exe = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(repo, "target/release/kernelab"))
root = tempfile.mkdtemp(prefix="kernelab-mcp-bench-")
try:
    fx = os.path.join(repo, "tests/fixtures")
    shutil.copy(os.path.join(fx, "h200_pair/gdn_w4s3_run1.json.gz"), os.path.join(root, "trace.json.gz"))
    shutil.copy(os.path.join(fx, "tensor/a.npy"), os.path.join(root, "a.npy"))
    shutil.copy(os.path.join(fx, "tensor/a_flip.npy"), os.path.join(root, "b.npy"))
    calls = [
        ("profile", {"files": ["trace.json.gz"]}, ["profile", "trace.json.gz", "--format", "json"]),
        ("check_bitwise", {"a": "a.npy", "b": "b.npy"}, ["check", "bitwise", "a.npy", "b.npy", "--format", "json"]),
    ]
    steps = [{"op": "call", "tool": t, "args": a} for t, a, _ in calls for _ in range(N)]
    plan = {"command": exe, "args": ["mcp", "--root", root, "--state", os.path.join(root, ".state")], "steps": steps}
    client = os.path.join(repo, "crates/kernelab/tests/it/mcp_client.py")
    out = subprocess.run([sys.executable, client], input=json.dumps(plan), capture_output=True, text=True, check=True)
    res = json.loads(out.stdout)
    print(f"kernelab: {exe}")
    print(f"initialize: {res[0]['seconds'] * 1000:.1f} ms")
    for i, (tool, _, argv) in enumerate(calls):
        mcp = [r["seconds"] * 1000 for r in res[1 + i * N : 1 + (i + 1) * N]]
        direct = []
        for _ in range(N):
            t0 = time.monotonic()
            subprocess.run([exe, *argv], cwd=root, capture_output=True)
            direct.append((time.monotonic() - t0) * 1000)
        print(f"{tool}: MCP call median {statistics.median(mcp):.1f} ms, direct process median {statistics.median(direct):.1f} ms (N = {N})")
finally:
    shutil.rmtree(root, ignore_errors=True)
