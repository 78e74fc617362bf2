"""What a ROOT / Parquet speed ratio is made of: the whole read's ratio in wall, CPU (user +
system) and user time side by side, and where a wall ratio differs from the user-time one,
which side's non-decoding time makes the difference, with its seconds.

A wall-time ratio mixes decoding work (user time) with the kernel's work for the process (page
faults, an allocator's ``mmap``/``munmap``: system time) and with waiting; the last two move
with the machine and the allocator, not with the format (issue 40: pyarrow's first read spent
5.3 s of 8.2 s in the kernel). The words follow the intervals as everywhere in the answer: a
difference is named only where the wall and user-time intervals do not overlap.
"""

from __future__ import annotations

import math

import pandas as pd

from hepfmt.report import direction
from hepfmt.report.answer import wording as w

#: The whole read's ratio row: the quantity whose scans the CPU split is of.
WHOLE_READ = "rate"
#: The ratio columns a run with the CPU split has (:mod:`hepfmt.report.ratios`).
CPU_RATIO = "cpu_ratio"
_SIDE_WORDS = {"ttree": "ROOT", "parquet": "Parquet"}


def has_split(ratios: pd.DataFrame) -> bool:
    """Whether a ``ratios.csv`` holds the CPU split anywhere (a run from before it does not)."""
    return CPU_RATIO in ratios and bool(ratios[CPU_RATIO].notna().any())


def _whole_read(ratios: pd.DataFrame, x) -> pd.Series | None:
    r = ratios[(ratios.pair == x.pair) & (ratios.cluster_size == x.cluster_size)
               & (ratios.selection == x.selection) & (ratios.read == x.read)
               & (ratios.quantity == WHOLE_READ)]
    if r.empty or CPU_RATIO not in r or pd.isna(r[CPU_RATIO].iloc[0]):
        return None
    return r.iloc[0]


def _ratio(value: float, lo: float, hi: float, what: str) -> str:
    v, a, b = direction.speed(WHOLE_READ, value, lo, hi)
    return f"{w.number(v)}× {w.interval(a, b)} in {what}"


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    if any(math.isnan(v) for v in (*a, *b)):
        return True  # no interval: no difference is claimed
    return a[0] <= b[1] and b[0] <= a[1]


def _side(pairs: pd.DataFrame | None, x, side: str) -> pd.Series | None:
    if pairs is None or not {"sys_s", "wait_s"} <= set(pairs.columns):
        return None
    r = pairs[(pairs.pair == x.pair) & (pairs.cluster_size == x.cluster_size)
              & (pairs.selection == x.selection) & (pairs.read == x.read)
              & (pairs.side == side)]
    return None if r.empty or r[["sys_s", "wait_s"]].isna().any(axis=None) else r.iloc[0]


def _difference(row: pd.Series, pairs: pd.DataFrame | None, x) -> str:
    """Which side's time outside decoding makes the wall ratio differ from the user-time one:
    the side that loses by wall more than by user time (Parquet where the wall ratio is the
    higher), its larger part of system time and waiting, in seconds of its wall time. Said
    only where intervals of at least the claim coverage (:data:`.wording.CLAIM_COVERAGE`) are
    apart, as a direction is."""
    wall, user = (row.ratio_lo, row.ratio_hi), (row.user_lo, row.user_hi)
    if math.isnan(row.coverage) or row.coverage < w.CLAIM_COVERAGE:
        return f"no claim on the difference at {w.coverage(row.coverage)} coverage"
    if _overlap(wall, user):
        return "wall and user time give the same ratio within their intervals"
    side = "parquet" if row.ratio_mean > row.user_ratio else "ttree"
    s = _side(pairs, x, side)
    if s is None:
        return f"the difference is time outside user code on the {_SIDE_WORDS[side]} side"
    kernel = s.sys_s >= s.wait_s
    part = s.sys_s if kernel else s.wait_s
    return (f"the difference is {'kernel' if kernel else 'waiting'} time on the "
            f"{_SIDE_WORDS[side]} side ({w.number(part)} s of {w.number(s.median_s)} s)")


def words(ratios: pd.DataFrame, pairs: pd.DataFrame | None, x) -> str:
    """The CPU split of speed row ``x``'s read (its pairing, cluster size, selection and
    read), as a clause to append to its sentence; empty where the run has none."""
    row = _whole_read(ratios, x)
    if row is None:
        return ""
    return ("; whole read: " + ", ".join([
        _ratio(row.ratio_mean, row.ratio_lo, row.ratio_hi, "wall time"),
        _ratio(row.cpu_ratio, row.cpu_lo, row.cpu_hi, "CPU time (user + system)"),
        _ratio(row.user_ratio, row.user_lo, row.user_hi, "user time")])
        + f": {_difference(row, pairs, x)}")
