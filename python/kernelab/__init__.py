"""kernelab in Python: profiles as Arrow tables, evidence as dicts.

Every function calls the same library code as the ``kernelab`` command line and returns what
its ``--format json`` prints (as dicts) or Arrow tables (``kernelab.Table``, read by
``pyarrow.table(t)``, ``polars.DataFrame(t)``, DuckDB, or ``t.to_pandas()``). Files are read
with the GIL released. Errors are ``kernelab.Error`` subclasses carrying the CLI's message and
where in which file (``file``, ``line``, ``byte``, ``field``).

>>> import kernelab
>>> p = kernelab.profile("trace.json.gz")          # doctest: +SKIP
>>> p.kernels.to_pandas().head()                   # doctest: +SKIP
"""

from __future__ import annotations

import os
from typing import Iterable, Optional, Sequence, Union

from . import _native
from ._native import Error, InputError, Profile, Table, UsageError
from . import ab, check, code, kernel, serve
from ._bundle import Bundle

__all__ = [
    "Bundle",
    "Error",
    "InputError",
    "Profile",
    "Table",
    "UsageError",
    "ab",
    "check",
    "code",
    "compare",
    "kernel",
    "profile",
    "serve",
]
__version__: str = _native.__version__

PathLike = Union[str, "os.PathLike[str]"]


def _paths(p: Union[PathLike, Iterable[PathLike]]) -> list:
    """One path or several, as a list of paths."""
    if isinstance(p, (str, bytes, os.PathLike)):
        return [os.fspath(p)]
    return [os.fspath(x) for x in p]


def _rank(group, rules, device, stream, time_range, name) -> dict:
    """The grouping and filter keywords of the native functions."""
    return dict(
        group=group,
        rules=None if rules is None else os.fspath(rules),
        device=device,
        stream=stream,
        time_range=time_range,
        name=name,
    )


def profile(
    *paths: PathLike,
    group: str = "family",
    rules: Optional[PathLike] = None,
    by_phase: bool = False,
    by_graph: bool = False,
    device: Optional[int] = None,
    stream: Optional[int] = None,
    time_range: Optional[str] = None,
    name: Optional[str] = None,
) -> Profile:
    """Read profiler files and rank their GPU time, as ``kernelab profile`` does.

    Reads PyTorch profiler (Kineto) JSON (plain or gzip), rocprofv3 CSV and SQLite, Nsight
    Systems SQLite, rocprof stats and the other formats of ``kernelab profile`` (detected from
    content); several files are ranked together.

    Args:
        *paths: the profiler files.
        group: ``"family"`` (template arguments, parameters and clone suffixes removed) or
            ``"none"`` (one row per exact kernel name).
        rules: a TOML file of family rules (``[[family]] name = "...", match = "REGEX"``).
        by_phase: attribute kernel time to the innermost annotated range (``Profile.phases``).
        by_graph: attribute kernel time to CUDA/HIP graph replays (``Profile.graphs``).
        device: only kernels on this device.
        stream: only kernels on this stream or queue.
        time_range: only kernels starting in ``"START:END"`` after the first kernel (units ns,
            us, ms, s; default ms), e.g. ``"100ms:2s"``.
        name: only kernels whose full name matches this regular expression.

    Returns:
        A :class:`Profile`: ``.summary`` (dict), ``.kernels`` (every row), ``.phases``,
        ``.graphs``, ``.dispatches`` (every dispatch, from the dispatch store) as Arrow
        tables, ``.sources`` and ``.document`` (the CLI's JSON, as a dict).

    Raises:
        InputError: a file cannot be read or is not a profile (``e.file``, ``e.line``,
            ``e.byte`` say where).
        UsageError: a setting is not valid.
    """
    return _native.profile(
        [os.fspath(p) for p in paths],
        by_phase=by_phase,
        by_graph=by_graph,
        **_rank(group, rules, device, stream, time_range, name),
    )


def compare(
    base: Union[PathLike, Sequence[PathLike]],
    cand: Union[PathLike, Sequence[PathLike]],
    control: Optional[Sequence[str]] = None,
    *,
    group: str = "family",
    rules: Optional[PathLike] = None,
    device: Optional[int] = None,
    stream: Optional[int] = None,
    time_range: Optional[str] = None,
    name: Optional[str] = None,
    by_graph: bool = False,
) -> dict:
    """Compare baseline and candidate runs per family, as ``kernelab compare`` does.

    Args:
        base: the baseline's profile file, or several (repeated runs give a noise estimate).
        cand: the candidate's, likewise.
        control: families whose code did not change: their changes measure run-to-run noise.
        group, rules, device, stream, time_range, name: as for :func:`profile`.
        by_graph: also compare graph replays per graph (``compare --by-graph``: the
            document's ``graphs``).

    Returns:
        The ``compare`` document (``ratio`` = candidate / baseline, ``change`` = ratio - 1),
        equal to ``kernelab compare --format json``.
    """
    return _native.compare(
        _paths(base),
        _paths(cand),
        control=list(control or []),
        by_graph=by_graph,
        **_rank(group, rules, device, stream, time_range, name),
    )
