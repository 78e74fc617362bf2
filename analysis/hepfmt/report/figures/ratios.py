"""``ratios``: ROOT / Parquet vs cluster size, per configured pairing, one row of panels per
selection: the steady throughput ratio and the whole-file ratio at ``compare.file_events``
events (one column per cache mode), from paired measurements. Two numbers because a user asks
two questions: how fast does it read once reading (throughput), and what does a typical file
cost me, set-up included (whole-file time). Tables from before those quantities draw the 2018
study's read-rate ratio instead.

Every panel reads one way, ROOT speed / Parquet speed, above 1 = ROOT faster
(:mod:`hepfmt.report.direction`): the whole-file time ratio is inverted with its interval, so
that no reader has to flip a convention from one panel to the next, and all panels share the
axis.

Lines are the repeated reads' ratios with their intervals; a × marks the first read in a fresh
process, which a batch job that reads each file once pays. An interval is called 95% only where
every bar drawn has that coverage: few pairs give less, and the title says how much.

A study of real and synthetic samples tabulated apart (a ``kind`` column) draws each kind with
its own line style, so the two are never read as one curve.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from hepfmt.report import direction, plan_record
from hepfmt.report.figures.axes import (
    MODES,
    cluster_axis,
    legend,
    plain_log,
    points,
    unit_line,
    unverified,
)
from hepfmt.report.figures.inputs import Inputs
from hepfmt.report.figures.order import ordered, sample_kinds, selection_title, threads_label
from hepfmt.report.sections import FULL_COVERAGE, below_full
from hepfmt.report.style import LINESTYLES, MARKERS, PALETTE, figure, message, titled

#: The throughput method of a read whose own marks gave it (no note needed).
OWN_MARKS = "chunks after the first"
#: The ``read`` drawn as lines, and the one marked: tables from before ``read`` held repeats.
LINES, MARKED = "repeats", "first"
#: The legend's name for the marks of first reads.
FIRST_MARK = "×: first read in a fresh process (median over rounds, no bar)"


@dataclass(frozen=True)
class Quantity:
    name: str  # the ``quantity`` of ratios.csv
    title: str  # what its panels show (the axis says the direction: direction.SPEED_AXIS)


def quantities(plan: dict) -> tuple[Quantity, ...]:
    """The two ratios drawn, the whole-file one at the plan's file length (a ratio of
    whole-file times means nothing without it)."""
    n = plan_record.file_events(plan)
    return (Quantity("throughput", "steady throughput"),
            Quantity("file_time", f"whole file of {n:,} events"))


#: What tables from before throughput and whole-file time are drawn with.
RATE = Quantity("rate", "read rate")
#: The line at 1.
EQUAL = "1 = equal speed"


def oriented(r: pd.DataFrame) -> pd.DataFrame:
    """``r`` with ``ratio_mean``, ``ratio_lo`` and ``ratio_hi`` as ROOT speed / Parquet speed
    (:func:`hepfmt.report.direction.speed`: a time ratio inverted, its bounds swapped), and
    ``ratio_std`` scaled alike where a time ratio is inverted (to first order, std / ratio²:
    tables from before intervals)."""
    r = r.copy()
    for c in ("ratio_lo", "ratio_hi"):
        if c not in r:
            r[c] = np.nan
    turned = [direction.speed(q, v, lo, hi) for q, v, lo, hi in
              zip(r.quantity, r.ratio_mean, r.ratio_lo, r.ratio_hi, strict=True)]
    inverted = ~r.quantity.isin(["throughput", "rate"]).to_numpy()
    std = r.ratio_std.to_numpy(float)
    mean = r.ratio_mean.to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r["ratio_std"] = np.where(inverted, std / mean ** 2, std)
    r[["ratio_mean", "ratio_lo", "ratio_hi"]] = turned if turned else np.empty((0, 3))
    return r


def ratio_unverified(ratios: pd.DataFrame) -> np.ndarray:
    """Per ratio row: is it a cold ratio one of whose reads was not verified cold? (The table
    says so: ``tabulate`` checked both sides' reads.)"""
    return unverified(ratios.cold_verified)


def error_bars(r: pd.DataFrame) -> np.ndarray:
    """(2, n) distances below and above each ratio: its interval where the table has one (of
    the coverage :func:`coverage_label` states), else ± the standard deviation over samples
    (tables from before intervals)."""
    mean = r.ratio_mean.to_numpy(float)
    std = r.ratio_std.fillna(0).to_numpy(float)
    lo = r.ratio_lo.to_numpy(float) if "ratio_lo" in r else np.full(len(r), np.nan)
    hi = r.ratio_hi.to_numpy(float) if "ratio_hi" in r else np.full(len(r), np.nan)
    return np.vstack([np.where(np.isnan(lo), std, mean - lo),
                      np.where(np.isnan(hi), std, hi - mean)])


def _has_interval(r: pd.DataFrame) -> pd.Series:
    if "ratio_lo" not in r:
        return pd.Series(False, index=r.index)
    return r.ratio_lo.notna() & r.ratio_hi.notna()


def coverage_label(r: pd.DataFrame) -> str:
    """What the error bars of the rows ``r`` drawn are: "95% intervals" only where every bar
    has that coverage, else the coverage they achieve (it is in the table, bar by bar)."""
    has = _has_interval(r)
    cov = r.loc[has, "coverage"] if "coverage" in r else pd.Series(dtype=float)
    parts = []
    if has.any():
        if cov.notna().all() and not cov.map(below_full).any():
            parts.append(f"{FULL_COVERAGE:.0%} intervals")
        elif cov.notna().any():
            lo, hi = cov.min(), cov.max()
            span = f"{lo:.0%}" if round(lo, 2) == round(hi, 2) else f"{lo:.0%}–{hi:.0%}"
            parts.append(f"intervals: {span} coverage, see table"
                         + (" (some of unstated coverage)" if cov.isna().any() else ""))
        else:
            parts.append("intervals of unstated coverage")
    if (~has).any() and r.loc[~has, "ratio_std"].fillna(0).gt(0).any():
        parts.append("± std over samples where no interval")
    return "error bars: " + "; ".join(parts) if parts else "no error bars"


def _limits(r: pd.DataFrame) -> tuple[float, float]:
    """Log y around 1: a ratio of 0.05 and one of 20 are the same distance from equal."""
    below, above = error_bars(r)
    low = r.ratio_mean - below
    lo = min(1.0, low.where(low > 0, r.ratio_mean).min())
    hi = max(1.0, (r.ratio_mean + above).max())
    return lo / 1.3, hi * 1.3


def by_read(r: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the rows drawn as lines, the rows marked): repeats and first reads; a table from before
    ``read`` held repeats only."""
    if "read" not in r:
        return r, r.iloc[:0]
    read = r.read.fillna(LINES)
    return r[read == LINES], r[read == MARKED]


def _drawn(r: pd.DataFrame, plan: dict) -> tuple[Quantity, ...]:
    """The quantities with a value to draw: throughput and whole-file time, else the rate."""
    found = tuple(q for q in quantities(plan)
                  if r[(r.quantity == q.name)].ratio_mean.notna().any())
    return found or ((RATE,) if r[r.quantity == "rate"].ratio_mean.notna().any() else ())


@dataclass(frozen=True)
class Series:
    """One line of a panel: a pairing at a thread count (and sample kind)."""

    pair: str
    threads: float
    kind: str | None


def _series(r: pd.DataFrame, pairs: list[str]) -> list[Series]:
    """Every line any panel may draw, in legend order, so that styles agree across panels."""
    kinds = sample_kinds(r) or [None]
    return [Series(p, t, k) for p in pairs for t in sorted(r.threads.unique()) for k in kinds]


def _rows(d: pd.DataFrame, s: Series) -> pd.DataFrame:
    keep = (d.pair == s.pair) & (d.threads == s.threads)
    if s.kind is not None:
        keep &= d.kind == s.kind
    return d[keep & d.ratio_mean.notna()].sort_values("cluster_size")


def _style(s: Series, series: list[Series], pairs: list[str]) -> dict:
    """Colour and marker per pairing, line style per thread count and kind, a label naming
    what differs."""
    threads = sorted({x.threads for x in series})
    kinds = list(dict.fromkeys(x.kind for x in series))
    style = threads.index(s.threads) * len(kinds) + kinds.index(s.kind)
    label = s.pair + (f", {threads_label(s.threads)}" if len(threads) > 1 else "") + \
        (f", {s.kind} samples" if s.kind is not None and len(kinds) > 1 else "")
    i = pairs.index(s.pair)
    return {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)],
            "linestyle": LINESTYLES[style % len(LINESTYLES)], "label": label}


def _panel(ax, d: pd.DataFrame, first: pd.DataFrame, series: list[Series],
           pairs: list[str]) -> None:
    """One panel's lines (repeats) and marks (first reads), pairs side by side (a few percent
    apart), not on top of each other."""
    for n, s in enumerate(series):
        st = _style(s, series, pairs)
        dodge = 1.04 ** (n - (len(series) - 1) / 2)
        g = _rows(d, s)
        if not g.empty:
            points(ax, g.cluster_size * dodge, g.ratio_mean, error_bars(g), st["color"],
                   st["marker"], st["linestyle"], st["label"], g.hollow.to_numpy())
        f = _rows(first, s)
        if not f.empty:
            ax.plot(f.cluster_size * dodge, f.ratio_mean, linestyle="none", marker="x",
                    color=st["color"], markersize=6)


def draw(inp: Inputs) -> tuple[Figure, list[str]]:
    r = inp.tables["ratios"]
    title = "ROOT / Parquet read ratios"
    drawn = _drawn(r, inp.plan)
    if not drawn:
        return message(title, "No read ratios: no reads were measured on both sides of any "
                              "configured ROOT / Parquet pairing."), []
    r = oriented(r[r.quantity.isin([q.name for q in drawn])])
    r, first = (d.assign(hollow=ratio_unverified(d)) for d in by_read(r))
    if r.ratio_mean.isna().all():
        return message(title, "No read ratios: no reads were measured on both sides of any "
                              "configured ROOT / Parquet pairing."), []
    pairs = ordered(r.pair, plan_record.pair_labels(inp.plan))
    series = _series(r, pairs)
    sels = ordered(r.selection, plan_record.selections(inp.plan))
    # a cache mode whose ratios are all empty (one-chunk files read cold: not separable) gets
    # no panel; the footnote counts the ratios not drawn
    modes = ordered(r.loc[r.ratio_mean.notna(), "mode"], MODES) or ordered(r["mode"], MODES)
    columns = [(q, mode) for q in drawn for mode in modes]
    fig, axes = figure(len(sels), len(columns), 5.2, 4.0, sharey=True)
    lo, hi = _limits(pd.concat([r, first])[lambda x: x.ratio_mean.notna()])
    for i, sel in enumerate(sels):
        for j, (q, mode) in enumerate(columns):
            ax = axes[i, j]
            mine, marks = (d[d.quantity == q.name] for d in (r, first))
            here = (mine.selection == sel) & (mine["mode"] == mode)
            _panel(ax, mine[here], marks[(marks.selection == sel) & (marks["mode"] == mode)],
                   series, pairs)
            unit_line(ax, EQUAL)
            cluster_axis(ax, pd.concat([mine, marks]).loc[lambda x: x.ratio_mean.notna()]
                         .cluster_size.pipe(lambda c: c if not c.empty else r.cluster_size))
            plain_log(ax, "y", lo, hi)
            ax.set_title(f"{q.title}\n{selection_title(inp.plan, sel)}, {mode} cache",
                         fontsize="medium")
            if j == 0:
                ax.set_ylabel(direction.SPEED_AXIS)
    marked = first.ratio_mean.notna().any()
    legend(fig, axes, r.hollow.any(),
           {FIRST_MARK: Line2D([], [], linestyle="none", marker="x", color="black",
                               label=FIRST_MARK)} if marked else None)
    drawn_rows = r[r.ratio_mean.notna()]
    paired = "read" in inp.tables["ratios"]
    titled(fig, title + (", paired: lines = repeated reads" + (", × = first read" if marked
                                                                  else "") if paired else ""),
           coverage_label(drawn_rows))
    return fig, _notes(inp.plan, drawn_rows, r, drawn)


def _notes(plan: dict, bars: pd.DataFrame, r: pd.DataFrame,
           drawn: tuple[Quantity, ...]) -> list[str]:
    """The footer's notes: readers, what the bars are (of ``bars``, the rows drawn), how
    throughputs were found and what was not drawn (of ``r``, every line's row)."""
    notes = ["readers: " + ", ".join(sorted({f"{p[side]['format']} {p[side]['reader']}"
                                             for p in plan["pairs"]
                                             for side in ("ttree", "parquet")}))]
    if r.cluster_size.nunique() == 1:
        notes.append(f"reads measured at one cluster size ({int(r.cluster_size.iloc[0]):,})")
    if drawn == (RATE,):
        notes.append("a table from before throughput and whole-file time: the whole read's "
                     "rate ratio, ± std over samples"
                     + ("; one sample: no error bars" if r.n_samples.max() <= 1 else ""))
        return notes
    if "interval_method" in bars:
        how = ", ".join(sorted(set(bars.interval_method.dropna()) - {""}))
        notes.append(f"{coverage_label(bars)}" + (f"; from {how}" if how else ""))
    methods = {m for col in ("throughput_method_ttree", "throughput_method_parquet")
               if col in r for cell in r[col].dropna() for m in str(cell).split("; ")}
    if methods - {OWN_MARKS}:
        notes.append("throughput not from the read's own chunks: "
                     + "; ".join(sorted(methods - {OWN_MARKS})))
    missing = int(r.ratio_mean.isna().sum())
    if missing:
        notes.append(f"{missing} ratios not drawn: a side's throughput could not be separated "
                     "from its set-up (see ratios.csv)")
    return notes
