"""``groups``: where the bytes go, compressed bytes per event by branch group (triggers, event
scalars, the largest collections, the rest), one stacked bar per format × variant."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullLocator

from hepfmt.report.figures.inputs import NOT_GROUPS, Inputs
from hepfmt.report.figures.order import names
from hepfmt.report.style import PALETTE, figure, message

#: Branch groups drawn in a fixed place and colour; the largest collections get their own
#: segment, the rest one "other collections" segment (a bar of 28 colours is unreadable).
FIXED_GROUPS = {"triggers": "#bd1f01", "event": "#ffa90e"}
TAIL_GROUPS = {"metadata": "#555555", "unattributed": "#b0b0b0"}
OTHER_GROUPS = "#dddddd"
#: The collections' colours: the palette without the fixed groups' two, plus two of tab10's.
COLLECTION_COLORS = (*(c for c in PALETTE if c not in FIXED_GROUPS.values()), "#2ca02c",
                     "#17becf")
N_COLLECTIONS = len(COLLECTION_COLORS)


def group_segments(values: pd.DataFrame) -> pd.DataFrame:
    """The bars' segments: triggers and event scalars, the largest collections, the rest of the
    collections summed, then metadata / unattributed bytes."""
    values = values.fillna(0.0)
    collections = [c for c in values.columns if c not in FIXED_GROUPS | TAIL_GROUPS]
    collections.sort(key=lambda c: -values[c].mean())
    keep, rest = collections[:N_COLLECTIONS], collections[N_COLLECTIONS:]
    out = values[[c for c in FIXED_GROUPS if c in values] + keep].copy()
    if rest:
        out[f"other collections ({len(rest)})"] = values[rest].sum(axis=1)
    for c in TAIL_GROUPS:
        if c in values and (values[c] != 0).any():
            out[c] = values[c]
    return out


def _segment_styles(segments: Iterable[str]) -> list[dict]:
    """Fixed colours for the fixed groups, the collection colours in order for the others."""
    collections = iter(COLLECTION_COLORS)
    styles = []
    for name in segments:
        if name in FIXED_GROUPS:
            styles.append({"color": FIXED_GROUPS[name]})
        elif name in TAIL_GROUPS:
            styles.append({"color": TAIL_GROUPS[name],
                           "hatch": "//" if name == "unattributed" else None})
        elif name.startswith("other collections"):
            styles.append({"color": OTHER_GROUPS})
        else:
            styles.append({"color": next(collections)})
    return styles


def draw(inp: Inputs) -> tuple[Figure, list[str]]:
    gt = inp.tables["groups"]
    if gt.empty:
        return message("Where the bytes go", "groups.csv has no rows: nothing was written"), []
    largest = gt.cluster_size.max()
    d = gt[gt.cluster_size == largest]
    d = d.assign(name=names(d))
    seg = group_segments(d[[c for c in d.columns if c not in NOT_GROUPS | {"name"}]])
    order = np.argsort(seg.sum(axis=1).to_numpy(), kind="stable")
    seg, bars = seg.iloc[order], d.name.iloc[order]
    fig, axes = figure(1, 1, 9.5, 1.4 + 0.26 * len(seg))
    ax = axes[0, 0]
    y = np.arange(len(seg))
    left = np.zeros(len(seg))
    for c, style in zip(seg.columns, _segment_styles(seg.columns), strict=True):
        ax.barh(y, seg[c], left=left, height=0.75, label=c, edgecolor="white", linewidth=0.3,
                **style)
        left += seg[c].to_numpy()
    for yi, total in zip(y, left, strict=True):
        ax.text(total, yi, f" {total:,.0f}", va="center", fontsize=6.5)
    ax.set_yticks(y, bars, fontsize=7)
    ax.yaxis.set_minor_locator(NullLocator())
    ax.invert_yaxis()
    ax.set_xlim(0, left.max() * 1.12)
    ax.set_xlabel("compressed bytes per event (mean over samples)")
    ax.set_title(f"Where the bytes go, cluster size {int(largest):,}", fontsize="medium")
    fig.legend(loc="outside right upper")
    notes = ["metadata = file bytes in no branch's data (headers, footers, keys, page/basket "
             "headers)"]
    if "unattributed" in seg:
        notes.append("unattributed = the format does not report bytes per column (all its bytes)")
    return fig, notes
