"""ROOT / Parquet ratio and pair tables from paired measurements (and size records)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hepfmt import formats, paired
from hepfmt.report.frames import BOUND_COLUMNS, all_verified, joined, with_whole_fraction
from hepfmt.stats import (
    samples_interval,
)

#: ``read``: ``first`` (the first read in a fresh process, one per round) or ``repeats`` (the
#: reads after it, pooled); empty for size.
RATIO_KEYS = ["pair", "ttree", "parquet", "quantity", "selection", "read", "mode", "threads",
              "cluster_size"]


#: What a ratio row says beyond its value: the reader of each side and what kinds of reading
#: they are (``compares``: "event loop vs columnar", "columnar vs columnar"), how each hands
#: the data over (``modes``: "stream vs hand-over", ...) and the Arrow memory pool of the
#: Parquet side's reader (``parquet_pool``: empty for a reader without one), whether a cold
#: ratio's reads were all verified cold (empty for size and warm ratios: paired reads are
#: warm), and the CPU models the row was measured on.
RATIO_EXTRA = ["ttree_reader", "parquet_reader", "compares", "modes", "parquet_pool",
               "cold_verified", "cpu"]


#: A ratio row's value and how sure it is: ``ratio_mean`` is the value (one sample: the paired
#: median; several: the mean over samples), [``ratio_lo``, ``ratio_hi``] its interval of at
#: least ``coverage``, found as ``interval_method`` says, over ``n_over`` values of what ``over``
#: names (rounds of fresh processes, or pairs); ``n_pairs`` the kept pairs (several
#: samples: the fewest of any), ``discarded`` the pairs discarded for load and
#: ``worst_other_cpu_share`` the most of the CPUs other processes took during any scan;
#: ``file_events`` the file length a ``file_time`` ratio is stated at; how each side's
#: throughput was found. The quantities are :data:`hepfmt.paired.QUANTITIES`.
RATIO_COLUMNS = [*RATIO_KEYS, "ratio_mean", "ratio_std", "n_samples", "ratio_lo", "ratio_hi",
                 "coverage", "interval_method", "n_over", "over", "n_pairs", "discarded",
                 "worst_other_cpu_share", "file_events", "throughput_method_ttree",
                 "throughput_method_parquet", *RATIO_EXTRA]

#: A ``rate`` row's whole read in CPU time (user + system) and in user time, Parquet's over
#: ROOT's as ``rate`` is (:func:`hepfmt.paired.cpu_columns`), each over samples as the
#: wall-time ratio is (:func:`over_samples`, so of its coverage), and each side's system share
#: of its CPU time (over samples: the mean); empty in other rows and in a run from before the
#: CPU split.
CPU_COLUMNS = [f"{name}_{part}" for name in paired.CPU_RATIOS for part in ("ratio", "lo", "hi")]
SYS_SHARES = [f"sys_share_{s}" for s in paired.SIDES]


def _side(df: pd.DataFrame, side: dict) -> pd.DataFrame:
    """The size rows of one side of a pairing: its format and variant."""
    return df[(df.format == side["format"]) & (df.variant == side["variant"])]


def _size_rows(pair: dict, sizes: pd.DataFrame) -> list[dict]:
    """One pairing's per-sample size ratios at every cluster size."""
    m = _side(sizes, pair["ttree"]).merge(_side(sizes, pair["parquet"]),
                                         on=["sample", "cluster_size"], suffixes=("_r", "_p"))
    return [{"pair": pair["label"], "ttree": pair["ttree"]["variant"],
             "parquet": pair["parquet"]["variant"], "cluster_size": x.cluster_size,
             "sample": x["sample"], "quantity": "size", "selection": "", "read": "",
             "mode": "", "threads": 0, "ratio": x.file_bytes_r / x.file_bytes_p,
             "cpu": joined(pd.Series([x.cpu_r, x.cpu_p]))}
            for _, x in m.iterrows()]


def _first(g: pd.DataFrame, col: str) -> object:
    return g[col].dropna().iloc[0] if g[col].notna().any() else None


def over_samples(g: pd.DataFrame) -> dict:
    """A ratio over samples from its per-sample ``ratio``, ``ratio_lo``, ``ratio_hi``,
    ``coverage`` and ``interval_method``: with one sample, its own interval (a timing's, with
    the coverage it has); with several, their geometric mean and its Student-t interval over
    samples, of the logarithms (the samples' content differs, so the spread is theirs, not
    only timing noise; a ratio's interval stays above 0). Every table of ROOT / Parquet ratios
    goes over samples this one way."""
    ok = g[g.ratio.notna() & (g.ratio > 0)]
    k = len(ok)
    out = {"ratio_mean": samples_interval(ok.ratio, log=True)[0] if k else np.nan,
           "ratio_std": float(ok.ratio.std(ddof=1)) if k > 1 else 0.0 if k else np.nan,
           "n_samples": k, "ratio_lo": np.nan, "ratio_hi": np.nan, "coverage": np.nan,
           "interval_method": ""}
    if k == 1 and pd.notna(ok.ratio_lo.iloc[0]):
        out.update(ratio_lo=ok.ratio_lo.iloc[0], ratio_hi=ok.ratio_hi.iloc[0],
                   coverage=ok.coverage.iloc[0],
                   interval_method=f"{ok.interval_method.iloc[0]} (1 sample)")
    elif k > 1:
        _, lo, hi = samples_interval(ok.ratio, log=True)
        out.update(ratio_lo=lo, ratio_hi=hi, coverage=0.95,
                   interval_method=f"samples (t of logs, n={k})")
    return out


def _cpu_over_samples(g: pd.DataFrame) -> dict:
    """:data:`CPU_COLUMNS` and :data:`SYS_SHARES` of one ratio row from its samples' (NaN
    where a sample lacks them: a mean of some samples would be of another set)."""
    out: dict[str, float] = {}
    for name in paired.CPU_RATIOS:
        cols = [f"{name}_{part}" for part in ("ratio", "lo", "hi")]
        if not set(cols) <= set(g.columns) or g[cols[0]].isna().any():
            out.update(dict.fromkeys(cols, np.nan))
            continue
        one = over_samples(g[[*cols, "coverage", "interval_method"]].set_axis(
            ["ratio", "ratio_lo", "ratio_hi", "coverage", "interval_method"], axis=1))
        out.update(zip(cols, (one["ratio_mean"], one["ratio_lo"], one["ratio_hi"]),
                       strict=True))
    for c in SYS_SHARES:
        out[c] = float(g[c].mean()) if c in g and g[c].notna().all() else np.nan
    return out


def _over_samples(g: pd.DataFrame) -> dict:
    """One ratio row from its per-sample ratios (:func:`over_samples`) and what each side's
    readers, pairs and load were."""
    return {**over_samples(g), **_cpu_over_samples(g),
            **{c: _first(g, c) for c in ("ttree_reader", "parquet_reader", "file_events")},
            "n_pairs": g.n_pairs.min(), "n_over": g.n_over.min(), "over": joined(g.over),
            "discarded": g.discarded.sum(min_count=1),
            "worst_other_cpu_share": g.worst_other_cpu_share.max(),
            "throughput_method_ttree": joined(g.throughput_method_ttree),
            "throughput_method_parquet": joined(g.throughput_method_parquet),
            "cold_verified": all_verified(g.cold_verified), "cpu": joined(g.cpu)}


def compares_of(pair: dict) -> str:
    """What a pairing compares: its two readers' kinds ("event loop vs columnar"), from the
    plan record (empty for a record from before kinds)."""
    kinds = [pair[s].get("kind", "") for s in paired.SIDES]
    return " vs ".join(kinds) if all(kinds) else ""


def modes_of(pair: dict) -> str:
    """How each side hands the data over ("stream vs hand-over"), from the plan record (empty
    for a record from before modes)."""
    modes = [pair[s].get("mode", "") for s in paired.SIDES]
    return " vs ".join(modes) if all(modes) else ""


def pool_of(pair: dict) -> str:
    """The Arrow memory pool the Parquet side's reader asks for (empty: none named)."""
    return str(pair["parquet"].get("knobs", {}).get("memory_pool", ""))


def _reader_facts(pair: dict | None, g: pd.DataFrame) -> dict:
    """``compares``, ``modes`` and ``parquet_pool`` of one ratio row: the plan's, but for a
    side whose reader the run chose (``formats.FASTEST``) the facts of the reader it chose,
    which then also names the file it read (``pyarrow on parquet_tuned``)."""
    if pair is None:
        return dict.fromkeys(("compares", "modes", "parquet_pool"), "")
    pair, named = dict(pair), {}
    for s in paired.SIDES:
        reader, fmt = _first(g, f"{s}_reader"), _first(g, f"{s}_format")
        if pair[s].get("reader") != formats.FASTEST or not reader:
            continue
        r = formats.get(str(_first(g, f"{s}_adapter"))).readers.get(str(reader))
        if r is not None:
            pair[s] = {**pair[s], "kind": r.kind, "mode": r.mode, "knobs": dict(r.knobs)}
        named[f"{s}_reader"] = f"fastest: {reader} on {fmt}"
    return {"compares": compares_of(pair), "modes": modes_of(pair), "parquet_pool":
            pool_of(pair), **named}


def ratio_table(plan: dict, sizes: pd.DataFrame, pair_ratios: pd.DataFrame) -> pd.DataFrame:
    """ROOT / Parquet ratios (:data:`RATIO_COLUMNS`) per pairing × quantity × selection × read
    × threads × cluster size: sizes from the size records, reads from the paired measurements'
    per-sample rows (:func:`.load.load_pairs`) only."""
    size_rows = pd.DataFrame([r for pair in plan["pairs"] for r in _size_rows(pair, sizes)])
    df = pd.concat([d for d in (size_rows, pair_ratios) if not d.empty], ignore_index=True) \
        if not (size_rows.empty and pair_ratios.empty) else pd.DataFrame()
    if df.empty:
        return pd.DataFrame(columns=RATIO_COLUMNS)
    # the CPU split's columns only where a measurement has them: a run from before it keeps
    # the table it had (and the answer its gap)
    split = [c for c in (*CPU_COLUMNS, *SYS_SHARES) if c in df and df[c].notna().any()]
    columns = [*RATIO_COLUMNS, *split]
    chosen = [f"{s}_{k}" for s in paired.SIDES for k in ("adapter", "format")]
    df = df.reindex(columns=[*RATIO_COLUMNS, *split, "sample", "ratio", *chosen])
    by_label = {p["label"]: p for p in plan["pairs"]}
    out = [{**dict(zip(RATIO_KEYS, key, strict=True)), **_over_samples(g),
            **_reader_facts(by_label.get(key[0]), g)}
           for key, g in df.groupby(RATIO_KEYS, sort=True)]
    return pd.DataFrame(out, columns=columns).astype(
        {"file_events": "Int64", "n_pairs": "Int64", "n_over": "Int64", "discarded": "Int64"})


#: One row of the ``pairs`` table: a side's read of one paired measurement.
PAIR_SIDE_KEYS = ["pair", "cluster_size", "selection", "threads", "read", "side"]


#: Its figures: per sample the record's (time: the median over the pairs with its
#: order-statistic interval; the parts, CPU and faults: medians; memory: the read's own peak
#: above the process's resident set before its first read, the most over the reads); over
#: samples the mean of each (of each bound of the interval, with the smallest coverage and the
#: fewest pairs), memory and other processes' CPU share the most.
PAIR_COLUMNS = [*PAIR_SIDE_KEYS, "format", "variant", "reader", "median_s", "lo_s", "hi_s",
                "coverage", "n_pairs", "n_over", "over", "n_samples", "events_per_s", "open_s",
                "setup_s",
                "events_per_s_steady", "ns_per_value", *BOUND_COLUMNS, "cpu_s", "minflt",
                *paired.SPLIT[:-1], "majflt", "read_peak_mb",
                "other_cpu_share_max", "cpu"]


def pair_table(sides: pd.DataFrame) -> pd.DataFrame:
    """Each side of every paired measurement, first read and repeats apart (:data:`PAIR_COLUMNS`):
    the same scans its ratios are taken from, so a ratio can be read against both sides."""
    if sides.empty:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    mean = {c: (c, "mean") for c in ("median_s", "lo_s", "hi_s", "events_per_s", "open_s",
                                     "setup_s", "events_per_s_steady", "ns_per_value",
                                     *BOUND_COLUMNS, "cpu_s", "minflt", *paired.SPLIT)}
    d = with_whole_fraction(sides.assign(**{c: pd.to_numeric(sides[c]) if c in sides
                                            else np.nan for c in mean}))
    t = d.groupby(PAIR_SIDE_KEYS, sort=False).agg(
        format=("format", "first"), variant=("variant", "first"), reader=("reader", "first"),
        coverage=("coverage", "min"), n_pairs=("n", "min"), n_over=("n_over", "min"),
        over=("over", joined), n_samples=("sample", "nunique"),
        read_peak_mb=("read_peak_rss_bytes", lambda x: x.max() / 2**20),
        other_cpu_share_max=("other_cpu_share_max", "max"), cpu=("cpu", joined),
        **mean).reset_index()
    order = {"side": list(paired.SIDES), "read": list(paired.READS)}
    t = t.sort_values(PAIR_SIDE_KEYS, kind="stable",
                      key=lambda c: c.map(order[c.name].index) if c.name in order else c)
    return t[PAIR_COLUMNS].reset_index(drop=True)
