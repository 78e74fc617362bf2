"""Which reader stands for a format in a figure: the fastest one the run timed, never the first
listed, chosen as the answer chooses it (:func:`hepfmt.report.answer.facts.all_readers`), so
that a figure and the answer's text cannot name different readers.

A trade-off figure that drew each format's first-listed reader (TTree through RDataFrame, 1.58 s,
where the same table had its columnar reader at 0.166 s) said the opposite of the run's answer
(issue 39). So every timed reader is drawn, and the fastest of each format × variant (× cluster
size, × sample kind) is marked.
"""

from __future__ import annotations

import pandas as pd

from hepfmt.report.answer.facts import all_readers
from hepfmt.report.figures.order import sorted_rows


def mark_fastest(rows: pd.DataFrame, col: str, plan: dict) -> pd.DataFrame:
    """The rows timed in ``col`` at the fewest threads, in config order (positional index),
    with a boolean ``fastest``: per format × variant × cluster size (and sample kind, where
    tabulated apart), the row of smallest ``col`` (ties: each of them)."""
    marked = all_readers(rows, col)
    if marked.empty:
        return marked.assign(fastest=pd.Series(dtype=bool)).reset_index(drop=True)
    return sorted_rows(marked, plan).reset_index(drop=True)
