"""Marks and axes the families draw alike: lines with error bars whose unverified cold points
are hollow, the cluster-size axis, log axes labelled in plain numbers, the reference line at 1.

A cold read whose eviction was not verified is never shown as a cold figure: it is drawn hollow
or hatched and named in the legend (:data:`UNVERIFIED`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from hepfmt.records import CACHE_MODES
from hepfmt.report.style import figure, figure_legend

MODES = CACHE_MODES
MODE_COLORS = {"cold": "#3f90da", "warm": "#e76300"}
UNVERIFIED = "hollow / hatched: cold eviction not verified, not a cold figure"


def unverified(values: Iterable) -> np.ndarray:
    """True where a ``cold_verified`` cell is false (empty = not a cold read = not flagged)."""
    return np.array([str(v) == "False" for v in values], dtype=bool)


def points(ax, x, y, yerr, color: str, marker: str, linestyle: str, label: str,
           hollow: np.ndarray) -> None:
    """A line with error bars whose unverified-cold points are hollow."""
    x, y, hollow = np.asarray(x, float), np.asarray(y, float), np.asarray(hollow, bool)
    ax.errorbar(x, y, yerr=np.nan_to_num(np.asarray(yerr, float)), color=color,
                linestyle=linestyle, marker="none", capsize=2)
    ax.plot(x[~hollow], y[~hollow], linestyle="none", marker=marker, color=color, markersize=5)
    ax.plot(x[hollow], y[hollow], linestyle="none", marker=marker, markerfacecolor="white",
            markeredgecolor=color, markersize=5)
    ax.plot([], [], color=color, linestyle=linestyle, marker=marker, markersize=5, label=label)


def legend(fig: Figure, axes: np.ndarray, flag_unverified: bool,
           extra: dict[str, object] | None = None) -> None:
    """The figure's one legend, naming the hollow marks if any were drawn, and ``extra``
    entries no line carries (label -> handle)."""
    hollow = {UNVERIFIED: Line2D([], [], linestyle="none", marker="o", markerfacecolor="white",
                                 markeredgecolor="black", label=UNVERIFIED)}
    figure_legend(fig, axes, {**(extra or {}), **(hollow if flag_unverified else {})} or None)


def grid_axes(n: int, width: float, height: float, ncols: int = 3) -> tuple[Figure, list]:
    """``n`` panels, ``ncols`` to a row, the unused ones of the last row hidden."""
    ncols = min(ncols, n)
    fig, axes = figure(math.ceil(n / ncols), ncols, width, height)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def cluster_axis(ax, sizes: Iterable[float]) -> None:
    """Log x with the measured cluster sizes as the only ticks."""
    sizes = sorted({int(s) for s in sizes})
    ax.set_xscale("log")
    ax.set_xticks(sizes, [f"{s:,}" for s in sizes])
    ax.xaxis.set_minor_locator(NullLocator())
    if len(sizes) == 1:
        ax.set_xlim(sizes[0] / 2, sizes[0] * 2)
    ax.set_xlabel("cluster size (events per cluster / row group)")


def plain_log(ax, axis: str, lo: float, hi: float) -> None:
    """A log axis from lo to hi labelled 0.2, 0.5, 1, 2 ... instead of powers of ten (read
    times and ratios span a decade or two, and are read as seconds and factors); denser labels
    when the range is narrow, so that it has several."""
    getattr(ax, f"set_{axis}scale")("log")
    getattr(ax, f"set_{axis}lim")(lo, hi)
    span = hi / lo
    subs = (1.0, 2.0, 5.0) if span > 20 else (1.0, 1.5, 2.0, 3.0, 5.0, 7.0) if span > 4 \
        else (1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)
    a = getattr(ax, f"{axis}axis")
    a.set_major_locator(LogLocator(subs=subs))
    a.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    a.set_minor_locator(NullLocator())


def unit_line(ax, text: str) -> None:
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1, zorder=0)
    ax.text(0.01, 1.0, text, transform=ax.get_yaxis_transform(), fontsize=7, va="bottom")


def size_range(mean: pd.Series, std: pd.Series) -> tuple[float, float]:
    """The data's range, always with the 1.0 line in it (the reference every size is read
    against), not from zero: differences between formats of one codec are a few percent."""
    std = std.fillna(0)
    lo, hi = min(1.0, (mean - std).min()), max(1.0, (mean + std).max())
    pad = 0.08 * (hi - lo)
    return max(0.0, lo - pad), hi + pad


def size_limits(ax, mean: pd.Series, std: pd.Series) -> None:
    ax.set_ylim(*size_range(mean, std))


#: Where a point's name may go, in points from the point: (dx, dy, horizontal alignment),
#: tried in order; the first whose box overlaps no name and no point already placed wins.
LABEL_SPOTS = ((6, 3, "left"), (6, -10, "left"), (-6, 3, "right"), (-6, -10, "right"),
               (0, 7, "center"), (0, -14, "center"), (6, 12, "left"), (6, -19, "left"))


def place_labels(ax, labels: list[tuple[float, float, str, dict]]) -> None:
    """Name points without the names running into each other or into the points: each label
    (x, y, text, text properties) at the first of :data:`LABEL_SPOTS` that is free, else at the
    least crowded one. Call once the axis limits are final (it measures in display space, and
    text widths are estimated from the font size, so it need not render)."""
    to_px = ax.figure.dpi / 72
    xy = ax.transData.transform([(x, y) for x, y, _, _ in labels]) if labels else []
    taken = [(px - 5 * to_px, py - 5 * to_px, px + 5 * to_px, py + 5 * to_px)
             for px, py in xy]  # the markers

    def overlap(a: tuple, b: tuple) -> float:
        w = min(a[2], b[2]) - max(a[0], b[0])
        h = min(a[3], b[3]) - max(a[1], b[1])
        return w * h if w > 0 and h > 0 else 0.0

    inside = tuple(ax.bbox.extents)

    def outside(box: tuple) -> float:  # a name cut by the frame is worse than one crowded
        return 10 * ((box[2] - box[0]) * (box[3] - box[1]) - overlap(box, inside))

    for (px, py), (x, y, text, props) in zip(xy, labels, strict=True):
        size = float(props.get("fontsize", 7))
        width, height = 0.55 * size * len(text) * to_px, 1.2 * size * to_px
        best, best_cost = None, None
        for dx, dy, ha in LABEL_SPOTS:
            left = px + dx * to_px - {"left": 0, "right": width, "center": width / 2}[ha]
            box = (left, py + dy * to_px, left + width, py + dy * to_px + height)
            cost = outside(box) + sum(overlap(box, t) for t in taken
                                      if t[:2] != (px - 5 * to_px, py - 5 * to_px))
            if best_cost is None or cost < best_cost:
                best, best_cost = (dx, dy, ha, box), cost
            if cost == 0:
                break
        dx, dy, ha, box = best
        taken.append(box)
        ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha,
                    va="bottom", **props)
