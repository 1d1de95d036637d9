"""``kernelab.code``: code objects, their resources and instruction mix (``kernelab code``)."""

from __future__ import annotations

import os
from typing import Optional, Sequence, Union

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


def show(*paths: PathLike, disassemble: bool = True, max_decompressed: Optional[int] = None) -> dict:
    """Every kernel of the code objects in ``paths`` (cubin, hsaco, fatbin, offload bundles,
    executables and libraries holding them): registers, spills, shared memory, size and
    instruction classes. Equal to ``kernelab code show --format json``."""
    return _native.code_show(
        [os.fspath(p) for p in paths], disassemble=disassemble, max_decompressed=max_decompressed
    )


def diff(
    base: PathLike, cand: PathLike, *, disassemble: bool = True, max_decompressed: Optional[int] = None
) -> dict:
    """Per-kernel changes of resources, instruction classes and mnemonics from ``base`` to
    ``cand``. Equal to ``kernelab code diff --format json``."""
    return _native.code_diff(
        os.fspath(base), os.fspath(cand), disassemble=disassemble, max_decompressed=max_decompressed
    )


def matrix(
    base: Sequence[PathLike] = (),
    cand: Sequence[PathLike] = (),
    *,
    base_dir: Optional[PathLike] = None,
    cand_dir: Optional[PathLike] = None,
    key: Optional[str] = None,
    disassemble: bool = False,
    max_decompressed: Optional[int] = None,
) -> dict:
    """Which code objects (and kernels) changed between two builds: files, or the files below
    ``base_dir`` / ``cand_dir``, paired by ``key`` (a regular expression; default the file
    name). Equal to ``kernelab code matrix --format json``."""
    return _native.code_matrix(
        [os.fspath(p) for p in base],
        [os.fspath(p) for p in cand],
        base_dir=None if base_dir is None else os.fspath(base_dir),
        cand_dir=None if cand_dir is None else os.fspath(cand_dir),
        key=key,
        disassemble=disassemble,
        max_decompressed=max_decompressed,
    )
