"""When to stop repeating a timing, and the loop that repeats it (the statistics it stops on are
:mod:`hepfmt.stats`')."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import ClassVar

from hepfmt.defaults import default
from hepfmt.stats import sharp

#: The keys of a config section that say when a timing stops (``measure``, ``compare``).
TIMING_KEYS = ("precision", "budget_s", "min_repetitions", "repetitions")

#: The fewest timed repetitions of an analysis query in each cache mode (``hepfmt query``
#: makes exactly as many as it is given, ``measure.repetitions`` in the workflow): the
#: schema's ``measure.queries_min_repetitions``.
QUERY_MIN_REPETITIONS: int = default("measure.queries_min_repetitions")


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
