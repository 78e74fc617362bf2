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
from collections.abc import Sequence

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
    = open_s + setup_s). Where the first chunk went faster than that (``setup_raw_s`` < 0: chunk
    times vary, e.g. an allocator reuses memory a previous read freed for the first chunks), the
    set-up is not resolved: 0, and ``throughput_method`` says so. A read of one chunk cannot
    separate set-up from rate (see :func:`fit_fixed_cost` across file lengths for that).
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
    raw = t1 - (opened_s or 0.0) - n1 / rate
    method = "chunks after the first" + ("" if opened_s is not None
                                         else " (open not marked: in setup_s)")
    if raw < 0:  # the first chunk went faster than the later ones (an allocator reusing the
        # memory a previous read freed, say): no set-up is resolved beside that variation
        method += "; set-up below resolution (first chunk faster than the steady rate)"
    out.update(setup_s=max(raw, 0.0), setup_raw_s=raw, events_per_s_steady=rate,
               throughput_method=method)
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


# ---- intervals of ratios (the report's ROOT / Parquet tables) -------------------------

#: Student's t at 97.5% for 1..30 degrees of freedom (no scipy in the environment).
T_975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_975(dof: int) -> float:
    """Student's t quantile at 97.5%: the table, beyond it the Cornish-Fisher expansion around
    the normal's (within 1e-4 there)."""
    if dof <= len(T_975):
        return T_975[dof - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * dof) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * dof**2)


def samples_interval(values: Sequence[float], log: bool = False) -> tuple[float, float, float]:
    """(mean, lo, hi): the Student-t 95% interval of the mean of two or more per-sample
    values. Across samples the spread is the samples' own (their content differs), not only
    timing noise, and a mean of a few numbers is what t is for. ``log``: for ratios, which are
    positive and multiplicative: the t interval of the mean of their logarithms, so the mean is
    the geometric one (A/B's is 1 over B/A's) and the interval never reaches below 0 (on the
    linear scale, two samples' t at one degree of freedom gave a ratio's interval a negative
    bound)."""
    v = np.asarray(values, dtype=float)
    if log:
        m, lo, hi = samples_interval(np.log(v))
        return math.exp(m), math.exp(lo), math.exp(hi)
    mean = float(v.mean())
    half = t_975(v.size - 1) * float(v.std(ddof=1)) / math.sqrt(v.size)
    return mean, mean - half, mean + half


def _median_interval(values: np.ndarray) -> dict | None:
    """Median and order-statistic interval of one side's per-repetition values; None if any
    repetition has none (a read whose throughput was not found)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0 or not np.isfinite(v).all():
        return None
    ci = median_interval(v.tolist())
    return {"median": float(np.median(v)), **ci}


def ratio_interval(numerator: Sequence[float], denominator: Sequence[float]) -> dict:
    """The ratio of two reads' medians with its interval, from each side's per-repetition
    values: [lo_num / hi_den, hi_num / lo_den] holds the ratio of the true medians whenever
    both sides' order-statistic intervals hold theirs, so with at least cov_num + cov_den - 1
    (Bonferroni: no assumption on how the two sides' noise is related)."""
    a, b = _median_interval(numerator), _median_interval(denominator)
    if a is None or b is None:
        return {"ratio": np.nan, "ratio_lo": np.nan, "ratio_hi": np.nan, "coverage": np.nan}
    return {"ratio": a["median"] / b["median"], "ratio_lo": a["lo_s"] / b["hi_s"],
            "ratio_hi": a["hi_s"] / b["lo_s"],
            "coverage": max(0.0, a["coverage"] + b["coverage"] - 1)}


def bound_fractions(steady_events_per_s: float | None, bound: dict | None) -> dict:
    """A read's steady rate as a fraction of its selection's codec bound
    (:mod:`hepfmt.measure.bound`), with a context per block and with one reused; None
    where either is missing."""
    bound = bound or {}

    def frac(key: str) -> float | None:
        b = bound.get(key)
        return steady_events_per_s / b if steady_events_per_s and b else None

    return {"bound_events_per_s_new": bound.get("events_per_s_new"),
            "bound_events_per_s_reused": bound.get("events_per_s_reused"),
            "fraction_of_bound_new": frac("events_per_s_new"),
            "fraction_of_bound_reused": frac("events_per_s_reused")}


def ns_per_value(steady_events_per_s: float | None, values: int | None,
                 n_events: int) -> float | None:
    """What each decoded value costs at a read's steady rate: nanoseconds per value, the
    selection holding ``values`` values over ``n_events`` events (None where either is
    missing). The unit a reader of any width is compared in."""
    if not steady_events_per_s or not values or not n_events:
        return None
    return 1e9 / (steady_events_per_s * values / n_events)
