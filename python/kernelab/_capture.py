"""What a Python callable launched: the Triton kernels, captured at their launch.

:class:`TritonCapture` wraps ``triton.runtime.jit.JITFunction.run`` (the one entry of every
``kernel[grid](...)`` launch in Triton 3.0 to 3.6) while it is active, and records for each
launch the compiled kernel (code object and compile metadata), the grid, the parameters the
kernel takes (Triton's constexprs and specialised constants left out, as its launcher leaves
them out) and, on CUDA, the GPU time between two events around the launch. :func:`write`
writes the code objects, the inputs of each kernel's first launch (safetensors) and a launch
spec per kernel pair, so that ``kernelab kernel run DIR/spec.toml`` repeats the A/B without
Python. Nothing here imports Triton: a callable that does not use it captures nothing.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import struct
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import _native

# A tensor's dtype (torch or NumPy name) → (launch spec type, safetensors dtype).
_DTYPES = {
    "float64": ("f64", "F64"), "float32": ("f32", "F32"), "float16": ("f16", "F16"),
    "bfloat16": ("bf16", "BF16"), "float8_e4m3fn": ("f8e4m3fn", "F8_E4M3"),
    "float8_e5m2": ("f8e5m2", "F8_E5M2"), "int8": ("i8", "I8"), "int16": ("i16", "I16"),
    "int32": ("i32", "I32"), "int64": ("i64", "I64"), "uint8": ("u8", "U8"),
    "uint16": ("u16", "U16"), "uint32": ("u32", "U32"), "uint64": ("u64", "U64"),
    "bool": ("bool", "BOOL"),
}

# Triton's scalar signature types → launch spec types.
_SCALARS = {"i1": "bool", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64", "u1": "bool",
            "u8": "u8", "u16": "u16", "u32": "u32", "u64": "u64", "fp16": "f16", "bf16": "bf16",
            "fp32": "f32", "f32": "f32", "fp64": "f64"}


def _dtype_name(t: Any) -> str:
    return str(getattr(t, "dtype", "")).replace("torch.", "")


def _span(t: Any) -> Tuple[bytes, int]:
    """The bytes a kernel can address through tensor ``t``'s pointer: from its first element
    to the end of its storage (a strided view reaches past its shape), and the element count."""
    if hasattr(t, "untyped_storage"):
        import torch

        size = t.element_size()
        n = (t.untyped_storage().nbytes() - t.storage_offset() * size) // size
        flat = torch.as_strided(t.detach(), (n,), (1,), t.storage_offset())
        return flat.contiguous().view(torch.uint8).cpu().numpy().tobytes(), n
    import numpy as np

    a = np.asarray(t)
    if not a.flags.c_contiguous:
        raise ValueError("a NumPy argument that is not contiguous")
    return a.tobytes(), a.size


def _address(t: Any) -> Tuple[int, int]:
    """``[start, end)`` of the memory tensor ``t``'s pointer reaches (to detect aliasing)."""
    if hasattr(t, "data_ptr"):
        size = t.element_size()
        n = (t.untyped_storage().nbytes() - t.storage_offset() * size) // size
        return t.data_ptr(), t.data_ptr() + n * size
    a = t.__array_interface__["data"][0]
    return a, a + t.nbytes


def _is_buffer(v: Any) -> bool:
    return hasattr(v, "data_ptr") or hasattr(v, "__array_interface__")


class Launch:
    """One captured launch of a Triton kernel."""

    def __init__(self, side: str, function: str, kernel: Any, grid: Tuple[int, int, int],
                 params: List[Tuple[str, str, Any]], note: Optional[str]) -> None:
        self.side, self.function, self.kernel, self.grid = side, function, kernel, grid
        #: ``(name, kind, value)``: kind ``buffer`` (value the tensor), ``null`` or a scalar type.
        self.params = params
        #: Why this launch cannot be written as a spec, when it cannot.
        self.note = note
        self.before: Dict[str, Tuple[bytes, int]] = {}
        self.written: set = set()
        self.events: Optional[Tuple[Any, Any]] = None
        self.call = 0
        self.code_path = ""
        #: The file name of its code object (the kernel's name, numbered when a side has two).
        self.stem = ""

    @property
    def name(self) -> str:
        return str(_meta(self.kernel).get("name") or getattr(self.kernel, "name", "kernel"))


def _meta(kernel: Any) -> Dict[str, Any]:
    """The kernel's compile metadata as Triton writes it to its cache (``NAME.json``)."""
    md = getattr(kernel, "metadata", None)
    if isinstance(md, dict):
        return md
    if hasattr(md, "_asdict"):
        d = dict(md._asdict())
        target = d.get("target")
        if target is not None and not isinstance(target, dict):
            d["target"] = {"backend": getattr(target, "backend", None), "arch": getattr(target, "arch", None),
                           "warp_size": getattr(target, "warp_size", None)}
        return d
    return {}


def _code(kernel: Any) -> Tuple[bytes, str, str]:
    """The code object of a compiled kernel: bytes, file extension, backend."""
    asm = getattr(kernel, "asm", {}) or {}
    if asm.get("cubin"):
        return bytes(asm["cubin"]), "cubin", "cuda"
    if asm.get("hsaco"):
        return bytes(asm["hsaco"]), "hsaco", "hip"
    raise ValueError("the compiled kernel holds no cubin or hsaco")


def _params(jit: Any, kernel: Any, bound: Dict[str, Any]) -> Tuple[List[Tuple[str, str, Any]], Optional[str]]:
    """The parameters ``kernel`` takes, in order, from the bound Python arguments: constexprs
    and the constants Triton specialised (``None``, integers equal to 1) are not parameters."""
    src = getattr(kernel, "src", None)
    sig = dict(getattr(src, "signature", {}) or {})
    consts = dict(getattr(src, "constants", {}) or {})
    out: List[Tuple[str, str, Any]] = []
    note = None
    for p in getattr(jit, "params", []):
        name, num = p.name, p.num
        if getattr(p, "is_constexpr", False) or name in consts or (num,) in consts or num in consts:
            continue
        ty = sig.get(name, sig.get(num))
        if ty is None or ty == "constexpr":
            continue
        v = bound.get(name)
        if isinstance(ty, str) and ty.startswith("*"):
            if v is None:
                out.append((name, "null", None))
            elif _is_buffer(v):
                out.append((name, "buffer", v))
            else:
                note = f"argument `{name}` is a {type(v).__name__}, not a tensor"
        elif isinstance(ty, str) and ty in _SCALARS:
            out.append((name, _SCALARS[ty], v))
        else:
            note = f"argument `{name}` of Triton type {ty!r} (tuples and tensor descriptors are not written as specs)"
    return out, note


class TritonCapture:
    """Records every Triton launch while active, as ``side`` (``baseline``, ``candidate``)."""

    def __init__(self, cuda: bool, snapshot: bool, outputs: Optional[List[Any]] = None) -> None:
        self.cuda, self.snapshot = cuda, snapshot
        #: Where the outputs the user named start: a kernel argument there is written.
        self.outputs = {_address(t)[0] for t in outputs or [] if _is_buffer(t)}
        self.side = ""
        #: The call being captured (0: the first, whose inputs are copied).
        self.call = 0
        #: Host time of each side's first call, µs (sizes the spin ahead of timed calls).
        self.cpu_us = [0.0, 0.0]
        self.launches: List[Launch] = []
        self._seen: set = set()
        self._cls: Any = None
        self._orig: Any = None

    def __enter__(self) -> "TritonCapture":
        mod = sys.modules.get("triton.runtime.jit")
        cls = getattr(mod, "JITFunction", None)
        if cls is not None and callable(getattr(cls, "run", None)):
            self._cls, self._orig = cls, cls.__dict__.get("run", cls.run)
            capture, orig = self, cls.run

            def run(jit: Any, *args: Any, grid: Any = None, warmup: bool = False, **kwargs: Any) -> Any:
                if warmup or not capture.side:
                    return orig(jit, *args, grid=grid, warmup=warmup, **kwargs)
                return capture._launch(orig, jit, args, grid, kwargs)

            cls.run = run
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._cls is not None:
            self._cls.run = self._orig
            self._cls = None

    def _launch(self, orig: Any, jit: Any, args: tuple, grid: Any, kwargs: dict) -> Any:
        fn = getattr(jit, "fn", jit)
        try:
            sig = inspect.signature(fn)
            names = set(sig.parameters)
            bound_args = sig.bind_partial(*args, **{k: v for k, v in kwargs.items() if k in names})
            bound_args.apply_defaults()
            bound: Dict[str, Any] = dict(bound_args.arguments)
        except (TypeError, ValueError):
            bound = {}
        g = grid(bound) if callable(grid) else grid
        g = tuple(int(x) for x in (tuple(g) + (1, 1, 1))[:3])
        first = (self.side, id(jit)) not in self._seen and self.call == 0
        self._seen.add((self.side, id(jit)))
        pre = {}
        if first and self.snapshot:
            pre = {k: _span(v) for k, v in bound.items() if _is_buffer(v)}
        events = None
        if self.cuda:
            import torch

            events = (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            events[0].record()
        kernel = orig(jit, *args, grid=grid, warmup=False, **kwargs)
        if events is not None:
            events[1].record()
        if kernel is None or not hasattr(kernel, "asm"):
            return kernel
        params, note = _params(jit, kernel, bound)
        name = f"{getattr(fn, '__module__', '?')}:{getattr(fn, '__qualname__', type(fn).__name__)}"
        launch = Launch(self.side, name, kernel, g, params, note)
        launch.events = events
        launch.call = self.call
        if first and self.snapshot:
            launch.before = {k: pre[k] for k, kind, _ in params if kind == "buffer" and k in pre}
            if self.cuda:
                import torch

                torch.cuda.synchronize()
            for k, kind, v in params:
                if kind == "buffer" and k in pre and (
                        _address(v)[0] in self.outputs or _span(v)[0] != pre[k][0]):
                    launch.written.add(k)
        self.launches.append(launch)
        return kernel


def _toml(v: Any) -> str:
    """A TOML value: strings and lists of them as JSON strings (valid TOML basic strings)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, float):
        return repr(v) if v == v and abs(v) != float("inf") else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    if isinstance(v, int):
        return str(v)
    return json.dumps(str(v))


def _safetensors(path: str, tensors: Dict[str, Tuple[bytes, str, int]]) -> None:
    """Writes ``{name: (bytes, safetensors dtype, elements)}`` as one safetensors file."""
    header: Dict[str, Any] = {}
    offset = 0
    for name, (data, dtype, n) in tensors.items():
        header[name] = {"dtype": dtype, "shape": [n], "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data, _, _ in tensors.values():
            f.write(data)


def _scalar_value(kind: str, v: Any) -> Any:
    if kind.startswith("f") or kind == "bf16":
        return float(v)
    return int(v)


class Written:
    """What :func:`write` wrote for one kernel pair."""

    def __init__(self, spec: Optional[str], note: Optional[str]) -> None:
        self.spec, self.note = spec, note


def write_code(folder: str, launch: Launch, stem: str) -> Tuple[str, str]:
    """Writes the code object and metadata of ``launch`` as ``folder/SIDE/STEM.*``; returns the
    code path relative to ``folder`` and the code object's SHA-256."""
    data, ext, _ = _code(launch.kernel)
    side = os.path.join(folder, launch.side)
    os.makedirs(side, exist_ok=True)
    launch.stem = stem
    base = os.path.join(side, stem)
    with open(f"{base}.{ext}", "wb") as f:
        f.write(data)
    with open(f"{base}.json", "w") as f:
        json.dump(_meta(launch.kernel), f, indent=1, default=str)
    return os.path.join(launch.side, f"{stem}.{ext}"), hashlib.sha256(data).hexdigest()


def write_spec(folder: str, sub: str, a: Launch, b: Launch, settings: Dict[str, Any]) -> Written:
    """The launch spec ``folder/sub/spec.toml`` of the pair ``a`` (baseline) and ``b``
    (candidate), with the inputs of their first launches in ``inputs.safetensors`` beside it;
    checked by resolving it as ``kernel run --dry-run`` does. Returns the spec's path relative
    to ``folder``, or why none was written."""
    for x in (a, b):
        if x.note:
            return Written(None, f"{x.side} kernel {x.name}: {x.note}")
        if not x.before and any(k == "buffer" for _, k, _ in x.params):
            return Written(None, f"{x.side} kernel {x.name}: its inputs were not captured")
        spans = sorted(_address(v) for _, k, v in x.params if k == "buffer")
        if any(s[1] > t[0] for s, t in zip(spans, spans[1:])):
            return Written(None, f"{x.side} kernel {x.name}: two arguments share memory (aliased buffers)")
    out = os.path.join(folder, sub)
    os.makedirs(out, exist_ok=True)
    written = a.written | b.written
    args: List[Dict[str, Any]] = []
    lists: List[List[str]] = []
    tensors: Dict[str, Tuple[bytes, str, int]] = {}
    described: Dict[str, str] = {}
    for x in (a, b):
        names = []
        for name, kind, v in x.params:
            if kind == "buffer":
                dtype = _DTYPES.get(_dtype_name(v))
                if dtype is None:
                    return Written(None, f"{x.side} kernel {x.name}: argument `{name}` of dtype {_dtype_name(v)}")
                data, n = x.before[name]
                role = "inout" if name in written else "in"
                entry = {"name": name, "type": dtype[0], "shape": [n], "role": role,
                         "init": {"kind": "file", "path": "inputs.safetensors", "key": name}}
                # A buffer a kernel writes is shared by name whatever it held before (the
                # baseline's launch wrote it before the candidate's); one it reads only is
                # shared when both sides read the same bytes.
                key = json.dumps({k: entry[k] for k in ("type", "shape", "role")})
                if role == "in":
                    key += hashlib.sha256(data).hexdigest()
            elif kind == "null":
                entry, key = {"name": name, "type": "null"}, "null"
            else:
                entry = {"name": name, "type": kind, "value": _scalar_value(kind, v)}
                key = json.dumps(entry)
            if name in described and described[name] != key:
                name = f"{name}_{x.side}"
                entry["name"] = name
                if "init" in entry:
                    entry["init"]["key"] = name
            if name not in described:
                described[name] = key
                args.append(entry)
                if kind == "buffer":
                    tensors[name] = (data, dtype[1], n)
            names.append(name)
        lists.append(names)
    _safetensors(os.path.join(out, "inputs.safetensors"), tensors)
    _, _, backend = _code(a.kernel)
    lines = [f"# Captured by kernelab.kernel.compare: {a.function} vs {b.function}",
             f"backend = {_toml(backend)}", ""]
    for label, x, names in zip(("baseline", "candidate"), (a, b), lists):
        ext = _code(x.kernel)[1]
        rel = os.path.relpath(os.path.join(folder, x.side, x.stem), out)
        lines += [f"[{label}]", f"code = {_toml(f'{rel}.{ext}')}", f"triton = {_toml(f'{rel}.json')}",
                  f"grid = {_toml(list(x.grid))}"]
        if lists[0] != lists[1]:
            lines.append(f"args = {_toml(names)}")
        lines.append("")
    for entry in args:
        lines.append("[[arg]]")
        for k, v in entry.items():
            if isinstance(v, dict):
                inner = ", ".join(f"{ik} = {_toml(iv)}" for ik, iv in v.items())
                lines.append(f"{k} = {{ {inner} }}")
            else:
                lines.append(f"{k} = {_toml(v)}")
        lines.append("")
    g = settings
    lines += ["[gates]", f"repeat = {g['repeat']}", "graph = true"]
    if g.get("rtol") is None and g.get("atol") is None:
        lines.append("bitwise = true")
    else:
        lines.append("bitwise = false")
        lines += [f"{k} = {_toml(float(g[k]))}" for k in ("rtol", "atol") if g.get(k) is not None]
    lines += ["", "[timing]", f"rounds = {g['rounds']}", f"samples = {g['samples']}",
              f"warmup = {g['warmup']}", f"l2_flush = {_toml(bool(g['l2_flush']))}",
              f"threshold = {_toml(float(g['threshold']))}", ""]
    spec = os.path.join(out, "spec.toml")
    with open(spec, "w") as f:
        f.write("\n".join(lines))
    try:
        _native.kernel_plan(spec)
    except _native.Error as e:
        return Written(None, f"{os.path.relpath(spec, folder)} does not resolve: {e}")
    return Written(os.path.relpath(spec, folder), None)
