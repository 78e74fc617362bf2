"""The words of the answer, as code: a verdict follows its interval, never the writer's mood.

Issue 39 found one README claim in six contradicted by the tables it cited, because prose was
typed by hand. Here a sentence's verb is chosen from the numbers: "faster" only where the whole
interval lies above 1 (or "slower" below), "about the same" where it holds 1, and "an order of
magnitude" only from 10× on. Numbers are printed to three significant digits, the precision the
tables' intervals support at best.
"""

from __future__ import annotations

import math

#: From this ratio on, a difference is called an order of magnitude.
ORDER_OF_MAGNITUDE = 10.0
#: The least coverage an interval needs for a direction to be stated: a 75% interval (three
#: rounds) that excludes 1 says less than "faster" does to a reader.
CLAIM_COVERAGE = 0.95


def number(x: float | None, digits: int = 3) -> str:
    """``x`` to ``digits`` significant digits, thousands separated; "–" for a missing value."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if math.isinf(x):
        return "∞"
    if x == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(x)))
    decimals = max(digits - 1 - magnitude, 0)
    rounded = round(x, decimals)
    return f"{rounded:,.{decimals}f}"


def interval(lo: float, hi: float) -> str:
    return f"[{number(lo)}, {number(hi)}]"


def coverage(c: float) -> str:
    """A coverage as the percentage it really has (at least; rounded down to a whole per cent,
    so 96.9% reads "96%", never "97%")."""
    return "no interval" if c is None or math.isnan(c) else f"{math.floor(c * 100)}%"


def verdict(ratio: float, lo: float, hi: float, first: str = "ROOT",
            second: str = "Parquet", cover: float = 1.0) -> str:
    """Which side is faster, from a speed ratio (above 1: ``first`` is faster) and its interval
    of coverage ``cover``, with the number and interval after it. Without an interval, or with
    one below :data:`CLAIM_COVERAGE`, nothing is claimed but the number."""
    if any(math.isnan(v) for v in (ratio, lo, hi)):
        return f"{number(ratio)}× (no interval: no claim)"
    span = f"{number(ratio)}× {interval(lo, hi)}"
    if math.isnan(cover) or cover < CLAIM_COVERAGE:
        return f"no claim at {coverage(cover)} coverage: {span}"
    if not is_claim(lo, hi, cover):
        return f"about the same (the interval holds 1): {span}"
    size = ", an order of magnitude" if max(ratio, 1 / ratio) >= ORDER_OF_MAGNITUDE else ""
    return f"{first if lo > 1 else second} faster{size}: {span}"


def direction_word(ratio: float, lo: float, hi: float, first: str = "ROOT",
                   second: str = "Parquet", cover: float = 1.0) -> str:
    """The verdict alone, for a table cell."""
    return verdict(ratio, lo, hi, first, second, cover).split(":")[0]


def is_claim(lo: float, hi: float, cover: float = 1.0) -> bool:
    """True where an interval of enough coverage excludes 1: the only place a direction may be
    stated."""
    return not (math.isnan(lo) or math.isnan(hi)) and cover >= CLAIM_COVERAGE \
        and (lo > 1 or hi < 1)


def events(n: int | float) -> str:
    return f"{int(n):,}-event"
