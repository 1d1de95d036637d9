"""``kernelab.ab``: the A/B analysis of paired timings (``kernelab ab analyze``)."""

from __future__ import annotations

import os
from typing import Any, Optional, Sequence, Union

from . import _native


def _column(frame: Any, name: str) -> Optional[list]:
    """Column ``name`` of a DataFrame (pandas, polars, pyarrow) as a list, or None."""
    cols = getattr(frame, "columns", None)
    if cols is None:
        cols = getattr(frame, "column_names", [])
    cols = list(cols)
    if name not in cols:
        return None
    c = frame[name]
    if hasattr(c, "to_list"):
        return list(c.to_list())
    if hasattr(c, "to_pylist"):
        return c.to_pylist()
    return list(c)


def _triples(a: Sequence[float], b: Sequence[float], order: Optional[Sequence[str]]) -> list:
    a, b = [float(x) for x in a], [float(x) for x in b]
    if len(a) != len(b):
        raise _native.UsageError(f"baseline has {len(a)} values, candidate {len(b)}: expected pairs")
    if order is None:
        o = [None] * len(a)
    else:
        o = [None if x is None or x != x else str(x) for x in order]
        if len(o) != len(a):
            raise _native.UsageError(f"order has {len(o)} values for {len(a)} pairs")
    return list(zip(a, b, o))


def analyze(
    baseline: Any,
    candidate: Optional[Sequence[float]] = None,
    order: Optional[Sequence[str]] = None,
    *,
    aa: Any = None,
    threshold: Union[str, float] = "0.5%",
    alpha: float = 0.05,
    until: Optional[Union[str, float]] = None,
    watch: bool = False,
    fixed: bool = False,
    min_pairs: int = 8,
    max_pairs: int = 256,
    higher_is_better: bool = False,
    metric: Optional[str] = None,
) -> dict:
    """Analyse paired samples: the ratio candidate / baseline with its interval, the verdict
    against ``threshold``, and the diagnostics (order effect, drift, outliers, A/A).

    ``baseline`` is one of:

    - an array of baseline values, with ``candidate`` the candidate values of the same pairs
      and ``order`` each pair's order (``"AB"``: baseline ran first, ``"BA"``; default ABBA
      from AB by position);
    - a DataFrame (pandas, polars or pyarrow) with columns ``a`` (baseline), ``b``
      (candidate), optionally ``order`` and ``aa`` (true for A/A control pairs), as another
      harness writes them;
    - a path to a samples file (kernelab's ``.jsonl``, or another harness's CSV or JSON pairs).

    ``aa`` takes A/A control pairs as a DataFrame of ``a``, ``b`` (or a list of (a, b)).

    The design is analysed whole (``fixed``) unless a samples file records a sequential plan;
    ``threshold`` and ``until`` take fractions (``0.005``) or percentages (``"0.5%"``).

    Returns the ``ab`` document, equal to ``kernelab ab analyze FILE --format json``.
    """
    design = dict(
        threshold=str(threshold), alpha=float(alpha), until=None if until is None else str(until),
        watch=watch, fixed=fixed, min_pairs=min_pairs, max_pairs=max_pairs,
        higher_is_better=higher_is_better,
    )
    if isinstance(baseline, (str, os.PathLike)):
        return _native.ab_analyze(design, file=os.fspath(baseline), metric=metric)
    main, control = [], []
    if candidate is None:
        a, b = _column(baseline, "a"), _column(baseline, "b")
        if a is None or b is None:
            raise _native.UsageError(
                "analyze(frame): expected a DataFrame with columns a and b (optionally order, aa), "
                "or analyze(baseline, candidate)"
            )
        o = _column(baseline, "order")
        flags = _column(baseline, "aa") or [False] * len(a)
        rows = _triples(a, b, o)
        for row, flag in zip(rows, flags):
            (control if flag is True or flag in (1, "1", "true", "True") else main).append(row)
    else:
        main = _triples(baseline, candidate, order)
    if aa is not None:
        ca, cb = _column(aa, "a"), _column(aa, "b")
        if ca is None:
            ca, cb = [x[0] for x in aa], [x[1] for x in aa]
        control += _triples(ca, cb, _column(aa, "order"))
    return _native.ab_analyze(design, pairs_=main, aa=control, metric=metric)
