"""One run at a time on a results directory, none inside another run's, and no leftovers of a
killed one, without touching a live process's files.

Snakemake locks its working directory, not the results: two runs started from different
directories on one ``results`` would rewrite each other's files, and ``--unlock`` (needed after
a kill -9) also removes the locks of live runs. So the workflow locks the results directory
itself, with ``flock``\\s, which the kernel releases when the process ends however it ends, so a
killed run never leaves a stale lock behind:

- the results directory exclusively, and every directory above it shared. A run on a directory
  inside another run's then finds that run's exclusive lock on its way down, and a run on a
  directory above a live run's finds the shared lock that run holds there: nested results
  directories exclude each other in either order, siblings do not, and nothing has to be
  searched for (a lock is on the directory's inode, so a symlink or a bind mount to it is the
  same directory). Directories this user cannot open, or whose filesystem cannot lock them,
  are passed over.
- ``results/.hepfmt.lock`` exclusively, which names the run holding it (for the refusal's
  message) and, where a network filesystem shares ``flock`` on files but not on directories
  (NFS), still keeps two hosts off one results directory.

Taking it, the run marks the directory as hepfmt's (:func:`hepfmt.plan.resultsdir.mark`).
Holding it, the run removes what killed processes left, and only what hepfmt wrote down in its
ledgers (:mod:`hepfmt.atomic`): temporary files (``.NAME.tmpNNNNNNN`` of
:func:`hepfmt.atomic.atomic_path`) in the results directory's ledger and the scratch
directories of measurement processes in the temporary directory's, each only when the process
that wrote it down is gone (:func:`owner_alive`; one of another host is never judged here), the
path is where the entry says (inside the results directory, or a scratch directory directly in
the temporary one), and it is the thing written down: made after its entry (a temporary file),
of the entry's inode (a scratch directory). A file of the same name that hepfmt did not write
down (a user's ``.notes.txt.tmp0424242``) is never removed; a ``hepfmt`` command run by hand
into the results tree keeps its files while it runs.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import socket
import tempfile
from pathlib import Path

import psutil

from hepfmt import atomic, records
from hepfmt.errors import HepfmtError
from hepfmt.plan import resultsdir

LOCK = resultsdir.LOCK
#: atomic_path's temporary names: a dot, the target's name, ".tmp" and a 7-digit PID
TEMPORARY = re.compile(r"^\..+\.tmp(\d{7})$")
#: How much later than a file's last change its owner may seem to have started: psutil derives
#: a start time from the boot time, which the kernel gives in whole seconds.
CLOCK_SLACK_S = 2.0

_held: dict[Path, list[int]] = {}  # open lock descriptors: closing one would release its lock
_WAIT = "wait for it to end (a killed run's lock goes with its process)"


class Busy(HepfmtError):
    """Another live run holds the results directory, or one above or inside it."""


def _try_lock(fd: int, how: int) -> bool | None:
    """True: locked; False: another holds it; None: this filesystem has no such lock."""
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # ENOLCK, EOPNOTSUPP (some FUSE filesystems)
        return None
    return True


def _open_dir(path: Path) -> int | None:
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:  # not ours to read: no results directory of this user's runs
        return None


def _holder(results: Path) -> str | None:
    """Who holds ``results``' lock file (its text), or None when no live run does."""
    try:
        fd = os.open(results / LOCK, os.O_RDONLY)
    except OSError:
        return None
    try:
        if _try_lock(fd, fcntl.LOCK_SH) is not False:
            return None
        return os.pread(fd, 4096, 0).decode(errors="replace").strip() or "unknown"
    finally:
        os.close(fd)  # releases the probe's lock, if it took one


def _busy_inside(root: Path) -> Busy:
    """Why ``root``'s exclusive lock was refused: a run on it (another host's, where only the
    lock file is shared), or a run on a directory inside it, found by their lock files (only
    when refusing: taking a lock never searches)."""
    holder = _holder(root)
    if holder is not None:
        return Busy(f"{root}: another hepfmt run is using it ({holder}); {_WAIT}")
    for found in root.rglob(LOCK):
        holder = _holder(found.parent)
        if holder is not None:
            return Busy(f"{root}: another hepfmt run is using {found.parent}, inside it "
                        f"({holder}); runs on nested results directories would remove and "
                        f"rewrite each other's files; {_WAIT}")
    return Busy(f"{root}: another hepfmt run is using it or a directory inside it; {_WAIT}")


def hold(results: str | Path) -> None:
    """Take ``results``' lock for the rest of this process (or until :func:`release`), or
    raise :class:`Busy` naming the run that holds it, or one above or inside it."""
    root = Path(results)
    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    fds: list[int] = []
    try:
        for above in reversed(root.parents):
            fd = _open_dir(above)
            if fd is None:
                continue
            fds.append(fd)
            if _try_lock(fd, fcntl.LOCK_SH) is False:
                raise Busy(f"{root}: another hepfmt run is using {above}, which contains it "
                           f"({_holder(above) or 'unknown'}); runs on nested results "
                           f"directories would remove and rewrite each other's files; {_WAIT}")
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
        fds.append(fd)
        if _try_lock(fd, fcntl.LOCK_EX) is False:
            raise _busy_inside(root)
        fd = os.open(root / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
        fds.append(fd)
        locked = _try_lock(fd, fcntl.LOCK_EX)
        if locked is None:
            raise HepfmtError(f"{root}: its filesystem cannot lock {LOCK} (flock), so no run "
                              "could keep others off it")
        if not locked:
            raise _busy_inside(root)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} in {os.getcwd()}\n".encode(), 0)
        resultsdir.mark(root)
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    _held.setdefault(root, []).extend(fds)


def release(results: str | Path) -> None:
    """Give up ``results``' lock before this process ends (a test; a run ends by exiting)."""
    for fd in _held.pop(Path(results).resolve(), []):
        os.close(fd)


def owner_alive(pid: int, path: Path) -> bool:
    """Whether the process ``pid`` named after itself in ``path`` still runs: a process of
    that id, not a zombie, that started before ``path`` last changed (one started after can
    only have taken the id of the owner, which is gone). In doubt, alive."""
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        started = proc.create_time()
    except psutil.NoSuchProcess:
        return False
    except psutil.Error:
        return True
    try:
        changed = path.lstat().st_mtime
    except OSError:
        return True  # gone already: nothing to remove
    return started <= changed + CLOCK_SLACK_S


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _written_down(doc: dict, where: Path) -> Path | None:
    """The path an entry names, if it is still the thing written down and in ``where``
    (the results directory; for a scratch directory, the temporary directory itself)."""
    path = Path(str(doc.get("path", "")))
    if not path.is_absolute() or path.parent.resolve() != path.parent:  # no link in between
        return None
    if doc.get("kind") == "scratch":
        if path.parent != where or not path.name.startswith("hepfmt-"):
            return None
    elif where not in path.parents or not TEMPORARY.match(path.name):
        return None
    try:
        st = path.lstat()
    except OSError:
        return None  # gone already
    if "inode" in doc:
        return path if (st.st_ino, st.st_dev) == (doc["inode"], doc.get("dev")) else None
    # made after its entry: not a file that was there before hepfmt wrote the name down
    registered = doc.get("registered_ns")
    made = min(st.st_ctime_ns, st.st_mtime_ns)
    slack = int(CLOCK_SLACK_S * 1e9)
    return path if isinstance(registered, int) and made + slack >= registered else None


def _sweep(ledger: Path, where: Path) -> list[Path]:
    """Remove what the dead owners of ``ledger``'s entries left in ``where``, and their
    entries; a live owner's (or another host's) entry stays."""
    gone: list[Path] = []
    try:
        entries = sorted(ledger.glob("*.json"))
    except OSError:
        return gone
    host = socket.gethostname()
    for entry in entries:
        try:
            doc = records.read_json(entry, "ledger entry")
        except HepfmtError:
            doc = None
        if not isinstance(doc, dict) or not isinstance(doc.get("pid"), int):
            # being written (its writer lives: it stays), or cut short by a kill: named after
            # its writer (atomic.register), it names nothing to remove
            writer = entry.name.split("-", 1)[0]
            if not (writer.isdigit() and owner_alive(int(writer), entry)):
                entry.unlink(missing_ok=True)
            continue
        if doc.get("host", host) != host or owner_alive(doc["pid"], entry):
            continue
        path = _written_down(doc, where)
        if path is not None:
            _remove(path)
            gone.append(path)
        entry.unlink(missing_ok=True)
    return gone


def remove_leftovers(results: str | Path) -> list[Path]:
    """Remove what dead processes left under ``results`` and in the temporary directory, as
    written down in the ledgers (call it holding the lock); a live process's files, and
    anything not written down, stay. Returns what was removed."""
    root = Path(results).resolve()
    gone = _sweep(root / atomic.LEDGER, root)
    scratch = Path(tempfile.gettempdir()).resolve()
    return gone + _sweep(atomic.scratch_ledger(), scratch)
