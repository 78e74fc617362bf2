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

Holding it, the run removes what killed processes left: temporary files
(``.NAME.tmpNNNNNNN`` of :func:`analysis.atomic.atomic_path`, named after the process writing
them) and the scratch directories of measurement processes (named after their parent), each
only when that process is gone (:func:`owner_alive`): a ``hepfmt`` command run by hand into the
results tree keeps its files.
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
TEMPORARY = re.compile(r"^\..+\.tmp(\d{7})$")
#: analysis.measure.isolated's scratch directories: "hepfmt-fresh-<parent pid>-..."
SCRATCH = re.compile(r"^hepfmt-fresh-(\d+)-")
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


def remove_leftovers(results: str | Path) -> list[Path]:
    """Remove what dead processes left under ``results`` and in the temporary directory (call
    it holding the lock); a live process's files stay. Returns what was removed."""
    gone = []
    for p in list(Path(results).rglob(".*.tmp*")):  # removing while walking could skip some
        m = TEMPORARY.match(p.name)
        if m and not owner_alive(int(m.group(1)), p):
            _remove(p)
            gone.append(p)
    for d in Path(tempfile.gettempdir()).glob("hepfmt-fresh-*"):
        m = SCRATCH.match(d.name)
        if m and not owner_alive(int(m.group(1)), d):
            shutil.rmtree(d, ignore_errors=True)
            gone.append(d)
    return gone
