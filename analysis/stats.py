"""The statistics of repeated timings, one home for every stage that makes or reads them (the
measurements, the metadata study, the report): one summary, the median's interval, and what
the marks of one read say about its parts.

Medians, because a timing's noise is one-sided (a repetition can be slowed, never sped up, by
what else the machine does); quartiles and the standard deviation to show the spread. How sharp
the median itself is comes from a distribution-free interval (order statistics, binomial
coverage): no assumption of normal noise, which timings do not have.
"""

from __future__ import annotations

import math

import numpy as np

CONFIDENCE = 0.95


def summarize(times: list[float]) -> dict:
    """Median, quartiles, interquartile range, standard deviation, minimum and count, in s."""
    t = np.asarray(times, dtype=float)
    q25, q50, q75 = np.percentile(t, [25, 50, 75])
    return {"median_s": float(q50), "q25_s": float(q25), "q75_s": float(q75),
            "iqr_s": float(q75 - q25), "std_s": float(t.std(ddof=1)) if t.size > 1 else 0.0,
            "min_s": float(t.min()), "n": int(t.size)}


def _binomial_cdf(k: int, n: int) -> float:
    """P(B <= k) for B ~ Binomial(n, 1/2): how many repetitions fall below the true median."""
    return sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n


def median_interval(times: list[float], confidence: float = CONFIDENCE) -> dict:
    """The narrowest symmetric order-statistic interval [x_(j), x_(n+1-j)] that holds the true
    median with at least ``confidence`` whatever the distribution (its coverage is
    1 - 2 P(B <= j-1), B ~ Binomial(n, 1/2)). Below 6 repetitions no interval reaches 95%:
    then it is (min, max) with the coverage it has, which the caller must not call sharp."""
    t = np.sort(np.asarray(times, dtype=float))
    n = t.size
    j = 1  # 1-based rank of the lower bound
    while j + 1 <= n + 1 - (j + 1) and 1 - 2 * _binomial_cdf(j, n) >= confidence:
        j += 1
    return {"lo_s": float(t[j - 1]), "hi_s": float(t[n - j]),
            "coverage": 1 - 2 * _binomial_cdf(j - 1, n)}


def sharp(times: list[float], precision: float, confidence: float = CONFIDENCE) -> bool:
    """Whether the median is known to within ``precision`` (a fraction of it) at
    ``confidence``: both ends of its interval that close to it."""
    ci = median_interval(times, confidence)
    med = float(np.median(times))
    return ci["coverage"] >= confidence and \
        max(med - ci["lo_s"], ci["hi_s"] - med) <= precision * med


def parts(opened_s: float | None, chunks: list[tuple[int, float]]) -> dict:
    """What one read's marks say (times in s from the start of the read).

    ``open_s``: until the file and its metadata were open. Steady throughput: events per second
    from the end of the first chunk to the end of the last, so it holds no one-off cost.
    ``setup_s``: the end of the first chunk minus the open minus that chunk's events at the
    steady rate: the one-off cost between opening and reading at speed (time to the first event
    = open_s + setup_s). A read of one chunk cannot separate set-up from rate (see
    :func:`fit_fixed_cost` across file lengths for that).
    """
    out = {"open_s": opened_s, "setup_s": None, "events_per_s_steady": None,
           "chunks": len(chunks), "throughput_method": "not separable: one chunk"}
    if not chunks:
        out["throughput_method"] = "not separable: no chunk marks"
        return out
    if len(chunks) < 2:
        return out
    (n1, t1), (nk, tk) = chunks[0], chunks[-1]
    if nk <= n1 or tk <= t1:
        out["throughput_method"] = "not separable: no progress after the first chunk"
        return out
    rate = (nk - n1) / (tk - t1)
    out.update(setup_s=t1 - (opened_s or 0.0) - n1 / rate, events_per_s_steady=rate,
               throughput_method="chunks after the first"
               + ("" if opened_s is not None else " (open not marked: in setup_s)"))
    return out


def parts_of(reps: list[dict]) -> dict:
    """:func:`parts` of every repetition, as medians over them (None where not separable)."""
    each = [parts(r.get("opened_s"), [tuple(c) for c in r.get("chunks", [])]) for r in reps]
    out = dict(each[0]) if each else parts(None, [])
    for key in ("open_s", "setup_s", "events_per_s_steady"):
        values = [p[key] for p in each if p[key] is not None]
        out[key] = float(np.median(values)) if values and len(values) == len(each) else None
    return out


def fit_fixed_cost(points: list[tuple[float, float]]) -> dict:
    """Fixed cost and throughput from reads of files of different lengths, for readers whose
    files are one chunk: least squares of time = fixed + events / throughput over
    ``points`` = [(events, seconds)] at two or more lengths; ``residual_s`` is the RMS
    deviation, which says whether the straight line holds."""
    ev = np.asarray([p[0] for p in points], dtype=float)
    t = np.asarray([p[1] for p in points], dtype=float)
    if len(set(ev.tolist())) < 2:
        raise ValueError("a fixed cost needs reads at two or more file lengths")
    slope, fixed = np.polyfit(ev, t, 1)
    residual = t - (fixed + slope * ev)
    return {"fixed_s": float(fixed),
            "events_per_s": float(1 / slope) if slope > 0 else math.inf,
            "residual_s": float(np.sqrt(np.mean(residual ** 2))), "points": len(points)}
