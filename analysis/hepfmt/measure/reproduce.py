"""Every pairing of a study measured twice on this machine, to see whether its ratios' intervals
hold (issue 24, item 5).

An interval that says where a ratio lies should hold the ratio a later measurement finds. So
``hepfmt bench reproduce`` measures every pair job once, and once all of them are done measures
them all again: later, in new processes, after the machine went on doing other things, which is
what a reader of the tables compares against. Each pass writes its records to a scratch
directory (never the study's results), and the two passes' ratios (the records'
``summary["ratios"]``, from :mod:`hepfmt.paired`) are then compared ratio by ratio
(:mod:`hepfmt.report.compare_runs`).

The same under load: ``--load N`` keeps N CPU-bound processes busy through both passes, as a
shared machine would. A paired measurement discards scans during which other processes used
more than ``max_load`` of the CPUs; the busy processes are known load, so the limit is raised by
their share (:func:`loaded`) and only load beyond them discards a pair.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hepfmt.errors import InputError, UsageError
from hepfmt.measure.pairs import PairSpec, measure_pair
from hepfmt.provenance import machine
from hepfmt.samples.source import sidecar_path

#: What each busy process runs: one CPU kept busy, nothing read or written; it ends by itself
#: once its parent (``argv[1]``, given: a parent killed before the loop started would otherwise
#: be taken for init) is gone, killed by a signal no ``finally`` sees, never burning a CPU for
#: good.
BUSY_LOOP = ("import os, sys\nparent = int(sys.argv[1])\nwhile os.getppid() == parent:\n"
             "    for _ in range(1_000_000): pass\n")


@dataclass(frozen=True)
class Job:
    """One pair job: its name (``sample/pair/cNNN/selection``, what ``--jobs`` matches) and
    what to measure."""

    name: str
    spec: PairSpec


def job_name(sample: str, pair: str, cluster_size: int, selection: str) -> str:
    return f"{sample}/{pair}/c{cluster_size}/{selection}"


def select(names: Iterable[str], pattern: str | None) -> list[str]:
    """The job names that hold ``pattern`` (all without one), chosen before any job's spec is
    built; none is an error, since a reproduction of nothing would print an empty agreement."""
    names = list(names)
    chosen = [n for n in names if not pattern or pattern in n]
    if not chosen:
        raise UsageError("--jobs", f"no pair job's name holds {pattern!r} (names are "
                                    f"sample/pair/cNNN/selection, e.g. "
                                    f"{names[0] if names else 'none in this config'})")
    return chosen


def require(path: str | Path, job: str) -> None:
    """A file a job reads exists, or the error a user acts on: the file, and what makes it."""
    if not Path(path).exists():
        raise InputError(str(path), f"missing (pair job {job}): run make run first")


def _inputs(spec: PairSpec) -> list[str]:
    return [str(p) for p in (spec.source, sidecar_path(spec.source), spec.ttree.path,
                             spec.ttree.size_record, spec.parquet.path,
                             spec.parquet.size_record) if p]


def check_files(jobs: Iterable[Job]) -> None:
    """Before anything is timed: every file the jobs read exists, or an error naming the first
    one that does not (a half-finished run would otherwise fail an hour in)."""
    for j in jobs:
        for p in _inputs(j.spec):
            require(p, j.name)


def loaded(spec: PairSpec, loads: int, cpus: int | None = None) -> PairSpec:
    """``spec`` with its load limit raised by the share of the CPUs ``loads`` busy processes
    take: those are the conditions under study, not a disturbance to discard."""
    if loads <= 0:
        return spec
    share = loads / (cpus or os.cpu_count() or 1)
    return dataclasses.replace(spec, max_load=min(1.0, spec.max_load + share))


@contextlib.contextmanager
def busy(n: int) -> Iterator[list[subprocess.Popen]]:
    """``n`` CPU-bound processes for the duration of the block, killed when it ends however it
    ends (an error, Ctrl-C)."""
    procs: list[subprocess.Popen] = []
    try:
        for _ in range(n):
            procs.append(subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(os.getpid())],
                                          stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL))
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            p.wait()


#: Measures one pair into one record file (the default: :func:`measure_pair`).
Measure = Callable[[PairSpec, Path], dict]


def run_pass(jobs: list[Job], out: Path, measure: Measure | None = None,
             progress: Callable[[str], None] = lambda _: None) -> list[dict]:
    """One pass over every job, each record written under ``out``: their ratio rows."""
    measure = measure or measure_pair
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict] = []
    for i, j in enumerate(jobs):
        progress(f"{out.name}: {i + 1}/{len(jobs)} {j.name}")
        doc = measure(j.spec, out / f"{i:04d}.json")
        rows += doc["summary"]["ratios"]
    return rows


@dataclass
class Reproduction:
    """Both passes' ratio rows and the conditions they ran in."""

    first: list[dict]
    second: list[dict]
    loads: int
    cpu: str = field(default_factory=lambda: str(machine()["cpu"]))

    def worst_share(self) -> float:
        """The most other processes used of the CPUs during any scan of either pass, kept or
        discarded (the busy processes count as other)."""
        shares = [r.get("worst_other_cpu_share", 0.0) for r in [*self.first, *self.second]]
        return max(shares, default=0.0)

    def conditions(self) -> str:
        how = "idle" if self.loads == 0 else \
            f"with {self.loads} CPU-bound process{'es' if self.loads > 1 else ''}"
        return f"{how}, CPU {self.cpu}, load: worst other-CPU share {self.worst_share():.0%}"


def reproduce(jobs: list[Job], scratch: Path, loads: int = 0, pause_s: float = 0.0,
              measure: Measure | None = None,
              progress: Callable[[str], None] = lambda _: None) -> Reproduction:
    """Every job measured, then (after ``pause_s``) every job again, under ``loads`` busy
    processes throughout; the second pass starts only once the first has finished, so each
    job's two measurements are minutes apart and in different processes."""
    check_files(jobs)
    jobs = [Job(j.name, loaded(j.spec, loads)) for j in jobs]
    with busy(loads):
        first = run_pass(jobs, scratch / "run1", measure, progress)
        if pause_s > 0:
            progress(f"pausing {pause_s:g} s")
            time.sleep(pause_s)
        second = run_pass(jobs, scratch / "run2", measure, progress)
    return Reproduction(first, second, loads)
