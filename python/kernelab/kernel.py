"""``kernelab.kernel``: kernel A/B where the kernels live, as Python callables.

:func:`compare` runs two callables (a baseline and a candidate: a Triton launch, a PyTorch op,
a NumPy function) on the inputs a factory makes, gates their outputs as ``kernelab kernel run``
does (poisoned outputs, finite, baseline vs candidate, repeats, CUDA graph replay, an oracle),
times them in ABBA rounds and returns the ``kernel_run`` document of ``kernel run``, its rounds
and verdict computed by the same Rust statistics. Tensors on CUDA are timed with CUDA events on
PyTorch's current stream; anything else with a monotonic clock (``time.perf_counter_ns``).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import numbers
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

from . import _capture
from . import _native
from . import check as _check

__all__ = ["CallableError", "compare"]


class CallableError(_native.Error):
    """A callable given to :func:`compare` raised: ``e.callable`` is its qualified name,
    ``e.role`` its role (``baseline``, ``candidate``, ``inputs``, ``oracle``), ``e.phase`` what
    was running, and the callable's own exception is ``e.__cause__``. (The CLI's
    ``kernel run --python`` exits 2 with this message.)"""

    def __init__(self, message: str, callable: str = "", role: str = "", phase: str = "") -> None:
        super().__init__(message)
        self.callable = callable
        self.role = role
        self.phase = phase
        self.file = self.line = self.byte = self.field = None


def _qualname(fn: Any) -> str:
    """``module:qualname`` of a callable (a ``functools.partial``'s function's; a Triton
    ``JITFunction``'s Python function's)."""
    inner = getattr(fn, "func", None) or getattr(fn, "fn", None) or fn
    mod = getattr(inner, "__module__", None) or type(inner).__module__
    name = getattr(inner, "__qualname__", None) or type(inner).__qualname__
    return f"{mod}:{name}"


def _sources(fn: Any, depth: int = 3, seen: Optional[set] = None) -> List[bytes]:
    """The source of ``fn`` and, ``depth`` levels down, of the module-level functions and
    Triton kernels (``JITFunction``: their Python function) it names: what a launch runs."""
    seen = set() if seen is None else seen
    inner = getattr(fn, "func", None) or getattr(fn, "fn", None) or fn
    if id(inner) in seen:
        return []
    seen.add(id(inner))
    try:
        out = [inspect.getsource(inner).encode()]
    except (OSError, TypeError):
        return []
    code, scope = getattr(inner, "__code__", None), getattr(inner, "__globals__", {})
    if depth > 0 and code is not None:
        for name in code.co_names:
            g = scope.get(name)
            if g is not None and (inspect.isfunction(g) or inspect.isfunction(getattr(g, "fn", None))):
                out += _sources(g, depth - 1, seen)
    return out


def _source(fn: Any) -> Tuple[Optional[str], Optional[int]]:
    """The SHA-256 (hex) and byte count of a callable's source with the sources of the
    functions and Triton kernels it names (:func:`_sources`), when ``inspect`` finds it."""
    parts = _sources(fn)
    if not parts:
        return None, None
    src = b"\n".join(parts)
    return hashlib.sha256(src).hexdigest(), len(src)


def _libraries() -> List[Tuple[str, None, None]]:
    """Python and the array libraries loaded, with their versions (provenance)."""
    out = [(f"python {sys.version.split()[0]}", None, None)]
    for name in ("numpy", "torch", "triton", "cupy", "jax", "cuda", "tilelang", "helion"):
        mod = sys.modules.get(name)
        version = getattr(mod, "__version__", None) if mod is not None else None
        if version:
            out.append((f"python package {name} {version}", None, None))
    return out


class _Call:
    """A user callable with its role: calls it, turning its exception into a CallableError."""

    def __init__(self, fn: Callable, role: str) -> None:
        if not callable(fn):
            raise _native.UsageError(f"{role}: expected a callable, found {type(fn).__name__}")
        self.fn, self.role, self.name = fn, role, _qualname(fn)

    def __call__(self, phase: str, args: Sequence, kwargs: Dict[str, Any]) -> Any:
        try:
            return self.fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - the user's exception is reported, named
            raise CallableError(
                f"{self.role} `{self.name}` raised {type(e).__name__} during {phase}: {e}",
                callable=self.name, role=self.role, phase=phase,
            ) from e


# Tensors: NumPy arrays and PyTorch tensors, read through NumPy for the gates.

def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "is_cuda")


def _is_tensor(x: Any) -> bool:
    return _is_torch(x) or hasattr(x, "__array_interface__") or hasattr(x, "__array__")


_TORCH_RAW = {"bfloat16": ("int16", "bf16"), "float8_e4m3fn": ("uint8", "f8e4m3fn"),
              "float8_e5m2": ("uint8", "f8e5m2")}


def _host(t: Any) -> Tuple[Any, Optional[str]]:
    """A tensor as a NumPy array on the host, and the kernelab dtype when NumPy has none."""
    if _is_torch(t):
        import torch

        t = t.detach()
        raw = _TORCH_RAW.get(str(t.dtype).replace("torch.", ""))
        if raw is not None:
            t = t.contiguous().view(getattr(torch, raw[0]))
        return t.cpu().numpy(), None if raw is None else raw[1]
    import numpy as np

    return np.asarray(t), None


def _copy(t: Any) -> Any:
    """A separate buffer with the same contents (per-side outputs of the gates)."""
    if _is_torch(t):
        return t.clone()
    import numpy as np

    return np.array(t, copy=True)


def _poison(t: Any) -> None:
    """Every byte of ``t`` set to 0xFF: NaN in float types, so unwritten elements show."""
    if _is_torch(t):
        import torch

        if t.is_contiguous():
            t.view(torch.uint8).fill_(255)
        elif t.is_floating_point():
            t.fill_(float("nan"))
        else:
            t.fill_(-1 if t.dtype != torch.bool else True)
        return
    import numpy as np

    a = np.asarray(t)
    if a.flags.c_contiguous and a.flags.writeable:
        a.reshape(-1).view(np.uint8).fill(0xFF)
    elif a.dtype.kind == "f":
        a.fill(np.nan)
    else:
        a.fill(-1)


class _Args:
    """The input factory's arguments, and which of them are outputs."""

    def __init__(self, made: Any, outputs: Any) -> None:
        if isinstance(made, dict):
            self.args, self.kwargs = [], dict(made)
        elif isinstance(made, (tuple, list)):
            self.args, self.kwargs = list(made), {}
        else:
            self.args, self.kwargs = [made], {}
        if outputs is None:
            self.keys: List[Union[int, str]] = []
        elif isinstance(outputs, (int, str)):
            self.keys = [outputs]
        else:
            self.keys = list(outputs)
        for k in self.keys:
            ok = (k in self.kwargs) if isinstance(k, str) else (-len(self.args) <= k < len(self.args))
            if not ok:
                raise _native.UsageError(
                    f"outputs: {k!r} is not an argument the inputs factory made "
                    f"({len(self.args)} positional, keywords {sorted(self.kwargs)})"
                )
            if not _is_tensor(self.get(k)):
                raise _native.UsageError(f"outputs: argument {k!r} is not an array or tensor")

    def get(self, k: Union[int, str]) -> Any:
        return self.kwargs[k] if isinstance(k, str) else self.args[k]

    def with_copies(self) -> Tuple[list, dict]:
        """The arguments with a fresh copy of each output (one side's outputs for the gates)."""
        args, kwargs = list(self.args), dict(self.kwargs)
        for k in self.keys:
            if isinstance(k, str):
                kwargs[k] = _copy(kwargs[k])
            else:
                args[k] = _copy(args[k])
        return args, kwargs

    def outs(self, args: list, kwargs: dict) -> List[Any]:
        return [kwargs[k] if isinstance(k, str) else args[k] for k in self.keys]

    def tensors(self) -> List[Any]:
        every = list(self.args) + list(self.kwargs.values())
        return [x for x in every if _is_tensor(x) or hasattr(x, "__cuda_array_interface__")]


def _named(result: Any, keys: List[Union[int, str]], written: List[Any]) -> List[Tuple[str, Any]]:
    """The outputs of one call as ``(name, tensor)``: the arguments written into, else what
    the callable returned (a tensor, a tuple or list of them, or a dict)."""
    if keys:
        return [(f"arg {k}" if isinstance(k, int) else str(k), t) for k, t in zip(keys, written)]
    if isinstance(result, dict):
        items = list(result.items())
    elif isinstance(result, (tuple, list)):
        items = [(f"output {i}", r) for i, r in enumerate(result)]
    else:
        items = [("output", result)]
    out = []
    for name, t in items:
        if not _is_tensor(t):
            raise _native.UsageError(
                f"{name}: the callable returned {type(t).__name__}, not an array or tensor; "
                "return the outputs, or name the arguments it writes with outputs="
            )
        out.append((str(name), t))
    return out


#: GPU clock cycles of the spin kernel ahead of each CUDA-timed sample (about 50 µs).
SPIN_CYCLES = 100_000


class _Clock:
    """GPU events on PyTorch's current stream when the tensors are on CUDA, else
    ``time.perf_counter_ns``."""

    def __init__(self, tensors: List[Any]) -> None:
        for t in tensors:
            # Work queued on another device would be timed by its dispatch alone.
            other = (_is_torch(t) and t.device.type not in ("cpu", "cuda")) or (
                not _is_torch(t) and hasattr(t, "__cuda_array_interface__"))
            if other:
                raise _native.UsageError(
                    f"an input is a {type(t).__module__}.{type(t).__name__} on a device: "
                    "kernel.compare times PyTorch tensors on CUDA (events) and host arrays "
                    "(a monotonic clock); wrap other device arrays with torch.as_tensor"
                )
        self.cuda = any(_is_torch(t) and t.is_cuda for t in tensors)
        if self.cuda:
            import torch

            self.torch = torch
            dev = next(t.device for t in tensors if _is_torch(t) and t.is_cuda)
            self.device = torch.cuda.get_device_name(dev)
            self.l2 = int(getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0) or 0)
            self.dev = dev
            # A spin kernel ahead of each timed sample keeps the GPU busy while the callables'
            # launches are enqueued, so the launch latency after a synchronisation stays out of
            # the measured interval (as do_bench's L2 flush does ahead of its events).
            self.spin = getattr(torch.cuda, "_sleep", None)
        else:
            self.device = "cpu (perf_counter_ns)"
            self.l2 = 32 << 20

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()

    def flush_buffer(self) -> Any:
        if self.cuda:
            return self.torch.empty(4 * max(self.l2, 1 << 20), dtype=self.torch.uint8, device=self.dev)
        import numpy as np

        return np.empty(4 * self.l2, dtype=np.uint8)

    def flush(self, buf: Any) -> None:
        if self.cuda:
            buf.zero_()
        else:
            buf.fill(0)

    def time_ns(self, call: Callable[[], Any], n: int) -> float:
        """Nanoseconds per call of ``n`` calls back to back."""
        if self.cuda:
            torch = self.torch
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            if self.spin is not None:
                self.spin(SPIN_CYCLES)
            start.record()
            for _ in range(n):
                call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) * 1e6 / n
        t0 = time.perf_counter_ns()
        for _ in range(n):
            call()
        return (time.perf_counter_ns() - t0) / n


def _gate(name: str, passed: bool, detail: str) -> dict:
    return {"name": name, "passed": bool(passed), "detail": detail}


Snapshot = List[Tuple[str, Tuple[Any, Optional[str]]]]


def _snapshot(outs: List[Tuple[str, Any]]) -> Snapshot:
    """Host copies of one run's outputs (a later run may write the same buffers)."""
    import numpy as np

    return [(n, (np.array(h, copy=True), d)) for n, (h, d) in ((n, _host(t)) for n, t in outs)]


def _finite(label: str, outs: Snapshot) -> dict:
    bad = n = 0
    for _, (a, dtype) in outs:
        for row in (r for f in _check.finite(a, dtype=dtype)["files"] for r in f["tensors"]):
            n += row["elements"]
            bad += row["nan"] + row["pos_inf"] + row["neg_inf"]
    return _gate(f"{label} outputs all finite (poisoned with NaN before the run)", bad == 0,
                 f"{bad} of {n} elements NaN or infinite")


def _pair(name: str, a: Snapshot, b: Snapshot, tol: Optional[Tuple[Any, Any]],
          oracle: bool = False) -> dict:
    """``a`` vs ``b``, output by output: bitwise (``tol`` None) or within ``(rtol, atol)``."""
    if len(a) != len(b):
        return _gate(name, False, f"{len(a)} outputs vs {len(b)}")
    differing = elements = 0
    first = ""
    for (na, (hx, dx)), (_, (hy, dy)) in zip(a, b):
        if hx.shape != hy.shape:
            return _gate(name, False, f"`{na}`: shape {list(hx.shape)} vs {list(hy.shape)}")
        if tol is None:
            doc = _check.bitwise(hx, hy, first=1, dtype=dx or dy)
        else:
            fn = _check.oracle if oracle else _check.close
            doc = fn(hx, hy, rtol=tol[0], atol=tol[1], dtype=dx or dy)
        for t in doc["tensors"]:
            if t.get("problem"):
                return _gate(name, False, f"`{na}`: {t['problem']}")
            r = t["result"]
            elements += r["elements"]
            if tol is None:
                differing += r["differing"]
                if not first and r.get("first"):
                    m = r["first"][0]
                    first = f"; first at {na}{m['index']}: {m['a']} vs {m['b']}"
            else:
                differing += r["mismatches"]
                if r.get("max_abs_err") is not None:
                    first = f"; max abs error {r['max_abs_err']}"
    what = "differ" if tol is None else "outside the tolerance"
    return _gate(name, differing == 0, f"{differing} of {elements} elements {what}{first}")


class _Sides:
    """Both callables on their own outputs (the gates): each run poisons its outputs first."""

    def __init__(self, a: _Call, b: _Call, args: _Args, clock: _Clock) -> None:
        self.a, self.b, self.args, self.clock = a, b, args, clock
        self.sa, self.sb = args.with_copies(), args.with_copies()

    def run(self, call: _Call, side: Tuple[list, dict], phase: str) -> Snapshot:
        for t in self.args.outs(*side):
            _poison(t)
        self.clock.sync()
        result = call(phase, *side)
        self.clock.sync()
        return _snapshot(_named(result, self.args.keys, self.args.outs(*side)))

    def graph(self, eager: Snapshot) -> dict:
        """The candidate captured in a CUDA graph and replayed, against its eager run."""
        torch, b, side = self.clock.torch, self.b, self.sb
        name = "candidate graph replay vs eager bitwise"
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            b("the graph gate's warm-up", *side)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(g):
                result = b.fn(*side[0], **side[1])
        except Exception as e:  # noqa: BLE001 - a callable that cannot be captured fails the gate
            return _gate(name, False, f"capture failed: {type(e).__name__}: {e}")
        outs = _named(result, self.args.keys, self.args.outs(*side))
        for _, t in outs:
            _poison(t)
        g.replay()
        self.clock.sync()
        return _pair(name, eager, _snapshot(outs), None)


def _gates(sides: _Sides, tol: Optional[Tuple[Any, Any]], repeat: int, graph: bool,
           oracle: Optional[_Call], oracle_tol: Tuple[Any, Any]) -> List[dict]:
    """The gates of ``kernel run``, in its order, on each side's own outputs."""
    phase = "the correctness gates"
    out_a = sides.run(sides.a, sides.sa, phase)
    out_b = sides.run(sides.b, sides.sb, phase)
    g = [_finite("baseline", out_a), _finite("candidate", out_b)]
    if tol is None:
        g.append(_pair("baseline vs candidate bitwise", out_a, out_b, None))
    else:
        g.append(_pair(f"baseline vs candidate (rtol {tol[0]}, atol {tol[1]})", out_a, out_b, tol))
    for r in range(1, repeat):
        again = sides.run(sides.b, sides.sb, f"the repeat gate (run {r + 1})")
        g.append(_pair(f"candidate repeat {r + 1} vs first run bitwise", out_b, again, None))
    if graph:
        g.append(sides.graph(out_b))
    if oracle is not None:
        ref = oracle("the oracle gate", *sides.args.with_copies())
        sides.clock.sync()
        expected = _snapshot(_named(ref, [], []))
        g.append(_pair(f"candidate vs oracle `{oracle.name}` (rtol {oracle_tol[0]}, atol {oracle_tol[1]})",
                       out_b, expected, oracle_tol, oracle=True))
    return g


def _telemetry(clock: _Clock) -> dict:
    """SM clock, temperature and power through PyTorch (NVML), each None when unavailable."""
    t = {"sm_mhz": None, "temp_c": None, "power_w": None}
    if clock.cuda and getattr(clock, "nvml", True):
        cuda = clock.torch.cuda
        try:
            t["sm_mhz"] = int(cuda.clock_rate(clock.dev))
            t["temp_c"] = int(cuda.temperature(clock.dev))
            t["power_w"] = float(cuda.power_draw(clock.dev)) / 1000.0
        except Exception:  # noqa: BLE001 - no NVML (pynvml): telemetry stays unavailable
            clock.nvml = False
    return t


def _timed(sides: _Sides, clock: _Clock, call: _Call, n: int, flush: Any) -> float:
    """Nanoseconds per call of ``n`` calls of ``call`` on the shared outputs."""
    args, kwargs = sides.args.args, sides.args.kwargs
    fn = call.fn
    if flush is not None:
        clock.flush(flush)
    try:
        return clock.time_ns(lambda: fn(*args, **kwargs), n)
    except Exception as e:  # noqa: BLE001 - the user's exception is reported, named
        raise CallableError(
            f"{call.role} `{call.name}` raised {type(e).__name__} during timing: {e}",
            callable=call.name, role=call.role, phase="timing",
        ) from e


def _timing(sides: _Sides, clock: _Clock, rounds: int, samples: int, warmup: int,
            batch: int, flush: Any, stream: Any) -> Tuple[int, List[dict]]:
    """Warm-up, the batch size, then ABBA rounds on one set of outputs shared by both sides
    (the same buffers); every sample, as ``kernel run`` writes it, also written to ``stream``
    (the run's samples file) as it is measured."""
    for _ in range(warmup):
        _timed(sides, clock, sides.a, 1, None)
        _timed(sides, clock, sides.b, 1, None)
    clock.sync()
    if flush is not None:
        batch = 1
    elif batch <= 0:
        batch = _native.kernel_batch([_timed(sides, clock, sides.a, 1, None) / 1e3 for _ in range(5)])
    out = []
    for k, order in enumerate(_native.kernel_orders(rounds)):
        seq = [("baseline", sides.a), ("candidate", sides.b)]
        for label, call in (seq if order == "AB" else seq[::-1]):
            for i in range(samples):
                ns = _timed(sides, clock, call, batch, flush)
                out.append({"round": k, "build": label, "sample": i, "batch": batch,
                            "ns_per_launch": ns, **_telemetry(clock)})
                stream.write(json.dumps(out[-1]))
    return batch, out


#: The share of a call's GPU time the captured kernels must reach for no note on the rest: the
#: events around each launch cost about 2.5% of a 92 µs call on an H100 (docs/benchmarks.md).
OUTSIDE_NOTED = 0.95

#: Calls of each side under capture: the first copies the inputs, the others time the kernels.
CAPTURE_CALLS = 4


def _capture_calls(sides: _Sides, clock: _Clock, snapshot: bool) -> Tuple[_capture.TritonCapture, List[List[Any]]]:
    """Each side called :data:`CAPTURE_CALLS` times on the shared buffers with its Triton
    launches captured; per side and call, the GPU events around the whole call (CUDA)."""
    args, kwargs = sides.args.args, sides.args.kwargs
    calls: List[List[Any]] = [[], []]
    outs = sides.args.outs(args, kwargs)
    with _capture.TritonCapture(clock.cuda, snapshot, outs) as cap:
        for k in range(CAPTURE_CALLS):
            for i, call in enumerate((sides.a, sides.b)):
                cap.side = "baseline" if i == 0 else "candidate"
                cap.call = k
                clock.sync()
                t0 = time.perf_counter()
                events = None
                if clock.cuda and k > 0:
                    torch = clock.torch
                    if clock.spin is not None:
                        # Keep the GPU busy while the call's launches are enqueued, so the
                        # events time the kernels, not the launch latency between them.
                        clock.spin(int(min(2e9, max(SPIN_CYCLES, 4000 * cap.cpu_us[i]))))
                    events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                    events[0].record()
                call(f"the capture of its launches (call {k + 1})", args, kwargs)
                if events is not None:
                    events[1].record()
                clock.sync()
                if k == 0:
                    cap.cpu_us[i] = (time.perf_counter() - t0) * 1e6
                calls[i].append(events)
            cap.side = ""
    return cap, calls


def _launched(cap: _capture.TritonCapture, calls: List[List[Any]], folder: str, keep: bool,
              settings: Dict[str, Any]) -> Optional[dict]:
    """The ``launched`` section of the document: each side's kernels with their GPU time and
    share per call, the kernel pairs with their machine code compared, and (``keep``) a launch
    spec per pair under ``folder``."""
    if not cap.launches:
        return None
    ms = lambda e: e[0].elapsed_time(e[1]) * 1e6 if e is not None else None  # noqa: E731
    timed_calls = range(1, CAPTURE_CALLS)
    call_ns = []
    for i in range(2):
        vals = [ms(calls[i][k]) for k in timed_calls if calls[i][k] is not None]
        call_ns.append(_median(vals))
    kernels, firsts = [], {"baseline": [], "candidate": []}
    for side_i, side in enumerate(("baseline", "candidate")):
        mine = [x for x in cap.launches if x.side == side]
        order: List[Tuple[str, str]] = []
        for x in mine:
            if (x.function, x.name) not in order:
                order.append((x.function, x.name))
                firsts[side].append(x)
        for function, name in order:
            these = [x for x in mine if (x.function, x.name) == (function, name)]
            first = these[0]
            per_call = [sum(ms(x.events) for x in these if x.call == k and x.events is not None)
                        for k in timed_calls]
            ns = _median(per_call) if _timed_events(these) else None
            stems = [x.stem for x in firsts[side][:-1]]
            stem = name if name not in stems else f"{name}_{len(firsts[side])}"
            code, sha = _capture.write_code(folder, first, stem)
            meta = _capture._meta(first.kernel)
            warp = int(meta.get("warp_size") or (meta.get("target") or {}).get("warp_size") or 32)
            kernels.append({
                "side": side, "name": name, "function": function,
                "launches": len(these) / CAPTURE_CALLS, "grid": list(first.grid),
                "block": [int(meta.get("num_warps") or 0) * warp, 1, 1],
                "shared": int(meta.get("shared") or 0), "ns": ns,
                "share": None if ns is None or not call_ns[side_i] else ns / call_ns[side_i],
                "code_sha256": sha, "code": code if keep else None,
            })
            first.code_path = os.path.join(folder, code)
    pairs, notes = [], []
    a_left, b_left = list(firsts["baseline"]), list(firsts["candidate"])
    matched = []
    for a in list(a_left):
        b = next((b for b in b_left if b.name == a.name), None)
        if b is not None:
            matched.append((a, b))
            a_left.remove(a)
            b_left.remove(b)
    if len(a_left) == len(b_left) == 1:
        # One kernel on each side under two names: a rename, paired.
        matched.append((a_left.pop(), b_left.pop()))
    for a in a_left:
        notes.append(f"baseline kernel {a.name} has no counterpart in the candidate (fused, split or removed)")
    for b in b_left:
        notes.append(f"candidate kernel {b.name} has no counterpart in the baseline (fused, split or added)")
    lone = a_left + b_left
    for n, (a, b) in enumerate(matched):
        try:
            same, line, regs, frame = _native.kernel_code_pair(a.code_path, a.name, b.code_path, b.name)
        except _native.Error as e:
            same, line, regs, frame = False, f"machine code not compared: {e}", [None, None], [None, None]
        launch = lambda x: (x.grid, _capture._meta(x.kernel).get("num_warps"),  # noqa: E731
                            _capture._meta(x.kernel).get("shared"),
                            [(n, k, None if k == "buffer" else v) for n, k, v in x.params])
        if same and launch(a) != launch(b):
            same = False
            line = (f"identical machine code, other launch configuration (grid {'×'.join(map(str, a.grid))} "
                    f"→ {'×'.join(map(str, b.grid))}, warps, shared memory or parameters): a difference may be real")
        spec = None
        if keep:
            sub = "" if len(matched) == 1 and not (a_left or b_left) else f"{n + 1}_{a.stem}"
            written = _capture.write_spec(folder, sub, a, b, settings)
            spec = None if written.spec is None else os.path.join(folder, written.spec)
            if written.note:
                notes.append(f"no launch spec for {a.name}: {written.note}")
        pairs.append({"baseline": a.name, "candidate": b.name, "identical": bool(same),
                      "machine_code": line, "registers": list(regs), "frame_bytes": list(frame),
                      "spec": spec})
    if keep:
        # A kernel with no counterpart reproduces alone: its spec launches it on both sides
        # (an A/A of that kernel), from the inputs of its first launch.
        for n, x in enumerate(lone):
            sub = f"{len(matched) + n + 1}_{x.side}_{x.stem}"
            written = _capture.write_spec(folder, sub, x, x, settings)
            if written.note:
                notes.append(f"no launch spec for {x.name}: {written.note}")
            else:
                notes.append(f"{x.side} kernel {x.name} alone (an A/A of it): kernelab kernel run "
                             f"{os.path.join(folder, written.spec)}")
    for side_i, side in enumerate(("baseline", "candidate")):
        inside = sum(k["ns"] or 0.0 for k in kernels if k["side"] == side)
        total = call_ns[side_i]
        if total and inside < OUTSIDE_NOTED * total:
            notes.append(f"{side}: {100 * (1 - inside / total):.1f}% of the call's GPU time is outside "
                         "the captured kernels (PyTorch ops, copies, other launchers, gaps)")
    return {"kernels": kernels, "call_ns": call_ns, "pairs": pairs,
            "capture": folder if keep else None, "notes": notes}


def _capture_into(sides: _Sides, clock: _Clock, capture: Any, settings: Dict[str, Any]) -> Optional[dict]:
    """The capture of both sides' launches (:func:`_launched`), its files in ``capture`` when
    that names a folder, else in a temporary folder removed afterwards."""
    import shutil
    import tempfile

    keep = capture is not None and capture is not True
    folder = os.fspath(capture) if keep else tempfile.mkdtemp(prefix="kernelab-capture-")
    if keep:
        if os.path.exists(folder) and (not os.path.isdir(folder) or os.listdir(folder)):
            raise _native.UsageError(f"capture={folder!r}: expected a new or empty folder")
        os.makedirs(folder, exist_ok=True)
    try:
        cap, calls = _capture_calls(sides, clock, snapshot=keep)
        return _launched(cap, calls, folder, keep, settings)
    finally:
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def _timed_events(launches: List[Any]) -> bool:
    """Whether the launches were timed with GPU events."""
    return any(x.events is not None for x in launches)


def _median(v: List[Optional[float]]) -> Optional[float]:
    """The median of the values that are not None; None when there are none."""
    present = [x for x in v if x is not None]
    return statistics.median(present) if present else None


def _check_range(name: str, value: Any, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not (low <= value <= high):
        raise _native.UsageError(f"{name}={value!r}: expected an integer in [{low}, {high}]")


def _build(label: str, call: _Call, args: _Args) -> dict:
    return {"label": label, "code": f"python:{call.name}", "symbol": call.name.split(":")[-1],
            "grid": [0, 0, 0], "block": [0, 0, 0], "shared": 0,
            "params": len(args.args) + len(args.kwargs), "triton": None}


def compare(
    baseline: Callable,
    candidate: Callable,
    inputs: Callable[[], Any],
    *,
    outputs: Union[None, int, str, Sequence[Union[int, str]]] = None,
    oracle: Optional[Callable] = None,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    repeat: int = 3,
    graph: Optional[bool] = None,
    l2_flush: bool = False,
    rounds: int = 30,
    samples: int = 5,
    warmup: int = 20,
    batch: int = 0,
    threshold: float = 0.01,
    aa: bool = False,
    record: Optional[Union[str, "os.PathLike[str]"]] = None,
    label: Optional[str] = None,
    samples_file: Optional[Union[str, "os.PathLike[str]"]] = None,
    capture: Union[None, bool, str, "os.PathLike[str]"] = None,
    controls: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> dict:
    """Gate and time two callables as ``kernelab kernel run`` gates and times two builds.

    Args:
        baseline, candidate: the two callables, each called with the arguments ``inputs()``
            made (``f(*args)`` for a tuple or list, ``f(**kw)`` for a dict, else ``f(x)``).
        inputs: makes the arguments once; both sides share the inputs.
        outputs: the arguments the callables write into (positions or keywords); default:
            the outputs are what the callables return (a tensor, a tuple/list or dict of them).
            Written outputs are poisoned (every byte 0xFF: NaN) before each gate run, each side
            writes its own copies for the gates, and both write the same buffers when timed.
        oracle: a callable of the same arguments returning the expected outputs; the candidate
            is compared with them within ``rtol``/``atol`` (default per dtype).
        rtol, atol: baseline vs candidate within this tolerance instead of bitwise.
        repeat: candidate runs compared bitwise with its first run (1 to 1000).
        graph: the candidate captured in a CUDA graph, replayed and compared bitwise with its
            eager run (default: when the tensors are on CUDA; needs PyTorch).
        l2_flush: write 4 × L2 bytes before each timed call (forces batch 1).
        rounds, samples, warmup, batch, threshold: as ``[timing]`` of a launch spec (batch 0:
            1 for calls of 20 µs and more, else about 200 µs worth).
        aa: time the baseline against itself (an A/A control: the verdict should be SAME).
        record, label: add the ``kernel_run`` record to this bundle (else ``KERNELAB_BUNDLE``,
            when set) under this label (default ``<baseline> vs <candidate>``).
        samples_file: the JSONL of every timed sample (default: a run folder under
            ``$XDG_STATE_HOME/kernelab/runs/``).
        capture: the Triton kernels each side launches are captured (default, when Triton is
            loaded): their GPU time and share of each call, and each pair's machine code
            compared (registers, stack frame, identical or not), in ``launched``. A folder
            (``capture="DIR"``) also keeps, per kernel pair, the code objects with their
            metadata, the inputs of the first launch (safetensors) and a launch spec, so that
            ``kernelab kernel run DIR/spec.toml`` repeats the A/B without Python. ``False``:
            nothing is captured.
        controls: a JSON-lines ledger of A/A controls (``kernel run --controls``): a run whose
            captured kernels all have identical machine code on both sides, with its gates
            passed, is appended as one control of its key (the baseline's kernels and grids,
            the GPU); once the ledger holds 5 controls of the key, their largest change is the
            noise floor in ``noise_floor`` and beside the verdict. A ledger line that is not a
            control raises before anything is timed.

    Returns:
        The ``kernel_run`` document (``kernelab kernel run --format json``): ``pass``, ``gates``,
        ``rounds``, ``analysis`` (``verdict``, ``change`` with its interval), ``builds`` naming
        the callables (``code`` = ``python:module:qualname``), and ``conditions`` (the
        environment fingerprint before the first round, and each field that differed after
        the last: when ``changed`` is not empty the verdict is refused, and ``kernel run
        --python`` exits 2).

    Raises:
        CallableError: a callable (or ``inputs``, ``oracle``) raised; names it.
        UsageError: a setting is not valid.
    """
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for name, v, lo, hi in (("rounds", rounds, 2, 10_000), ("samples", samples, 1, 10_000),
                            ("warmup", warmup, 0, 1_000_000), ("batch", batch, 0, 1_000_000),
                            ("repeat", repeat, 1, 1000)):
        _check_range(name, v, lo, hi)
    if isinstance(threshold, bool) or not (isinstance(threshold, numbers.Real) and 0 <= threshold < 1):
        raise _native.UsageError(f"threshold={threshold!r}: expected a fraction in [0, 1)")
    if controls is not None:
        _native.controls_check(os.fspath(controls))
    a = _Call(baseline, "baseline")
    b = _Call(baseline if aa else candidate, "candidate")
    make = _Call(inputs, "inputs")
    args = _Args(make("making the inputs", [], {}), outputs)
    clock = _Clock(args.tensors())
    if graph and not clock.cuda:
        raise _native.UsageError("graph=True: the graph gate needs PyTorch tensors on CUDA")
    sides = _Sides(a, b, args, clock)
    tol = None if rtol is None and atol is None else (rtol, atol)
    oracle_call = None if oracle is None else _Call(oracle, "oracle")
    gates = _gates(sides, tol, int(repeat), clock.cuda if graph is None else graph,
                   oracle_call, (rtol, atol))
    used, timed = 0, []
    launched = None
    if all(g["passed"] for g in gates) and capture is not False and "triton" in sys.modules:
        settings = {"repeat": int(repeat), "rtol": rtol, "atol": atol, "rounds": int(rounds),
                    "samples": int(samples), "warmup": int(warmup), "l2_flush": bool(l2_flush),
                    "threshold": float(threshold)}
        launched = _capture_into(sides, clock, capture, settings)
    written = None
    fingerprints: List[Any] = []
    run_label = label or f"{a.name.split(':')[-1]} vs {b.name.split(':')[-1]}"
    source = f"python:{a.name} vs python:{b.name}"
    if all(g["passed"] for g in gates):
        flush = clock.flush_buffer() if l2_flush else None
        stream = _native.KernelSamples(run_label, source, int(rounds),
                                       None if samples_file is None else os.fspath(samples_file))
        command = f"kernelab.kernel.compare {a.name} {b.name}"
        try:
            fingerprints.append(json.loads(_native.fingerprint(command)))
            used, timed = _timing(sides, clock, int(rounds), int(samples), int(warmup), int(batch), flush,
                                  stream)
            fingerprints.append(json.loads(_native.fingerprint(command)))
        except BaseException:
            stream.finish(False)
            raise
        written = stream.finish(True)
    measured = {"device": clock.device, "builds": [_build("baseline", a, args), _build("candidate", b, args)],
                "gates": gates, "batch": used, "l2_flush": bool(l2_flush), "samples": timed,
                "rounds": int(rounds), "threshold": float(threshold), "launched": launched,
                "fingerprints": fingerprints}
    names = [(f"python:{c.name}", *_source(c.fn)) for c in (a, b, make, oracle_call) if c is not None]
    if aa:
        names = names[:1] + names[2:]
    record = record if record is not None else (os.environ.get("KERNELAB_BUNDLE") or None)
    doc = _native.kernel_measured(
        json.dumps(measured), run_label, source, written=written,
        samples=None if samples_file is None else os.fspath(samples_file),
        record=None if record is None else os.fspath(record),
        argv=["python", "kernelab.kernel.compare", a.name, b.name, "--inputs", make.name],
        started=started, inputs=names + _libraries(),
        controls=None if controls is None else os.fspath(controls),
    )
    if record is not None and launched is not None:
        _record_code_diffs(launched, os.fspath(record), run_label)
    return doc


def _record_code_diffs(launched: dict, record: str, label: str) -> None:
    """A ``code_diff`` record (registers, spills, instruction classes; ``kernelab code diff``)
    of each captured kernel pair whose code objects the capture folder keeps."""
    folder = launched.get("capture")
    if not folder:
        return
    code = {(k["side"], k["name"]): k.get("code") for k in launched["kernels"]}
    for p in launched["pairs"]:
        base, cand = code.get(("baseline", p["baseline"])), code.get(("candidate", p["candidate"]))
        if not base or not cand:
            continue
        names = p["baseline"] if p["baseline"] == p["candidate"] else f"{p['baseline']} → {p['candidate']}"
        _native.code_diff(os.path.join(folder, base), os.path.join(folder, cand), record=record,
                          label=f"{label}: {names}")


def _tree_top(folder: str) -> str:
    """The top of the git work tree holding ``folder`` (a ``.git`` entry), else ``folder``."""
    at = folder
    while True:
        if os.path.exists(os.path.join(at, ".git")):
            return at
        up = os.path.dirname(at)
        if up == at:
            return folder
        at = up


def _load_file(path: str) -> Any:
    """The Python file ``path`` loaded as a module of its own, with its folder and the top of
    its work tree first on ``sys.path`` while it runs. The modules it imported from that tree
    are then dropped from ``sys.modules`` (its functions keep them): a second file of the same
    name from another tree (``kernelab gate``'s base and head) loads its own copies."""
    import hashlib
    import importlib.util

    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    top = _tree_top(folder)
    name = "kernelab_file_" + hashlib.sha256(path.encode()).hexdigest()[:16]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise _native.UsageError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    before = set(sys.modules)
    added = [p for p in (folder, top) if p not in sys.path]
    sys.path[:0] = added
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        for p in added:
            sys.path.remove(p)
        for m in set(sys.modules) - before - {name}:
            f = getattr(sys.modules[m], "__file__", None) or ""
            if os.path.abspath(f).startswith(top + os.sep):
                del sys.modules[m]
    return module


def _resolve(ref: str, what: str) -> Callable:
    """``module:name`` imported, or ``path/to/file.py:name`` loaded from that file (``name``
    may be dotted: ``mod:Class.method``)."""
    import importlib

    mod, sep, name = ref.rpartition(":")
    if not sep or not mod or not name:
        raise _native.UsageError(f"{what} {ref!r}: expected module:function or file.py:function")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        if mod.endswith(".py"):
            if not os.path.isfile(mod):
                raise _native.UsageError(f"{what} {ref!r}: no such file {mod}")
            obj: Any = _load_file(mod)
        else:
            obj = importlib.import_module(mod)
    except _native.UsageError:
        raise
    except Exception as e:  # noqa: BLE001 - an import failure is reported, named
        raise CallableError(f"{what} {ref!r}: importing `{mod}` raised {type(e).__name__}: {e}",
                            callable=ref, role=what, phase="import") from e
    for part in name.split("."):
        if not hasattr(obj, part):
            raise _native.UsageError(f"{what} {ref!r}: `{mod}` has no attribute `{name}`")
        obj = getattr(obj, part)
    return obj


def _main(argv: List[str]) -> int:
    """``kernelab kernel run --python MOD:BASE MOD:CAND --inputs MOD:MAKE [...]``: :func:`compare`
    from the command line; exit 0 (gates passed), 1 (a gate failed) or 2 (an error)."""
    import argparse

    p = argparse.ArgumentParser(prog="kernelab kernel run --python",
                                description="Kernel A/B of two Python callables (kernelab.kernel.compare).")
    p.add_argument("--python", nargs=2, required=True, metavar=("BASELINE", "CANDIDATE"),
                   help="the two callables, module:function")
    p.add_argument("--inputs", required=True, metavar="MOD:FN", help="the input factory")
    p.add_argument("--outputs", help="arguments written into: positions or keywords, comma-separated")
    p.add_argument("--oracle", metavar="MOD:FN", help="a callable returning the expected outputs")
    p.add_argument("--rtol", type=float)
    p.add_argument("--atol", type=float)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-graph", action="store_true", help="skip the CUDA graph replay gate")
    p.add_argument("--l2-flush", action="store_true")
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--samples-per-round", type=int, default=5, dest="per_round")
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--batch", type=int, default=0)
    p.add_argument("--threshold", type=float, default=0.01)
    p.add_argument("--aa", action="store_true", help="time the baseline against itself")
    p.add_argument("--samples", metavar="FILE", help="JSONL of every timed sample")
    p.add_argument("--capture", metavar="DIR",
                   help="write each captured kernel pair's code objects, inputs and launch spec here")
    p.add_argument("--controls", metavar="FILE",
                   help="a ledger of identical-code runs: this run joins it, its noise floor is stated")
    p.add_argument("--record", metavar="DIR")
    p.add_argument("--label")
    p.add_argument("--format", choices=["table", "md", "json"], default="table")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    outputs: Any = None
    if a.outputs:
        outputs = [int(x) if x.strip().lstrip("-").isdigit() else x.strip() for x in a.outputs.split(",")]
    try:
        doc = compare(
            _resolve(a.python[0], "baseline"), _resolve(a.python[1], "candidate"),
            _resolve(a.inputs, "inputs"), outputs=outputs,
            oracle=None if a.oracle is None else _resolve(a.oracle, "oracle"),
            rtol=a.rtol, atol=a.atol, repeat=a.repeat, graph=False if a.no_graph else None,
            l2_flush=a.l2_flush, rounds=a.rounds, samples=a.per_round, warmup=a.warmup,
            batch=a.batch, threshold=a.threshold, aa=a.aa, record=a.record, label=a.label,
            samples_file=a.samples, capture=a.capture, controls=a.controls,
        )
    except _native.Error as e:
        sys.stderr.write(f"kernelab: error: {e}\n")
        return 2
    text = json.dumps(doc, indent=2) if a.format == "json" else _native.kernel_text(
        json.dumps(doc), a.format, None)
    sys.stdout.write(text if text.endswith("\n") else text + "\n")
    changed = (doc.get("conditions") or {}).get("changed") or []
    if changed:
        v = lambda x: "unavailable" if x is None else x  # noqa: E731
        said = "; ".join(f"{c['field']}: {v(c['was'])} → {v(c['now'])} ({c['at']})" for c in changed)
        sys.stderr.write(f"kernelab: error: the conditions changed during the run, the verdict is "
                         f"refused: {said}\n")
        return 2
    return 0 if doc["pass"] else 1
