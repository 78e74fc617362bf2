"""Atomic outputs: a result file exists only if it was written completely and verified.

Writers write to a hidden temporary name beside the target and rename it into place only after
their own checks pass, so a crash, a full disk or a failed verification never leaves a file that
a later step (or Snakemake) would take as complete.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from analysis.errors import InputError


@contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path; rename it to ``target`` if the block finishes without error."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Fixed length (PIDs have at most 7 digits): a ROOT file records the name it was written
    # under, so a name one digit longer would make the same data one file a few bytes larger.
    # The PID names the file's owner: a run removes it only once that process is gone
    # (analysis.plan.lock.remove_leftovers).
    tmp = target.with_name(f".{target.name}.tmp{os.getpid():07d}")
    try:
        yield tmp
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except Exception as exc:
        _raise_if_disk_full(target, exc)
        raise
    finally:
        tmp.unlink(missing_ok=True)


#: Below this much free space a failed write is reported as a full disk: ROOT does not raise on
#: a failed write, it leaves a file that later fails to open ("not a readable ROOT file").
FULL_BYTES = 1 << 20


def _raise_if_disk_full(target: Path, exc: BaseException) -> None:
    try:
        free = shutil.disk_usage(target.parent).free
    except OSError:
        return
    if getattr(exc, "errno", None) == errno.ENOSPC or free < FULL_BYTES:
        problem = f"disk full: {free / 1e6:.1f} MB free on its filesystem"
        # how the library failed is its own long story: for --verbose
        raise InputError(target, problem, f"{target}: {problem}; the write failed: "
                                          f"{getattr(exc, 'detail', None) or exc}") from exc


def write_json(target: str | Path, doc: object) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def write_text(target: str | Path, text: str) -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text)
