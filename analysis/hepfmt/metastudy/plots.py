"""Log-log plots of the metadata study: decode time and metadata size vs number of columns, one
line per implementation (and Parquet statistics level), from :mod:`.tables`' main table, in
the house style of every hepfmt figure (:mod:`hepfmt.report.style`).

On log-log axes a line's slope is the exponent of its growth (1 = linear in the number of
columns, 2 = quadratic), which is what compares across machines. Error bars span the
interquartile range of the repetitions. The sample at NanoAOD width (real types) is drawn as
stars in its own panel.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure  # no pyplot: no display, no global figure state

from hepfmt.report.style import figure, figure_legend, provenance_footer, render

COLORS = {"pyarrow": "tab:blue", "arrow-rs": "tab:green", "arrow-rs+page-index": "tab:olive",
          "root-ttree": "tab:red", "root-rntuple": "tab:purple", "uproot-ttree": "tab:orange",
          "uproot-rntuple": "tab:brown"}
STYLES = {"none": ":", "chunk": "-", "page": "--", "-": "-"}
LAYOUT_COLORS = {"parquet-none": "tab:cyan", "parquet-chunk": "tab:blue",
                 "parquet-page": "tab:green", "ttree": "tab:red", "rntuple": "tab:purple"}


def _label(impl: str, stats: str) -> str:
    return impl if stats == "-" else f"{impl} ({stats} stats)"


def _panels(df: pd.DataFrame) -> list[str]:
    synthetic = sorted(df[df.type != "nanoaod"].type.unique())
    return synthetic + sorted(df[df.type == "nanoaod"].dataset.unique())


def _title(panel: str) -> str:
    return f"{panel} (real types)" if panel.startswith("nanoaod-") else f"{panel} columns"


def _panel_data(df: pd.DataFrame, panel: str) -> pd.DataFrame:
    return df[df.dataset == panel] if panel.startswith("nanoaod-") else df[df.type == panel]


def decode_time(df: pd.DataFrame) -> tuple[Figure, list[str]]:
    """Rows: memory, disk; columns: float32, string, NanoAOD sample(s)."""
    panels = _panels(df)
    modes = [m for m in ("memory", "disk") if m in set(df["mode"])]
    fig = Figure(figsize=(5.2 * len(panels), 4.2 * len(modes) + 1), layout="constrained")
    axes = fig.subplots(len(modes), len(panels), squeeze=False, sharex=True, sharey=True)
    for r, mode in enumerate(modes):
        for c, panel in enumerate(panels):
            ax = axes[r][c]
            d = _panel_data(df, panel)
            d = d[d["mode"] == mode]
            for (impl, stats), g in d.groupby(["implementation", "stats"]):
                g = g.sort_values("n_columns")
                ms = g.median_s * 1e3
                err = [ms - g.q25_s * 1e3, g.q75_s * 1e3 - ms]
                marker = "*" if panel.startswith("nanoaod-") else "o"
                ax.errorbar(g.n_columns, ms, yerr=err, color=COLORS.get(impl),
                            linestyle=STYLES.get(stats, "-") if marker == "o" else "none",
                            marker=marker, markersize=9 if marker == "*" else 4, capsize=2,
                            label=_label(impl, stats))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_title(f"{_title(panel)}, from {mode}")
            ax.set_xlabel("columns")
            ax.grid(True, which="both", alpha=0.3)
            if c == 0:
                ax.set_ylabel("metadata decode time (ms, median, IQR bars)")
    figure_legend(fig, axes, fontsize="small")
    return fig, ["from memory: the metadata bytes were loaded first, only the decode is timed; "
                 "from disk: the decoder opens the page-cached file"]


def metadata_size(df: pd.DataFrame) -> tuple[Figure, list[str]]:
    """Bytes of metadata per layout as stored; ROOT's uncompressed (dotted) and Parquet's page
    index (dashed) apart."""
    panels = _panels(df)
    fig, axes = figure(1, len(panels), 5.2, 4.6, sharex=True, sharey=True)
    sizes = df.drop_duplicates(["dataset", "layout"])
    for c, panel in enumerate(panels):
        ax = axes[0][c]
        d = _panel_data(sizes, panel).sort_values("n_columns")
        marker = "*" if panel.startswith("nanoaod-") else "o"
        line = "none" if marker == "*" else "-"
        for layout, g in d.groupby("layout"):
            ax.plot(g.n_columns, g.metadata_bytes, marker=marker, linestyle=line,
                    color=LAYOUT_COLORS.get(layout), label=f"{layout} metadata")
            if (g.metadata_bytes_uncompressed > g.metadata_bytes).any():
                ax.plot(g.n_columns, g.metadata_bytes_uncompressed, marker=marker,
                        linestyle="none" if line == "none" else ":", mfc="none",
                        color=LAYOUT_COLORS.get(layout), label=f"{layout} uncompressed")
            if (g.page_index_bytes > 0).any():
                ax.plot(g.n_columns, g.page_index_bytes, marker=marker,
                        linestyle="none" if line == "none" else "--",
                        color=LAYOUT_COLORS.get(layout), label=f"{layout} page index")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(_title(panel))
        ax.set_xlabel("columns")
        ax.grid(True, which="both", alpha=0.3)
        if c == 0:
            ax.set_ylabel("metadata bytes (as stored)")
    figure_legend(fig, axes, fontsize="small")
    return fig, ["ROOT compresses its metadata: 'as stored' is what a reader fetches"]


def plot(df: pd.DataFrame, out_dir: str | Path, provenance: dict,
         config_name: str | None = None) -> list[Path]:
    """Both figures, PNG and PDF, into ``out_dir``, each with the study's provenance footer,
    which names the CPU (a decode time is a fact about a machine; the title says what is
    shown, as every figure's does)."""
    out = Path(out_dir)
    base = df[~df.implementation.str.endswith("+page-index")]
    footer = provenance_footer(provenance, config_name)
    return (render(lambda: decode_time(df), footer, out / "decode_time")
            + render(lambda: metadata_size(base), footer, out / "metadata_size"))
