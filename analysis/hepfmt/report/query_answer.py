"""Per ADL task, the answer to "does Parquet pay off for this kind of query?": the fastest way
to run it on the ROOT files (any engine on the TTree or RNTuple) against the fastest on the
Parquet files, as a ratio with an interval that means what it says.

The ratio is ROOT's events/s over Parquet's (Parquet's median wall time over ROOT's: both sides
read the same sample's events), so that, as in every ROOT / Parquet table of the study, above 1
ROOT is faster and below 1 Parquet pays off. Its interval comes from each side's timed
repetitions: each side's median has a distribution-free order-statistic interval
(:func:`hepfmt.stats.median_interval`), and the ratio of the two holds the ratio of the true
medians with at least the sum of their coverages minus one (:func:`hepfmt.stats.ratio_interval`,
as the read pairs' side intervals do). Five repetitions per side give 94% per median, so 88% for
the ratio: the cell says so rather than calling it 95%. Over samples, the mean of the per-sample
ratios with its Student-t interval (:func:`hepfmt.report.ratios.over_samples`, as the ratios
table).

The winners are picked by their medians, per sample, and named; the interval is that of the two
winners' ratio. It does not widen for the choosing: where a runner-up is within the interval of
the winner, the table of events/s beside it shows how close.
"""

from __future__ import annotations

import pandas as pd

from hepfmt import formats
from hepfmt.queries.tasks import TASKS
from hepfmt.report import plan_record
from hepfmt.report.frames import all_verified, joined
from hepfmt.report.ratios import over_samples
from hepfmt.stats import ratio_interval

#: The sides of the answer: ROOT's files (the adapters written as ``.root``) and Parquet's.
SIDES = ("root", "parquet")
#: How a per-sample interval was found, said in its row.
METHOD = "order statistics of each side's repetitions (Bonferroni)"
ANSWER_KEYS = ["task", "mode"]
ANSWER_COLUMNS = [*ANSWER_KEYS, "question", "root", "parquet", "ratio_mean", "ratio_std",
                  "n_samples", "ratio_lo", "ratio_hi", "coverage", "interval_method", "n_over",
                  "over", "root_events_per_s", "parquet_events_per_s", "cold_verified"]


def side_of(plan: dict, fmt: str) -> str | None:
    """Which side a queried format is on: ``root`` for a ROOT file (TTree or RNTuple: the
    registry's ``.root`` formats), ``parquet`` for Parquet (any writer or encoding), None for
    the other formats, which the answer leaves out."""
    adapter = plan_record.adapter(plan, fmt)
    if adapter == "parquet":
        return "parquet"
    if adapter in formats.REGISTRY and formats.extension(adapter) == "root":
        return "root"
    return None


def _name(plan: dict, row: pd.Series) -> str:
    return f"{row.engine} on {plan_record.label(plan, row.format)} {row.variant}"


def per_sample(plan: dict, rows: pd.DataFrame) -> pd.DataFrame:
    """Per sample × task × cache mode: each side's fastest engine and file (smallest median
    wall time), and the ratio of the two with its interval (:func:`ratio_interval`)."""
    d = rows.assign(side=rows.format.map(lambda f: side_of(plan, f)))
    d = d[d.side.notna()]
    out = []
    for (sample, task, mode), g in d.groupby(["sample", "task", "mode"], sort=True):
        best = {s: g[g.side == s].sort_values("median_s").iloc[0] for s in SIDES
                if (g.side == s).any()}
        if len(best) < len(SIDES):
            continue
        root, parquet = best["root"], best["parquet"]
        r = ratio_interval(parquet.wall_times, root.wall_times)
        out.append({"sample": sample, "task": task, "mode": mode,
                    "root": _name(plan, root), "parquet": _name(plan, parquet),
                    "ratio": r["ratio"], "ratio_lo": r["ratio_lo"], "ratio_hi": r["ratio_hi"],
                    "coverage": r["coverage"], "interval_method": METHOD,
                    "n_over": min(len(root.wall_times), len(parquet.wall_times)),
                    "root_events_per_s": root.events_per_s,
                    "parquet_events_per_s": parquet.events_per_s,
                    "cold_verified": all_verified(pd.Series([root.cold_verified,
                                                             parquet.cold_verified]))})
    return pd.DataFrame(out)


def answer_table(plan: dict, rows: pd.DataFrame) -> pd.DataFrame:
    """Per task × cache mode (:data:`ANSWER_COLUMNS`): the best-ROOT / best-Parquet ratio over
    samples, the winners of each side (every sample's, each once), their events/s (mean over
    samples) and the fewest repetitions a side's interval rests on."""
    s = per_sample(plan, rows) if not rows.empty else pd.DataFrame()
    if s.empty:
        return pd.DataFrame(columns=ANSWER_COLUMNS)
    out = [{"task": task, "mode": mode, "question": TASKS[int(task)].question,
            **over_samples(g), "root": joined(g.root), "parquet": joined(g.parquet),
            "n_over": int(g.n_over.min()), "over": "repetitions",
            "root_events_per_s": g.root_events_per_s.mean(),
            "parquet_events_per_s": g.parquet_events_per_s.mean(),
            "cold_verified": all_verified(g.cold_verified)}
           for (task, mode), g in s.groupby(ANSWER_KEYS, sort=True)]
    return pd.DataFrame(out, columns=ANSWER_COLUMNS)
