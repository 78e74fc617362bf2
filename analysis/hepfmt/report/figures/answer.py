"""``answer``: the run's answer in one figure, for a reader who sees nothing else.

Above, one panel per cluster size the run read at: every format's file, normalised size against
read time per event of the whole-file selection, every reader drawn on its file's row and the
fastest marked and named (a format is as fast as its fastest reader: its first-listed one once
put ROOT ten times behind where its columnar reader leads), each time with its median's
interval, and the Pareto front over all readers. Below, the paired ROOT / Parquet ratios, one
row per pairing × cluster size × selection, the quantities the answer states
(:mod:`hepfmt.report.answer.facts`): the steady throughput (what a long file's further events
cost) and the whole read of the measured file (set-up included: all a one-cluster file has), as
ROOT speed / Parquet speed (:mod:`hepfmt.report.direction`: above 1, ROOT is faster), each
with its interval, a marker per read (first read in a fresh process, repeats) and a colour per
what the pairing compares (ROOT's event loop or its columnar reader, against a columnar Parquet
reader): RDataFrame and ROOT's columnar reader answer differently, and the figure must not
blend them. The whole-file time at the plan's file length is the ratios figure's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import NullLocator

from hepfmt.report import direction, plan_record
from hepfmt.report import table_names as tn
from hepfmt.report.figures.axes import MODES, plain_log, size_range
from hepfmt.report.figures.fastest import mark_fastest
from hepfmt.report.figures.inputs import Inputs
from hepfmt.report.figures.order import (
    names,
    ordered,
    sample_kinds,
    selection_title,
    series_styles,
)
from hepfmt.report.figures.ratios import by_read, coverage_label, oriented
from hepfmt.report.figures.tradeoff import size_panel
from hepfmt.report.ratios import compares_of
from hepfmt.report.style import message, titled

#: The ratios drawn, each turned to "ROOT speed / Parquet speed": those the answer states.
QUANTITIES = ("throughput", "rate")
#: A colour per what a pairing compares (blue and orange: apart under colour-vision deficiency).
COMPARES_COLORS = {"columnar vs columnar": "#3f90da", "event loop vs columnar": "#e76300"}
#: ... and its name in the legend, as the answer's sections name them.
COMPARES_LABELS = {"columnar vs columnar": "both read column by column",
                   "event loop vs columnar": "ROOT's event loop vs Parquet's columnar read"}
OTHER_COMPARES = "#717581"
#: Size panels in a row (one per cluster size): more leave no room to name the points.
PER_ROW = 2
#: A marker per read, as in the ratios figure: × the first read in a fresh process.
READ_MARKERS = {"repeats": "o", "first": "x"}
READ_LABELS = {"repeats": "repeated reads (median over the pairs)",
               "first": "first read in a fresh process"}


def whole_read(reads: pd.DataFrame, plan: dict) -> tuple[str, str] | None:
    """(selection, mode) of the reads the top panels draw: the all-branch selection (the whole
    file's cost) before others, a warm read (always what it says) before a cold one."""
    timed = reads[reads.median_s_mean.notna()]
    if timed.empty:
        return None
    sels = plan_record.selections(plan)
    for mode in ordered(timed["mode"], ("warm", *MODES)):
        here = timed[timed["mode"] == mode]
        order = sorted(set(here.selection), key=lambda s: (sels.get(s) != "*", s != "all", s))
        if order:
            return order[0], mode
    return None


def read_points(reads: pd.DataFrame, size: pd.DataFrame, plan: dict, sel: str,
                mode: str) -> pd.DataFrame:
    """Every reader of selection ``sel`` in cache mode ``mode``: its microseconds per event
    with the median's interval scaled alike (``us_lo``, ``us_hi``), the file's normalised size
    (size.csv, at the read's cluster size) and ``fastest`` per format × variant × cluster size."""
    r = reads[(reads.selection == sel) & (reads["mode"] == mode)]
    r = r[r.median_s_mean.notna() & (r.events_per_s > 0)]
    us = 1e6 / r.events_per_s
    scale = us / r.median_s_mean
    lo = r.median_lo_s if "median_lo_s" in r else pd.Series(np.nan, index=r.index)
    hi = r.median_hi_s if "median_hi_s" in r else pd.Series(np.nan, index=r.index)
    r = r.assign(us_per_event=us, us_lo=lo * scale, us_hi=hi * scale)
    on = ["format", "variant", "cluster_size", *(["kind"] if "kind" in r and "kind" in size
                                                  else [])]
    sizes = size[[*on, "normalized_size_mean", "normalized_size_std"]].drop_duplicates(on)
    r = r.merge(sizes, on=on, how="left")
    r = mark_fastest(r[r.normalized_size_mean.notna()], "median_s_mean", plan)
    kinds = sample_kinds(r)
    return r.assign(name=names(r) + " [" + r.reader + "]"
                    + ((", " + r.kind + " samples") if kinds else ""))


def ratio_rows(ratios: pd.DataFrame, plan: dict) -> pd.DataFrame:
    """The ratios the bottom panels draw, one row each, as ROOT speed / Parquet speed
    (:func:`.ratios.oriented`), with what they compare; warm reads only where the table has
    them (a pair job reads warm)."""
    r = ratios[ratios.quantity.isin(QUANTITIES) & ratios.ratio_mean.notna()]
    if "warm" in set(r["mode"]):
        r = r[r["mode"] == "warm"]
    r = oriented(r)
    if "compares" not in r or r.compares.isna().all():  # a table from before the column
        compares = {p["label"]: compares_of(p) for p in plan["pairs"]}
        r["compares"] = r.pair.map(compares)
    if "read" not in r:
        r["read"] = "repeats"
    r["read"] = r.read.fillna("repeats")
    return r


def _row_keys(r: pd.DataFrame, plan: dict) -> pd.DataFrame:
    """One forest row per selection × pairing × cluster size (× threads, × kind), in config
    order of selection and pairing, then by cluster size."""
    keys = ["selection", "pair", "cluster_size", "threads",
            *(["kind"] if "kind" in r else [])]
    rows = r.drop_duplicates(keys)[[*keys, *(c for c in ("ttree_reader", "parquet_reader",
                                                         "compares") if c in r)]]
    sels = ordered(r.selection, plan_record.selections(plan))
    pairs = ordered(r.pair, plan_record.pair_labels(plan))
    return rows.assign(_s=rows.selection.map(sels.index), _p=rows.pair.map(pairs.index)) \
        .sort_values(["_s", "_p", "cluster_size", "threads"]).drop(columns=["_s", "_p"]) \
        .reset_index(drop=True)


def _row_label(k, many_threads: bool, plan: dict) -> str:
    """``zstd, columnar: TTree columnar / pyarrow, clusters of 100,000``."""
    pair = next((p for p in plan["pairs"] if p["label"] == k.pair), None)
    root = plan_record.label(plan, pair["ttree"]["format"]) + " " if pair else ""
    readers = f": {root}{k.ttree_reader} / {k.parquet_reader}" \
        if isinstance(getattr(k, "ttree_reader", None), str) else ""
    return (f"{k.pair}{readers}, clusters of {int(k.cluster_size):,}"
            + (f", {k.threads:g} threads" if many_threads else "")
            + (f", {k.kind}" if isinstance(getattr(k, "kind", None), str) else ""))


def _positions(rows: pd.DataFrame, plan: dict) -> tuple[dict, list[float], list[str],
                                                          list[bool]]:
    """The y of each forest row, top down, a header row above each selection's: (row index ->
    y, tick positions, tick labels, which ticks are headers)."""
    y, ticks, labels, header = {}, [], [], []
    at = 0.0
    many_threads = rows.threads.nunique() > 1
    for sel, g in rows.groupby("selection", sort=False):
        branches = plan_record.selections(plan).get(sel)
        ticks.append(at)
        labels.append(f"'{sel}': " + ("all branches" if branches == "*" else
                                      f"{len(branches)} branches" if branches else "selection"))
        header.append(True)
        at += 1
        for i, k in g.iterrows():
            y[i] = at
            ticks.append(at)
            labels.append(_row_label(k, many_threads, plan))
            header.append(False)
            at += 1
        at += 0.4
    return y, ticks, labels, header


def _forest(ax, r: pd.DataFrame, rows: pd.DataFrame, y: dict, quantity: str) -> None:
    """One quantity's ratios: per row the repeats and the first read, a little apart, each
    with its interval, coloured by what the pairing compares."""
    keys = [c for c in ("selection", "pair", "cluster_size", "threads", "kind") if c in rows]
    d = r[r.quantity == quantity].merge(rows.reset_index()[[*keys, "index"]], on=keys)
    for read, shift in (("repeats", 0.16), ("first", -0.16)):
        g = d[d.read == read]
        for row in g.itertuples():
            color = COMPARES_COLORS.get(row.compares, OTHER_COMPARES)
            err = np.nan_to_num([[row.ratio_mean - row.ratio_lo],
                                 [row.ratio_hi - row.ratio_mean]])
            ax.errorbar(row.ratio_mean, y[row.index] + shift, xerr=np.clip(err, 0, None),
                        color=color, capsize=2, linestyle="none", marker=READ_MARKERS[read],
                        markersize=5 if read == "repeats" else 6,
                        markeredgewidth=1.5 if read == "first" else 1.0)
    ax.axvline(1.0, color="black", linestyle="--", linewidth=1, zorder=0)
    on_top = ax.get_xaxis_transform()  # x in data (at 1), y in axes (above the frame)
    ax.text(1.0, 1.0, "Parquet faster ← ", transform=on_top, ha="right", va="bottom",
            fontsize=7)
    ax.text(1.0, 1.0, " → ROOT faster", transform=on_top, ha="left", va="bottom", fontsize=7)


def _speed_limits(r: pd.DataFrame) -> tuple[float, float]:
    """The ratios' range with 1 in it, and room on both sides of 1 for the arrows' words."""
    values = pd.concat([r.ratio_mean, r.ratio_lo, r.ratio_hi]).dropna()
    values = values[(values > 0) & np.isfinite(values)]
    if values.empty:
        return 0.5, 2.0
    return min(0.5, float(values.min()) / 1.3), max(2.0, float(values.max()) * 1.3)


def draw(inp: Inputs) -> tuple[Figure, list[str]]:
    reads, size, ratios = (inp.tables[t] for t in (tn.READS, tn.SIZE, tn.RATIOS))
    title = "ROOT or Parquet: size and read speed"
    chosen = whole_read(reads, inp.plan) if not reads.empty else None
    pts = read_points(reads, size, inp.plan, *chosen) if chosen else pd.DataFrame()
    r = ratio_rows(ratios, inp.plan) if not ratios.empty else pd.DataFrame()
    if pts.empty and r.empty:
        return message(title, "No reads were measured: no read time and no ROOT / Parquet "
                              "ratio to draw."), []
    rows = _row_keys(r, inp.plan) if not r.empty else r
    n_rows = len(rows) + (rows.selection.nunique() if not r.empty else 0)
    top_rows = 1 if pts.empty or pts.cluster_size.nunique() <= PER_ROW else \
        -(-pts.cluster_size.nunique() // PER_ROW)
    heights = [0.6 + 4.0 * top_rows if not pts.empty else 0.0,
               max(3.0, 1.3 + 0.27 * n_rows) if n_rows else 0.0]
    # no pyplot (no display, no global state); two parts, each with its own grid and legend
    fig = Figure(figsize=(15.0, sum(heights) + 0.8), layout="constrained")
    parts = fig.subfigures(2 if all(heights) else 1, 1,
                           **({"height_ratios": heights} if all(heights) else {}))
    parts = list(np.atleast_1d(parts))
    notes: list[str] = []
    if not pts.empty:
        notes += _left(parts.pop(0), pts, inp.plan, *chosen)
    if not r.empty:
        notes += _right(parts.pop(0), r, rows, inp.plan, ratios)
    titled(fig, f"{title}. Top: every format at its fastest reader, lower left is better. "
                f"Bottom: ROOT / Parquet read speed, paired reads ({direction.SPEED_RULE}).")
    return fig, notes


def _left(fig, pts: pd.DataFrame, plan: dict, sel: str, mode: str) -> list[str]:
    """The size vs time-per-event panels (the top part), one per cluster size (wider where
    there are more readers to name), sharing the size axis."""
    clusters = sorted(pts.cluster_size.unique())
    if len(clusters) <= PER_ROW:
        widths = [2.0 + 0.25 * (pts.cluster_size == c).sum() for c in clusters]
        axes = np.atleast_1d(fig.subplots(1, len(clusters), sharey=True, width_ratios=widths))
    else:  # rows of two: four panels in one row leave no room for the names
        grid = fig.subplots(-(-len(clusters) // PER_ROW), PER_ROW, sharey=True, squeeze=False)
        axes = grid.flat[:len(clusters)]
        for ax in grid.flat[len(clusters):]:
            ax.set_visible(False)
    styles = series_styles(plan, zip(pts.format, pts.variant, strict=True))
    kinds = sample_kinds(pts)
    ylim = size_range(pts.normalized_size_mean, pts.normalized_size_std)  # one for all panels
    for ax, c in zip(axes, clusters, strict=True):
        p = pts[pts.cluster_size == c].reset_index(drop=True)
        x = p.us_per_event.to_numpy(float)
        xerr = np.vstack([x - p.us_lo.to_numpy(float), p.us_hi.to_numpy(float) - x])
        size_panel(ax, x, p, styles, np.zeros(len(p), bool), kinds,
                   xerr=np.clip(np.nan_to_num(xerr), 0, None), name_all=True, ylim=ylim)
        ax.set_title(f"cluster size {int(c):,}", fontsize="medium")
    for ax in axes:
        if ax.get_subplotspec().colspan.start != 0:
            ax.tick_params(labelleft=False)
    fig.supxlabel(f"read time per event (µs): {selection_title(plan, sel)}, {mode} cache",
                  fontsize="medium")
    fig.supylabel("normalized size (file / naive numpy)", fontsize="medium")
    front = [h for h, lab in zip(*axes[0].get_legend_handles_labels(), strict=True)
             if lab.startswith("Pareto")]
    other = Line2D([], [], linestyle="none", marker="o", color="0.5", markersize=4,
                   label="another reader of the same file (its row: one file, one size)")
    fig.legend(handles=[*front, other], loc="outside right upper")
    cov = pts.median_coverage.dropna() if "median_coverage" in pts else pd.Series(dtype=float)
    cov_text = (f"{cov.min():.0%}" if round(cov.min(), 2) == round(cov.max(), 2)
                else f"{cov.min():.0%}–{cov.max():.0%}") if not cov.empty else "unstated"
    return [f"top: reads.csv, '{sel}' selection, {mode} cache, fewest threads: x = the median "
            f"read time / events, bars = the median's order-statistic interval (coverage "
            f"{cov_text}); y = normalized size of size.csv; large and named: each format × "
            "variant's fastest reader, small: its other readers on the same row; grey: the "
            "Pareto front over all readers"]


def _right(fig, r: pd.DataFrame, rows: pd.DataFrame, plan: dict,
           ratios: pd.DataFrame) -> list[str]:
    """The forest of ratios (the bottom part), one panel per quantity, sharing rows and the
    speed axis."""
    axes = fig.subplots(1, len(QUANTITIES), sharey=True, sharex=True)
    y, ticks, labels, header = _positions(rows, plan)
    titles = {"throughput": "steady throughput (events/s after the first cluster)",
              "rate": "whole read of the measured file (set-up included)"}
    for ax, q in zip(axes, QUANTITIES, strict=True):
        _forest(ax, r, rows, y, q)
        plain_log(ax, "x", *_speed_limits(r))
        ax.set_xlabel(direction.SPEED_AXIS)
        ax.set_title(titles[q], fontsize="medium", pad=14)
        for t, h in zip(ticks, header, strict=True):
            if h:
                ax.axhline(t + 0.5, color="0.85", linewidth=0.6, zorder=0)
    axes[0].set_ylim(max(ticks) + 0.7, min(ticks) - 0.7)
    axes[0].set_yticks(ticks, labels, fontsize=7.5)
    axes[0].yaxis.set_minor_locator(NullLocator())
    for ax in axes:
        ax.tick_params(axis="y", length=0)
    axes[1].tick_params(labelleft=False)
    for tick, h in zip(axes[0].get_yticklabels(), header, strict=True):
        if h:
            tick.set_fontweight("bold")
    handles = [Line2D([], [], linestyle="none", marker=READ_MARKERS[read], color="black",
                      label=lab) for read, lab in READ_LABELS.items() if read in set(r.read)]
    handles += [Line2D([], [], linestyle="-", marker="s", color=col,
                       label=COMPARES_LABELS.get(c, c))
                for c, col in COMPARES_COLORS.items() if c in set(r.compares)]
    fig.legend(handles=handles, loc="outside right upper")
    repeats, first = by_read(r)
    notes = ["bottom: ratios.csv, paired reads (both sides in one process, interleaved), ROOT "
             "events/s over Parquet's: steady throughput (after the first cluster; none where "
             "a file is one cluster) and the whole read (quantity rate); the whole-file time at "
             f"{plan_record.file_events(plan):,} events: the ratios figure; "
             + coverage_label(pd.concat([repeats, first]))]
    missing = _undrawn(ratios, r)
    if missing:
        notes.append("measured but no ratio: " + missing)
    return notes


def _undrawn(ratios: pd.DataFrame, r: pd.DataFrame) -> str:
    """The pairings × cluster sizes measured (a row in ratios.csv) with no ratio drawn."""
    keys = ["pair", "cluster_size"]
    measured = ratios[ratios.quantity != "size"].drop_duplicates(keys)
    drawn = set(zip(r.pair, r.cluster_size, strict=True))
    return ", ".join(f"{p} at {int(c):,}" for p, c in zip(measured.pair, measured.cluster_size,
                                                         strict=True) if (p, c) not in drawn)
