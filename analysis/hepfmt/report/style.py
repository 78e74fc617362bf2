"""hepfmt's house style: every figure (the study's families and the metadata study's plots) is
drawn the same way, in mplhep's CMS-like style, on its own ``matplotlib.figure.Figure`` (no
pyplot state), with a provenance footer, written as PNG and PDF through ``atomic_path``.

A figure copied out of the report must still say what made its numbers, hence the footer; and
the same tables must give the same files, hence no creation date in the PDF. Importing this
module loads no plotting library (matplotlib loads when a figure is drawn): the figure registry
the Snakefile reads at parse time takes :data:`FILE_FORMATS` from here.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from hepfmt.atomic import atomic_path

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.figure import Figure

#: Every figure of hepfmt is written in each of these formats.
FILE_FORMATS = ("png", "pdf")

#: Petroff's ten colours (the CMS recommendation), chosen to stay apart under every common
#: colour-vision deficiency; past ten series, markers and line styles tell them apart
#: (:func:`hepfmt.report.figures.order.series_styles`).
PALETTE = ("#3f90da", "#ffa90e", "#bd1f01", "#94a4a2", "#832db6", "#a96b59", "#e76300",
           "#b9ac70", "#717581", "#92dadd")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINESTYLES = ("-", "--", ":", "-.")


def rc() -> dict:
    """mplhep's CMS style, scaled for multi-panel figures (its 26 pt suits one 10-inch panel)."""
    import mplhep  # imported here: it registers its fonts (TeX Gyre Heros) and takes a second

    return {**mplhep.style.CMS, "font.size": 11, "savefig.dpi": 150, "axes.linewidth": 1.0,
            "xtick.major.size": 6, "xtick.minor.size": 3, "ytick.major.size": 6,
            "ytick.minor.size": 3, "legend.fontsize": "x-small", "pdf.fonttype": 42,
            "xaxis.labellocation": "center", "yaxis.labellocation": "center"}


def figure(nrows: int, ncols: int, width: float, height: float,
           **kw: object) -> tuple[Figure, np.ndarray]:
    """A grid of panels, each ``width`` × ``height`` inches, laid out with room for a footer."""
    from matplotlib.figure import Figure  # no pyplot: no display, no global figure state

    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    return fig, fig.subplots(nrows, ncols, squeeze=False, **kw)


def message(title: str, text: str) -> Figure:
    """The figure of a family with nothing to draw: it says why, so the report still reads."""
    fig, axes = figure(1, 1, 8.0, 3.0)
    ax = axes[0, 0]
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, transform=ax.transAxes)
    return fig


def titled(fig: Figure, *lines: str) -> Figure:
    """``fig`` with ``lines`` under its title (as its title, if it has none), from the left and
    wrapped to 60% of its width: a long title would run into the legend beside the panels."""
    lines = tuple(x for x in (*fig.get_suptitle().splitlines(), *lines) if x)  # once wrapped
    if lines:
        width = int(0.6 * fig.get_figwidth() * 72 / (11 * 0.5))  # characters of 11 pt
        fig.suptitle("\n".join(w for x in lines for w in textwrap.wrap(x, width)),
                     fontsize="medium", x=0.01, ha="left")
    return fig


def figure_legend(fig: Figure, axes: np.ndarray, extra: dict[str, object] | None = None,
                  **kw: object) -> None:
    """One legend for all panels, in drawing order, beside them (below, it would cover the
    provenance footer); ``extra`` adds entries no panel drew (label -> handle)."""
    handles: dict[str, object] = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    handles.update(extra or {})
    fig.legend(handles.values(), handles.keys(), loc="outside right upper", **kw)


def provenance_footer(prov: dict, config_name: str | None = None) -> str:
    """One line naming what made the numbers, so a figure copied out of the report is traceable:
    first the CPUs they were measured on (a timing means nothing without the machine; in the
    footer, not the title, which says what the figure shows)."""
    from hepfmt.report.documents import measured_on, provenance_cpus  # pandas: not at import

    v, m = prov.get("versions", {}), prov.get("machine", {})
    config = f"config {config_name} " if config_name else "config "
    cpus = provenance_cpus(prov)
    cores = f", {m.get('cores', '?')} cores" if len(cpus) == 1 else ""  # the one machine's
    line = (f"{measured_on(cpus)}{cores} · "
            f"{str(prov.get('date', '?'))[:10]} · hepfmt {prov.get('hepfmt_commit', '?')} · "
            f"ROOT {v.get('ROOT', '?')} · pyarrow {v.get('pyarrow', '?')} · "
            f"uproot {v.get('uproot', '?')} · {config}(hash {prov.get('config_hash', '?')})")
    if prov.get("mixed"):
        line += f" · WARNING: measurements mixed {', '.join(prov['mixed'])}"
    return line


def _footer(fig: Figure, lines: list[str]) -> None:
    """Provenance and notes below the axes; the layout keeps a strip free for them. Lines are
    wrapped to the figure's width (a list of untimed formats can be long)."""
    size = 6.5
    width = int(fig.get_figwidth() * 72 / (size * 0.5))
    lines = [w for line in lines for w in textwrap.wrap(line, width, subsequent_indent="  ")]
    height = (len(lines) * size * 1.35 + 6) / 72 / fig.get_figheight()
    fig.get_layout_engine().set(rect=(0, height, 1, 1 - height))
    fig.text(0.005, 0.003, "\n".join(lines), ha="left", va="bottom", fontsize=size, color="0.3")


def _save(fig: Figure, stem: Path) -> list[Path]:
    out = []
    for fmt in FILE_FORMATS:
        target = stem.with_suffix(f".{fmt}")
        with atomic_path(target) as tmp:
            # no creation date in the PDF: the same tables give the same file
            fig.savefig(tmp, format=fmt, bbox_inches="tight",
                        metadata={"CreationDate": None} if fmt == "pdf" else None)
        out.append(target)
    return out


def render(draw_fn: Callable[[], tuple[Figure, list[str]]], footer: str,
           stem: str | Path) -> list[Path]:
    """Draw in the house style, add the provenance footer and notes, write PNG and PDF at
    ``stem``."""
    from matplotlib import rc_context

    with rc_context(rc()):
        fig, notes = draw_fn()
        _footer(fig, [footer, *(f"note: {n}" for n in notes)])
        return _save(fig, Path(stem))
