"""``kernelab.check``: correctness gates on tensors (``kernelab check``).

Each input is a tensor file (``.npy``, ``.npz``, ``.safetensors``, ``.pt`` and the other formats
of ``kernelab check``) or a NumPy array (passed to kernelab as ``.npy`` bytes; an array of
``ml_dtypes.bfloat16`` stays bf16). Each function returns the gate's document, equal to the
CLI's ``--format json``; ``doc["pass"]`` is the verdict.
"""

from __future__ import annotations

import io
import os
from typing import Any, Optional, Sequence, Tuple, Union

from . import _native

Tensor = Union[str, "os.PathLike[str]", Any]


def _input(x: Tensor, label: str) -> Tuple[str, Optional[bytes]]:
    """A file path as it is; an array (anything with ``__array__``) as ``.npy`` bytes."""
    if isinstance(x, (str, os.PathLike)):
        return (os.fspath(x), None)
    if hasattr(x, "__array__"):
        import numpy as np

        buf = io.BytesIO()
        np.save(buf, np.asarray(x), allow_pickle=False)
        return (f"<{label}>.npy", buf.getvalue())
    raise _native.UsageError(f"{label}: expected a file path or a NumPy array, found {type(x).__name__}")


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
