"""``kernelab.check``: correctness gates on tensors (``kernelab check``).

Each input is a tensor file (``.npy``, ``.npz``, ``.safetensors``, ``.pt`` and the other formats
of ``kernelab check``), the bytes of one (``bytes``, ``bytearray`` or ``memoryview``: ``.npy``,
``.npz``, ``.safetensors``, or raw data with ``dtype`` and ``shape``), or a NumPy array (anything
with ``__array__``; an array of ``ml_dtypes.bfloat16``, ``float8_e4m3fn`` or ``float8_e5m2``
keeps its type). Arrays and bytes are read in place, with the GIL released, never copied; an
array that is not C-contiguous (a strided view, Fortran order) is copied once into C order by
NumPy. Each function returns the gate's document, equal to the CLI's ``--format json``;
``doc["pass"]`` is the verdict. A file or array kernelab cannot read raises
``kernelab.InputError``, memory kernelab cannot have ``MemoryError``.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence, Tuple, Union

from . import _native

Tensor = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, Any]


def _bytes_view(x: Union[bytearray, memoryview]) -> Any:
    """A ``bytearray`` or ``memoryview`` as something the extension reads in place: a NumPy
    byte view, whose buffer export keeps the owner from being resized while it is read. Without
    NumPy, or for a view that is not contiguous, one copy (``bytes``)."""
    m = memoryview(x)
    if not m.c_contiguous:
        return m.tobytes()
    try:
        import numpy as np
    except ImportError:
        return m.tobytes()
    return np.frombuffer(m.cast("B"), dtype=np.uint8)


def _input(x: Tensor, label: str) -> Tuple[str, str, Any]:
    """``(name, kind, data)`` for the extension: a file path as it is; the bytes of a tensor
    file; an array (anything with ``__array__``) as a NumPy array, under ``<label>.npy``."""
    if isinstance(x, (str, os.PathLike)):
        return (os.fspath(x), "path", None)
    if isinstance(x, bytes):
        return (f"<{label}>", "file", x)
    if isinstance(x, (bytearray, memoryview)):
        return (f"<{label}>", "file", _bytes_view(x))
    if hasattr(x, "__array__"):
        try:
            import numpy as np
        except ImportError as e:
            raise ModuleNotFoundError(
                f"{label}: an array needs numpy, and numpy is not installed: pip install numpy"
            ) from e
        return (f"<{label}>.npy", "array", np.asarray(x))
    raise _native.UsageError(
        f"{label}: expected a file path, the bytes of a tensor file or a NumPy array, found {type(x).__name__}"
    )


def bitwise(
    a: Tensor,
    b: Tensor,
    *,
    zero_equal: bool = False,
    nan_equal: bool = False,
    first: int = 10,
    dtype: Optional[str] = None,
    shape: Optional[Sequence[int]] = None,
) -> dict:
    """Bit-for-bit equality of ``a`` and ``b`` (``kernelab check bitwise``); the first
    ``first`` differing elements are listed."""
    return _native.check_bitwise(
        _input(a, "a"), _input(b, "b"), zero_equal=zero_equal, nan_equal=nan_equal,
        first=first, dtype=dtype, shape=None if shape is None else list(shape),
    )


def close(
    a: Tensor,
    b: Tensor,
    *,
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    ulp: Optional[int] = None,
    nan_equal: bool = False,
    dtype: Optional[str] = None,
    shape: Optional[Sequence[int]] = None,
    _oracle: bool = False,
) -> dict:
    """Whether ``b`` is within tolerance of ``a`` (``kernelab check close``): ``rtol``/``atol``
    (default: ``torch.testing.assert_close``'s for the dtype) or ``ulp``."""
    return _native.check_close(
        *((_input(a, "out"), _input(b, "ref")) if _oracle else (_input(a, "a"), _input(b, "b"))),
        oracle=_oracle, rtol=rtol, atol=atol, ulp=ulp,
        nan_equal=nan_equal, dtype=dtype, shape=None if shape is None else list(shape),
    )


def oracle(out: Tensor, ref: Tensor, **options: Any) -> dict:
    """The error of ``out`` against a reference ``ref`` (``kernelab check oracle``); the
    options of :func:`close`."""
    return close(out, ref, _oracle=True, **options)


def finite(*tensors: Tensor, dtype: Optional[str] = None, shape: Optional[Sequence[int]] = None) -> dict:
    """NaN and infinity counts of every tensor (``kernelab check finite``)."""
    return _native.check_files(
        "finite", [_input(t, f"tensor{i}") for i, t in enumerate(tensors)],
        dtype=dtype, shape=None if shape is None else list(shape),
    )


def repeat(*tensors: Tensor, dtype: Optional[str] = None, shape: Optional[Sequence[int]] = None) -> dict:
    """Whether repeated runs wrote identical outputs (``kernelab check repeat``; at least
    two)."""
    return _native.check_files(
        "repeat", [_input(t, f"run{i}") for i, t in enumerate(tensors)],
        dtype=dtype, shape=None if shape is None else list(shape),
    )
