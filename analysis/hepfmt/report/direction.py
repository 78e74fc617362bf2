"""One direction for every ROOT / Parquet speed ratio a user reads: above 1, ROOT is faster.

``ratios.csv`` keeps each quantity as it is measured (``throughput`` and ``rate`` are ROOT's
events/s over Parquet's, ``file_time`` is ROOT's time over Parquet's, ``size`` ROOT's bytes over
Parquet's), since a table of record should not invert what was measured. Figures, the answer and
the docs, however, must not make a reader flip a convention from panel to panel (issue 39: three
conventions in three figures), so every reader-facing view asks this module for the oriented
value. A time ratio is inverted with its interval (the bounds swap), which keeps the coverage:
``1/x`` is monotonic, so the interval of ``1/ratio`` is ``[1/hi, 1/lo]``.
"""

from __future__ import annotations

import math

#: The axis label and the sentence every figure and table of speed ratios carries.
SPEED_AXIS = "ROOT speed / Parquet speed (> 1: ROOT faster)"
SPEED_RULE = "above 1, ROOT is faster; below 1, Parquet is faster"
#: Sizes keep their natural direction (smaller is better), stated the same way everywhere.
SIZE_AXIS = "ROOT bytes / Parquet bytes (< 1: ROOT smaller)"

#: ``ratios.csv`` quantities already in the speed direction (ROOT events/s over Parquet's).
_SPEEDS = frozenset({"throughput", "rate"})
#: ... and those that are ROOT's time over Parquet's, inverted for the reader.
_TIMES = frozenset({"file_time"})


def is_speed(quantity: str) -> bool:
    """True for the quantities that say how fast (a speed or a time), not how big."""
    return quantity in _SPEEDS or quantity in _TIMES


def speed(quantity: str, ratio: float, lo: float = math.nan,
          hi: float = math.nan) -> tuple[float, float, float]:
    """``(ratio, lo, hi)`` of a ``ratios.csv`` row turned to "ROOT speed / Parquet speed".

    A size ratio is refused: its direction is bytes, not speed, and mixing them in one axis is
    the mistake this module exists to prevent."""
    if quantity in _SPEEDS:
        return float(ratio), float(lo), float(hi)
    if quantity in _TIMES:
        return _inverse(ratio), _inverse(hi), _inverse(lo)
    raise ValueError(f"{quantity!r} is not a speed or time ratio")


def _inverse(x: float) -> float:
    x = float(x)
    if math.isnan(x):
        return math.nan
    return math.inf if x == 0 else 1.0 / x
