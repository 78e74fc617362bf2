"""One run at a time on a results directory, and no leftovers of a killed one.

Snakemake locks its working directory, not the results: two runs started from different
directories on one ``results`` would rewrite each other's files, and ``--unlock`` (needed after
a kill -9) also removes the locks of live runs. So the workflow takes a lock on the results
directory itself: an ``flock`` on ``results/.hepfmt.lock``, which the kernel releases when the
process ends however it ends, so a killed run never leaves a stale lock behind. Holding it, the
run removes what killed jobs left: temporary files (``.NAME.tmpNNNNNNN`` of
:func:`analysis.atomic.atomic_path`) and the scratch directories of measurement processes whose
parent is gone.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import tempfile
from pathlib import Path

import psutil

from analysis.errors import HepfmtError

LOCK = ".hepfmt.lock"
#: atomic_path's temporary names: a dot, the target's name, ".tmp" and a 7-digit PID
TEMPORARY = re.compile(r"^\..+\.tmp\d{7}$")
#: analysis.measure.isolated's scratch directories: "hepfmt-fresh-<parent pid>-..."
SCRATCH = re.compile(r"^hepfmt-fresh-(\d+)-")

_held: list[int] = []  # open lock descriptors: closing one would release its lock


class Busy(HepfmtError):
    """Another live run holds the results directory."""


def hold(results: str | Path) -> None:
    """Take ``results``' lock for the rest of this process, or raise :class:`Busy` naming the
    run that has it."""
    root = Path(results)
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 4096, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise Busy(f"{root}: another hepfmt run is using it ({holder}); wait for it to end "
                   "(a killed run's lock goes with its process)") from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"pid {os.getpid()} in {os.getcwd()}\n".encode(), 0)
    _held.append(fd)


def remove_leftovers(results: str | Path) -> list[Path]:
    """Remove what killed jobs left (call it holding the lock: no live job of this results
    directory can own a temporary file then). Returns what was removed."""
    gone = [p for p in Path(results).rglob(".*.tmp*") if TEMPORARY.match(p.name)]
    for p in gone:
        p.unlink(missing_ok=True)
    for d in Path(tempfile.gettempdir()).glob("hepfmt-fresh-*"):
        m = SCRATCH.match(d.name)
        if m and not psutil.pid_exists(int(m.group(1))):
            shutil.rmtree(d, ignore_errors=True)
            gone.append(d)
    return gone
