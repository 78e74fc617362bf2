"""Every timed scan splits its wall time into user, system and waiting time, counts its page
faults and records its own peak memory (hepfmt.measure.reads.timed_scan), through the same
path a real reader's scan takes: a toy reader that sleeps must show waiting, one that spins
must show user time, one that allocates must show its own peak."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hepfmt.formats.base import Marks, Reader
from hepfmt.measure.reads import ReadSpec, timed_scan
from hepfmt.measure.timing import usage_split

SLEEP_S = 0.4
SPIN_S = 0.4
ALLOC_BYTES = 64 << 20


def _sleeps(path: str, branches: list[str], threads: int, marks: Marks) -> int:
    marks.opened()
    time.sleep(SLEEP_S)
    marks.chunk(10)
    return 10


def _spins(path: str, branches: list[str], threads: int, marks: Marks) -> int:
    marks.opened()
    # until SPIN_S of CPU time (a busy machine lengthens the wall time, not this), asking the
    # clock (a system call) only every 100,000 additions
    end = time.process_time() + SPIN_S
    x = 0
    while time.process_time() < end:
        for _ in range(100_000):
            x += 1
    marks.chunk(10)
    return 10


def _allocates(path: str, branches: list[str], threads: int, marks: Marks) -> int:
    marks.opened()
    data = np.ones(ALLOC_BYTES // 8)  # every page touched: resident
    marks.hold(data)
    marks.chunk(10)
    return 10


def _reader(scan) -> Reader:
    def unused(*_args: object) -> None:
        raise AssertionError("only scan is timed here")

    return Reader("toy", "numpy", prepare=unused, read=unused, scan=scan)


def _spec() -> ReadSpec:
    return ReadSpec("toy", "toy", "toy", "toy", "all", ["x"], ["warm"], 1, 1, n_events=10)


def test_a_scan_that_sleeps_shows_waiting_time() -> None:
    rep = timed_scan(_reader(_sleeps), _spec())
    assert rep["wait_s"] > 0.5 * SLEEP_S
    assert rep["user_s"] + rep["sys_s"] < 0.5 * rep["wall_s"]
    assert rep["wall_s"] == pytest.approx(rep["user_s"] + rep["sys_s"] + rep["wait_s"])


def test_a_scan_that_spins_shows_user_time() -> None:
    rep = timed_scan(_reader(_spins), _spec())
    assert rep["user_s"] > 0.5 * SPIN_S
    assert rep["user_s"] > rep["sys_s"]
    # CPU time never exceeds wall time single-threaded (a clock tick of slack)
    assert rep["user_s"] + rep["sys_s"] <= rep["wall_s"] + 0.02
    assert rep["cpu_s"] == pytest.approx(rep["user_s"] + rep["sys_s"], abs=0.02)


_OWN_PEAK_SCRIPT = """
import json, sys
sys.path[:0] = [{tests!r}]
from measure.test_cpu_split import _allocates, _reader, _sleeps, _spec
from hepfmt.measure.reads import timed_scan
print(json.dumps([timed_scan(_reader(_allocates), _spec()), timed_scan(_reader(_sleeps), _spec())]))
"""


def test_a_scan_records_its_faults_and_its_own_peak_memory() -> None:
    """In a fresh interpreter: in a long (or parallel) test session the allocator may hand the
    scan pages that earlier tests freed but never returned, so the rise would not be the scan's."""
    tests = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", _OWN_PEAK_SCRIPT.format(tests=tests)],
                          capture_output=True, text=True, timeout=300, check=True,
                          cwd=Path(tests).parent)
    rep, small = json.loads(done.stdout.strip().splitlines()[-1])
    assert rep["minflt"] > 0 and rep["majflt"] >= 0
    if rep["scan_peak_rss_bytes"] is None:  # the kernel refused the reset: no number at all
        assert rep["scan_start_rss_bytes"] is None
        pytest.skip("this kernel refuses to reset the resident high-water mark")
    own = rep["scan_peak_rss_bytes"] - rep["scan_start_rss_bytes"]
    assert own >= 0.5 * ALLOC_BYTES
    # the next scan's peak is its own, not this one's high-water mark
    assert small["scan_peak_rss_bytes"] - small["scan_start_rss_bytes"] < 0.5 * ALLOC_BYTES


def test_waiting_is_never_negative_with_threads() -> None:
    """Two threads' CPU time can exceed the wall time: waiting is then floored at 0."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    two_threads = SimpleNamespace(ru_utime=before.ru_utime + 2.0, ru_stime=before.ru_stime,
                                  ru_minflt=before.ru_minflt, ru_majflt=before.ru_majflt)
    split = usage_split(before, two_threads, 1.0)
    assert split["wait_s"] == 0.0 and split["user_s"] == pytest.approx(2.0)
