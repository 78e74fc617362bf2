"""Atomic outputs: a result file exists only if it was written completely and verified.

Writers write to a hidden temporary name beside the target and rename it into place only after
their own checks pass, so a crash, a full disk or a failed verification never leaves a file that
a later step (or Snakemake) would take as complete.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path; rename it to ``target`` if the block finishes without error."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Fixed length (PIDs have at most 7 digits): a ROOT file records the name it was written
    # under, so a name one digit longer would make the same data one file a few bytes larger.
    tmp = target.with_name(f".{target.name}.tmp{os.getpid():07d}")
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_json(target: str | Path, doc: object) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
