"""``ratios``: ROOT read rate / Parquet read rate vs cluster size, per configured pairing, one
panel per selection × cache mode: the 2018 study's rate-ratio figure, on today's libraries."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from analysis.report import plan_record
from analysis.report.figures.axes import (
    MODES,
    cluster_axis,
    legend,
    plain_log,
    points,
    unit_line,
    unverified,
)
from analysis.report.figures.inputs import Inputs
from analysis.report.figures.order import ordered, selection_title, threads_label
from analysis.report.style import LINESTYLES, MARKERS, PALETTE, figure, message


def ratio_unverified(ratios: pd.DataFrame) -> np.ndarray:
    """Per ratio row: is it a cold ratio one of whose reads was not verified cold? (The table
    says so: ``tabulate`` checked both sides' reads.)"""
    return unverified(ratios.cold_verified)


def _limits(r: pd.DataFrame) -> tuple[float, float]:
    """Log y around 1: a ratio of 0.05 and one of 20 are the same distance from equal."""
    std = r.ratio_std.fillna(0)
    lo = min(1.0, (r.ratio_mean - std).where(lambda v: v > 0, r.ratio_mean).min())
    hi = max(1.0, (r.ratio_mean + std).max())
    return lo / 1.3, hi * 1.3


def draw(inp: Inputs) -> tuple[Figure, list[str]]:
    r = inp.tables["ratios"]
    r = r[r.quantity == "rate"]
    title = "ROOT / Parquet read-rate ratio"
    if r.empty:
        return message(title, "No read-rate ratios: no reads were measured on both sides of "
                              "any configured ROOT / Parquet pairing."), []
    r = r.assign(hollow=ratio_unverified(r))
    pairs = ordered(r.pair, plan_record.pair_labels(inp.plan))
    colors = {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(pairs)}
    threads = sorted(r.threads.unique())
    sels = ordered(r.selection, plan_record.selections(inp.plan))
    modes = ordered(r["mode"], MODES)
    fig, axes = figure(len(sels), len(modes), 5.2, 4.0, sharey="row")
    for i, sel in enumerate(sels):
        for j, mode in enumerate(modes):
            ax = axes[i, j]
            d = r[(r.selection == sel) & (r["mode"] == mode)]
            for pair, th in [(p, t) for p in pairs for t in threads]:
                g = d[(d.pair == pair) & (d.threads == th)].sort_values("cluster_size")
                if g.empty:
                    continue
                k = threads.index(th)
                label = pair + (f", {threads_label(th)}" if len(threads) > 1 else "")
                # pairs side by side (a few percent apart), not on top of each other
                dodge = 1.04 ** (pairs.index(pair) - (len(pairs) - 1) / 2)
                points(ax, g.cluster_size * dodge, g.ratio_mean, g.ratio_std, colors[pair],
                       MARKERS[pairs.index(pair) % len(MARKERS)],
                       LINESTYLES[k % len(LINESTYLES)], label, g.hollow.to_numpy())
            unit_line(ax, "1 = equal rates; > 1: ROOT faster")
            cluster_axis(ax, r.cluster_size)
            plain_log(ax, "y", *_limits(r))
            ax.set_title(f"{selection_title(inp.plan, sel)}, {mode} cache", fontsize="medium")
            if j == 0:
                ax.set_ylabel("ROOT rate / Parquet rate")
    legend(fig, axes, r.hollow.any())
    notes = ["readers: " + ", ".join(sorted({f"{p[side]['format']} {p[side]['reader']}"
                                             for p in inp.plan["pairs"]
                                             for side in ("ttree", "parquet")}))]
    if r.cluster_size.nunique() == 1:
        notes.append(f"reads measured at one cluster size ({int(r.cluster_size.iloc[0]):,})")
    if r.n_samples.max() <= 1:
        notes.append("one sample: no error bars")
    return fig, notes
