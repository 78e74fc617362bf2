"""A read's steady throughput when its own chunks do not say it: from the same read
of other lengths (:func:`steady_throughput`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from hepfmt.stats import (
    fit_fixed_cost,
)

#: What makes two reads the same read of different files: a one-chunk read is fitted with reads
#: that agree on these.
SAME_READ = ["format", "variant", "reader", "threads", "selection", "mode"]


#: A fit over file lengths whose RMS residual exceeds this share of the mean time is poor.
FIT_TOLERANCE = 0.05


def steady_throughput(reads: pd.DataFrame) -> pd.DataFrame:
    """Every read's steady throughput and set-up, each saying how it was found
    (``throughput_method``): a one-chunk read is never silently given one, and never one taken
    from another file (another file's set-up is another layout's, or another sample's, and
    says nothing certain of this read's).

    A read of several chunks has both from its own marks (:func:`hepfmt.stats.parts`). A read
    of one chunk cannot separate them: (a) if the same read at the same cluster size was timed
    on files of two or more lengths, from a straight line through (events, median time)
    (:func:`hepfmt.stats.fit_fixed_cost`, ``fit_residual_s``; ``fit_poor`` when the residual
    exceeds 5% of the mean time, or when two lengths leave the line untested); (b) else none:
    the record's "not separable: one chunk" stands. ``open_s`` stays the read's own.
    """
    out = reads.assign(fit_residual_s=np.nan, fit_poor=None)
    own = out.events_per_s_steady.notna()
    for i in out.index[~own]:
        for col, value in _one_chunk(out.loc[i], out).items():
            out.at[i, col] = value
    out["time_to_first_event_s"] = out.open_s.fillna(0.0) + out.setup_s
    rate = out.events_per_s_steady / out.n_events / 1e6
    return out.assign(
        mb_per_s_steady_compressed=out.mb_per_s_steady_compressed.fillna(
            out.selection_zip_bytes * rate),
        mb_per_s_steady_naive=out.mb_per_s_steady_naive.fillna(
            out.get("selection_naive_bytes", np.nan) * rate))


def resolved_reads(reads: pd.DataFrame) -> pd.DataFrame:
    """``reads`` with :func:`steady_throughput`'s columns (once)."""
    return reads if reads.empty or "fit_poor" in reads else steady_throughput(reads)


def _one_chunk(read: pd.Series, reads: pd.DataFrame) -> dict:
    """What (a) of :func:`steady_throughput` finds for one read: the columns to set (none
    without files of several lengths: the record's "not separable" stands)."""
    same = reads[reads[SAME_READ].eq(read[SAME_READ]).all(axis=1)]
    return _fit_lengths(read, same[same.cluster_size == read.cluster_size]) or {}


def _fit_lengths(read: pd.Series, peers: pd.DataFrame) -> dict | None:
    """(a): time = set-up + events / throughput through the same read of files of several
    lengths; None with fewer than two lengths."""
    lengths = peers.n_events.nunique()
    if lengths < 2:
        return None
    fit = fit_fixed_cost(list(zip(peers.n_events, peers.median_s, strict=True)))
    method = f"fit over {lengths} file lengths"
    if lengths == 2:
        method += " (two lengths cannot test the line)"
    out = {"fit_residual_s": fit["residual_s"],
           "fit_poor": bool(lengths == 2
                            or fit["residual_s"] > FIT_TOLERANCE * peers.median_s.mean())}
    if not math.isfinite(fit["events_per_s"]):
        return {**out, "throughput_method": method + ": time does not grow with the length, "
                "no throughput"}
    opened = read.open_s if pd.notna(read.open_s) else 0.0
    return {**out, "setup_s": fit["fixed_s"] - opened, "throughput_method": method,
            "events_per_s_steady": fit["events_per_s"]}
