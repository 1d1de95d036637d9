"""``kernelab.Bundle``: an evidence bundle written with ``--record DIR``."""

from __future__ import annotations

import json
import os
from typing import List, Optional, Tuple, Union

from . import _native


class Bundle:
    """An evidence bundle (a folder of records written with ``kernelab ... --record DIR``).

    >>> b = kernelab.Bundle("evidence/")        # doctest: +SKIP
    >>> [r["kind"] for r in b.records]          # doctest: +SKIP
    >>> print(b.report())                       # doctest: +SKIP
    """

    def __init__(self, path: Union[str, "os.PathLike[str]"]) -> None:
        self.path = os.fspath(path)
        texts, bad = _native.bundle_records(self.path)
        #: Every record as its file holds it: ``schema_version``, ``kind``, ``label``,
        #: ``provenance`` and ``result`` (the command's JSON document).
        self.records: List[dict] = [json.loads(t) for t in texts]
        #: Record files that could not be read, with the reason: ``(path, reason)``.
        self.unreadable: List[Tuple[str, str]] = list(bad)

    def __repr__(self) -> str:
        return f"kernelab.Bundle({self.path!r}, {len(self.records)} records)"

    def report(
        self,
        format: str = "md",
        title: str = "kernelab evidence",
        strict: bool = False,
    ):
        """The bundle's report, as ``kernelab report`` renders it.

        Args:
            format: ``"md"`` (the pull-request body, whole: no appendix split), ``"html"`` or
                ``"json"`` (a dict: every record's headline and the request impacts).
            title: the report's title.
            strict: refuse a bundle with records that cannot be read.
        """
        return _native.bundle_report(self.path, format=format, title=title, strict=strict)

    def check(
        self,
        note: Optional[Union[str, "os.PathLike[str]"]] = None,
        *,
        text: Optional[str] = None,
    ) -> dict:
        """Check a note's figures against the bundle (``kernelab report check``).

        Args:
            note: the note's file (a PR description, a commit message).
            text: the note's text instead of a file.

        Returns:
            The ``report_check`` document: ``mismatches`` lists each figure the bundle does
            not support (empty when the note agrees).
        """
        return _native.bundle_check(
            self.path, note=None if note is None else os.fspath(note), text=text
        )
