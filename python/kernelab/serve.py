"""``kernelab.serve``: the analysis of a ``kernelab serve`` run."""

from __future__ import annotations

import os
from typing import Union

from . import _native


def analyze(samples: Union[str, "os.PathLike[str]"]) -> dict:
    """Analyse a ``kernelab serve`` samples file (``samples.jsonl`` of a run): output identity,
    TTFT / ITL / throughput ratios candidate / baseline per point, failures. Equal to the
    ``serve`` document of ``kernelab serve --analyze``."""
    return _native.serve_analyze(os.fspath(samples))
