"""Reading the JSON records one stage leaves for the next.

Every record (a size record, a read measurement, a metadata timing, a layout record, the plan
record, a provenance file) is read the same way, so that a truncated or foreign file is always
an :class:`~analysis.errors.InputError` naming the file and what it lacks, never a ``KeyError``
deep inside a table.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from analysis.errors import InputError


def load(path: str | Path, keys: Iterable[str], kind: str = "hepfmt result") -> dict:
    """The JSON object at ``path``, which must hold every one of ``keys``; ``kind`` says in the
    error what the file should have been."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise InputError(path, f"not a readable {kind} ({exc})") from exc
    if not isinstance(doc, dict):
        raise InputError(path, f"not a {kind} (not a JSON object)")
    missing = [k for k in keys if k not in doc]
    if missing:
        raise InputError(path, f"not a complete {kind} (no {', '.join(missing)})")
    return doc
