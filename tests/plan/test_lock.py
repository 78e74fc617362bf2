"""A run touches only its own files: results directories nested in each other are never held at
once (in either order, by two processes), and a run removes a temporary file only when the
process named in it is gone."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from analysis.plan import lock

HOLD = ("import sys, time; from analysis.plan import lock; lock.hold(sys.argv[1]); "
        "print('held', flush=True); time.sleep(600)")


@pytest.fixture
def holder() -> Iterator:
    """``holder(results)``: another process holding ``results``' lock until the test ends (or
    it is killed)."""
    procs: list[subprocess.Popen] = []

    def start(results: Path) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", HOLD, str(results)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout.readline().strip() == "held", proc.stderr.read()
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def _refused(results: Path) -> str:
    """The refusal of ``results`` in this process (a second process beside the holder)."""
    with pytest.raises(lock.Busy) as exc:
        try:
            lock.hold(results)
        finally:  # never keep a lock this test took by mistake
            lock.release(results)
    return str(exc.value)


def test_nested_results_exclude_each_other_in_either_order(tmp_path: Path, holder) -> None:
    outer = tmp_path / "results"
    inner = outer / "inner" / "results"
    inner.mkdir(parents=True)

    first = holder(outer)
    message = _refused(inner)
    assert f"another hepfmt run is using {outer.resolve()}, which contains it" in message
    assert f"pid {first.pid}" in message
    first.kill()
    first.wait()

    second = holder(inner)
    message = _refused(outer)
    assert f"another hepfmt run is using {inner.resolve()}, inside it" in message
    assert f"pid {second.pid}" in message
    assert _refused(inner).startswith(f"{inner.resolve()}: another hepfmt run is using it")


def test_siblings_may_run_and_a_killed_holders_lock_is_gone(tmp_path: Path, holder) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    proc = holder(one)
    lock.hold(two)  # a sibling of a held directory: no conflict
    lock.release(two)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    lock.hold(one / "inner")  # the kill took the lock with it, and no stale one is left
    lock.hold(two)
    lock.release(one / "inner")
    lock.release(two)


def test_a_symlink_to_held_results_is_the_same_directory(tmp_path: Path, holder) -> None:
    real = tmp_path / "real"
    link = tmp_path / "link"
    real.mkdir()
    link.symlink_to(real)
    holder(real)
    _refused(link)
    _refused(link / "inside")


def _temporary(directory: Path, pid: int) -> Path:
    path = directory / f".c200.root.tmp{pid:07d}"
    path.write_bytes(b"half")
    return path


def _removed_under(results: Path) -> set[Path]:
    """What remove_leftovers removed in ``results`` (not the dead processes' scratch
    directories it also removes, which other runs on this machine may have left)."""
    return {p for p in lock.remove_leftovers(results) if results in p.parents}


def test_only_a_dead_owners_temporary_files_are_removed(tmp_path: Path) -> None:
    """A live convert writing into a results directory inside the one being cleaned keeps its
    file; a dead one's goes, and so does one named by a process that merely reuses the dead
    owner's id (it started after the file last changed)."""
    outer = tmp_path / "results"
    files = outer / "inner" / "files"
    files.mkdir(parents=True)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        time.sleep(0.05)
        writing = _temporary(files, live.pid)
        left = _temporary(files, dead.pid)
        reused = _temporary(outer, live.pid)
        past = time.time() - 3600  # last written an hour before the live process started
        os.utime(reused, (past, past))
        kept = outer / "c200.root"
        kept.write_bytes(b"x")

        assert _removed_under(outer) == {left, reused}
        assert writing.exists() and kept.exists()
        assert not left.exists() and not reused.exists()
    finally:
        live.kill()
        live.wait()
    assert _removed_under(outer) == {writing}  # its owner is gone now


def test_a_zombie_owns_nothing(tmp_path: Path) -> None:
    """A process that has exited but is not yet reaped is no owner, however recent its file."""
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        deadline = time.monotonic() + 60
        while psutil.Process(zombie.pid).status() != psutil.STATUS_ZOMBIE:  # not reaped
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert not lock.owner_alive(zombie.pid, _temporary(tmp_path, zombie.pid))
    finally:
        zombie.wait()
