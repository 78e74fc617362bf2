"""The wall-clock limit of every process that reads a file it did not just write.

The memory cap (:mod:`hepfmt.measure.memcap`) bounds what a damaged file can make a library
allocate, not how long it can make it loop: a TTree whose basket byte counts were huge kept
``measure`` busy, and one whose entry count was huge kept ``import`` busy, until an outside
probe stopped them at 300 s. So such a process gets a limit scaled from the data the file holds
(its allocated bytes: a sparse tail holds none, :func:`memcap.file_bytes`), at a speed no healthy
read falls below on a machine several times slower than the one it was measured on, plus a
floor for what a process spends whatever its file (start-up, library loads).

How slow a healthy read is: the slowest reader over every branch (uproot's RNTuple reader,
3790 events/s of 1499 branches at 3.1 naive bytes a value, ``hepfmt.plan.cost`` and the
adapters' :class:`~hepfmt.formats.base.ReadCost`) reads 17.6 MB of uncompressed data a second;
a file's byte expands to at most :data:`memcap.EXPANSION` uncompressed ones, so at least
:data:`READ_BYTES_PER_S` of the file a second. A measurement child reads its file up to
:data:`PASSES` times; :data:`SLOWER` is how much slower a machine may be. (The planner's module
sits above this one, so ``tests/measure/test_timelimit.py`` checks the figure against it.)

A timing child also spends the time it was told to (its timing budget: ``budget_s`` per cache
mode of each read it times, 120 s in ``config/paper.yaml``): :func:`timing_budget` finds it in
the child's spec, whatever the spec's type, and the derived limit adds it.

``HEPFMT_TIME_LIMIT`` (seconds) or a command's ``--time-limit`` replaces the derived limit;
a caller's own time-out (``measure.timeout_s``) still applies when it is the shorter.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path

from hepfmt.errors import ConfigError, InputError
from hepfmt.measure import memcap

#: The limit (seconds) a user set, inherited by the child processes a command starts.
ENV = "HEPFMT_TIME_LIMIT"
#: What a reading process spends whatever its file: ROOT's start-up (1.5 s, 8 s several times
#: slower), a proof and a priming scan of a tiny file, with room to spare.
FLOOR_S = 120.0
#: Bytes of the file a second that the slowest healthy read over every branch reaches at least
#: (module docstring: 17.6 MB/s uncompressed over an expansion of 10).
READ_BYTES_PER_S = 1.7e6
#: The most passes a measurement child makes over its file at the defaults: a proof, a priming
#: scan, 10 repetitions in each of 2 cache modes, and two to spare.
PASSES = 24
#: How much slower than the measured machine a healthy read may run and still finish.
SLOWER = 5
#: Where the user sets it, for the one line of a process that reached it.
SETTERS = f"{ENV} or --time-limit sets it"


def parse(text: str, key: str = ENV) -> float:
    """Seconds from ``text``: a positive, finite number."""
    try:
        seconds = float(str(text).strip())
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ConfigError(key, f"{text!r} is not a number of seconds above 0")
    return seconds


def timing_budget(spec: object) -> float:
    """The seconds a child's spec tells it to spend timing: every ``budget_s`` in it (a read's,
    a batch's reads'), once per cache mode of its ``modes``."""
    if isinstance(spec, Mapping):
        own = spec.get("budget_s")
        modes = spec.get("modes")
        spent = float(own) * max(1, len(modes) if isinstance(modes, list) else 1) \
            if isinstance(own, int | float) and math.isfinite(own) and own > 0 else 0.0
        return spent + sum(timing_budget(v) for k, v in spec.items() if k != "budget_s")
    if isinstance(spec, list | tuple):
        return sum(timing_budget(v) for v in spec)
    return 0.0


def default_limit(path: str | Path, busy_s: float = 0.0) -> float:
    """The limit of a process reading ``path``: :data:`FLOOR_S` plus its data's passes at the
    slow speed (see the module docstring), plus ``busy_s`` it was told to spend
    (:func:`timing_budget`); none (infinite) for a path this process cannot see, a URL, whose
    size and speed it does not know."""
    if not os.path.exists(path):
        return math.inf
    return FLOOR_S + busy_s + memcap.file_bytes(path) * PASSES * SLOWER / READ_BYTES_PER_S


def limit_for(path: str | Path, busy_s: float = 0.0) -> float:
    """The limit the user set (``HEPFMT_TIME_LIMIT``, ``--time-limit``), else
    :func:`default_limit`."""
    configured = os.environ.get(ENV)
    if configured:
        return parse(configured)
    return default_limit(path, busy_s)


def effective(path: str | Path, timeout: float, busy_s: float = 0.0) -> tuple[float, bool]:
    """The seconds a child reading ``path`` may run (``busy_s``: its timing budget), and
    whether the time limit (not the caller's ``timeout``) is what sets them."""
    limit = limit_for(path, busy_s)
    return (limit, True) if limit <= timeout else (float(timeout), False)


def stopped(path: str | Path, what: str, elapsed: float, seconds: float,
            by_limit: bool = True) -> InputError:
    """The one line of a process that was stopped for running too long."""
    why = f"time limit {seconds:g} s; {SETTERS}" if by_limit else \
        f"time-out {seconds:g} s; --timeout or measure.timeout_s sets it"
    took = f"{elapsed:.1f}" if elapsed < 10 else f"{elapsed:.0f}"
    return InputError(path, f"{what} stopped after {took} s ({why})")
