"""``memory``: the reads' own peak memory per format × reader, cold and warm side by side, one
row of panels per selection: what a reader costs besides time.

A study of real and synthetic samples tabulated apart (a ``kind`` column) gives each kind its
own bars (a row per format × reader × kind, the kind named), outlined in the kind's line
style: a reader's peak on a real file is never merged with its peak on a synthetic one."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import NullLocator

from hepfmt.report import plan_record
from hepfmt.report.figures.axes import MODE_COLORS, MODES, UNVERIFIED, unverified
from hepfmt.report.figures.inputs import Inputs
from hepfmt.report.figures.order import (
    kind_linestyle,
    ordered,
    sample_kinds,
    selection_title,
    sorted_rows,
    threads_label,
)
from hepfmt.report.grid import widest_read_cluster_size
from hepfmt.report.style import LINESTYLES, figure, message, titled

METRICS = {"rss_over_baseline_mb": "the reads' peak RSS over their starting RSS (MB)",
           "peak_rss_mb": "peak RSS of the reading process (MB)"}


def memory_table(reads: pd.DataFrame) -> pd.DataFrame:
    """Per format × reader × threads × selection × mode (× sample kind, when tabulated apart)
    at the cluster size where the most formats and readers were read
    (:mod:`hepfmt.report.grid`): the largest peak memory over variants (and samples, already
    in the table)."""
    d = reads[reads.cluster_size == widest_read_cluster_size(reads)]
    d = d.assign(hollow=(d["mode"] == "cold").to_numpy() & unverified(d.cold_verified)
                 if "cold_verified" in d else False,
                 label=d["label"].fillna(d.format) if "label" in d else d.format)
    exact = d.rss_exact.astype(bool) if "rss_exact" in d else pd.Series(False, index=d.index)
    return d.assign(rss_exact=exact).groupby(
        [*_series_keys(d), "selection", "mode"], as_index=False).agg(
        rss_over_baseline_mb=("rss_over_baseline_mb", "max"), peak_rss_mb=("peak_rss_mb", "max"),
        hollow=("hollow", "any"), rss_exact=("rss_exact", "all"))


def _series_keys(d: pd.DataFrame) -> list[str]:
    """What one row of bars is: a format × reader × threads, and its sample kind if any."""
    return ["format", "label", "reader", "threads", *(["kind"] if "kind" in d else [])]


def draw(inp: Inputs) -> tuple[Figure, list[str]]:
    reads = inp.tables["reads"]
    if reads.empty:
        return message("Peak memory per reader", "No reads were measured."), []
    m = memory_table(reads)
    on = _series_keys(m)
    kinds = sample_kinds(m)
    keys = m.drop_duplicates(on)
    if kinds:  # sorted_rows is stable: each reader's kinds stay together, in KINDS order
        keys = keys.iloc[np.argsort([kinds.index(k) for k in keys.kind], kind="stable")]
    keys = sorted_rows(keys.assign(variant=""), inp.plan)[on]
    many_threads = m.threads.nunique() > 1
    ylabels = [f"{k.label} · {k.reader}" + (f" · {threads_label(k.threads)}" if many_threads
                                            else "")
               + (f" · {k.kind} samples" if kinds else "")
               for k in keys.itertuples()]
    edges = [kind_linestyle(kinds, k.kind) if kinds else None
             for k in keys.itertuples()]
    sels = ordered(m.selection, plan_record.selections(inp.plan))
    modes = ordered(m["mode"], MODES)
    height = 0.8 / len(modes)
    fig, axes = figure(len(sels), len(METRICS), 5.0, 1.2 + 0.2 * len(keys) * len(modes),
                       sharey=True)
    for i, sel in enumerate(sels):
        for j, (metric, xlabel) in enumerate(METRICS.items()):
            ax = axes[i, j]
            for k, mode in enumerate(modes):
                d = keys.merge(m[(m.selection == sel) & (m["mode"] == mode)], on=on,
                               how="left")
                hollow = d.hollow.fillna(False).to_numpy(bool)
                bars = ax.barh(np.arange(len(d)) + (k - (len(modes) - 1) / 2) * height,
                               d[metric].fillna(0), height=height, color=MODE_COLORS[mode],
                               label=f"{mode} cache")
                for bar, h, edge in zip(bars, hollow, edges, strict=True):
                    if edge:
                        bar.set(edgecolor="black", linestyle=edge, linewidth=0.8)
                    if h:
                        bar.set(facecolor="white", edgecolor=MODE_COLORS[mode], hatch="////")
            ax.set_yticks(np.arange(len(keys)), ylabels, fontsize=7)
            ax.yaxis.set_minor_locator(NullLocator())
            ax.set_xlabel(xlabel)
            ax.set_title(selection_title(inp.plan, sel), fontsize="medium")
    axes[0, 0].invert_yaxis()  # shared by every panel: config order from the top
    handles = [Patch(color=MODE_COLORS[mode], label=f"{mode} cache") for mode in modes]
    handles += [Patch(facecolor="white", edgecolor="black",
                      linestyle=LINESTYLES[i % len(LINESTYLES)], label=f"{kind} samples")
                for i, kind in enumerate(kinds)]
    if m.hollow.any():
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="////",
                             label=UNVERIFIED))
    fig.legend(handles=handles, loc="outside right upper")
    cluster = widest_read_cluster_size(reads)
    titled(fig, f"Peak memory per reader, cluster size {cluster:,}")
    notes = [f"cluster size {cluster:,}; per format × reader the largest value over the "
             "measured variants and samples; cold and warm reads share one process per "
             "selection, so one peak"]
    if kinds:
        notes.append("real and synthetic samples apart (tabulate.mix_kinds off): a row of bars "
                     "per kind, outlined in its line style")
    bound = sorted({f"{k.label} · {k.reader}" for k in m[~m.rss_exact].itertuples()})
    if bound:
        notes.append("left panels only a lower bound (the kernel refused to reset the peak "
                     f"RSS, or records predate it): {', '.join(bound)}")
    return fig, notes
