"""A killed ``storage`` job's loop device, mount, cgroup, image and servers are released by its
ledger's supervisor within seconds, not at the next ``storage`` job (issue 44, item 7): the
tests kill the owner with SIGKILL (alone, and with its whole process group) and never call
:func:`~hepfmt.measure.storage.ledger.reap` before looking."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from hepfmt.measure.storage import Unavailable, blockdev, ledger

#: How long a release may take (the supervisor polls every 0.5 s; a loop device's detach and
#: an unmount take well under a second): several times what it takes on an idle machine.
WITHIN_S = 60.0

_OWNER = """
import json, os, subprocess, sys, time
from hepfmt.measure.storage import ledger
led = ledger.Ledger(supervised=sys.argv[2] == "supervised")
kept = os.path.join(sys.argv[1], "kept.tmp")
led.add("file", path=kept)
open(kept, "w").close()
sleeper = subprocess.Popen(["sleep", "600"], start_new_session=True)
led.add("process", pid=sleeper.pid, started=ledger.start_time(sleeper.pid))
print(json.dumps({"sleeper": sleeper.pid, "started": ledger.start_time(sleeper.pid),
                  "file": kept, "ledger": str(led.path),
                  "supervisor": led.supervisor.pid if led.supervisor else None}), flush=True)
time.sleep(600)
"""

_DEVICE_OWNER = """
import json, sys, time
from hepfmt.measure.storage import blockdev, profiles
ctx = blockdev.emulated(profiles.get("hdd"), 16 << 20, workdir=sys.argv[1])
dev = ctx.__enter__()  # ctx kept: its collection would close the generator (a teardown)
print(json.dumps({"mountpoint": str(dev.mountpoint), "cgroup": str(dev.cgroup),
                  "loop": dev.loop}), flush=True)
time.sleep(600)
"""


@pytest.fixture
def ledger_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ledger directory of the test's own: what is released can only be what the test made."""
    root = tmp_path / "ledger"
    monkeypatch.setenv("HEPFMT_STORAGE_LEDGER", str(root))
    return root


def _owner(script: str, *args: str) -> tuple[subprocess.Popen, dict]:
    proc = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        ids = json.loads(proc.stdout.readline())
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    return proc, ids


def _until(done: Callable[[], bool]) -> float:
    """Seconds until ``done()`` held (fails after :data:`WITHIN_S`)."""
    t0 = time.monotonic()
    while not done():
        assert time.monotonic() - t0 < WITHIN_S, "not released in time"
        time.sleep(0.05)
    return time.monotonic() - t0


def test_a_killed_owners_ledger_is_released_by_its_supervisor(tmp_path: Path,
                                                              ledger_root: Path) -> None:
    """SIGKILL to the owner's whole process group (what a scheduler does): the supervisor, in
    a session of its own, survives it; the owner is left a zombie (not yet collected), which
    counts as dead."""
    proc, ids = _owner(_OWNER, str(tmp_path), "supervised")
    try:
        sleeper = (ids["sleeper"], ids["started"])
        assert ledger.alive(*sleeper) and Path(ids["file"]).exists()
        os.killpg(proc.pid, signal.SIGKILL)
        took = _until(lambda: not Path(ids["ledger"]).exists())
        assert not ledger.alive(*sleeper)
        assert not Path(ids["file"]).exists()
        _until(lambda: ledger.start_time(ids["supervisor"]) is None)  # it left, collected
        print(f"\nreleased {took:.2f} s after the kill")
    finally:
        proc.kill()
        proc.wait()
    assert list(ledger_root.glob("*.jsonl")) == []


def test_a_closed_ledger_ends_its_supervisor(ledger_root: Path) -> None:
    led = ledger.Ledger()
    sup = led.supervisor
    assert sup is not None and sup.poll() is None
    assert os.getsid(sup.pid) == sup.pid  # a session of its own
    assert led.close() == []
    assert sup.poll() is not None and not led.path.exists()


def test_without_a_supervisor_the_leftovers_are_seen_and_reaped(tmp_path: Path,
                                                                ledger_root: Path) -> None:
    """The fallback (a supervisor killed with its owner): :func:`ledger.leftovers` tells a
    command cheaply that :func:`ledger.reap` has work, and reap does it."""
    assert not ledger.leftovers()
    proc, ids = _owner(_OWNER, str(tmp_path), "unsupervised")
    try:
        assert not ledger.leftovers()  # its owner lives
        proc.kill()
        proc.wait()
        assert ledger.leftovers()
        assert ledger.reap() == []
        assert not ledger.alive(ids["sleeper"], ids["started"])
        assert not Path(ids["file"]).exists() and not ledger.leftovers()
    finally:
        proc.kill()
        proc.wait()


def test_a_killed_storage_jobs_device_is_gone_within_seconds(tmp_path: Path,
                                                             ledger_root: Path) -> None:
    """The real thing: a loop device with ext4 mounted and a throttling cgroup, made by a child
    that is then killed with SIGKILL; nobody calls reap."""
    try:
        blockdev.check_support()
    except Unavailable as exc:
        pytest.skip(str(exc))
    proc, ids = _owner(_DEVICE_OWNER, str(tmp_path))
    try:
        image = next(tmp_path.glob("hepfmt-*.img"))
        assert ledger.loop_devices(image) == [ids["loop"]]
        proc.kill()
        proc.wait()

        def gone() -> bool:
            mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
            return (ids["mountpoint"] not in mounts and not Path(ids["mountpoint"]).exists()
                    and not Path(ids["cgroup"]).exists() and not image.exists()
                    and ledger.loop_devices(image) == [])

        took = _until(gone)
        print(f"\nloop device {ids['loop']}, mount, cgroup and image released {took:.2f} s "
              "after the kill")
    finally:
        proc.kill()
        proc.wait()
        ledger.reap()  # only if the assertion above failed: never leave a device behind
    assert list(ledger_root.glob("*.jsonl")) == []
