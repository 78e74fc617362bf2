"""One summary of repeated timings, for every measurement hepfmt makes (reads, metadata decodes).

Medians, because a timing's noise is one-sided (a repetition can be slowed, never sped up, by
what else the machine does); quartiles and the standard deviation to show how sharp it is.
"""

from __future__ import annotations

import numpy as np


def summarize(times: list[float]) -> dict:
    """Median, quartiles, interquartile range, standard deviation, minimum and count, in s."""
    t = np.asarray(times, dtype=float)
    q25, q50, q75 = np.percentile(t, [25, 50, 75])
    return {"median_s": float(q50), "q25_s": float(q25), "q75_s": float(q75),
            "iqr_s": float(q75 - q25), "std_s": float(t.std(ddof=1)) if t.size > 1 else 0.0,
            "min_s": float(t.min()), "n": int(t.size)}
