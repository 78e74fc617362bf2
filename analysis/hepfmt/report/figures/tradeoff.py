"""``tradeoff``: normalised size vs read time, one point per format × variant × reader, the
fastest reader of each format × variant marked (large, in the legend), the others small on the
same row (one file, so one size) and named; with the Pareto front over all readers: what
nothing else beats in both size and speed. A format is as fast as its fastest reader: drawing
only its first-listed one (TTree through RDataFrame) once put ROOT ten times behind where its
columnar reader leads. Where the tables have a warm read's parts, two more panels: size vs time
to the first event and size vs cost per event once reading, since a format can be best for
short files and not for long ones.

A study of real and synthetic samples tabulated apart (a ``kind`` column) draws one point per
format × variant × reader and kind, the kind named in the legend, and one Pareto front per kind
in the kind's line style (also its points' error bars): a real file is never beaten by a
synthetic one on the same front."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from hepfmt.report import plan_record
from hepfmt.report.figures.axes import (
    legend,
    place_labels,
    plain_log,
    size_limits,
    unit_line,
    unverified,
)
from hepfmt.report.figures.fastest import mark_fastest
from hepfmt.report.figures.inputs import Inputs
from hepfmt.report.figures.order import (
    kind_linestyle,
    names,
    sample_kinds,
    selection_title,
    series_styles,
)
from hepfmt.report.style import LINESTYLES, figure, message, titled


def pareto_front(x: Iterable[float], y: Iterable[float]) -> np.ndarray:
    """True for the points no other point beats in both x and y (smaller is better in both);
    points with a missing coordinate are never on it."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    ok = ~(np.isnan(x) | np.isnan(y))
    front = np.zeros(len(x), dtype=bool)
    for i in np.flatnonzero(ok):
        dominated = ok & (x <= x[i]) & (y <= y[i]) & ((x < x[i]) | (y < y[i]))
        front[i] = not dominated.any()
    return front


def time_column(ft: pd.DataFrame, plan: dict) -> tuple[str, str, str] | None:
    """The read-time column to plot, (column, selection, mode): warm before cold (a warm read is
    always what it says), the all-branch selection before others (the whole file's cost)."""
    cols = {c for c in ft.columns if c.endswith(("_warm_s", "_cold_s")) and ft[c].notna().any()}
    if not cols:
        return None
    sels = plan_record.selections(plan)
    order = sorted({c.rsplit("_", 2)[0] for c in cols},
                   key=lambda s: (sels.get(s) != "*", s != "all", s))
    for mode in ("warm", "cold"):
        for sel in order:
            if f"{sel}_{mode}_s" in cols:
                return f"{sel}_{mode}_s", sel, mode
    return None


def reader_rows(ft: pd.DataFrame, col: str, plan: dict) -> pd.DataFrame:
    """Every reader timed in ``col``, at the fewest threads, in config order, with ``fastest``
    marking the fastest of each format × variant (and sample kind, when tabulated apart)."""
    return mark_fastest(ft, col, plan)


Panel = tuple[np.ndarray, str, np.ndarray | None]


def x_panels(pts: pd.DataFrame, col: str, sel: str, mode: str) -> list[Panel]:
    """The x of each panel, with its label and, where it has one, the x of each point's codec
    bound: the read time, and for a warm read, where ``formats.csv`` has them, what a short
    file costs (time to the first event) and what each further event costs (1 / steady
    throughput, beside what decompressing the file's own blocks alone costs per event: a
    read's distance from its codec bound): a format can win one and lose the other."""
    panels: list[Panel] = [(pts[col].to_numpy(float), "read time (s)", None)]
    if mode != "warm":
        return panels
    first, steady = f"{sel}_warm_time_to_first_event_s", f"{sel}_warm_events_per_s_steady"
    frac = f"{sel}_warm_fraction_of_bound_new"
    if first in pts and pts[first].notna().any():
        panels.append((pts[first].to_numpy(float),
                       "time to the first event (s): open + set-up", None))
    if steady in pts and pts[steady].notna().any():
        per_event = 1e6 / pts[steady].to_numpy(float)
        bound = per_event * pts[frac].to_numpy(float) \
            if frac in pts and pts[frac].notna().any() else None
        panels.append((per_event, "µs per event once reading (1 / steady throughput); "
                                  "| = the codec bound" if bound is not None else
                       "µs per event once reading (1 / steady throughput)", bound))
    return panels


def _bounds(ax, x: np.ndarray, bound: np.ndarray, y: np.ndarray, colors: list[str]) -> None:
    """Each point's codec bound on the same row: a bar at the bound, a thin line to the point
    (its length on the log axis is the read's distance from what the codec allows)."""
    for xi, bi, yi, c in zip(x, bound, y, colors, strict=True):
        if np.isnan(xi) or np.isnan(bi):
            continue
        ax.plot([bi, xi], [yi, yi], color=c, linewidth=0.8, alpha=0.6, zorder=1)
        ax.plot(bi, yi, marker="|", markersize=12, color=c, zorder=1)


def front_mask(x: np.ndarray, y: np.ndarray, pts: pd.DataFrame, kinds: list[str]) -> np.ndarray:
    """The points on the Pareto front of their sample kind, over every reader drawn."""
    front = np.zeros(len(pts), dtype=bool)
    for kind in kinds or [None]:
        mine = (pts.kind == kind).to_numpy() if kind is not None else np.ones(len(pts), bool)
        front[mine] = pareto_front(x[mine], y[mine])
    return front


def size_panel(ax, x: np.ndarray, pts: pd.DataFrame, styles: dict, hollow: np.ndarray,
               kinds: list[str], bound: np.ndarray | None = None,
               xerr: np.ndarray | None = None, name_all: bool = False,
               ylim: tuple[float, float] | None = None) -> None:
    """Size against one x: the Pareto front over all readers (one per sample kind in
    ``kinds``, when drawn apart), each file's readers on one row, its fastest large and in the
    legend, the others small and named beside their point, the front's points (``name_all``:
    every fastest point) outlined and named, each point's codec bound where the panel has one,
    and ``xerr`` ((2, n) distances below and above x) where given; ``ylim`` where panels
    share one (else the panel's own data)."""
    y = pts.normalized_size_mean.to_numpy(float)
    color = [styles[(f, v)][0] for f, v in zip(pts.format, pts.variant, strict=True)]
    if bound is not None:
        _bounds(ax, x, bound, y, color)
    style = np.array([kind_linestyle(kinds, k) for k in pts.kind]
                     if kinds else [LINESTYLES[0]] * len(pts))
    front = front_mask(x, y, pts, kinds)
    for k, kind in enumerate(kinds or [None]):
        on = front & ((pts.kind == kind).to_numpy() if kind is not None else True)
        order = np.argsort(x[on])
        ax.step(x[on][order], y[on][order], where="post", color="black", alpha=0.3,
                linewidth=4, zorder=0, linestyle=LINESTYLES[k % len(LINESTYLES)],
                label="Pareto front over all readers: nothing is both smaller and faster"
                      + (f", {kind} samples" if kind is not None else ""))
    groups = pts.groupby(["format", "variant", *(["kind"] if kinds else [])], sort=False)
    for _, g in groups:  # a file's readers share its size: a thin line across them
        i = g.index.to_numpy()
        i = i[~np.isnan(x[i])]
        i = i[np.argsort(x[i])]
        if len(i) > 1:
            ax.plot(x[i], y[i], color=color[i[0]], linewidth=0.8, alpha=0.5,
                    linestyle=style[i[0]], zorder=1)
    labels = []
    for i, p in enumerate(pts.itertuples()):
        if np.isnan(x[i]):
            continue
        on, fastest = bool(front[i]), bool(p.fastest)
        marker = styles[(p.format, p.variant)][1]
        bars = ax.errorbar(x[i], y[i], yerr=np.nan_to_num(p.normalized_size_std),
                           xerr=None if xerr is None else np.nan_to_num(xerr[:, i:i + 1]),
                           color=color[i], capsize=2, alpha=1.0 if fastest else 0.6)
        for line in bars.lines[2]:
            line.set_linestyle(style[i])
        # one point draws no line; the legend shows the kind's line style beside the marker
        ax.plot(x[i], y[i], marker=marker, linestyle=style[i] if kinds else "none",
                markersize=(10 if on else 8) if fastest else 5, color=color[i],
                alpha=1.0 if fastest else 0.6, zorder=3 if fastest else 2,
                markerfacecolor="white" if hollow[i] else color[i],
                markeredgecolor="black" if on else color[i],
                label=p.name if fastest else f"_{p.name}")
        if on or (fastest and name_all):
            labels.append((x[i], y[i], p.name,
                           {"fontsize": 7, "fontweight": "bold" if on else "normal"}))
        elif not fastest:
            labels.append((x[i], y[i], p.reader, {"fontsize": 6, "color": "0.35"}))
    timed = x[~np.isnan(x)]
    if bound is not None:
        timed = np.concatenate([timed, bound[~np.isnan(bound)]])
    if xerr is not None:
        timed = np.concatenate([timed, (x - xerr[0])[~np.isnan(x)], (x + xerr[1])[~np.isnan(x)]])
        timed = timed[timed > 0]
    plain_log(ax, "x", timed.min() / 1.25, timed.max() * 1.25)
    unit_line(ax, "1 = naive numpy size")
    if ylim is None:
        size_limits(ax, pts.normalized_size_mean, pts.normalized_size_std)
    else:
        ax.set_ylim(*ylim)
    place_labels(ax, labels)


def draw(inp: Inputs) -> tuple[Figure, list[str]]:
    ft = inp.tables["formats"]
    title = "Size vs read time"
    chosen = time_column(ft, inp.plan) if "reader" in ft else None
    if chosen is None:
        return message(title, "No read times in formats.csv: no reads were measured."), []
    col, sel, mode = chosen
    pts = reader_rows(ft, col, inp.plan)
    kinds = sample_kinds(pts)
    pts = pts.assign(name=names(pts) + " [" + pts.reader + "]"
                     + ((", " + pts.kind + " samples") if kinds else ""))
    hollow = unverified(pts.cold_verified) if mode == "cold" and "cold_verified" in pts \
        else np.zeros(len(pts), bool)
    styles = series_styles(inp.plan, zip(pts.format, pts.variant, strict=True))
    panels = x_panels(pts, col, sel, mode)
    fig, axes = figure(1, len(panels), 8.0 if len(panels) == 1 else 6.0, 6.0, sharey=True)
    for ax, (x, xlabel, bound) in zip(axes[0], panels, strict=True):
        size_panel(ax, x, pts, styles, hollow, kinds, bound)
        ax.set_xlabel(xlabel)
    axes[0, 0].set_ylabel("normalized size (file / naive)")
    titled(fig, f"{title}, every reader ({selection_title(inp.plan, sel)}, {mode} cache, "
                f"cluster size {int(pts.cluster_size.max()):,}): lower left is better")
    legend(fig, axes, hollow.any())
    notes = _untimed_notes(ft, pts, col)
    if kinds:
        notes.append("real and synthetic samples apart (tabulate.mix_kinds off): one point "
                     "per kind, one Pareto front per kind in its line style")
    if len(panels) > 1:
        notes.append(f"other panels: {sel}_warm_time_to_first_event_s and 1e6 / "
                     f"{sel}_warm_events_per_s_steady of formats.csv (how each throughput was "
                     "found: reads.csv); the codec bound (|): the file's own compressed blocks "
                     "of the selection decompressed alone, a new context per block, from "
                     f"{sel}_warm_fraction_of_bound_new")
    return fig, notes


def _untimed_notes(ft: pd.DataFrame, pts: pd.DataFrame, col: str) -> list[str]:
    timed = set(zip(pts.format, pts.variant, strict=True))
    untimed = ft[[(f, v) not in timed for f, v in zip(ft.format, ft.variant, strict=True)]]
    untimed = untimed.drop_duplicates(["format", "variant"])
    notes = ["one point per format × variant × reader (fewest threads); large and in the legend: "
             "the format × variant's fastest reader (smallest "
             f"{col}), small and named: its other readers; x = {col} of formats.csv"]
    if not untimed.empty:
        notes.append(f"sizes only, no read time at this cluster size ({len(untimed)}): "
                     + ", ".join(names(untimed)))
    return notes
