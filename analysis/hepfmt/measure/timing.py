"""How hepfmt times: one timed region (:func:`timed`), when to stop repeating a timing
(:class:`Stopping`), and the loops that repeat it (:func:`interleaved`, :func:`repeat`; the
statistics they stop on are :mod:`hepfmt.stats`').

One rule for every timed region: garbage is collected before it and the cyclic collector is off
inside it (as :mod:`timeit` does), so that a collection the harness's own objects set off is
never charged to a reader; reference counting still frees a reader's buffers as it goes.

Loops that time otherwise, and why:

* :mod:`.layers` profiles a child that scans for a fixed number of seconds under ``perf``: the
  profile, not a time, is its result, and its usage counts span every scan of the window;
* :mod:`.scaling` times a Dask cluster's workers, whose clocks are in other processes: only the
  wall time of the client's call means anything there;
* :mod:`.bound` times decompression passes in C++ (``std::chrono`` inside the pass), where no
  Python object is made and no Python clock can see inside.
"""

from __future__ import annotations

import gc
import math
import resource
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import ClassVar

from hepfmt.defaults import default
from hepfmt.stats import sharp

#: The keys of a config section that say when a timing stops (``measure``, ``compare``).
TIMING_KEYS = ("precision", "budget_s", "min_repetitions", "repetitions")

#: The fewest timed repetitions of an analysis query in each cache mode (``hepfmt query``
#: makes exactly as many as it is given, ``measure.repetitions`` in the workflow): the
#: schema's ``measure.queries_min_repetitions``.
QUERY_MIN_REPETITIONS: int = default("measure.queries_min_repetitions")


def io_read_bytes() -> int:
    """Bytes this process caused to be fetched from storage (-1 where the kernel hides it)."""
    try:
        for line in Path("/proc/self/io").read_text().splitlines():
            if line.startswith("read_bytes:"):
                return int(line.split()[1])
    except OSError:
        pass
    return -1


def usage_split(before: resource.struct_rusage, after: resource.struct_rusage,
                wall: float) -> dict:
    """Where one timed region's wall time went, from ``getrusage(RUSAGE_SELF)`` around it:
    ``user_s`` (the library's own work: decoding, copying), ``sys_s`` (the kernel's on the
    process's behalf: page faults of fresh memory, ``mmap``/``munmap`` of an allocator, reads),
    ``wait_s`` (neither: waiting for storage, a lock, the scheduler), and the page faults:
    minor (fresh or cached pages mapped) and major (pages read from disk).

    ``wait_s`` = wall - user - sys is what it says only for a single-threaded region: with
    threads, CPU time adds up over them and can exceed wall time, and the waiting is then
    hidden (it is floored at 0, never negative)."""
    user = after.ru_utime - before.ru_utime
    system = after.ru_stime - before.ru_stime
    return {"user_s": user, "sys_s": system, "wait_s": max(0.0, wall - user - system),
            "minflt": after.ru_minflt - before.ru_minflt,
            "majflt": after.ru_majflt - before.ru_majflt}


@dataclass
class Clock:
    """What one :func:`timed` region took, filled when it ends: wall and CPU time, where the
    wall time went (:func:`usage_split`) and the bytes fetched from storage. ``start`` is the
    ``time.perf_counter`` at its start: a reader's marks are taken on that clock."""

    start: float = 0.0
    wall_s: float = 0.0
    cpu_s: float = 0.0
    user_s: float = 0.0
    sys_s: float = 0.0
    wait_s: float = 0.0
    minflt: int = 0
    majflt: int = 0
    disk_read_bytes: int = 0

    def as_dict(self) -> dict:
        """Every measured field (``start`` is a clock reading, not a measurement)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "start"}


@contextmanager
def timed() -> Iterator[Clock]:
    """Time the body (``with timed() as clock: ...``; ``clock`` is filled when it ends) under
    the module's rule on garbage collection. Nothing but the clocks' own reads is inside."""
    clock = Clock()
    gc.collect()
    collecting = gc.isenabled()
    gc.disable()
    io0 = io_read_bytes()
    use0 = resource.getrusage(resource.RUSAGE_SELF)
    cpu0, clock.start = time.process_time(), time.perf_counter()
    try:
        yield clock
    finally:
        clock.wall_s = time.perf_counter() - clock.start
        clock.cpu_s = time.process_time() - cpu0
        use1 = resource.getrusage(resource.RUSAGE_SELF)
        io1 = io_read_bytes()
        if collecting:
            gc.enable()
        split = usage_split(use0, use1, clock.wall_s)
        clock.user_s, clock.sys_s, clock.wait_s = split["user_s"], split["sys_s"], split["wait_s"]
        clock.minflt, clock.majflt = split["minflt"], split["majflt"]
        clock.disk_read_bytes = io1 - io0


@dataclass(frozen=True)
class Stopping:
    """When to stop repeating a timing: once the median is sharp (:func:`sharp`) after at
    least ``min_repetitions``, or when ``budget_s`` of repetitions are spent, or at
    ``max_repetitions``. ``precision`` None never stops early on precision (a fixed count, or
    a count bounded by the budget only)."""

    precision: float | None
    budget_s: float
    min_repetitions: int
    max_repetitions: int
    #: the fewest ``min_repetitions`` allowed: each repetition is one time, and a median's
    #: interval needs 3 (not a field: a record's ``asdict`` of a policy holds the four above)
    FLOOR: ClassVar[int] = 3

    def __post_init__(self) -> None:
        if not self.FLOOR <= self.min_repetitions <= self.max_repetitions:
            raise ValueError(f"need {self.FLOOR} <= min_repetitions ({self.min_repetitions}) "
                             f"<= max_repetitions ({self.max_repetitions})")
        if (self.precision is not None and self.precision <= 0) or self.budget_s <= 0:
            raise ValueError("precision and budget_s must be positive")

    @classmethod
    def of(cls, settings: Mapping) -> Stopping:
        """From a config section's keys (``measure``, ``compare``, a pairing's overrides)."""
        return cls(settings["precision"], settings["budget_s"], settings["min_repetitions"],
                   settings["repetitions"])

    @classmethod
    def default(cls, section: str = "measure") -> Stopping:
        """The config schema's policy for ``section``: what a command run alone does."""
        return cls.of({k: default(f"{section}.{k}") for k in TIMING_KEYS})

    @classmethod
    def exactly(cls, n: int) -> Stopping:
        """``n`` repetitions, whatever they take (the queries: every task × mode alike)."""
        return cls(None, math.inf, n, n)

    def sharp(self, times: list[float]) -> bool:
        return self.precision is not None and sharp(times, self.precision)


@dataclass(frozen=True)
class RoundStopping(Stopping):
    """A policy whose repetitions are rounds that each hold their own repetitions (a pair job's
    rounds of fresh workers): one round may be the fewest."""

    FLOOR: ClassVar[int] = 1


def interleaved(calls: Mapping[str, Callable[[], dict]], stop: Stopping,
                key: str = "wall_s", precise: Callable[[dict[str, list[dict]]], bool] | None = None
                ) -> tuple[dict[str, list[dict]], dict]:
    """Rounds of every call in turn (each a dict with the time ``key``), so that a machine
    whose speed drifts moves every call alike, until ``stop`` says so for all of them; (the
    repetitions per call, how it stopped). ``precise`` (the repetitions so far -> whether they
    are precise enough) replaces the test of each call's ``key`` (a pair job: its rounds' ratio).
    The one repetition loop of hepfmt: reads, queries, storage reads, the metadata study's
    decoders and a pair job's rounds all stop by it."""
    reps: dict[str, list[dict]] = {name: [] for name in calls}

    def reached() -> bool:
        if precise is not None:
            return precise(reps)
        return all(stop.sharp([r[key] for r in rs]) for rs in reps.values())

    start = time.perf_counter()
    n = 0
    while n < stop.max_repetitions:
        for name, one in calls.items():
            reps[name].append(one())
        n += 1
        if n < stop.min_repetitions:
            continue
        if reached() or time.perf_counter() - start >= stop.budget_s:
            break
    return reps, {"n_repetitions": n, "precision_target": stop.precision,
                  "budget_s": stop.budget_s, "precision_reached": reached()}


def repeat(one: Callable[[], dict], stop: Stopping, key: str = "wall_s") -> tuple[list[dict], dict]:
    """Repetitions of ``one`` until ``stop`` says so (:func:`interleaved` of one call)."""
    reps, how = interleaved({"": one}, stop, key)
    return reps[""], how
