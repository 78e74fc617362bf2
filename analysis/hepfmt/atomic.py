"""Atomic outputs: a result file exists only if it was written completely and verified.

Writers write to a hidden temporary name beside the target and rename it into place only after
their own checks pass, so a crash, a full disk or a failed verification never leaves a file that
a later step (or Snakemake) would take as complete.

What a killed writer leaves (its temporary file, a measurement's scratch directory) is removed
by the next run (hepfmt.plan.lock.remove_leftovers) only if hepfmt wrote it down first, in a
ledger: one small JSON entry per temporary, made before the temporary is and removed after it
is gone, naming its path, its owner (process and host), when it was registered and, for a
scratch directory (made before its entry), its inode. Nothing is ever removed for its name
alone: a user's ``.notes.txt.tmp0424242`` has no entry. A temporary's ledger is its results
directory's (the nearest directory above it with :data:`RESULTS_MARKER`); a scratch
directory's is in the temporary directory (:func:`scratch_ledger`).
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hepfmt.errors import InputError

#: The mark of a results directory of hepfmt's (hepfmt.plan.resultsdir writes it).
RESULTS_MARKER = ".hepfmt-results"
#: A results directory's ledger of the temporaries written inside it.
LEDGER = ".hepfmt-ledger"


def results_of(path: str | Path) -> Path | None:
    """The results directory ``path`` is in: the nearest directory above it carrying
    :data:`RESULTS_MARKER`, or None."""
    where = Path(os.path.abspath(path)).parent
    for d in (where, *where.parents):
        if (d / RESULTS_MARKER).is_file():
            return d
    return None


def scratch_ledger() -> Path:
    """The ledger of this user's scratch directories, in the temporary directory."""
    return Path(tempfile.gettempdir()) / f"hepfmt-ledger-{os.getuid()}"


def register(ledger: Path, path: str | Path, kind: str, made: bool = False) -> Path | None:
    """Write ``path`` down in ``ledger``: before it exists, or (``made``: the caller has just
    made it) with its inode. The entry, to :func:`unregister` once ``path`` is gone; None if
    the ledger cannot be written: the temporary is then one no clean-up will touch."""
    path = Path(path).parent.resolve() / Path(path).name  # the entry's parent has no link
    doc: dict[str, object] = {"path": str(path), "kind": kind, "pid": os.getpid(),
                              "host": socket.gethostname(), "registered_ns": time.time_ns()}
    if made:
        st = path.lstat()
        doc.update(inode=st.st_ino, dev=st.st_dev)
    entry = ledger / f"{os.getpid():07d}-{time.time_ns()}-{secrets.token_hex(4)}.json"
    try:
        ledger.mkdir(mode=0o700, exist_ok=True)
        fd = os.open(entry, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, json.dumps(doc).encode())
        finally:
            os.close(fd)
    except OSError:
        return None
    return entry


def unregister(entry: Path | None) -> None:
    if entry is not None:
        entry.unlink(missing_ok=True)


@contextmanager
def scratch_dir(prefix: str = "hepfmt-scratch-") -> Iterator[Path]:
    """A scratch directory in the temporary directory, written down in :func:`scratch_ledger`
    for as long as it exists (a killed process's is removed by the next run)."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    entry = register(scratch_ledger(), tmp, "scratch", made=True)
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        unregister(entry)


def release_scratch_of(pid: int) -> list[Path]:
    """Remove the scratch directories the (ended) process ``pid`` wrote down and left: a child
    that a C++ abort or a kill ended runs no clean-up of its own, and its parent, which waited
    for it, knows it is gone. Only entries that still name the directory written down (its
    inode) in the temporary directory are removed. Returns what was removed."""
    ledger, tmp = scratch_ledger(), Path(tempfile.gettempdir()).resolve()
    gone = []
    for entry in ledger.glob(f"{pid:07d}-*.json"):
        try:
            doc = json.loads(entry.read_bytes()[:65536])
            path = Path(doc["path"])
            st = path.lstat()
            mine = (doc.get("pid") == pid and doc.get("kind") == "scratch"
                    and path.parent == tmp and path.name.startswith("hepfmt-")
                    and (st.st_ino, st.st_dev) == (doc.get("inode"), doc.get("dev")))
        except (OSError, ValueError, KeyError, TypeError):
            mine = False
        if mine:
            shutil.rmtree(path, ignore_errors=True)
            gone.append(path)
        entry.unlink(missing_ok=True)
    return gone


@contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path; rename it to ``target`` if the block finishes without error."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    # Fixed length (PIDs have at most 7 digits): a ROOT file records the name it was written
    # under, so a name one digit longer would make the same data one file a few bytes larger.
    tmp = target.with_name(f".{target.name}.tmp{os.getpid():07d}")
    results = results_of(tmp)
    entry = register(results / LEDGER, tmp, "temporary") if results is not None else None
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
        unregister(entry)


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
