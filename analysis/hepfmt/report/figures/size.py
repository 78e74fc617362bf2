"""``size``: normalised size vs cluster size, one panel per codec family (zlib and gzip, both
DEFLATE, share one), one line per format × variant: the 2018 study's first message. Real and
synthetic samples tabulated apart (a ``kind`` column) are one line each, in their own style.

Each format × variant has a colour and marker no other has (:func:`.order.series_styles`: the
formats of one panel never share a colour), and each panel's axis has only the cluster sizes
it has data at: a column left empty reads as a format that failed there."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from hepfmt.codec import Variant
from hepfmt.report.figures.axes import cluster_axis, grid_axes, points, size_limits, unit_line
from hepfmt.report.figures.inputs import Inputs
from hepfmt.report.figures.order import (
    names,
    ordered,
    sample_kinds,
    series_styles,
    sorted_rows,
)
from hepfmt.report.style import LINESTYLES, message, titled

CODEC_TITLES = {"none": "uncompressed", "deflate": "zlib / gzip (DEFLATE)",
                "default": "default (the format picks its encodings)",
                "compact": "compact (Vortex's compact strategy)"}
CODEC_ORDER = ("none", "deflate", "lz4", "zstd", "lzma", "snappy", "brotli", "lzf", "default",
               "compact")


def draw(inp: Inputs) -> tuple[Figure, list[str]]:
    st = inp.tables["size"]
    if st.empty:
        return message("Normalized size", "size.csv has no rows: nothing was written"), []
    st = sorted_rows(st.assign(family=st.variant.map(lambda v: Variant.of(v).family),
                               name=names(st)), inp.plan)
    styles = series_styles(inp.plan, zip(st.format, st.variant, strict=True))
    families = ordered(st.family, CODEC_ORDER)
    fig, axes = grid_axes(len(families), 5.0, 3.9)
    kinds = sample_kinds(st)
    for ax, fam in zip(axes, families, strict=True):
        d = st[st.family == fam]
        for key, g in d.groupby(["format", "variant", *(["kind"] if kinds else [])],
                                sort=False):
            fmt, kind = key[0], key[-1]
            rank = list(d[d.format == fmt].variant.unique()).index(g.variant.iloc[0])
            style = kinds.index(kind) if kinds else rank
            g = g.sort_values("cluster_size")
            color, marker = styles[(fmt, g.variant.iloc[0])]
            points(ax, g.cluster_size, g.normalized_size_mean, g.normalized_size_std,
                   color, marker, LINESTYLES[style % len(LINESTYLES)],
                   g.name.iloc[0] + (f", {kind} samples" if kinds else ""),
                   np.zeros(len(g), bool))
        unit_line(ax, "1 = naive numpy size")
        size_limits(ax, d.normalized_size_mean, d.normalized_size_std)
        cluster_axis(ax, d.cluster_size)
        ax.set_ylabel("normalized size (file / naive)")
        ax.set_title(CODEC_TITLES.get(fam, fam), fontsize="medium")
        ax.legend(loc="best", ncol=1 + len(d.name.unique()) // 5)
    titled(fig, "Normalized size (file / naive numpy arrays) vs cluster size, per codec")
    notes = []
    if kinds:
        notes.append("real and synthetic samples averaged apart (tabulate.mix_kinds off): one "
                     "line per kind, its line style, the kind named in the legend")
    if st.cluster_size.nunique() == 1:
        notes.append("one cluster size: points, not lines")
    if st.n_samples.max() <= 1:
        notes.append("one sample: no error bars (no spread over samples)")
    return fig, notes
