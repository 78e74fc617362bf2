"""When to stop repeating a timing, and the loop that repeats it (the statistics it stops on are
:mod:`analysis.stats`')."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from analysis.stats import sharp

#: A pair job's defaults (``hepfmt pair``; ``compare`` in the config schema says the same): its
#: intervals are taken over rounds of fresh processes, and six rounds give 95%; two repeat
#: pairs per round; at most 24 repeat pairs in all.
PAIR_ROUNDS, PAIR_MIN_REPETITIONS, PAIR_MAX_REPETITIONS = 6, 12, 24

#: The fewest timed repetitions of an analysis query in each cache mode (``hepfmt query``
#: makes exactly as many as it is given, ``measure.repetitions`` in the workflow).
QUERY_MIN_REPETITIONS = 5


@dataclass(frozen=True)
class Stopping:
    """When to stop repeating a timing: once the median is sharp (:func:`sharp`) after at
    least ``min_repetitions``, or when ``budget_s`` of repetitions are spent, or at
    ``max_repetitions``."""

    precision: float = 0.05
    budget_s: float = 60.0
    min_repetitions: int = 3
    max_repetitions: int = 50

    def __post_init__(self) -> None:
        if not 3 <= self.min_repetitions <= self.max_repetitions:
            raise ValueError(f"need 3 <= min_repetitions ({self.min_repetitions}) <= "
                             f"max_repetitions ({self.max_repetitions})")
        if self.precision <= 0 or self.budget_s <= 0:
            raise ValueError("precision and budget_s must be positive")


def repeat(one: Callable[[], dict], stop: Stopping, key: str = "wall_s") -> tuple[list[dict], dict]:
    """Repetitions of ``one`` (each a dict with the time ``key``) until ``stop`` says so;
    (repetitions, how it stopped: count and whether the precision was reached)."""
    reps: list[dict] = []
    start = time.perf_counter()
    while len(reps) < stop.max_repetitions:
        reps.append(one())
        if len(reps) < stop.min_repetitions:
            continue
        if sharp([r[key] for r in reps], stop.precision) or \
                time.perf_counter() - start >= stop.budget_s:
            break
    return reps, {"n_repetitions": len(reps), "precision_target": stop.precision,
                  "budget_s": stop.budget_s,
                  "precision_reached": sharp([r[key] for r in reps], stop.precision)}
