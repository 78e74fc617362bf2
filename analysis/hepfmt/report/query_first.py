"""The time to the first histogram: what an analyst waits, in a fresh process, from asking for a
histogram of a file to holding it, opening the file and building its schema, events or graph
included (:func:`hepfmt.measure.workload.first_histogram` times it; imports and an engine's
one-time set-up are not in it).

One figure per format × engine, of the first task only, not one per task: only a process's
first run pays what a process pays once per file (uproot's or pyarrow's metadata, coffea's
NanoEvents form, RDataFrame's construction and its graph's JIT), and the runs of the other tasks
come after it in a process whose libraries, caches and allocator are already warm. Their first
runs would need a fresh process per task (eight times the processes) to mean the same. Beside
it, the warm median of the same task on the same engine and file, and the difference: the
one-off cost an analysis that opens the file once pays once.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from hepfmt.records import QueryRecord

FIRST_KEYS = ["format", "variant", "cluster_size", "engine"]
FIRST_COLUMNS = [*FIRST_KEYS, "task", "first_s_mean", "first_s_std", "n_samples",
                 "first_cpu_s_mean", "warm_median_s_mean", "one_off_s_mean"]


def first_rows(docs: Iterable[QueryRecord]) -> pd.DataFrame:
    """Per record × engine: its first run's wall and CPU time, and the warm median of the same
    task (NaN where warm was not measured); none for a record from before the first run was
    timed."""
    out = []
    for doc in docs:
        warm = {(q["engine"], q["task"]): q["median_s"] for q in doc.queries
                if q["mode"] == "warm"}
        for engine, f in doc.first_histogram.items():
            out.append({"sample": doc.sample, "format": doc.format, "variant": doc.variant,
                        "cluster_size": doc.cluster_size, "engine": engine, "task": f["task"],
                        "first_s": f["wall_s"], "first_cpu_s": f["cpu_s"],
                        "warm_median_s": warm.get((engine, f["task"]), float("nan"))})
    return pd.DataFrame(out)


def first_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per format × variant × cluster size × engine (:data:`FIRST_COLUMNS`): the first run's
    time, mean ± std over samples, its CPU time, the same task's warm median and the one-off
    cost (first minus warm median), means over samples."""
    if rows.empty:
        return pd.DataFrame(columns=FIRST_COLUMNS)
    rows = rows.assign(one_off_s=rows.first_s - rows.warm_median_s)
    t = rows.groupby(FIRST_KEYS, sort=True).agg(
        task=("task", "first"), first_s_mean=("first_s", "mean"),
        first_s_std=("first_s", "std"), n_samples=("sample", "nunique"),
        first_cpu_s_mean=("first_cpu_s", "mean"),
        warm_median_s_mean=("warm_median_s", "mean"),
        one_off_s_mean=("one_off_s", "mean")).reset_index()
    return t.fillna({"first_s_std": 0.0})[FIRST_COLUMNS]
