"""Resources recorded by id before they are used, so they are torn down by that id.

A context manager's ``finally`` covers errors but not a SIGKILL of its process. So every loop
device, mount, cgroup, temporary path and server process is first appended to a ledger file
(one per owner, fsynced); teardown undoes the entries newest first and deletes the file.
Each ledger has a supervisor (:mod:`.supervisor`), a process of its own session that releases
it within a second of its owner's death, so a killed measurement's leftovers go then, not at
the next ``storage`` job; :func:`reap` undoes the ledgers of owners that are no longer alive
too (a supervisor killed with its owner). Never by a name pattern, only by the ids recorded.

A process is identified by pid *and* start time (``/proc/PID/stat`` field 22), so a recycled
pid is never signalled; a zombie is dead (it holds nothing and runs nothing).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path


def default_root() -> Path:
    """``$HEPFMT_STORAGE_LEDGER``, else one directory per user (root's and a user's ledgers
    never mix); read at each call, so a test can give itself its own."""
    return Path(os.environ.get("HEPFMT_STORAGE_LEDGER")
                or Path(tempfile.gettempdir()) / f"hepfmt-storage-{os.getuid()}")


#: The module a ledger's supervisor runs (``python -m``): named, not imported, as it imports this.
SUPERVISOR = "hepfmt.measure.storage.supervisor"


def _stat(pid: int) -> list[str] | None:
    """``/proc/PID/stat`` from field 3 (the state) on; None if the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()  # comm, before it, may hold spaces and parentheses


def start_time(pid: int) -> int | None:
    """Clock ticks since boot at which ``pid`` started; None if it is gone."""
    fields = _stat(pid)
    return None if fields is None else int(fields[19])  # field 22


def alive(pid: int, started: int | None) -> bool:
    """Whether the process recorded as (``pid``, ``started``) still runs: not a zombie."""
    fields = _stat(pid)
    return started is not None and fields is not None and fields[0] != "Z" \
        and int(fields[19]) == started


def _supervise(path: Path) -> subprocess.Popen:
    """The ledger's supervisor (:mod:`.supervisor`): its own session, no terminal, holding no
    descriptor of the owner's (a pipe a caller reads to its end is not kept open), its working
    directory ``/`` (never a mount it must undo)."""
    package_root = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (package_root, os.environ.get("PYTHONPATH")) if p)}
    return subprocess.Popen(
        [sys.executable, "-m", SUPERVISOR, str(path), str(os.getpid()),
         str(start_time(os.getpid()) or "none")],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, cwd="/", env=env)


class Ledger:
    """The resources of one owner (a context manager), in the order they were created."""

    def __init__(self, root: Path | None = None, supervised: bool = True) -> None:
        """``supervised``: start the ledger's supervisor (tests of :func:`reap` alone say
        no)."""
        self.root = Path(root or default_root())
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = self.root / f"{os.getpid()}-{uuid.uuid4().hex[:8]}.jsonl"
        self.entries: list[dict] = []
        self._write({"kind": "owner", "pid": os.getpid(), "started": start_time(os.getpid())})
        self.supervisor = _supervise(self.path) if supervised else None

    def _write(self, entry: dict) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(entry) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def add(self, kind: str, **ids: object) -> dict:
        """Record a resource *before* creating it (teardown tolerates one never created)."""
        if kind not in UNDO:
            raise ValueError(f"unknown resource kind {kind!r}")
        entry = {"kind": kind, **ids}
        self._write(entry)
        self.entries.append(entry)
        return entry

    def close(self) -> list[str]:
        """Undo every entry, newest first; the errors of those that failed (the ledger is kept
        then, so a later :func:`reap` tries again)."""
        errors = undo_all(self.entries)
        self.entries = []
        if not errors:
            self.path.unlink(missing_ok=True)
            self._stop_supervisor()
        return errors

    def _stop_supervisor(self) -> None:
        """Nothing is left to undo: the supervisor (which would leave by itself within
        :data:`.supervisor.POLL_S`) is ended and collected now."""
        if self.supervisor is not None and self.supervisor.poll() is None:
            self.supervisor.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.supervisor.wait(timeout=10)


def undo_all(entries: list[dict]) -> list[str]:
    errors = []
    for entry in reversed(entries):
        try:
            UNDO[entry["kind"]](entry)
        except (OSError, subprocess.SubprocessError, TimeoutError) as exc:
            errors.append(f"{entry}: {exc}")
    return errors


def _entries(path: Path) -> list[dict]:
    """The ledger's entries; a line torn by a kill while it was written is skipped: an entry is
    complete (fsynced) before its resource is made, so a torn one names nothing made."""
    out = []
    for line in path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            out.append(json.loads(line))
    return [e for e in out if isinstance(e, dict) and "kind" in e]


def _owner_alive(lines: list[dict]) -> bool:
    owner = lines[0] if lines and lines[0]["kind"] == "owner" else None
    return owner is not None and alive(owner["pid"], owner["started"])


def release(path: Path) -> list[str]:
    """Undo the ledger at ``path`` if its owner is dead, and delete it; the errors of what
    could not be undone (the ledger is kept then). Under an exclusive lock of the ledger file:
    its supervisor and a :func:`reap` never undo it at the same time."""
    try:
        f = open(path)  # noqa: SIM115 - held for the lock, closed below
    except FileNotFoundError:
        return []  # released meanwhile
    with f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        if not path.exists():
            return []
        lines = _entries(path)
        if _owner_alive(lines):
            return []
        failed = undo_all([e for e in lines if e["kind"] != "owner"])
        if not failed:
            path.unlink(missing_ok=True)
    return failed


def reap(root: Path | None = None) -> list[str]:
    """Undo the ledgers whose owner process is dead; the errors of what could not be undone."""
    errors: list[str] = []
    for path in sorted(Path(root or default_root()).glob("*.jsonl")):
        errors += release(path)
    return errors


def leftovers(root: Path | None = None) -> bool:
    """Whether a ledger of a dead owner is waiting (cheap: a directory listing and one
    ``/proc`` read per ledger), so a command can call :func:`reap` only then."""
    base = Path(root or default_root())
    if not base.is_dir():
        return False
    for path in base.glob("*.jsonl"):
        with contextlib.suppress(OSError, ValueError):
            if not _owner_alive(_entries(path)):
                return True
    return False


def stop_process(entry: dict, grace_s: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after ``grace_s``: only the recorded pid, only if it is the
    process that was recorded (same start time)."""
    pid, started = entry["pid"], entry.get("started")
    if not alive(pid, started):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while alive(pid, started) and time.monotonic() < deadline:
        _reap_child(pid)
        time.sleep(0.05)
    if alive(pid, started):
        os.kill(pid, signal.SIGKILL)
        while alive(pid, started):
            _reap_child(pid)
            time.sleep(0.05)


def _reap_child(pid: int) -> None:
    """Collect the exit status if ``pid`` is our child, so it does not linger as a zombie."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _undo_cgroup(entry: dict) -> None:
    """Kill what still runs in the cgroup (only processes this owner put there), then remove
    it; a cgroup directory is removed with rmdir, never recursively."""
    path = Path(entry["path"])
    if not path.is_dir():
        return
    procs = path / "cgroup.procs"
    deadline = time.monotonic() + 10
    while pids := [int(p) for p in procs.read_text().split()]:
        for pid in pids:
            stop_process({"pid": pid, "started": start_time(pid)}, grace_s=1.0)
        if time.monotonic() > deadline:
            raise TimeoutError(f"processes {pids} stay in {path}")
    path.rmdir()


def _undo_mount(entry: dict) -> None:
    target = os.path.realpath(entry["path"])
    mounted = any(line.split()[1] == target for line in Path("/proc/mounts").read_text()
                  .splitlines())
    if mounted:
        subprocess.run(["umount", target], check=True, capture_output=True, timeout=60)


def loop_devices(image: str | Path) -> list[str]:
    """The loop devices backed by ``image`` (the kernel's own record of the backing file)."""
    image = os.path.realpath(image)
    found = []
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        try:
            current = backing.read_text().strip()
        except OSError:
            continue  # detached meanwhile
        if current.removesuffix(" (deleted)") == image:
            found.append(f"/dev/{backing.parent.parent.name}")
    return found


def _undo_loop(entry: dict) -> None:
    """Detach the loop devices backed by the recorded image: the image is recorded before
    ``losetup`` picks a device, so a kill in between leaves nothing unrecorded."""
    for dev in loop_devices(entry["image"]):
        subprocess.run(["losetup", "-d", dev], check=True, capture_output=True, timeout=60)


def _undo_file(entry: dict) -> None:
    Path(entry["path"]).unlink(missing_ok=True)


def _undo_dir(entry: dict) -> None:
    """A temporary directory this owner made (never a mount point: mounts are undone first)."""
    path = Path(entry["path"])
    if path.is_dir() and not os.path.ismount(path):
        shutil.rmtree(path)


UNDO = {"process": stop_process, "cgroup": _undo_cgroup, "mount": _undo_mount,
        "loop": _undo_loop, "file": _undo_file, "dir": _undo_dir}
