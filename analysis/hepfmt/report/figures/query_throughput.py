"""``queries``: events/s of each ADL benchmark task per format × engine, warm and cold cache side
by side, one panel per task: which engine and format to run an analysis with, and how the
answer changes from a one-column histogram (task 1) to combinatorics (tasks 5-8)."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import NullLocator

from hepfmt.report import plan_record
from hepfmt.report import table_names as tn
from hepfmt.report.figures.axes import MODE_COLORS, MODES, UNVERIFIED, grid_axes, unverified
from hepfmt.report.figures.inputs import Inputs
from hepfmt.report.figures.order import ordered
from hepfmt.report.style import message, titled


def _rows(t: pd.DataFrame, plan: dict) -> pd.DataFrame:
    """The bars of every panel: format · variant · engine, in config order of formats."""
    keys = t.drop_duplicates(["format", "variant", "engine"])[["format", "variant", "engine"]]
    order = {f: i for i, f in enumerate(plan_record.format_names(plan))}
    keys = keys.assign(rank=keys.format.map(lambda f: order.get(f, len(order))))
    keys = keys.sort_values(["rank", "variant", "engine"]).drop(columns="rank")
    return keys.assign(name=keys.format.map(lambda f: plan_record.label(plan, f)) + " "
                       + keys.variant + " · " + keys.engine).reset_index(drop=True)


def draw(inp: Inputs) -> tuple[Figure, list[str]]:
    t = inp.tables[tn.QUERIES]
    if t.empty:
        return message("Analysis queries", "No query was measured."), []
    keys = _rows(t, inp.plan)
    tasks = sorted(int(n) for n in t.task.unique())
    modes = ordered(t["mode"], MODES)
    height = 0.8 / len(modes)
    fig, axes = grid_axes(len(tasks), 4.2, 1.0 + 0.22 * len(keys) * len(modes), ncols=4)
    lo, hi = t.events_per_s_mean.min(), t.events_per_s_mean.max()
    hollow_any = False
    for ax, n in zip(axes, tasks, strict=True):
        for k, mode in enumerate(modes):
            d = keys.merge(t[(t.task == n) & (t["mode"] == mode)],
                           on=["format", "variant", "engine"], how="left")
            hollow = unverified(d.cold_verified) if mode == "cold" else np.zeros(len(d), bool)
            hollow_any |= bool(hollow.any())
            bars = ax.barh(np.arange(len(d)) + (k - (len(modes) - 1) / 2) * height,
                           d.events_per_s_mean.fillna(0), height=height,
                           xerr=d.events_per_s_std.fillna(0), color=MODE_COLORS[mode],
                           error_kw={"linewidth": 0.8})
            for bar, h in zip(bars, hollow, strict=True):
                if h:
                    bar.set(facecolor="white", edgecolor=MODE_COLORS[mode], hatch="////")
        question = t.loc[t.task == n, "question"].iloc[0]
        ax.set_title("\n".join(textwrap.wrap(f"task {n}: {question}", 48)), fontsize="x-small")
        ax.set_xscale("log")
        ax.set_xlim(lo / 2, hi * 2)
        ax.set_yticks(np.arange(len(keys)), keys.name, fontsize=7)
        ax.yaxis.set_minor_locator(NullLocator())
        ax.invert_yaxis()
        ax.set_xlabel("events/s (higher is faster)", fontsize="small")
    for ax in axes[1:]:
        if ax.get_subplotspec().colspan.start != 0:
            ax.tick_params(labelleft=False)
    handles = [Patch(color=MODE_COLORS[mode], label=f"{mode} cache") for mode in modes]
    if hollow_any:
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="////",
                             label=UNVERIFIED))
    fig.legend(handles=handles, loc="outside right upper")
    titled(fig, "Events/s per analysis task, per format · engine (higher is faster)")
    samples = int(t.n_samples.max()) if "n_samples" in t else 1
    notes = [f"per sample the median of the timed repetitions as events/s, mean ± std over "
             f"{samples} sample(s); every run's histograms equal the reference's; each task "
             "timed alone, on one file per format (cluster size "
             f"{', '.join(f'{c:,}' for c in sorted(t.cluster_size.unique()))})"]
    return fig, notes
