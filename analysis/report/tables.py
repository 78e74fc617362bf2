"""Tables in the shape of the 2018 study, from size records, read measurements and paired
ROOT / Parquet measurements; every document's table headings name the CPU models their numbers
were measured on.

* ``size``: normalised size (file bytes / naive bytes), mean ± std over samples, per format ×
  variant × cluster size;
* ``reads``: read time per format × variant × reader × selection × cache mode (per sample the
  median of the repetitions; across samples mean ± std), with MB/s and events/s, and the parts
  of a read: open, set-up (time to the first event) and steady throughput, each saying how it
  was found (:func:`steady_throughput`);
* ``ratios``: ROOT / Parquet ratios per pairing, cluster size, selection and threads: size
  (from the size records), and from paired measurements only (``hepfmt pair``: both files read
  in one measurement, so that the ratio is never taken between two jobs minutes apart) rate
  (whole read), steady throughput and whole-file time at ``compare.file_events`` events, each for
  the first read in a fresh process and for the repeated reads apart (``read``); per sample the
  median of per-pair ratios with its order-statistic interval and the coverage its pairs give,
  over samples the mean with a Student-t interval; the reader of each side, the pairs kept and
  discarded for load;
* ``pairs``: each side of every paired measurement, first read and repeats apart: its time with
  interval, events/s, open, set-up, steady events/s, CPU, minor page faults, the read's own peak
  memory;
* ``repetitions``: every timed repetition, for anyone who wants other statistics;
* ``groups``: compressed bytes per event of each branch group;
* ``formats``: one row per format × variant × reader at the largest measured cluster size:
  normalised size, warm and cold read time per selection and the reader's peak memory, the
  table a user picks a format from;
* ``samples``: every sample apart, real (imported) ones marked: normalised size per format ×
  variant × cluster size, and the branches each selection read in it.

A mean over samples of different kinds (real NanoAOD and synthetic samples) describes neither,
so a study with both tabulates each kind apart (a ``kind`` column first) unless its config asks
to mix them (``tabulate.mix_kinds``).

Formats are the config's names (``ttree_nooffsets``); ``adapter`` and ``label`` columns, from the
plan record, say what each one is. A cold figure whose eviction was not verified by mincore has
a false ``cold_verified`` column (and a † in the documents, see :mod:`.sections`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import paired, records
from analysis.atomic import write_json
from analysis.errors import InputError
from analysis.report import plan_record, sections
from analysis.report.documents import (
    cpus_of,
    merged_provenance,
    provenance_lines,
    write_csv,
    write_doc,
)
from analysis.report.grid import widest_read_cluster_size
from analysis.stats import (
    fit_fixed_cost,
    median_interval,
    ns_per_value,
    parts_of,
    samples_interval,
)

KEYS = ["format", "variant", "cluster_size"]
READ_KEYS = [*KEYS, "reader", "threads", "selection", "mode"]
#: ``read``: ``first`` (the first read in a fresh process, one per round) or ``repeats`` (the
#: reads after it, pooled); empty for size.
RATIO_KEYS = ["pair", "ttree", "parquet", "quantity", "selection", "read", "mode", "threads",
              "cluster_size"]
#: What a ratio row says beyond its value: the reader of each side and what kinds of reading
#: they are (``compares``: "event loop vs columnar", "columnar vs columnar"), whether a cold
#: ratio's reads were all verified cold (empty for size and warm ratios: paired reads are
#: warm), and the CPU models the row was measured on.
RATIO_EXTRA = ["ttree_reader", "parquet_reader", "compares", "cold_verified", "cpu"]
#: A ratio row's value and how sure it is: ``ratio_mean`` is the value (one sample: the paired
#: median; several: the mean over samples), [``ratio_lo``, ``ratio_hi``] its interval of at
#: least ``coverage``, found as ``interval_method`` says, over ``n_over`` values of what ``over``
#: names (rounds of fresh processes, or pairs); ``n_pairs`` the kept pairs (several
#: samples: the fewest of any), ``discarded`` the pairs discarded for load and
#: ``worst_other_cpu_share`` the most of the CPUs other processes took during any scan;
#: ``file_events`` the file length a ``file_time`` ratio is stated at; how each side's
#: throughput was found. The quantities are :data:`analysis.paired.QUANTITIES`.
RATIO_COLUMNS = [*RATIO_KEYS, "ratio_mean", "ratio_std", "n_samples", "ratio_lo", "ratio_hi",
                 "coverage", "interval_method", "n_over", "over", "n_pairs", "discarded",
                 "worst_other_cpu_share", "file_events", "throughput_method_ttree",
                 "throughput_method_parquet", *RATIO_EXTRA]
#: The throughput method of a read whose own chunks separate its set-up from its rate.
OWN_CHUNKS = "chunks after the first"

#: What makes two reads the same read of different files: a one-chunk read is fitted with reads
#: that agree on these.
SAME_READ = ["format", "variant", "reader", "threads", "selection", "mode"]
#: A fit over file lengths whose RMS residual exceeds this share of the mean time is poor.
FIT_TOLERANCE = 0.05
#: A read's parts and interval that records from before them lack (empty then).
PART_COLUMNS = ["open_s", "setup_s", "events_per_s_steady", "mb_per_s_steady_compressed",
                "mb_per_s_steady_naive", "median_lo_s", "median_hi_s", "median_coverage",
                "selection_zip_bytes"]

#: The codec bound of a read's selection (events/s, a context per block and one reused), the
#: read's steady rate as a fraction of each (analysis.measure.bound), and its whole-read rate
#: (open and set-up included) as a fraction of the first: the one every read has, a file of
#: one cluster included.
BOUND_COLUMNS = ("bound_events_per_s_new", "bound_events_per_s_reused", "fraction_of_bound_new",
                 "fraction_of_bound_reused", "fraction_of_bound_whole")


def with_whole_fraction(df: pd.DataFrame) -> pd.DataFrame:
    """``fraction_of_bound_whole``: a read's events/s over the whole read (``events_per_s``)
    over its codec bound with a context per block."""
    return df.assign(fraction_of_bound_whole=pd.to_numeric(df.events_per_s)
                     / pd.to_numeric(df.bound_events_per_s_new))

_BASE = ("sample", "process", *KEYS, "n_events", "provenance")
#: The ``process`` of a sample imported from a real file (``hepfmt import``); others are
#: generated, "synthetic".
REAL = "real"
KINDS = ("real", "synthetic")


def load_sizes(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, list[dict]]:
    """One row per written file: its size figures and compressed bytes per branch group."""
    rows, provs = [], []
    for p in paths:
        doc = records.load(p, (*_BASE, "file_bytes", "naive_bytes", "normalized_size"))
        groups = {f"zip_bytes:{g}": v for g, v in doc.get("zip_bytes_by_group", {}).items()}
        # what is in no branch's data: headers, footers, keys, basket/page headers, offsets
        # the adapter does not attribute to a branch
        # (all of it is "unattributed" when the adapter cannot split bytes by branch)
        rest = "metadata" if groups else "unattributed"
        groups[f"zip_bytes:{rest}"] = doc["file_bytes"] - sum(groups.values())
        rows.append({**{k: doc[k] for k in _BASE if k != "provenance"},
                     "adapter": doc.get("adapter", doc["format"]),
                     "cpu": cpus_of([doc["provenance"]])[0],
                     "file_bytes": doc["file_bytes"], "naive_bytes": doc["naive_bytes"],
                     "normalized_size": doc["normalized_size"],
                     "normalized_size_no_triggers": doc.get("normalized_size_no_triggers"),
                     **groups})
        provs.append(doc["provenance"])
    return pd.DataFrame(rows), provs


def _read_defaults(reps: list[dict]) -> dict:
    """What a read record from before parts and intervals lacks, from its repetitions: the
    median's interval and the parts (not separable, without chunk marks), so that old and new
    records tabulate alike."""
    ci = median_interval([r["wall_s"] for r in reps]) if reps else {}
    return {**{c: None for c in PART_COLUMNS}, **parts_of(reps),
            "median_lo_s": ci.get("lo_s"), "median_hi_s": ci.get("hi_s"),
            "median_coverage": ci.get("coverage"), "n_repetitions": len(reps)}


def load_reads(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """One row per (file, reader, selection, mode), and one per timed repetition."""
    reads, reps, provs = [], [], []
    for p in paths:
        doc = records.load(p, (*_BASE, "reads"))
        base = {k: doc[k] for k in _BASE if k != "provenance"}
        base["adapter"] = doc.get("adapter", doc["format"])
        for r in doc["reads"]:
            reads.append({**base, **_read_defaults(r["repetitions"]),
                          **{k: v for k, v in r.items() if k != "repetitions"}})
            for i, rep in enumerate(r["repetitions"]):
                reps.append({**base, **{k: r[k] for k in ("reader", "threads", "selection",
                                                          "mode")},
                             "repetition": i, **rep})
        provs.append(doc["provenance"])
    reads = pd.DataFrame(reads)
    for c in PART_COLUMNS if not reads.empty else ():
        reads[c] = pd.to_numeric(reads[c])  # None -> NaN, so that means skip it
    return reads, pd.DataFrame(reps), provs


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


def size_table(sizes: pd.DataFrame) -> pd.DataFrame:
    t = mean_std(sizes, KEYS, "normalized_size")
    if sizes["normalized_size_no_triggers"].notna().any():
        nt = mean_std(sizes, KEYS, "normalized_size_no_triggers").drop(columns="n_samples")
        t = t.merge(nt, on=KEYS)
    return t


def group_table(sizes: pd.DataFrame) -> pd.DataFrame:
    """Where the bytes go: mean compressed bytes per event of each branch group."""
    cols = [c for c in sizes.columns if c.startswith("zip_bytes:")]
    per_event = sizes[cols].div(sizes["n_events"], axis=0)
    per_event.columns = [c.split(":", 1)[1] for c in cols]
    d = pd.concat([sizes[KEYS], per_event], axis=1)
    return d.groupby(KEYS, sort=True).mean().reset_index()


def joined(x: pd.Series) -> str:
    """Text cells taken together: each different one once, in order (one method for all
    samples reads as itself; several are all named)."""
    return "; ".join(dict.fromkeys(str(v) for v in x.dropna() if str(v)))


def any_flag(x: pd.Series) -> bool | None:
    """Boolean cells taken together: empty if none applies, else whether any is true."""
    return None if x.isna().all() else bool(x.dropna().astype(bool).any())


# ---- steady throughput of every read, one-chunk reads included ---------------------------------


def steady_throughput(reads: pd.DataFrame) -> pd.DataFrame:
    """Every read's steady throughput and set-up, each saying how it was found
    (``throughput_method``): a one-chunk read is never silently given one, and never one taken
    from another file (another file's set-up is another layout's, or another sample's, and
    says nothing certain of this read's).

    A read of several chunks has both from its own marks (:func:`analysis.stats.parts`). A read
    of one chunk cannot separate them: (a) if the same read at the same cluster size was timed
    on files of two or more lengths, from a straight line through (events, median time)
    (:func:`analysis.stats.fit_fixed_cost`, ``fit_residual_s``; ``fit_poor`` when the residual
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


def _resolved(reads: pd.DataFrame) -> pd.DataFrame:
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


# ---- tables ------------------------------------------------------------------------------------


def read_table(reads: pd.DataFrame) -> pd.DataFrame:
    """Per format × variant × cluster size × reader × threads × selection × mode: the time
    (mean ± std over samples of per-sample medians) and the parts of the read. Per sample the
    median's order-statistic interval [``median_lo_s``, ``median_hi_s``]; over samples the mean
    of each bound, with the smallest ``median_coverage`` (below 95% when a sample had fewer
    than 6 repetitions)."""
    reads = _resolved(reads)
    if "rss_over_baseline_bytes" not in reads:  # records from before the read's own peak
        reads = reads.assign(rss_over_baseline_bytes=reads.peak_rss_bytes
                             - reads.baseline_rss_bytes)
    if "rss_method" not in reads:
        reads = reads.assign(rss_method="ru_maxrss (lower bound)")
    for col in ("minflt_median", "first_read_s", "selection_values",
                *BOUND_COLUMNS):  # NaN: none (or a record from before)
        reads = reads.assign(**{col: pd.to_numeric(reads[col]) if col in reads else np.nan})
    reads = with_whole_fraction(reads).assign(ns_per_value=[
        ns_per_value(r, v, n) if pd.notna(r) and pd.notna(v) else np.nan
        for r, v, n in zip(reads.events_per_s_steady, reads.selection_values, reads.n_events,
                           strict=True)])
    t = mean_std(reads, READ_KEYS, "median_s")
    extra = reads.groupby(READ_KEYS).agg(
        iqr_s_mean=("iqr_s", "mean"), repetitions=("n", "min"),
        mb_per_s_compressed=("mb_per_s_compressed", "mean"),
        mb_per_s_naive=("mb_per_s_naive", "mean"), events_per_s=("events_per_s", "mean"),
        peak_rss_mb=("peak_rss_bytes", lambda x: x.max() / 2**20),
        rss_over_baseline_mb=("rss_over_baseline_bytes", lambda x: x.max() / 2**20),
        # a lower bound anywhere makes the figure one: say so in the table
        rss_exact=("rss_method", lambda x: bool((x == "vmhwm-reset").all())),
        cpu_s_mean=("cpu_median_s", "mean"),
        minflt=("minflt_median", "mean"),  # minor page faults of a read: its fresh memory
        # the process's first read (the smallest selection's, warm; reads.py ``_prime``)
        first_read_s=("first_read_s", "mean"),
        disk_read_bytes=("disk_read_bytes_median", "mean"),
        cold_verified=("cold_verified", all_verified),
        **{c: (c, "mean") for c in ("open_s", "setup_s", "time_to_first_event_s",
                                    "events_per_s_steady", "mb_per_s_steady_compressed",
                                    "mb_per_s_steady_naive", "median_lo_s", "median_hi_s",
                                    "ns_per_value", *BOUND_COLUMNS)},
        median_coverage=("median_coverage", "min"),
        throughput_method=("throughput_method", joined),
        fit_residual_s=("fit_residual_s", "max"), fit_poor=("fit_poor", any_flag),
    ).reset_index()
    return t.merge(extra, on=READ_KEYS)


# ---- ROOT / Parquet: sizes from the size records, reads from paired measurements only --------

#: What a paired measurement (``hepfmt pair``) must hold to be tabulated.
_PAIR_BASE = ("pair", "sample", "process", "cluster_size", "threads", "n_events", "sides",
              "selections", "provenance")
#: The cache mode of every paired read: the page cache is warm (the digest check read the files
#: just before), only the process is fresh or not (``read``).
PAIRED_MODE = "warm"


def _throughput_method(side: dict) -> str:
    """How one side's steady rate was found: from its own chunks, or not at all (a pair's
    throughput is never another file's)."""
    if side["events_per_s_steady"] is not None:
        return OWN_CHUNKS
    return "not separable: one chunk" if side["chunks"] <= 1 else \
        "not separable in every scan"


def _pair_rows(doc: dict, file_events: int) -> tuple[list[dict], list[dict]]:
    """One paired measurement's per-sample ratio rows (:func:`analysis.paired.ratio_rows`,
    whole-file time at the study's ``file_events``) and side rows
    (:func:`analysis.paired.side_rows`), each naming the CPU it was measured on."""
    cpu = cpus_of([doc["provenance"]])[0]
    sides = [{**r, "cpu": cpu} for r in paired.side_rows(doc)]
    method = {(r["selection"], r["read"], r["side"]): _throughput_method(r) for r in sides}
    variants = {s: doc["sides"][s]["variant"] for s in paired.SIDES}
    ratios = [{**r, **variants, "mode": PAIRED_MODE, "cpu": cpu,
               **{f"throughput_method_{s}": method[r["selection"], r["read"], s]
                  for s in paired.SIDES}}
              for r in paired.ratio_rows(doc, file_events)]
    return ratios, sides


def _once(seen: dict[tuple, str | Path], key: tuple, path: str | Path) -> None:
    """Refuse a pairing × sample × cluster size × threads × selection measured twice: two
    measurements of one sample would be averaged as two samples."""
    if key in seen:
        raise InputError(path, "pair {!r}, sample {!r}, cluster size {}, {} threads, selection "
                               "{!r} is also measured in {}".format(*key, seen[key]))
    seen[key] = path


def load_pairs(paths: Iterable[str | Path],
               file_events: int) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """Per-sample ratio rows and side rows of every paired measurement (:func:`_pair_rows`),
    and their provenances."""
    ratios, sides, provs = [], [], []
    seen: dict[tuple, str | Path] = {}
    for p in paths:
        doc = records.load(p, _PAIR_BASE, "paired measurement (from 'hepfmt pair')")
        try:
            r, s = _pair_rows(doc, file_events)
            for sel in doc["selections"]:
                _once(seen, (doc["pair"], doc["sample"], doc["cluster_size"], doc["threads"],
                             sel["selection"]), p)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InputError(p, f"not a complete paired measurement ({exc!r})") from exc
        ratios += r
        sides += s
        provs.append(doc["provenance"])
    return pd.DataFrame(ratios), pd.DataFrame(sides), provs


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


def _over_samples(g: pd.DataFrame) -> dict:
    """One ratio row from its per-sample ratios: with one sample, its paired median and the
    interval over its pairs; with several, their mean and its Student-t interval over samples
    (the samples' content differs, so the spread is theirs, not only timing noise)."""
    ok = g[g.ratio.notna()]
    k = len(ok)
    out = {"ratio_mean": ok.ratio.mean() if k else np.nan,
           "ratio_std": float(ok.ratio.std(ddof=1)) if k > 1 else 0.0 if k else np.nan,
           "n_samples": k, "ratio_lo": np.nan, "ratio_hi": np.nan, "coverage": np.nan,
           "interval_method": ""}
    if k == 1 and pd.notna(ok.ratio_lo.iloc[0]):
        out.update(ratio_lo=ok.ratio_lo.iloc[0], ratio_hi=ok.ratio_hi.iloc[0],
                   coverage=ok.coverage.iloc[0],
                   interval_method=f"{ok.interval_method.iloc[0]} (1 sample)")
    elif k > 1:
        _, lo, hi = samples_interval(ok.ratio)
        out.update(ratio_lo=lo, ratio_hi=hi, coverage=0.95,
                   interval_method=f"samples (t, n={k})")
    return {**out, **{c: _first(g, c) for c in ("ttree_reader", "parquet_reader",
                                                "file_events")},
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


def ratio_table(plan: dict, sizes: pd.DataFrame, pair_ratios: pd.DataFrame) -> pd.DataFrame:
    """ROOT / Parquet ratios (:data:`RATIO_COLUMNS`) per pairing × quantity × selection × read
    × threads × cluster size: sizes from the size records, reads from the paired measurements'
    per-sample rows (:func:`load_pairs`) only."""
    size_rows = pd.DataFrame([r for pair in plan["pairs"] for r in _size_rows(pair, sizes)])
    df = pd.concat([d for d in (size_rows, pair_ratios) if not d.empty], ignore_index=True) \
        if not (size_rows.empty and pair_ratios.empty) else pd.DataFrame()
    if df.empty:
        return pd.DataFrame(columns=RATIO_COLUMNS)
    df = df.reindex(columns=[*RATIO_COLUMNS, "sample", "ratio"])
    compares = {p["label"]: compares_of(p) for p in plan["pairs"]}
    out = [{**dict(zip(RATIO_KEYS, key, strict=True)), **_over_samples(g),
            "compares": compares.get(key[0], "")}
           for key, g in df.groupby(RATIO_KEYS, sort=True)]
    return pd.DataFrame(out, columns=RATIO_COLUMNS).astype(
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
                "read_peak_mb",
                "other_cpu_share_max", "cpu"]


def pair_table(sides: pd.DataFrame) -> pd.DataFrame:
    """Each side of every paired measurement, first read and repeats apart (:data:`PAIR_COLUMNS`):
    the same scans its ratios are taken from, so a ratio can be read against both sides."""
    if sides.empty:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    mean = {c: (c, "mean") for c in ("median_s", "lo_s", "hi_s", "events_per_s", "open_s",
                                     "setup_s", "events_per_s_steady", "ns_per_value",
                                     *BOUND_COLUMNS, "cpu_s", "minflt")}
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


#: The parts of a warm read that ``formats`` shows per selection, as ``<selection>_warm_<part>``:
#: what a short file and a long file each cost (a name not ending in ``_warm_s``, which is a
#: read time).
FORMAT_PARTS = ("time_to_first_event_s", "events_per_s_steady", "ns_per_value", "first_read_s",
                "fraction_of_bound_new", "fraction_of_bound_reused", "fraction_of_bound_whole")


def _warm_parts(rows: pd.DataFrame) -> pd.DataFrame:
    """Per format × variant × reader × threads: each selection's warm time to the first event
    and steady throughput."""
    index = ["format", "variant", "reader", "threads"]
    warm = rows[rows["mode"] == "warm"]
    if warm.empty:
        return pd.DataFrame(index=pd.MultiIndex.from_frame(rows[index].drop_duplicates()))
    wide = warm.pivot_table(index=index, columns="selection", values=list(FORMAT_PARTS),
                            aggfunc="first", dropna=False)[list(FORMAT_PARTS)]
    wide.columns = [f"{sel}_warm_{part}" for part, sel in wide.columns]
    return wide


def format_table(st: pd.DataFrame, rt: pd.DataFrame) -> pd.DataFrame:
    """One row per format × variant × reader × threads at the cluster size where the most
    formats and readers were read (:func:`widest_read_cluster_size`; the largest written one if
    none were): normalised size, the read time of each selection and cache mode, each
    selection's warm time to the first event and steady throughput, and the reader's peak
    memory over its post-import baseline.
    """
    if rt.empty:
        largest = st.cluster_size.max()
        return st[st.cluster_size == largest].reset_index(drop=True)
    largest = widest_read_cluster_size(rt)
    rows = rt[rt.cluster_size == largest]
    wide = rows.pivot_table(index=["format", "variant", "reader", "threads"],
                            columns=["selection", "mode"], values="median_s_mean",
                            aggfunc="first")
    wide.columns = [f"{sel}_{mode}_s" for sel, mode in wide.columns]
    rss = rows.groupby(["format", "variant", "reader", "threads"]).agg(
        rss_over_baseline_mb=("rss_over_baseline_mb", "max"), peak_rss_mb=("peak_rss_mb", "max"),
        rss_exact=("rss_exact", "all"), cold_verified=("cold_verified", all_verified))
    sizes = st[st.cluster_size == largest][["format", "variant", "cluster_size",
                                            "normalized_size_mean", "normalized_size_std"]]
    return sizes.merge(wide.join(_warm_parts(rows)).join(rss).reset_index(),
                       on=["format", "variant"], how="left")


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


def sample_table(sizes: pd.DataFrame) -> pd.DataFrame:
    """One row per sample × format × variant × cluster size: nothing averaged."""
    cols = ["sample", "kind", "process", *KEYS, "n_events", "file_bytes", "naive_bytes",
            "normalized_size", "normalized_size_no_triggers"]
    return (sizes.assign(kind=kind_of(sizes.process))[cols]
            .sort_values([*KEYS, "sample"]).reset_index(drop=True))


#: The tables :func:`summaries` makes, in the order they are written.
SUMMARIES = ("size", "groups", "reads", "ratios", "pairs", "formats")


def _summaries(plan: dict, sizes: pd.DataFrame, reads: pd.DataFrame, pair_ratios: pd.DataFrame,
               pair_sides: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The tables that average over samples."""
    st = size_table(sizes)
    reads = _resolved(reads)  # once, within the samples averaged together
    rt = read_table(reads) if not reads.empty else pd.DataFrame()
    return {"size": st, "groups": group_table(sizes), "reads": rt,
            "ratios": ratio_table(plan, sizes, pair_ratios), "pairs": pair_table(pair_sides),
            "formats": format_table(st, rt)}


def _of_kind(df: pd.DataFrame, kind: str) -> pd.DataFrame:
    return df[kind_of(df.process) == kind] if not df.empty else df


def summaries(plan: dict, sizes: pd.DataFrame, reads: pd.DataFrame,
              pair_ratios: pd.DataFrame | None = None,
              pair_sides: pd.DataFrame | None = None) -> dict[str, pd.DataFrame]:
    """:func:`_summaries` over every sample, or, for a study of real and synthetic samples that
    does not ask to mix them, over each kind apart, a ``kind`` column first. ``pair_ratios``
    and ``pair_sides``: :func:`load_pairs`' rows (none: no read ratios)."""
    rows = [reads, *(d if d is not None else pd.DataFrame() for d in (pair_ratios, pair_sides))]
    kinds = kind_of(sizes.process)
    if plan_record.mix_kinds(plan) or kinds.nunique() < 2:
        return _summaries(plan, sizes, *rows)
    parts: dict[str, list[pd.DataFrame]] = {}
    for kind in KINDS:
        mine = _summaries(plan, sizes[kinds == kind], *(_of_kind(d, kind) for d in rows))
        for name, df in mine.items():
            if not df.empty:
                parts.setdefault(name, []).append(df.assign(kind=kind))
    return {name: (pd.concat(parts[name], ignore_index=True)[
                ["kind", *(c for c in parts[name][0].columns if c != "kind")]]
                   if name in parts else pd.DataFrame())
            for name in SUMMARIES}


def tabulate(plan: dict, size_files: Iterable[str | Path], read_files: Iterable[str | Path],
             out_dir: str | Path, provenance_path: str | Path | None = None,
             pair_files: Iterable[str | Path] = ()) -> dict:
    """Every table of the study from its size records, read measurements and paired
    measurements (the ratios' reads), as CSV and (six of them) as Markdown + HTML documents,
    each heading naming the CPU the numbers were measured on; returns the provenance it
    wrote."""
    out = Path(out_dir)
    sizes, size_provs = load_sizes(size_files)
    if sizes.empty:
        raise InputError(out, "no size records to tabulate")
    reads, reps, read_provs = load_reads(read_files)
    pair_ratios, pair_sides, pair_provs = load_pairs(pair_files, plan_record.file_events(plan))
    prov = merged_provenance(plan["config"], out, size_provs + read_provs + pair_provs,
                             len(sizes), reads)
    prov["n_pair_measurements"] = len(pair_provs)
    lines = provenance_lines(prov)

    t = summaries(plan, sizes, reads, pair_ratios, pair_sides)
    samples = sample_table(sizes)
    for name, df in (*t.items(), ("repetitions", reps), ("samples", samples)):
        write_csv(with_labels(plan, df), out / f"{name}.csv", lines)

    size_cpus = cpus_of(size_provs)
    read_cpus = cpus_of(read_provs) or size_cpus
    docs = (
        ("size", "Normalized size (file bytes / naive bytes)",
         sections.per_kind(sections.size_sections, t["size"], t["groups"]), size_cpus),
        ("reads", "Read time (per sample: median of repetitions; mean ± std over samples)",
         sections.per_kind(sections.read_sections, t["reads"]), read_cpus),
        ("ratios", "ROOT / Parquet ratios (reads: paired measurements, both files in one; per "
                   "sample the median of per-pair ratios, over samples the mean)",
         sections.per_kind(sections.ratio_sections, t["ratios"]),
         cpus_of(size_provs + pair_provs)),
        ("pairs", "Paired reads: each side of every ROOT / Parquet pairing, first read and "
                  "repeats apart",
         sections.per_kind(sections.pair_sections, with_labels(plan, t["pairs"])),
         cpus_of(pair_provs)),
        ("formats", "Formats side by side",
         sections.per_kind(sections.format_sections, with_labels(plan, t["formats"])),
         read_cpus),
        ("samples", "Samples one by one (normalized size: file bytes / naive bytes)",
         sections.sample_sections(with_labels(plan, samples), plan_record.resolved(plan)),
         size_cpus))
    for name, title, body, cpus in docs:
        write_doc(title, body, out / f"{name}.md", lines, cpus)
    write_json(provenance_path or out / "provenance.json", prov)
    return prov


# ---- storage profiles (``hepfmt storage`` records; the ``storage`` target) --------------------

#: One storage read: a file, where it was read from, how, and which branches.
STORAGE_KEYS = ["sample", *KEYS, "profile", "reader", "selection"]
STORAGE_COLUMNS = [
    "adapter", "status", "mode", "cold_verified", "median_s", "page_cache_s", "storage_s",
    "predicted_s", "predicted_bound", "counted_by", "requests", "bytes", "mb_per_s_compressed",
    "events_per_s", "kernel_syscr", "kernel_rchar", "kernel_read_bytes", "device_requests",
    "device_bytes", "reader_requests", "reader_bytes", "server_requests", "server_ranges",
    "server_bytes", "server_size_p10", "server_size_p50", "server_size_p90", "n",
    "reason"]


def load_storage(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, list[dict]]:
    """Every storage read of the records, and one row per profile or reader that was skipped
    (``status`` skipped, with the ``reason``): a skip is shown, never dropped."""
    rows, provs = [], []
    for path in paths:
        doc = records.load(path, (*_BASE, "profiles", "reads", "skipped_reads"),
                           "storage measurement (from 'hepfmt storage')")
        provs.append(doc["provenance"])
        base = {k: doc[k] for k in ("sample", "process", *KEYS, "adapter", "n_events",
                                    "file_bytes")}
        for r in doc["reads"]:
            counted_by, requests, nbytes = _asked(r)
            rows.append({**base, **{k: v for k, v in r.items() if k != "repetitions"},
                         "status": "measured", "counted_by": counted_by,
                         "requests": requests, "bytes": nbytes})
        for name, p in doc["profiles"].items():
            if p["status"] == "skipped":
                rows.append({**base, "profile": name, "status": "skipped",
                             "reason": p["reason"]})
        rows += [{**base, **s, "status": "skipped"} for s in doc["skipped_reads"]]
    return pd.DataFrame(rows), provs


def _asked(read: dict) -> tuple[str, float, float]:
    """(view, requests, bytes) a storage read is tabulated with: what the cost model was given
    (:func:`analysis.measure.onstorage.model_input`); from the page cache, which has no model,
    the reader's own count, else the kernel's read syscalls."""
    if "model_requests" in read:
        return read["model_view"], read["model_requests"], read["model_bytes"]
    if read.get("reader_requests") is not None:
        return "reader", read["reader_requests"], read["reader_bytes"]
    return "syscalls", read["kernel_syscr"], read["kernel_rchar"]


def storage_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per sample × file × profile × reader × selection: time, throughput, what the
    read asked of storage in each view, the cost model's prediction from the view it is
    given (``model_view``) and ``storage_s``, the time above the same read from the page
    cache: what the prediction is to be compared with (the model leaves CPU out)."""
    if rows.empty:
        return pd.DataFrame(columns=[*STORAGE_KEYS, *STORAGE_COLUMNS])
    t = rows.copy()
    for col in STORAGE_COLUMNS:
        if col not in t:
            t[col] = None
    warm = t[(t["profile"] == "page-cache") & (t["status"] == "measured")]
    warm = warm[[k for k in STORAGE_KEYS if k != "profile"] + ["median_s"]].rename(
        columns={"median_s": "page_cache_s"})
    t = t.drop(columns="page_cache_s").merge(
        warm, on=[k for k in STORAGE_KEYS if k != "profile"], how="left")
    t["storage_s"] = t["median_s"] - t["page_cache_s"]
    t.loc[t["profile"] == "page-cache", "storage_s"] = None
    # profiles stay in the order measured (the config's): page cache, then slower storage
    return t[[*STORAGE_KEYS, *STORAGE_COLUMNS]].sort_values(
        [k for k in STORAGE_KEYS if k != "profile"], kind="stable").reset_index(drop=True)


def storage_ratios(t: pd.DataFrame) -> pd.DataFrame:
    """ROOT time / Parquet time per profile and selection: each ROOT file × reader against
    each Parquet file × reader of the same sample (per sample, then mean ± std); above 1,
    Parquet is faster there."""
    m = t[t["status"] == "measured"]
    root = m[m["adapter"].isin(["ttree", "rntuple"])]
    parquet = m[m["adapter"] == "parquet"]
    on = ["sample", "profile", "selection"]
    pairs = root.merge(parquet, on=on, suffixes=("_root", "_parquet"))
    if pairs.empty:
        return pd.DataFrame(columns=["profile", "selection", "root", "parquet", "mean", "std",
                                     "n_samples"])
    pairs["root"] = pairs["format_root"] + "/" + pairs["variant_root"] + " " + \
        pairs["reader_root"]
    pairs["parquet"] = pairs["format_parquet"] + "/" + pairs["variant_parquet"] + " " + \
        pairs["reader_parquet"]
    pairs["ratio"] = pairs["median_s_root"] / pairs["median_s_parquet"]
    out = pairs.groupby(["profile", "selection", "root", "parquet"], sort=False)["ratio"].agg(
        ["mean", "std", "count"]).reset_index().rename(columns={"count": "n_samples"})
    return out.fillna({"std": 0.0})


def storage_means(t: pd.DataFrame) -> pd.DataFrame:
    """The measured storage reads per file × reader × selection × profile, per-sample
    figures averaged over samples; ``verified``: every cold read verified cold (None: not
    a cold read). ``format``, ``variant`` (and ``label``, where the table has it) name the
    file for the figure."""
    m = t[t["status"] == "measured"].copy()
    if m.empty:
        return pd.DataFrame()
    m["file"] = m["format"] + " " + m["variant"] + " c" + m["cluster_size"].astype(str)
    names = {c: (c, "first") for c in ("format", "variant", "label") if c in m}
    return m.groupby(["file", "reader", "selection", "profile"], sort=False).agg(
        median_s=("median_s", "mean"), predicted_s=("predicted_s", "mean"),
        storage_s=("storage_s", "mean"), requests=("requests", "mean"),
        bytes=("bytes", "mean"), view=("counted_by", "first"),
        events_per_s=("events_per_s", "mean"),
        verified=("cold_verified", all_verified), **names).reset_index()


def tabulate_storage(plan: dict, storage_files: Iterable[str | Path], out_dir: str | Path,
                     provenance_path: str | Path | None = None) -> dict:
    """``tables/storage.{csv,md,html}`` (and ``storage-ratios.csv``) and their provenance;
    returns the provenance."""
    out = Path(out_dir)
    storage_files = list(storage_files)
    if not storage_files:
        raise InputError(out, "no storage measurements to tabulate")
    rows, provs = load_storage(storage_files)
    t = storage_table(rows)
    measured = t[t["status"] == "measured"]
    prov = merged_provenance(plan["config"], out, provs, len(storage_files),
                             measured if not measured.empty else pd.DataFrame({"n": []}))
    reps = sorted({prov["repetitions"], int(measured["n"].max()) if not measured.empty else 0})
    counts = (f"{len(storage_files)} files; {len(measured)} storage reads of "
              f"{'-'.join(map(str, reps))} timed repetitions each (column n; after one untimed "
              f"verified read); {int((t['status'] == 'skipped').sum())} profiles or reads "
              "skipped (reason in the table)")
    lines = provenance_lines(prov, counts)
    ratios = storage_ratios(t)
    write_csv(with_labels(plan, t), out / "storage.csv", lines)
    write_csv(ratios, out / "storage-ratios.csv", lines)
    write_doc("Reads on storage profiles: time, requests and bytes, the cost model beside "
              "the measurement", sections.storage_sections(storage_means(t), ratios,
                                                 t[t["status"] == "skipped"]),
              out / "storage.md", lines, prov["cpus"])
    write_json(provenance_path or out / "storage-provenance.json", prov)
    return prov
