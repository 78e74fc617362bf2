"""``query_ratios``: per ADL task, the fastest engine on the ROOT files over the fastest on
Parquet (events/s, ``queries-ratios.csv``), warm and cold cache side by side, each with its
interval: whether Parquet pays off for that kind of query, from a one-column histogram (task 1)
to combinatorics (tasks 5-8). The table's ratio is ROOT's events/s over Parquet's, the one
direction of every speed ratio the study shows (:mod:`hepfmt.report.direction`): above the line
at 1 ROOT is faster, below it Parquet; a bar that crosses it does not say which is. The
intervals' coverage is in the notes, as the table states it (five repetitions per side give 88%,
not 95%)."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from hepfmt.report import direction
from hepfmt.report import table_names as tn
from hepfmt.report.figures.axes import (
    MODE_COLORS,
    MODES,
    legend,
    plain_log,
    unit_line,
    unverified,
)
from hepfmt.report.figures.inputs import Inputs
from hepfmt.report.figures.order import ordered
from hepfmt.report.style import figure, message


def _coverage_note(t: pd.DataFrame) -> str:
    """The coverage the intervals have, once for all if they share it."""
    cov = sorted({round(float(c), 3) for c in t.coverage.dropna()})
    if not cov:
        return "no interval (one repetition per side)"
    n = int(t.n_over.min()) if "n_over" in t and t.n_over.notna().any() else None
    rests = f", {n} repetitions per side at least" if n else ""
    return ("intervals hold the ratio with at least " + " / ".join(f"{c:.0%}" for c in cov)
            + f" coverage ({'; '.join(dict.fromkeys(t.interval_method.dropna()))}{rests})")


def draw(inp: Inputs) -> tuple[Figure, list[str]]:
    t = inp.tables[tn.QUERY_RATIOS]
    title = "ROOT / Parquet per analysis task"
    if t.empty:
        return message(title, "No task was queried on both a ROOT and a Parquet file."), []
    tasks = sorted(int(n) for n in t.task.unique())
    modes = ordered(t["mode"], MODES)
    fig, axes = figure(1, 1, max(6.0, 1.3 * len(tasks)), 4.6)
    ax = axes[0, 0]
    width = 0.5 / len(modes)
    t = _oriented(t)
    for k, mode in enumerate(modes):
        d = t[t["mode"] == mode].set_index("task").reindex(tasks)
        x = np.arange(len(tasks)) + (k - (len(modes) - 1) / 2) * width
        err = np.nan_to_num([d.ratio_mean - d.ratio_lo, d.ratio_hi - d.ratio_mean])
        ax.errorbar(x, d.ratio_mean, yerr=err, linestyle="none", color=MODE_COLORS[mode],
                    capsize=3, marker="none")
        hollow = unverified(d.cold_verified)
        for filled, face in ((~hollow, MODE_COLORS[mode]), (hollow, "white")):
            ax.plot(x[filled], d.ratio_mean[filled], linestyle="none", marker="o",
                    markersize=6, color=MODE_COLORS[mode], markerfacecolor=face)
        ax.plot([], [], linestyle="none", marker="o", color=MODE_COLORS[mode],
                label=f"{mode} cache")
    unit_line(ax, "1 = equal speed")
    values = pd.concat([t.ratio_lo, t.ratio_hi, t.ratio_mean]).dropna()
    values = values[values > 0]
    plain_log(ax, "y", min(values.min() / 1.3, 0.8), max(values.max() * 1.3, 1.25))
    questions = t.drop_duplicates("task").set_index("task").question
    ax.set_xticks(range(len(tasks)), ["\n".join(textwrap.wrap(
        f"{n}: {questions[n]}", 24)) for n in tasks], fontsize=6)
    ax.set_xlim(-0.6, len(tasks) - 0.4)
    ax.set_ylabel(direction.SPEED_AXIS)
    ax.set_title(f"{title}: the fastest engine on each side", fontsize="medium")
    legend(fig, axes, bool(unverified(t.cold_verified).any()))
    samples = int(t.n_samples.max())
    notes = [f"per sample the ratio of the two winners' median times; over {samples} "
             "sample(s) the mean (several: its Student-t 95% interval)", _coverage_note(t),
             *(_winners(t, side, what) for side, what in (("root", "fastest on ROOT files"),
                                                         ("parquet", "fastest on Parquet")))]
    return fig, notes


def _oriented(t: pd.DataFrame) -> pd.DataFrame:
    """The table's ratios as ROOT speed / Parquet speed: already so (events/s over events/s,
    :mod:`hepfmt.report.query_answer`), asked of :func:`hepfmt.report.direction.speed` all
    the same, so that a change of the table's direction cannot pass unnoticed."""
    turned = [direction.speed("rate", v, lo, hi)
              for v, lo, hi in zip(t.ratio_mean, t.ratio_lo, t.ratio_hi, strict=True)]
    if not turned:
        return t
    return t.assign(**dict(zip(("ratio_mean", "ratio_lo", "ratio_hi"), np.array(turned).T,
                               strict=True)))


def _winners(t: pd.DataFrame, side: str, what: str) -> str:
    """Which engine and file won a side, each once with the tasks and modes it won (a note of
    eight tasks × two modes would otherwise repeat one name sixteen times)."""
    won = t.sort_values(["task", "mode"]).groupby(side, sort=False)
    if won.ngroups == 1:
        return f"{what}: {t[side].iloc[0]} (every task and mode)"
    return f"{what}: " + "; ".join(
        f"{name} ({', '.join(f'{r.task} {r.mode}' for r in g.itertuples())})"
        for name, g in won)
