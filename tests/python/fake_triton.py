"""A stand-in for Triton's launch path on a machine without a GPU: `JITFunction.run` (the
entry `kernelab.kernel.compare` wraps to capture launches) runs the kernel with NumPy and
returns a compiled kernel holding a real cache entry of Triton 3.0.0 or 3.6.0
(tests/fixtures/triton/): its cubin and compile metadata, and Triton's own signature and
constants for the kernel `scale_add(x_ptr, y_ptr, out_ptr, n, alpha, stride, BLOCK)`."""

import inspect
import json
import sys
import types
from pathlib import Path

import numpy as np

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "triton"


class KernelParam:
    def __init__(self, num, name, is_constexpr):
        self.num, self.name, self.is_constexpr = num, name, is_constexpr


class Source:
    def __init__(self, signature, constants):
        self.signature, self.constants = signature, constants


class CompiledKernel:
    def __init__(self, version, params):
        d = FIXTURES / version
        self.asm = {"cubin": (d / "scale_add.cubin").read_bytes()}
        self.metadata = json.loads((d / "scale_add.json").read_text())
        self.name = self.metadata["name"]
        sig = {p.name: ("constexpr" if p.is_constexpr else t)
               for p, t in zip(params, ["*fp32", "*fp32", "*fp32", "i32", "fp32", "i32", "constexpr"])}
        if version.startswith("3.0"):
            # Triton 3.0 keys the signature of the parameters only, the constants by name.
            self.src = Source({k: v for k, v in sig.items() if v != "constexpr"}, {"BLOCK": 1024})
        else:
            self.src = Source(sig, {(6,): 1024})


class JITFunction:
    def __init__(self, fn, version):
        self.fn = fn
        names = list(inspect.signature(fn).parameters)
        self.params = [KernelParam(i, n, n == "BLOCK") for i, n in enumerate(names)]
        self.kernel = CompiledKernel(version, self.params)
        self.launches = 0

    def run(self, *args, grid, warmup, **kwargs):
        bound = inspect.signature(self.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        g = grid(bound.arguments) if callable(grid) else grid
        assert g[0] >= 1
        self.fn(*bound.args)
        self.launches += 1
        return self.kernel

    def __getitem__(self, grid):
        return lambda *args, **kwargs: self.run(*args, grid=grid, warmup=False, **kwargs)


def scale_add(x_ptr, y_ptr, out_ptr, n, alpha, stride, BLOCK=1024):
    out_ptr[:n] = x_ptr[: n * stride : stride] * np.float32(alpha) + y_ptr[:n]


def install(monkeypatch):
    """Puts the stand-in at `triton.runtime.jit` for one test; returns the module."""
    triton = types.ModuleType("triton")
    runtime = types.ModuleType("triton.runtime")
    jit = types.ModuleType("triton.runtime.jit")
    jit.JITFunction = JITFunction
    triton.runtime, runtime.jit = runtime, jit
    for name, mod in (("triton", triton), ("triton.runtime", runtime), ("triton.runtime.jit", jit)):
        monkeypatch.setitem(sys.modules, name, mod)
    return jit


N = 1 << 12
old = JITFunction(scale_add, "3.0.0")
new = JITFunction(scale_add, "3.6.0")


def make():
    rng = np.random.default_rng(7)
    x = rng.standard_normal(N).astype(np.float32)
    y = rng.standard_normal(N).astype(np.float32)
    return x, y, np.empty(N, np.float32)


def base(x, y, out):
    old[(N // 1024,)](x, y, out, N, 2.0, 1)


def cand(x, y, out):
    new[lambda meta: (N // meta["BLOCK"],)](x, y, out, N, 2.0, 1)


def scale(x_ptr, y_ptr, out_ptr, n, alpha, stride, BLOCK=1024):
    out_ptr[:n] = x_ptr[: n * stride : stride] * np.float32(alpha)


def add(x_ptr, y_ptr, out_ptr, n, alpha, stride, BLOCK=1024):
    out_ptr[:n] += y_ptr[:n]


scale_k = JITFunction(scale, "3.0.0")
add_k = JITFunction(add, "3.3.1")


def split(x, y, out):
    """The same function as two kernels: `scale`, then `add` in place."""
    scale_k[(N // 1024,)](x, y, out, N, 2.0, 1)
    add_k[(N // 1024,)](x, y, out, N, 2.0, 1)
