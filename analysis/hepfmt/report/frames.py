"""Column sets and small frame helpers shared by every table (labels, kinds, verified flags)."""

from __future__ import annotations

import pandas as pd

from hepfmt.report import plan_record

KEYS = ["format", "variant", "cluster_size"]


READ_KEYS = [*KEYS, "reader", "threads", "selection", "mode"]


#: The codec bound of a read's selection (events/s, a context per block and one reused), the
#: read's steady rate as a fraction of each (hepfmt.measure.bound), and its whole-read rate
#: (open and set-up included) as a fraction of the first: the one every read has, a file of
#: one cluster included.
BOUND_COLUMNS = ("bound_events_per_s_new", "bound_events_per_s_reused", "fraction_of_bound_new",
                 "fraction_of_bound_reused", "fraction_of_bound_whole")


def with_whole_fraction(df: pd.DataFrame) -> pd.DataFrame:
    """``fraction_of_bound_whole``: a read's events/s over the whole read (``events_per_s``)
    over its codec bound with a context per block."""
    return df.assign(fraction_of_bound_whole=pd.to_numeric(df.events_per_s)
                     / pd.to_numeric(df.bound_events_per_s_new))


#: The ``process`` of a sample imported from a real file (``hepfmt import``); others are
#: generated, "synthetic".
REAL = "real"


KINDS = ("real", "synthetic")


def mean_std(df: pd.DataFrame, keys: list[str], col: str) -> pd.DataFrame:
    g = df.groupby(keys, sort=True)[col]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["std"] = out["std"].fillna(0.0)
    return out.rename(columns={"mean": f"{col}_mean", "std": f"{col}_std",
                               "count": "n_samples"})


def all_verified(x: pd.Series) -> bool | None:
    """Of ``cold_verified`` cells taken together: empty if none was a cold read, else whether
    every cold read was verified (one unverified read spoils the figure)."""
    return None if x.isna().all() else bool(x.dropna().all())


def joined(x: pd.Series) -> str:
    """Text cells taken together: each different one once, in order (one method for all
    samples reads as itself; several are all named)."""
    return "; ".join(dict.fromkeys(str(v) for v in x.dropna() if str(v)))


def any_flag(x: pd.Series) -> bool | None:
    """Boolean cells taken together: empty if none applies, else whether any is true."""
    return None if x.isna().all() else bool(x.dropna().astype(bool).any())


def with_labels(plan: dict, df: pd.DataFrame) -> pd.DataFrame:
    """``label`` and ``adapter`` columns first after ``format``: what each format name is."""
    if df.empty or "format" not in df:
        return df
    labels = df.format.map(lambda f: plan_record.label(plan, f))
    adapters = df.format.map(lambda f: plan_record.adapter(plan, f))
    out = df.drop(columns=[c for c in ("label", "adapter") if c in df])
    i = list(out.columns).index("format") + 1
    out.insert(i, "label", labels)
    out.insert(i + 1, "adapter", adapters)
    return out


def kind_of(process: pd.Series) -> pd.Series:
    """``real`` for a sample imported from a file, ``synthetic`` for a generated one."""
    return process.map(lambda p: KINDS[0] if p == REAL else KINDS[1])


#: The throughput method of a read whose own chunks separate its set-up from its rate.
OWN_CHUNKS = "chunks after the first"
