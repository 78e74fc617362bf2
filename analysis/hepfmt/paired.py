"""What one paired measurement says (:mod:`hepfmt.measure.pairs` writes it): per selection,
each side's first read and repeated reads, and their ROOT / Parquet ratios with intervals taken
over the *rounds* (fresh process pairs).

One home for these numbers: the tables, the figures and ``hepfmt bench reproduce`` all read them
from here. Two reads of a pair share the machine's state at that moment, so the ratio of each
pair cancels what they share. What a pair does not cancel is the process: two fresh processes
reading the same file differ by more than one process's repeats do (memory layout, which
allocator arenas and library caches they end up with), and a second run of the study is new
processes. So the repeats' unit is the round: each round's median over its repeat pairs, and the
median of those with its order-statistic interval (:func:`hepfmt.stats.median_interval`,
distribution-free) over the rounds; the first reads are one per round already. The coverage is
what the number of rounds gives (never "95%" below six). A measurement of one round can only
give an interval over its pairs, and says so (``interval_method``): it leaves out the
process-to-process spread.

Quantities, each ROOT over Parquet so that above 1 means ROOT is faster or larger:

* ``rate``: events/s of the whole read (Parquet's time over ROOT's);
* ``throughput``: steady events/s, after the first chunk (only where both files have two or
  more chunks: from the file itself, never another file's set-up);
* ``file_time``: the time to read a file of ``file_events`` events, open + set-up + events /
  steady rate (ROOT's over Parquet's: below 1 means ROOT is faster), where both have a rate.

Beside the whole read's wall-time ratio (``rate``), its ratio in CPU time (user + system) and
in user time alone (:data:`CPU_RATIOS`, Parquet's over ROOT's like ``rate``), with intervals
taken the same way over the same pairs, and each side's system share of its CPU time: what of a
wall-time ratio is decoding work and what is the kernel's (page faults, an allocator's
``mmap``/``munmap``), which moves with the machine and the allocator, not the format.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from hepfmt.stats import bound_fractions, median_interval, ns_per_value, parts

#: The pairing's two sides, in the order a record names them.
SIDES = ("ttree", "parquet")
#: The two kinds of read: the first in a fresh process, and the repeats after it.
READS = ("first", "repeats")
QUANTITIES = ("rate", "throughput", "file_time")
#: The whole read's ratios in CPU time, each a per-scan figure of both sides (Parquet's over
#: ROOT's, as ``rate``): the column prefix in a ratio row -> the scan's figure.
CPU_RATIOS = {"cpu": ("user_s", "sys_s"), "user": ("user_s",)}
#: Where a scan's split is: :func:`hepfmt.measure.reads.usage_split`.
SPLIT = ("user_s", "sys_s", "wait_s", "majflt")


def _split_value(rep: dict, keys: tuple[str, ...]) -> float:
    """The sum of a scan's figures ``keys``, NaN where one is missing (a record from before
    the CPU split)."""
    values = [rep.get(k) for k in keys]
    return float("nan") if any(v is None for v in values) else float(sum(values))


def _over(a: float, b: float) -> float:
    """``a / b``, NaN where ``b`` is 0 (a scan too short for the clock ticks of getrusage)."""
    return a / b if b else float("nan")


def _median(reps: list[dict], key: str) -> float:
    """The median of one figure over scans, NaN unless every scan has it."""
    values = [r.get(key) for r in reps]
    return float(np.median(values)) if values and None not in values else float("nan")


def rep_parts(rep: dict) -> dict:
    """One scan's open, set-up and steady rate (None where one chunk cannot separate them)."""
    return parts(rep.get("opened_s"), [tuple(c) for c in rep.get("chunks", [])])


def _value(quantity: str, rep: dict, n_events: int, file_events: int) -> float:
    """One scan's value of ``quantity`` (as a number to put over the other side's): its wall
    time for ``rate`` (inverted by the caller), its steady rate, or its whole-file time."""
    if quantity == "rate":
        return float(rep["wall_s"])
    p = rep_parts(rep)
    rate = p["events_per_s_steady"]
    if rate is None or rate <= 0:
        return float("nan")
    if quantity == "throughput":
        return float(rate)
    return float((p["open_s"] or 0.0) + p["setup_s"] + file_events / rate)


#: How an interval was taken, per kind of read (the one-round fallback: :data:`WITHIN_ROUND`).
METHODS = {"first": "first reads, one per round of fresh processes",
           "repeats": "rounds of fresh processes (each round's median over its repeat pairs)"}
WITHIN_ROUND = "repeat pairs of one round (the spread between processes is not in it)"


def _pairs(selection: dict, read: str) -> list[dict]:
    """The kept pairs of one kind of read, over every round."""
    return [p for group in _groups(selection, read) for p in group]


def _groups(selection: dict, read: str) -> list[list[dict]]:
    """The kept pairs of one kind of read, one list per round that has any."""
    if read == "first":
        groups = [[r["first"]] if r["first"]["kept"] else [] for r in selection["rounds"]]
    else:
        groups = [[p for p in r["repeats"] if p["kept"]] for r in selection["rounds"]]
    return [g for g in groups if g]


def interval_values(selection: dict, read: str, value: Callable[[dict], float]) -> tuple[
        list[float], str, str]:
    """What an interval is taken over: one value per round (a first read's, or the median of a
    round's repeats), or with only one round of repeats its pairs; with how, and the unit."""
    groups = _groups(selection, read)
    if read == "first" or len(groups) >= 2:
        return [float(np.median([value(p) for p in g])) for g in groups], METHODS[read], \
            "rounds"
    return [value(p) for g in groups for p in g], WITHIN_ROUND, "pairs"


def _interval(values: list[float]) -> dict:
    v = [x for x in values if np.isfinite(x)]
    if not v or len(v) < len(values):
        return {"value": np.nan, "lo": np.nan, "hi": np.nan, "coverage": np.nan, "n": len(v)}
    ci = median_interval(v)
    return {"value": float(np.median(v)), "lo": ci["lo_s"], "hi": ci["hi_s"],
            "coverage": ci["coverage"], "n": len(v)}


def _ratio(quantity: str) -> Callable[[float, float], float]:
    """ROOT over Parquet of a quantity whose per-side values are ``(root, parquet)``."""
    if quantity == "rate":
        return lambda root, parquet: parquet / root
    return lambda root, parquet: root / parquet


def _most(reps: list[dict], key: str) -> float:
    """The largest of one figure over scans, NaN unless every scan has it."""
    values = [r.get(key) for r in reps]
    return float(max(values)) if values and None not in values else float("nan")


def side_rows(doc: dict) -> list[dict]:
    """Per selection × side × kind of read: the median time with its interval, and the
    median open, set-up, steady rate, CPU time and its split (user, system, waiting: NaN in a
    record from before it), minor and major page faults and the read's own peak
    memory above the process's resident set before its first read (first read: that read's;
    repeats: the most over them)."""
    rows = []
    for sel in doc["selections"]:
        for read in READS:
            pairs = _pairs(sel, read)
            for s in SIDES:
                reps = [p[s] for p in pairs]
                if not reps:
                    continue
                each = [rep_parts(r) for r in reps]

                def med(key: str, each=each) -> float | None:
                    v = [p[key] for p in each if p[key] is not None]
                    return float(np.median(v)) if len(v) == len(each) else None

                times, method, unit = interval_values(sel, read, lambda p, s=s: p[s]["wall_s"])
                t = _interval(times)
                rows.append({
                    "pair": doc["pair"], "sample": doc["sample"], "process": doc["process"],
                    "cluster_size": doc["cluster_size"], "threads": doc["threads"],
                    "selection": sel["selection"], "side": s, "read": read,
                    "format": doc["sides"][s]["format"], "variant": doc["sides"][s]["variant"],
                    "reader": doc["sides"][s]["reader"],
                    "median_s": t["value"], "lo_s": t["lo"], "hi_s": t["hi"],
                    "coverage": t["coverage"], "n": len(reps), "n_over": t["n"],
                    "over": unit, "interval_method": method,
                    "events_per_s": doc["n_events"] / t["value"],
                    "open_s": med("open_s"), "setup_s": med("setup_s"),
                    "events_per_s_steady": med("events_per_s_steady"),
                    **bound_fractions(med("events_per_s_steady"),
                                      doc["sides"][s].get("bounds", {}).get(sel["selection"])),
                    "ns_per_value": ns_per_value(med("events_per_s_steady"), sel.get("values"),
                                                 doc["n_events"]),
                    "chunks": each[0]["chunks"],
                    "cpu_s": float(np.median([r["cpu_s"] for r in reps])),
                    "minflt": float(np.median([r.get("minflt", np.nan) for r in reps])),
                    **{k: _median(reps, k) for k in SPLIT},
                    "read_peak_rss_bytes": _most(reps, "read_peak_rss_bytes"),
                    "other_cpu_share_max": float(max(r.get("other_cpu_share", 0.0)
                                                     for r in reps))})
    return rows


def ratio_rows(doc: dict, file_events: int | None = None) -> list[dict]:
    """Per selection × kind of read × quantity: the ROOT / Parquet ratio, the median of the
    per-pair ratios, with its interval and coverage over the rounds (:func:`interval_values`)."""
    file_events = int(file_events or doc.get("file_events") or 1_000_000)
    rows = []
    for sel in doc["selections"]:
        for read in READS:
            pairs = _pairs(sel, read)
            if not pairs:
                continue
            for q in QUANTITIES:
                f = _ratio(q)
                def ratio(p: dict, f=f, q=q) -> float:
                    return f(_value(q, p["ttree"], doc["n_events"], file_events),
                             _value(q, p["parquet"], doc["n_events"], file_events))

                values, method, unit = interval_values(sel, read, ratio)
                r = _interval(values)
                split = cpu_columns(sel, read) if q == "rate" else {}
                rows.append({**split,
                    "pair": doc["pair"], "sample": doc["sample"], "process": doc["process"],
                    "cluster_size": doc["cluster_size"], "threads": doc["threads"],
                    "selection": sel["selection"], "read": read, "quantity": q,
                    "ratio": r["value"], "ratio_lo": r["lo"], "ratio_hi": r["hi"],
                    "coverage": r["coverage"], "n_pairs": len(pairs), "n_over": r["n"],
                    "over": unit, "interval_method": method,
                    "file_events": file_events if q == "file_time" else None,
                    **{f"{s}_{k}": doc["sides"][s].get(k, "")
                       for s in SIDES for k in ("reader", "adapter", "format")},
                    "discarded": sel["discarded"],
                    "worst_other_cpu_share": sel["worst_other_cpu_share"]})
    return rows


def cpu_columns(selection: dict, read: str) -> dict:
    """A whole read's ratios in CPU and user time (:data:`CPU_RATIOS`: ``cpu_ratio``,
    ``cpu_lo``, ``cpu_hi``, ...; over the same values as its wall-time ratio, so of the same
    coverage), and each side's system share of its CPU time (``sys_share_ttree``, ...: the
    median over the pairs); NaN in a record from before the CPU split."""
    out: dict[str, float] = {}
    for name, keys in CPU_RATIOS.items():
        def ratio(p: dict, keys=keys) -> float:
            return _over(_split_value(p["parquet"], keys), _split_value(p["ttree"], keys))

        r = _interval(interval_values(selection, read, ratio)[0])
        out.update({f"{name}_ratio": r["value"], f"{name}_lo": r["lo"], f"{name}_hi": r["hi"]})
    for s in SIDES:
        shares = [_over(_split_value(p[s], ("sys_s",)), _split_value(p[s], CPU_RATIOS["cpu"]))
                  for p in _pairs(selection, read)]
        out[f"sys_share_{s}"] = float(np.median(shares)) if shares else float("nan")
    return out


def summarize_pair(doc: dict, file_events: int | None = None) -> dict:
    """Both views of one record: ``sides`` (:func:`side_rows`) and ``ratios``
    (:func:`ratio_rows`)."""
    return {"sides": side_rows(doc), "ratios": ratio_rows(doc, file_events)}


def round_spread(doc: dict) -> list[dict]:
    """Per selection: how much the rounds' median ratios (``rate``, Parquet's wall time over
    ROOT's; log scale) spread, next to what their own repeat pairs would let them spread if
    rounds differed by nothing else (the pooled within-round standard deviation over the square
    root of the pairs a round's median rests on: exact for two, a lower bound for more, where a
    median is noisier than a mean). A ``factor`` above 1 is the process-to-process spread that
    makes rounds, not pairs, the unit of the intervals (``hepfmt bench rounds``)."""
    out = []
    for sel in doc["selections"]:
        groups = [[math.log(p["parquet"]["wall_s"] / p["ttree"]["wall_s"]) for p in g]
                  for g in _groups(sel, "repeats")]
        multi = [g for g in groups if len(g) >= 2]
        within = math.sqrt(float(np.mean([np.var(g, ddof=1) for g in multi]))) \
            if multi else math.nan
        k = min((len(g) for g in groups), default=0)
        between = float(np.std([np.median(g) for g in groups], ddof=1)) \
            if len(groups) >= 2 else math.nan
        expected = within / math.sqrt(k) if k else math.nan
        out.append({"pair": doc["pair"], "cluster_size": doc["cluster_size"],
                    "selection": sel["selection"], "rounds": len(groups),
                    "pairs_per_round": k, "within_sd": within, "between_sd": between,
                    "expected_sd": expected,
                    "factor": between / expected if expected > 0 else math.nan})
    return out
