"""A run touches only its own files: results directories nested in each other are never held at
once (in either order, by two processes), and a run removes a temporary file only when hepfmt
wrote it down in its ledger and the process that did is gone."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from hepfmt import atomic
from hepfmt.plan import lock, resultsdir

HOLD = ("import sys, time; from hepfmt.plan import lock; lock.hold(sys.argv[1]); "
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


def _temporary(directory: Path, pid: int, results: Path | None = None) -> Path:
    """A temporary file of ``pid``'s, written down (as :func:`atomic.atomic_path` does) in
    ``results``' ledger when ``results`` is given."""
    path = directory / f".c200.root.tmp{pid:07d}"
    if results is not None:
        entry = atomic.register(results / atomic.LEDGER, path, "temporary")
        doc = json.loads(entry.read_text())
        entry.write_text(json.dumps({**doc, "pid": pid}))
    path.write_bytes(b"half")
    return path


def _removed_under(results: Path) -> set[Path]:
    """What remove_leftovers removed in ``results`` (not the dead processes' scratch
    directories it also removes, which other runs on this machine may have left)."""
    return {p for p in lock.remove_leftovers(results) if results in p.parents}


def test_only_a_dead_owners_temporary_files_are_removed(tmp_path: Path) -> None:
    """A live convert writing into a results directory inside the one being cleaned keeps its
    file; a dead one's goes, and so does one written down by a process that merely reuses the
    dead owner's id (it started after the entry was made)."""
    outer = tmp_path / "results"
    files = outer / "inner" / "files"
    files.mkdir(parents=True)
    resultsdir.mark(outer)
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        time.sleep(0.05)
        writing = _temporary(files, live.pid, outer)
        left = _temporary(files, dead.pid, outer)
        reused = _temporary(outer, live.pid, outer)
        past = time.time() - 3600  # written down an hour before the live process started
        for entry in (outer / atomic.LEDGER).iterdir():
            if str(reused) in entry.read_text():
                os.utime(entry, (past, past))
        kept = outer / "c200.root"
        kept.write_bytes(b"x")

        assert _removed_under(outer) == {left, reused}
        assert writing.exists() and kept.exists()
        assert not left.exists() and not reused.exists()
    finally:
        live.kill()
        live.wait()
    assert _removed_under(outer) == {writing}  # its owner is gone now
    assert list((outer / atomic.LEDGER).iterdir()) == []  # and every entry with it


def test_a_users_files_named_like_temporaries_are_never_removed(tmp_path: Path) -> None:
    """A file or directory of the temporaries' name pattern, whose "owner" is long gone, is
    the user's unless hepfmt wrote it down: it stays (issue 44: ``.notes.txt.tmp0424242`` and
    ``.mydata.tmp0424243/`` were removed as a killed job's)."""
    results = tmp_path / "results"
    results.mkdir()
    resultsdir.mark(results)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    notes = results / ".notes.txt.tmp0424242"
    notes.write_text("mine")
    data = results / ".mydata.tmp0424243"
    (data / "inside").mkdir(parents=True)
    named = results / "files" / f".c200.root.tmp{dead.pid:07d}"  # a dead pid, no entry
    named.parent.mkdir()
    named.write_bytes(b"mine too")
    scratch = Path(tempfile.mkdtemp(prefix=f"hepfmt-fresh-{dead.pid}-"))  # not written down
    try:
        assert _removed_under(results) == set()
        assert scratch not in lock.remove_leftovers(results)
        assert notes.exists() and (data / "inside").is_dir() and named.exists()
        assert scratch.is_dir()
    finally:
        scratch.rmdir()


def test_an_entry_is_no_licence_for_a_file_made_before_it(tmp_path: Path) -> None:
    """An entry names a path; a file that was at that path before the entry was written (a
    user's, of the same name) is not the one hepfmt was to write, and stays; an entry that
    leads out of the results directory (a link swapped in above it) removes nothing."""
    results = tmp_path / "results"
    (results / "files").mkdir(parents=True)
    resultsdir.mark(results)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    before = results / "files" / f".c200.root.tmp{dead.pid:07d}"
    before.write_bytes(b"the user's")
    past = time.time() - 3600
    os.utime(before, (past, past))
    time.sleep(0.01)
    entry = atomic.register(results / atomic.LEDGER, before, "temporary")
    entry.write_text(json.dumps({**json.loads(entry.read_text()), "pid": dead.pid,
                                 "registered_ns": time.time_ns() + 10**12}))
    outside = tmp_path / f".elsewhere.tmp{dead.pid:07d}"
    outside.write_bytes(b"not in results")
    stray = atomic.register(results / atomic.LEDGER, outside, "temporary")
    stray.write_text(json.dumps({**json.loads(stray.read_text()), "pid": dead.pid}))
    assert _removed_under(results) == set()
    assert before.exists() and outside.exists()


KILLED_WRITER = """
import os, sys, time
from hepfmt.atomic import atomic_path, scratch_dir
with scratch_dir(prefix=f"hepfmt-fresh-{os.getpid()}-") as scratch, \
        atomic_path(sys.argv[1]) as tmp:
    tmp.write_bytes(b"half")
    print(scratch, tmp, flush=True)
    time.sleep(600)
"""


def test_a_killed_writers_temporary_and_scratch_are_removed(tmp_path: Path) -> None:
    """The real thing: a writer killed with SIGKILL inside atomic_path and a scratch
    directory leaves both, written down; the next run removes both."""
    results = tmp_path / "results"
    lock.hold(results)  # marks it as hepfmt's: its writers write their temporaries down
    try:
        target = results / "files" / "c200.root"
        proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITER, str(target)],
                                stdout=subprocess.PIPE, text=True)
        scratch, tmp = map(Path, proc.stdout.readline().split())
        proc.kill()
        proc.wait()
        assert tmp.exists() and scratch.is_dir()
        removed = set(lock.remove_leftovers(results))
        assert {tmp.resolve(), scratch.resolve()} <= {p.resolve() for p in removed}
        assert not tmp.exists() and not scratch.exists() and not target.exists()
    finally:
        lock.release(results)


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
