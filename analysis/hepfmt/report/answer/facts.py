"""What a run's tables say, as typed facts, each pointing at the table and row it came from.

Every fact is read from the tables ``hepfmt tabulate`` (and the metadata study) wrote, never
from records or config defaults, so the answer can only say what a committed table says, and a
test can regenerate it from ``results/reference/<cpu>/`` byte for byte. A fact the tables cannot
support becomes a :class:`Gap` naming what is missing, never a sentence without its number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from hepfmt.report import direction
from hepfmt.report.answer import wording as w

#: The readers' time column of ``formats.csv`` (all branches, warm page cache, whole read).
FORMATS_TIME = "all_warm_s"
#: ... and of ``reads.csv`` (the median of a read's repetitions).
READS_TIME = "median_s_mean"


@dataclass(frozen=True)
class Source:
    """Where a number lives: a table of the run and the key columns of its row."""

    table: str
    row: dict[str, object]

    def cite(self) -> str:
        keys = ", ".join(f"{k}={v}" for k, v in self.row.items())
        return f"`{self.table}`: {keys}" if keys else f"`{self.table}`"  # a whole table


@dataclass(frozen=True)
class Claim:
    """One sentence of the answer with everything needed to check it."""

    topic: str  # speed, speed-loop, memory, size, metadata
    text: str  # the whole sentence, readable alone (answer.json)
    value: float
    source: Source
    lo: float = math.nan
    hi: float = math.nan
    coverage: float = math.nan
    over: str = ""  # what the interval is over (rounds of fresh processes, repetitions)
    n_samples: int = 1
    cpu: str = ""
    #: Claims sharing a ``group`` are shown as one bullet with ``group`` as its lead and each
    #: claim's ``short`` below it (the Markdown); ``text`` repeats the lead in full.
    group: str = ""
    short: str = ""


@dataclass(frozen=True)
class Gap:
    """Something the answer would say, and the table or measurement it lacks to say it."""

    text: str


@dataclass
class Facts:
    claims: list[Claim] = field(default_factory=list)
    gaps: list[Gap] = field(default_factory=list)


# --- readers -------------------------------------------------------------------------------

def all_readers(table: pd.DataFrame, time: str = FORMATS_TIME) -> pd.DataFrame:
    """Every timed reader row of ``formats.csv`` (or of ``reads.csv`` with ``time`` =
    :data:`READS_TIME`, already cut to one selection and mode), with ``fastest`` marking the
    reader with the shortest ``time`` of its format × variant × cluster size (and sample kind,
    where the table keeps kinds apart). The fastest, not the first-listed, is what a format is
    judged by: issue 39's figure drew TTree through RDataFrame, at ten times its fastest."""
    rows = table.dropna(subset=[time])
    rows = rows[rows.reader.notna()].copy()
    if "threads" in rows and rows.threads.notna().any():
        rows = rows[rows.threads == rows.threads.min()]
    keys = [k for k in ("format", "variant", "cluster_size", "kind") if k in rows]
    best = rows.groupby(keys, dropna=False)[time].transform("min")
    rows["fastest"] = rows[time] == best
    return rows


def fastest_readers(table: pd.DataFrame, time: str = FORMATS_TIME) -> pd.DataFrame:
    """One row per format × variant × cluster size (× kind): its fastest reader."""
    rows = all_readers(table, time)
    keys = [k for k in ("format", "variant", "cluster_size", "kind") if k in rows]
    return rows[rows.fastest].drop_duplicates(keys)


# --- size ----------------------------------------------------------------------------------

def smallest(size: pd.DataFrame) -> pd.DataFrame:
    """Each format (label) at its smallest codec, per cluster size."""
    ok = size.dropna(subset=["normalized_size_mean"])
    idx = ok.groupby(["label", "cluster_size"]).normalized_size_mean.idxmin()
    return ok.loc[idx].sort_values(["cluster_size", "normalized_size_mean"])


def _size_text(r: pd.Series) -> str:
    spread = f" ± {w.number(r.normalized_size_std)} over {int(r.n_samples)} samples" \
        if r.n_samples > 1 else " (1 sample)"
    return f"{r.label} {r.variant}: {w.number(r.normalized_size_mean)} × naive{spread}"


def size_claims(size: pd.DataFrame, cpu: str) -> list[Claim]:
    """Per cluster size, the smallest file of all formats and the ROOT / Parquet size at each
    family's best codec (size is exact: no interval, bit-identical across runs and CPUs)."""
    out = []
    best = smallest(size)
    for n, g in best.groupby("cluster_size"):
        top = g.iloc[0]
        out.append(Claim(
            "size", f"Smallest file at {w.events(n)} clusters: {_size_text(top)}.",
            float(top.normalized_size_mean),
            Source("size.csv", {"label": top.label, "variant": top.variant,
                                "cluster_size": int(n)}),
            n_samples=int(top.n_samples), cpu=cpu))
    return out


# --- speed ---------------------------------------------------------------------------------

#: The ratio quantity stated per pairing: the steady rate where the files have more than one
#: cluster (what further events cost), else the whole read's rate (one-cluster files).
_PREFERRED = ("throughput", "rate")
_QUANTITY_WORDS = {"throughput": "steady throughput (events/s after the first cluster)",
                   "rate": "whole read (events/s over the whole file)",
                   "file_time": "whole-file time"}
_READ_WORDS = {"first": "first read in a fresh process", "repeats": "repeated reads"}


def sides_of(pairs: pd.DataFrame | None) -> dict[tuple, str]:
    """(pair, cluster_size, selection, read, side) -> "TTree zstd-5 (columnar)"."""
    if pairs is None or pairs.empty:
        return {}
    return {(r.pair, int(r.cluster_size), r.selection, r.read, r.side):
            f"{r.label} {r.variant} ({r.reader})" for r in pairs.itertuples()}


def _selection_words(sel: str, n_columns: int | None) -> str:
    if sel == "all":
        return f"all {n_columns:,} branches" if n_columns else "all branches"
    return f"selection `{sel}`"


def speed_rows(ratios: pd.DataFrame) -> pd.DataFrame:
    """One row per pairing × cluster size × selection × read: its preferred quantity, turned to
    ROOT speed / Parquet speed (:mod:`hepfmt.report.direction`)."""
    r = ratios[ratios.quantity.isin(_PREFERRED) & ratios.ratio_mean.notna()].copy()
    r["rank"] = r.quantity.map({q: i for i, q in enumerate(_PREFERRED)})
    # one per CPU model too: a results directory of two models states each (never pooled)
    r = r.sort_values("rank").drop_duplicates(
        ["pair", "cluster_size", "selection", "read", *(["cpu"] if "cpu" in r else [])])
    oriented = [direction.speed(x.quantity, x.ratio_mean, x.ratio_lo, x.ratio_hi)
                for x in r.itertuples()]
    r["speed"], r["speed_lo"], r["speed_hi"] = zip(*oriented, strict=True) if oriented \
        else ([], [], [])
    return r.sort_values(["compares", "cluster_size", "pair", "selection", "read"],
                         ascending=[True, False, True, True, True]).drop(columns="rank")


def over_words(x) -> str:
    return f"{int(x.n_over)} {x.over}" if pd.notna(x.n_over) else str(x.over)


def speed_claim(x, sides: dict[tuple, str], n_columns: int | None, split: str = "") -> Claim:
    """Speed row ``x``'s sentence; ``split``: what its whole read's ratio is made of
    (:func:`.split.words`), appended where the run has it."""
    key = (x.pair, int(x.cluster_size), x.selection, x.read)
    root = sides.get((*key, "ttree"), f"ROOT {x.ttree} ({x.ttree_reader})")
    parquet = sides.get((*key, "parquet"), f"Parquet {x.parquet} ({x.parquet_reader})")
    threads = int(getattr(x, "threads", 1) or 1) if pd.notna(getattr(x, "threads", 1)) else 1
    group = (f"{root} vs {parquet}, {w.events(x.cluster_size)} clusters, "
             + (f"{threads} threads each, " if threads > 1 else "")
             + f"{_selection_words(x.selection, n_columns)}, {_QUANTITY_WORDS[x.quantity]}")
    n = int(x.n_samples)
    short = (f"{_READ_WORDS.get(x.read, x.read)}: "
             f"{w.verdict(x.speed, x.speed_lo, x.speed_hi, cover=x.coverage)} "
             f"({w.coverage(x.coverage)}, over "
             f"{over_words(x)}; {n} sample{'s' if n > 1 else ''}; {x.cpu}){split}")
    topic = "speed-loop" if x.compares == "event loop vs columnar" else "speed"
    return Claim(topic, f"{group}; {short}.", float(x.speed),
                 Source("ratios.csv", {"pair": x.pair, "quantity": x.quantity,
                                       "selection": x.selection, "read": x.read,
                                       "cluster_size": int(x.cluster_size)}),
                 lo=float(x.speed_lo), hi=float(x.speed_hi), coverage=float(x.coverage),
                 over=over_words(x), n_samples=n, cpu=str(x.cpu), group=group, short=short)


def headline_rows(speeds: pd.DataFrame) -> pd.DataFrame:
    """The pairings that read both formats the same way (columnar vs columnar), all branches,
    at every cluster size they were paired at (a long file's steady rate and a one-cluster
    file's whole read can point different ways, and the answer must show both); failing
    those, every all-branch row."""
    fair = speeds[speeds.compares == "columnar vs columnar"]
    pool = fair if not fair.empty else speeds
    return pool[pool.selection == "all"] if (pool.selection == "all").any() else pool


def event_loop_rows(speeds: pd.DataFrame) -> pd.DataFrame:
    """ROOT's event loop against Parquet's columnar read, all branches, repeats: how a user
    who loops over events (RDataFrame) fares, which the fair pairing does not say."""
    return speeds[(speeds.compares == "event loop vs columnar") & (speeds.selection == "all")]


# --- memory --------------------------------------------------------------------------------

def memory_claims(pairs: pd.DataFrame, cpu: str) -> list[Claim]:
    """Each side's peak memory of the read itself in the headline pairing at its largest
    cluster size (repeats, all branches): what a user's process must hold."""
    p = pairs[(pairs.selection == "all") & (pairs.read == "repeats")
              & pairs.read_peak_mb.notna()]
    fair = p[p.pair.isin(p[p.reader == "columnar"].pair)]  # pairings with a columnar side
    p = fair if not fair.empty else p
    if p.empty:
        return []
    top = p[p.cluster_size == p.cluster_size.max()]
    out = []
    for pair, g in top.groupby("pair"):
        parts = [f"{r.label} {r.variant} ({r.reader}) {w.number(r.read_peak_mb)} MB"
                 for r in g.itertuples()]
        n = int(g.cluster_size.iloc[0])
        r0 = g.iloc[0]
        out.append(Claim(
            "memory", f"Peak memory of the read itself, {w.events(n)} clusters, all "
                      f"branches, repeated reads ({pair}): " + "; ".join(parts) + ".",
            float(r0.read_peak_mb),
            Source("pairs.csv", {"pair": pair, "cluster_size": n, "selection": "all",
                                 "read": "repeats", "column": "read_peak_mb"}),
            cpu=cpu))
    return out


# --- metadata ------------------------------------------------------------------------------

def metadata_rows(metadata: pd.DataFrame) -> pd.DataFrame:
    """The footer/metadata decode time of each layout × implementation on the run's own schema
    (the ``nanoaod`` dataset: the run's column count), from disk, fastest first."""
    m = metadata[(metadata.type == "nanoaod") & (metadata["mode"] == "disk")]
    return m.sort_values("median_s")
