"""Figures of the size and read study, drawn from the tables that ``hepfmt tabulate`` writes.

Physicists read a format comparison as plots first. Each figure family redraws one message of
the 2018 study (or a question it could not ask) from ``results/tables/*.csv``, never from the raw
measurements: a figure can then only show what a table already says, and carries the same
provenance (a footer from ``provenance.json``). Every figure is written as PNG and PDF through
``atomic_path``, drawn on its own ``matplotlib.figure.Figure`` (no pyplot state) in mplhep's
CMS-like style.

Families (``FAMILIES``): ``size`` (normalised size vs cluster size per codec family), ``ratios``
(ROOT / Parquet read-rate ratio vs cluster size), ``tradeoff`` (size vs read time with the Pareto
front), ``groups`` (compressed bytes per event by branch group) and ``memory`` (peak memory per
reader). The metadata-cost plots are ``metaplots``', drawn through :func:`render` too.

A study may lack pieces (no reads measured, one cluster size, one sample): a figure then says
what is missing instead of failing, since the report must still build. A cold read whose
eviction was not verified is drawn hollow or hatched and named in the legend: it is not a cold
figure.
"""

from __future__ import annotations

import json
import math
import re
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.figure import Figure  # no pyplot: no display, no global figure state
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from analysis.atomic import atomic_path
from analysis.errors import ConfigError, InputError
from analysis.plan import study

FILE_FORMATS = ("png", "pdf")
#: Petroff's ten colours (the CMS recommendation), one per format in config order.
PALETTE = ("#3f90da", "#ffa90e", "#bd1f01", "#94a4a2", "#832db6", "#a96b59", "#e76300",
           "#b9ac70", "#717581", "#92dadd")
MARKERS = ("o", "s", "^", "D", "v", "P", "X")
LINESTYLES = ("-", "--", ":", "-.")
MODES = ("cold", "warm")
MODE_COLORS = {"cold": "#3f90da", "warm": "#e76300"}
UNVERIFIED = "hollow / hatched: cold eviction not verified, not a cold figure"

#: A variant's algorithm -> its codec-family panel (zlib and gzip are both DEFLATE).
CODEC_FAMILY = {"zlib": "deflate", "gzip": "deflate"}
CODEC_TITLES = {"none": "uncompressed", "deflate": "zlib / gzip (DEFLATE)",
                "default": "default (the format picks its encodings)",
                "compact": "compact (Vortex's compact strategy)"}
CODEC_ORDER = ("none", "deflate", "lz4", "zstd", "lzma", "snappy", "brotli", "lzf", "default",
               "compact")

#: Branch groups drawn in a fixed place and colour; the largest collections get their own
#: segment, the rest one "other collections" segment (a bar of 28 colours is unreadable).
FIXED_GROUPS = {"triggers": "#bd1f01", "event": "#ffa90e"}
TAIL_GROUPS = {"metadata": "#555555", "unattributed": "#b0b0b0"}
OTHER_GROUPS = "#dddddd"
#: The collections' colours: the palette without the fixed groups' two, plus two of tab10's.
COLLECTION_COLORS = (*(c for c in PALETTE if c not in FIXED_GROUPS.values()), "#2ca02c",
                     "#17becf")
N_COLLECTIONS = len(COLLECTION_COLORS)
NOT_GROUPS = {"format", "label", "adapter", "variant", "cluster_size"}


# -- inputs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableSpec:
    """The columns a figure relies on: text ones are read as strings (a selection named ``10``
    stays ``"10"``), numeric ones must parse as numbers; ``extra`` is a regex of further numeric
    columns whose names depend on the config (groups, selections)."""

    text: tuple[str, ...]
    numeric: tuple[str, ...]
    extra: str | None = None


TABLES = {
    "size": TableSpec(("format", "variant"), ("cluster_size", "normalized_size_mean",
                                              "normalized_size_std", "n_samples")),
    "groups": TableSpec(("format", "variant"), ("cluster_size",), extra=".+"),
    "reads": TableSpec(("format", "variant", "reader", "selection", "mode"),
                       ("cluster_size", "threads", "rss_over_baseline_mb", "peak_rss_mb")),
    "ratios": TableSpec(("pair", "ttree", "parquet", "quantity", "selection", "mode"),
                        ("threads", "cluster_size", "ratio_mean", "ratio_std", "n_samples")),
    "formats": TableSpec(("format", "variant"), ("cluster_size", "normalized_size_mean",
                                                 "normalized_size_std"),
                         extra=r".+_(cold|warm)_s|rss_over_baseline_mb|peak_rss_mb|threads"),
}


def read_table(path: str | Path, spec: TableSpec) -> pd.DataFrame:
    """A table as ``tabulate`` writes it; an empty one (nothing measured) is an empty frame."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such table (written by 'hepfmt tabulate')")
    try:
        df = pd.read_csv(path, comment="#", dtype={c: str for c in (*spec.text, "label")})
    except pd.errors.EmptyDataError:
        return pd.DataFrame({c: pd.Series(dtype=str) for c in spec.text}
                            | {c: pd.Series(dtype=float) for c in spec.numeric})
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(path, f"not a readable CSV table ({exc})") from exc
    missing = [c for c in (*spec.text, *spec.numeric) if c not in df]
    if missing:
        raise InputError(path, f"not a hepfmt {path.stem} table: no column "
                               f"{', '.join(repr(c) for c in missing)}")
    extra = [c for c in df.columns if spec.extra and c not in NOT_GROUPS | set(spec.text)
             and re.fullmatch(spec.extra, c)]
    for c in (*spec.numeric, *extra):
        try:
            df[c] = pd.to_numeric(df[c])
        except (ValueError, TypeError) as exc:
            raise InputError(path, f"column {c!r} is not numeric ({exc})") from exc
    return df


def read_provenance(path: str | Path) -> dict:
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise InputError(path, f"not a readable provenance file ({exc})") from exc
    if not isinstance(doc, dict) or not {"versions", "machine", "date"} <= set(doc):
        raise InputError(path, "not a hepfmt provenance file (needs versions, machine, date)")
    return doc


@dataclass(frozen=True)
class Inputs:
    tables: dict[str, pd.DataFrame]
    provenance: dict
    config: dict
    config_name: str | None = None


# -- drawing helpers ----------------------------------------------------------------------------


def _style() -> dict:
    """mplhep's CMS style, scaled for multi-panel figures (its 26 pt suits one 10-inch panel)."""
    import mplhep  # imported here: it registers its fonts (TeX Gyre Heros) and takes a second

    return {**mplhep.style.CMS, "font.size": 11, "savefig.dpi": 150, "axes.linewidth": 1.0,
            "xtick.major.size": 6, "xtick.minor.size": 3, "ytick.major.size": 6,
            "ytick.minor.size": 3, "legend.fontsize": "x-small", "pdf.fonttype": 42,
            "xaxis.labellocation": "center", "yaxis.labellocation": "center"}


def _figure(nrows: int, ncols: int, width: float, height: float, **kw) -> tuple[Figure, np.ndarray]:
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    return fig, fig.subplots(nrows, ncols, squeeze=False, **kw)


def _message(title: str, text: str) -> Figure:
    """The figure of a family with nothing to draw: it says why, so the report still reads."""
    fig, axes = _figure(1, 1, 8.0, 3.0)
    ax = axes[0, 0]
    ax.set_axis_off()
    ax.set_title(title)
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, transform=ax.transAxes)
    return fig


def provenance_footer(prov: dict, config_name: str | None = None) -> str:
    """One line naming what made the numbers, so a figure copied out of the report is traceable."""
    v, m = prov.get("versions", {}), prov.get("machine", {})
    config = f"config {config_name} " if config_name else "config "
    line = (f"hepfmt {prov.get('hepfmt_commit', '?')} · ROOT {v.get('ROOT', '?')} · "
            f"pyarrow {v.get('pyarrow', '?')} · uproot {v.get('uproot', '?')} · "
            f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores · {str(prov.get('date', '?'))[:10]}"
            f" · {config}(hash {prov.get('config_hash', '?')})")
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


def _ordered(values: Iterable, order: Iterable) -> list:
    """``values`` in the order of ``order`` (the config's), unknown ones after, sorted."""
    rank = {str(v): i for i, v in enumerate(order)}
    return sorted({str(v) for v in values if not pd.isna(v)},
                  key=lambda v: (rank.get(v, len(rank)), v))


def _format_colors(config: dict, formats: Iterable[str]) -> dict[str, str]:
    names = _ordered(formats, config.get("formats", {}))
    return {f: PALETTE[i % len(PALETTE)] for i, f in enumerate(names)}


def _names(df: pd.DataFrame) -> pd.Series:
    labels = df["label"] if "label" in df else df["format"]
    return labels.fillna(df["format"]) + " " + df["variant"]


def _rank(items: list, item: object) -> int:
    return items.index(item) if item in items else len(items)


def _sorted_rows(df: pd.DataFrame, config: dict) -> pd.DataFrame:
    """Rows in config order of format, variant and reader (the format's default reader
    first), then by threads: legends and bars read like the config."""
    formats = config.get("formats", {})
    has_reader = "reader" in df

    def key(r) -> tuple:
        fcfg = formats.get(r.format)
        readers = study.readers(config, r.format) if fcfg and has_reader else []
        threads = getattr(r, "threads", 0)
        return (_rank(list(formats), r.format), r.format,
                _rank(fcfg.get("variants", []) if fcfg else [], r.variant), r.variant,
                _rank(readers, r.reader) if has_reader else 0, str(r.reader) if has_reader
                else "", 0 if pd.isna(threads) else threads)

    keys = [key(r) for r in df.itertuples()]
    return df.iloc[sorted(range(len(df)), key=keys.__getitem__)]


def unverified(values: Iterable) -> np.ndarray:
    """True where a ``cold_verified`` cell is false (empty = not a cold read = not flagged)."""
    return np.array([str(v) == "False" for v in values], dtype=bool)


def _points(ax, x, y, yerr, color: str, marker: str, linestyle: str, label: str,
            hollow: np.ndarray) -> None:
    """A line with error bars whose unverified-cold points are hollow."""
    x, y, hollow = np.asarray(x, float), np.asarray(y, float), np.asarray(hollow, bool)
    ax.errorbar(x, y, yerr=np.nan_to_num(np.asarray(yerr, float)), color=color,
                linestyle=linestyle, marker="none", capsize=2)
    ax.plot(x[~hollow], y[~hollow], linestyle="none", marker=marker, color=color, markersize=5)
    ax.plot(x[hollow], y[hollow], linestyle="none", marker=marker, markerfacecolor="white",
            markeredgecolor=color, markersize=5)
    ax.plot([], [], color=color, linestyle=linestyle, marker=marker, markersize=5, label=label)


def _unverified_handle() -> Line2D:
    return Line2D([], [], linestyle="none", marker="o", markerfacecolor="white",
                  markeredgecolor="black", label=UNVERIFIED)


def _figure_legend(fig: Figure, axes: np.ndarray, flag_unverified: bool) -> None:
    """One legend for all panels, in drawing order (the config's), beside the figure."""
    handles: dict[str, object] = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    if flag_unverified:
        handles[UNVERIFIED] = _unverified_handle()
    fig.legend(handles.values(), handles.keys(), loc="outside right upper")


def _cluster_axis(ax, sizes: Iterable[float]) -> None:
    """Log x with the measured cluster sizes as the only ticks."""
    sizes = sorted({int(s) for s in sizes})
    ax.set_xscale("log")
    ax.set_xticks(sizes, [f"{s:,}" for s in sizes])
    ax.xaxis.set_minor_locator(NullLocator())
    if len(sizes) == 1:
        ax.set_xlim(sizes[0] / 2, sizes[0] * 2)
    ax.set_xlabel("cluster size (events per cluster / row group)")


def _plain_log(ax, axis: str, lo: float, hi: float) -> None:
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


def _unit_line(ax, text: str) -> None:
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1, zorder=0)
    ax.text(0.01, 1.0, text, transform=ax.get_yaxis_transform(), fontsize=7, va="bottom")


def _threads(n: float) -> str:
    return f"{n:g} thread" + ("" if n == 1 else "s")


def _selections(config: dict) -> dict[str, object]:
    return {str(k): v for k, v in config.get("measure", {}).get("selections", {}).items()}


def _selection_title(config: dict, sel: str) -> str:
    branches = _selections(config).get(sel)
    if branches == "*":
        return f"'{sel}': all branches"
    return f"'{sel}': {len(branches)} branches" if branches else f"selection '{sel}'"


def _grid_axes(n: int, width: float, height: float, ncols: int = 3) -> tuple[Figure, list]:
    ncols = min(ncols, n)
    fig, axes = _figure(math.ceil(n / ncols), ncols, width, height)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


# -- size: normalised size vs cluster size, one panel per codec family ---------------------------


def _size_limits(ax, mean: pd.Series, std: pd.Series) -> None:
    """The data's range, always with the 1.0 line in it (the reference every size is read
    against), not from zero: differences between formats of one codec are a few percent."""
    std = std.fillna(0)
    lo, hi = min(1.0, (mean - std).min()), max(1.0, (mean + std).max())
    pad = 0.08 * (hi - lo)
    ax.set_ylim(max(0.0, lo - pad), hi + pad)


def codec_family(variant: str) -> str:
    algorithm = variant.split("+")[0].split("-")[0]
    return CODEC_FAMILY.get(algorithm, algorithm)


def draw_size(inp: Inputs) -> tuple[Figure, list[str]]:
    st = inp.tables["size"]
    if st.empty:
        return _message("Normalized size", "size.csv has no rows: nothing was written"), []
    st = _sorted_rows(st.assign(family=st.variant.map(codec_family), name=_names(st)),
                      inp.config)
    colors = _format_colors(inp.config, st.format)
    families = _ordered(st.family, CODEC_ORDER)
    fig, axes = _grid_axes(len(families), 5.0, 3.9)
    for ax, fam in zip(axes, families, strict=True):
        d = st[st.family == fam]
        for (fmt, _), g in d.groupby(["format", "variant"], sort=False):
            rank = list(d[d.format == fmt].variant.unique()).index(g.variant.iloc[0])
            g = g.sort_values("cluster_size")
            _points(ax, g.cluster_size, g.normalized_size_mean, g.normalized_size_std,
                    colors[fmt], MARKERS[rank % len(MARKERS)],
                    LINESTYLES[rank % len(LINESTYLES)], g.name.iloc[0],
                    np.zeros(len(g), bool))
        _unit_line(ax, "1 = naive numpy size")
        _size_limits(ax, d.normalized_size_mean, d.normalized_size_std)
        _cluster_axis(ax, st.cluster_size)
        ax.set_ylabel("normalized size (file / naive)")
        ax.set_title(CODEC_TITLES.get(fam, fam), fontsize="medium")
        ax.legend(loc="best", ncol=1 + len(d.name.unique()) // 5)
    notes = []
    if st.cluster_size.nunique() == 1:
        notes.append("one cluster size: points, not lines")
    if st.n_samples.max() <= 1:
        notes.append("one sample: no error bars (no spread over samples)")
    return fig, notes


# -- ratios: ROOT rate / Parquet rate vs cluster size ------------------------------------------


def ratio_unverified(config: dict, ratios: pd.DataFrame, reads: pd.DataFrame) -> np.ndarray:
    """Per ratio row: is it a cold ratio one of whose two reads was not verified cold?"""
    if "cold_verified" in ratios:
        return unverified(ratios.cold_verified)
    if reads.empty or "cold_verified" not in reads:
        return np.zeros(len(ratios), bool)
    bad = reads[(reads["mode"] == "cold") & unverified(reads.cold_verified)]
    sides = study.pair_sides(config)
    flags = []
    for r in ratios.itertuples():
        hit = r.mode == "cold" and any(
            ((bad.format == f) & (bad.variant == v) & (bad.reader == reader)
             & (bad.cluster_size == r.cluster_size) & (bad.selection == r.selection)
             & (bad.threads == r.threads)).any()
            for f, v, reader in sides.get(r.pair, []))
        flags.append(hit)
    return np.array(flags, dtype=bool)


def _ratio_limits(r: pd.DataFrame) -> tuple[float, float]:
    """Log y around 1: a ratio of 0.05 and one of 20 are the same distance from equal."""
    std = r.ratio_std.fillna(0)
    lo = min(1.0, (r.ratio_mean - std).where(lambda v: v > 0, r.ratio_mean).min())
    hi = max(1.0, (r.ratio_mean + std).max())
    return lo / 1.3, hi * 1.3


def draw_ratios(inp: Inputs) -> tuple[Figure, list[str]]:
    r = inp.tables["ratios"]
    r = r[r.quantity == "rate"]
    title = "ROOT / Parquet read-rate ratio"
    if r.empty:
        return _message(title, "No read-rate ratios: no reads were measured on both sides of "
                               "any configured ROOT / Parquet pairing."), []
    r = r.assign(hollow=ratio_unverified(inp.config, r, inp.tables["reads"]))
    pairs = _ordered(r.pair, study.pair_sides(inp.config))
    colors = {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(pairs)}
    threads = sorted(r.threads.unique())
    sels = _ordered(r.selection, _selections(inp.config))
    modes = _ordered(r["mode"], MODES)
    fig, axes = _figure(len(sels), len(modes), 5.2, 4.0, sharey="row")
    for i, sel in enumerate(sels):
        for j, mode in enumerate(modes):
            ax = axes[i, j]
            d = r[(r.selection == sel) & (r["mode"] == mode)]
            for pair, th in [(p, t) for p in pairs for t in threads]:
                g = d[(d.pair == pair) & (d.threads == th)].sort_values("cluster_size")
                if g.empty:
                    continue
                k = threads.index(th)
                label = pair + (f", {_threads(th)}" if len(threads) > 1 else "")
                # pairs side by side (a few percent apart), not on top of each other
                dodge = 1.04 ** (pairs.index(pair) - (len(pairs) - 1) / 2)
                _points(ax, g.cluster_size * dodge, g.ratio_mean, g.ratio_std, colors[pair],
                        MARKERS[pairs.index(pair) % len(MARKERS)],
                        LINESTYLES[k % len(LINESTYLES)], label, g.hollow.to_numpy())
            _unit_line(ax, "1 = equal rates; > 1: ROOT faster")
            _cluster_axis(ax, r.cluster_size)
            _plain_log(ax, "y", *_ratio_limits(r))
            ax.set_title(f"{_selection_title(inp.config, sel)}, {mode} cache",
                         fontsize="medium")
            if j == 0:
                ax.set_ylabel("ROOT rate / Parquet rate")
    _figure_legend(fig, axes, r.hollow.any())
    notes = ["readers: " + ", ".join(sorted({f"{f} {rd}" for sides in study.pair_sides(inp.config)
                                             .values() for f, _, rd in sides}))]
    if r.cluster_size.nunique() == 1:
        notes.append(f"reads measured at one cluster size ({int(r.cluster_size.iloc[0]):,})")
    if r.n_samples.max() <= 1:
        notes.append("one sample: no error bars")
    return fig, notes


# -- tradeoff: size vs read time, Pareto front -------------------------------------------------


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


def time_column(ft: pd.DataFrame, config: dict) -> tuple[str, str, str] | None:
    """The read-time column to plot, (column, selection, mode): warm before cold (a warm read is
    always what it says), the all-branch selection before others (the whole file's cost)."""
    cols = {c for c in ft.columns if c.endswith(("_warm_s", "_cold_s")) and ft[c].notna().any()}
    if not cols:
        return None
    sels = _selections(config)
    order = sorted({c.rsplit("_", 2)[0] for c in cols},
                   key=lambda s: (sels.get(s) != "*", s != "all", s))
    for mode in ("warm", "cold"):
        for sel in order:
            if f"{sel}_{mode}_s" in cols:
                return f"{sel}_{mode}_s", sel, mode
    return None


def default_reader_rows(ft: pd.DataFrame, col: str, config: dict) -> pd.DataFrame:
    """One row per format × variant: its default reader (first in the format's reader list)
    among the timed ones, at the fewest threads."""
    rows = ft.dropna(subset=[col])
    if "threads" in rows:
        rows = rows[rows.threads == rows.threads.min()]
    return _sorted_rows(rows, config).drop_duplicates(["format", "variant"])


def draw_tradeoff(inp: Inputs) -> tuple[Figure, list[str]]:
    ft = inp.tables["formats"]
    title = "Size vs read time"
    chosen = time_column(ft, inp.config) if "reader" in ft else None
    if chosen is None:
        return _message(title, "No read times in formats.csv: no reads were measured."), []
    col, sel, mode = chosen
    pts = default_reader_rows(ft, col, inp.config)
    pts = pts.assign(name=_names(pts) + " [" + pts.reader + "]")
    x, y = pts[col].to_numpy(float), pts.normalized_size_mean.to_numpy(float)
    front = pareto_front(x, y)
    hollow = unverified(pts.cold_verified) if mode == "cold" and "cold_verified" in pts \
        else np.zeros(len(pts), bool)
    colors = _format_colors(inp.config, pts.format)
    fig, axes = _figure(1, 1, 8.0, 6.0)
    ax = axes[0, 0]
    order = np.argsort(x[front])
    ax.step(x[front][order], y[front][order], where="post", color="black", alpha=0.3,
            linewidth=4, zorder=0, label="Pareto front: nothing is both smaller and faster")
    for i, p in enumerate(pts.itertuples()):
        on = bool(front[i])
        rank = list(pts[pts.format == p.format].variant).index(p.variant)
        ax.errorbar(x[i], y[i], yerr=np.nan_to_num(p.normalized_size_std),
                    color=colors[p.format], capsize=2)
        ax.plot(x[i], y[i], marker=MARKERS[rank % len(MARKERS)], linestyle="none",
                markersize=10 if on else 7, color=colors[p.format],
                markerfacecolor="white" if hollow[i] else colors[p.format],
                markeredgecolor="black" if on else colors[p.format],
                label=p.name + (" (front)" if on else ""))
        if on:
            ax.annotate(p.name, (x[i], y[i]), xytext=(6, 4), textcoords="offset points",
                        fontsize=7, fontweight="bold")
    timed = x[~np.isnan(x)]
    _plain_log(ax, "x", timed.min() / 1.25, timed.max() * 1.25)
    _unit_line(ax, "1 = naive numpy size")
    _size_limits(ax, pts.normalized_size_mean, pts.normalized_size_std)
    ax.set_xlabel(f"read time (s), {_selection_title(inp.config, sel)}, {mode} cache")
    ax.set_ylabel("normalized size (file / naive)")
    ax.set_title(f"{title}, cluster size {int(pts.cluster_size.max()):,}: lower left is better",
                 fontsize="medium")
    _figure_legend(fig, axes, hollow.any())
    return fig, _untimed_notes(ft, pts, col)


def _untimed_notes(ft: pd.DataFrame, pts: pd.DataFrame, col: str) -> list[str]:
    timed = set(zip(pts.format, pts.variant, strict=True))
    untimed = ft[[(f, v) not in timed for f, v in zip(ft.format, ft.variant, strict=True)]]
    untimed = untimed.drop_duplicates(["format", "variant"])
    notes = ["one point per format × variant: its default reader (first in its reader list), "
             f"fewest threads; x = {col} of formats.csv"]
    if not untimed.empty:
        names = ", ".join(_names(untimed))
        notes.append(f"sizes only, no read time at this cluster size ({len(untimed)}): {names}")
    return notes


# -- groups: compressed bytes per event by branch group ----------------------------------------


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


def _segment_styles(names: Iterable[str]) -> list[dict]:
    """Fixed colours for the fixed groups, the collection colours in order for the others."""
    collections = iter(COLLECTION_COLORS)
    styles = []
    for name in names:
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


def draw_groups(inp: Inputs) -> tuple[Figure, list[str]]:
    gt = inp.tables["groups"]
    if gt.empty:
        return _message("Where the bytes go", "groups.csv has no rows: nothing was written"), []
    largest = gt.cluster_size.max()
    d = gt[gt.cluster_size == largest]
    d = d.assign(name=_names(d))
    seg = group_segments(d[[c for c in d.columns if c not in NOT_GROUPS | {"name"}]])
    order = np.argsort(seg.sum(axis=1).to_numpy(), kind="stable")
    seg, names = seg.iloc[order], d.name.iloc[order]
    fig, axes = _figure(1, 1, 9.5, 1.4 + 0.26 * len(seg))
    ax = axes[0, 0]
    y = np.arange(len(seg))
    left = np.zeros(len(seg))
    for c, style in zip(seg.columns, _segment_styles(seg.columns), strict=True):
        ax.barh(y, seg[c], left=left, height=0.75, label=c, edgecolor="white", linewidth=0.3,
                **style)
        left += seg[c].to_numpy()
    for yi, total in zip(y, left, strict=True):
        ax.text(total, yi, f" {total:,.0f}", va="center", fontsize=6.5)
    ax.set_yticks(y, names, fontsize=7)
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


# -- memory: peak RSS per reader ---------------------------------------------------------------


MEMORY_METRICS = {"rss_over_baseline_mb": "the reads' peak RSS over their starting RSS (MB)",
                  "peak_rss_mb": "peak RSS of the reading process (MB)"}


def memory_table(reads: pd.DataFrame) -> pd.DataFrame:
    """Per format × reader × threads × selection × mode at the largest cluster size: the
    largest peak memory over variants (and samples, already in the table)."""
    d = reads[reads.cluster_size == reads.cluster_size.max()]
    d = d.assign(hollow=(d["mode"] == "cold").to_numpy() & unverified(d.cold_verified)
                 if "cold_verified" in d else False,
                 label=d["label"].fillna(d.format) if "label" in d else d.format)
    exact = d.rss_exact.astype(bool) if "rss_exact" in d else pd.Series(False, index=d.index)
    return d.assign(rss_exact=exact).groupby(
        ["format", "label", "reader", "threads", "selection", "mode"], as_index=False).agg(
        rss_over_baseline_mb=("rss_over_baseline_mb", "max"), peak_rss_mb=("peak_rss_mb", "max"),
        hollow=("hollow", "any"), rss_exact=("rss_exact", "all"))


def draw_memory(inp: Inputs) -> tuple[Figure, list[str]]:
    reads = inp.tables["reads"]
    if reads.empty:
        return _message("Peak memory per reader", "No reads were measured."), []
    m = memory_table(reads)
    keys = _sorted_rows(m.drop_duplicates(["format", "reader", "threads"])
                        .assign(variant=""), inp.config)[["format", "label", "reader", "threads"]]
    many_threads = m.threads.nunique() > 1
    ylabels = [f"{k.label} · {k.reader}" + (f" · {_threads(k.threads)}" if many_threads else "")
               for k in keys.itertuples()]
    sels = _ordered(m.selection, _selections(inp.config))
    modes = _ordered(m["mode"], MODES)
    height = 0.8 / len(modes)
    fig, axes = _figure(len(sels), len(MEMORY_METRICS), 5.0,
                        1.2 + 0.2 * len(keys) * len(modes), sharey=True)
    for i, sel in enumerate(sels):
        for j, (metric, xlabel) in enumerate(MEMORY_METRICS.items()):
            ax = axes[i, j]
            for k, mode in enumerate(modes):
                d = keys.merge(m[(m.selection == sel) & (m["mode"] == mode)],
                               on=["format", "label", "reader", "threads"], how="left")
                hollow = d.hollow.fillna(False).to_numpy(bool)
                bars = ax.barh(np.arange(len(d)) + (k - (len(modes) - 1) / 2) * height,
                               d[metric].fillna(0), height=height, color=MODE_COLORS[mode],
                               label=f"{mode} cache")
                for bar, h in zip(bars, hollow, strict=True):
                    if h:
                        bar.set(facecolor="white", edgecolor=MODE_COLORS[mode], hatch="////")
            ax.set_yticks(np.arange(len(keys)), ylabels, fontsize=7)
            ax.yaxis.set_minor_locator(NullLocator())
            ax.set_xlabel(xlabel)
            ax.set_title(_selection_title(inp.config, sel), fontsize="medium")
    axes[0, 0].invert_yaxis()  # shared by every panel: config order from the top
    handles = [Patch(color=MODE_COLORS[mode], label=f"{mode} cache") for mode in modes]
    if m.hollow.any():
        handles.append(Patch(facecolor="white", edgecolor="black", hatch="////",
                             label=UNVERIFIED))
    fig.legend(handles=handles, loc="outside right upper")
    cluster = int(reads.cluster_size.max())
    notes = [f"cluster size {cluster:,}; per format × reader the largest value over the "
             "measured variants and samples; cold and warm reads share one process per "
             "selection, so one peak"]
    bound = sorted({f"{k.label} · {k.reader}" for k in m[~m.rss_exact].itertuples()})
    if bound:
        notes.append("left panels only a lower bound (the kernel refused to reset the peak "
                     f"RSS, or records predate it): {', '.join(bound)}")
    return fig, notes


# -- families and the command ------------------------------------------------------------------


@dataclass(frozen=True)
class Family:
    stem: str  # the file name of its figure (PNG and PDF)
    tables: tuple[str, ...]  # the tables it reads
    draw: Callable[[Inputs], tuple[Figure, list[str]]]


FAMILIES = {
    "size": Family("normalized_size", ("size",), draw_size),
    "ratios": Family("rate_ratio", ("ratios", "reads"), draw_ratios),
    "tradeoff": Family("size_vs_read_time", ("formats",), draw_tradeoff),
    "groups": Family("bytes_by_group", ("groups",), draw_groups),
    "memory": Family("peak_memory", ("reads",), draw_memory),
}


def family(name: str) -> Family:
    if name not in FAMILIES:
        raise ConfigError("figure family", f"unknown {name!r}; known: {', '.join(FAMILIES)}")
    return FAMILIES[name]


def load_inputs(name: str, tables_dir: str | Path, provenance: str | Path,
                config: str | Path, config_name: str | None = None) -> Inputs:
    from analysis.plan import config as cfg

    tables = {t: read_table(Path(tables_dir) / f"{t}.csv", TABLES[t])
              for t in family(name).tables}
    return Inputs(tables, read_provenance(provenance), cfg.load(config), config_name)


def render(draw_fn: Callable[[], tuple[Figure, list[str]]], footer: str,
           stem: str | Path) -> list[Path]:
    """Every figure of hepfmt (the study's and the metadata study's) drawn the same way: in
    the house style, with its provenance footer and notes, as PNG and PDF at ``stem``."""
    with rc_context(_style()):
        fig, notes = draw_fn()
        _footer(fig, [footer, *(f"note: {n}" for n in notes)])
        return _save(fig, Path(stem))


def draw(name: str, inputs: Inputs, out_dir: str | Path) -> list[Path]:
    """One family's figure, PNG and PDF, into ``out_dir``, with its provenance footer."""
    fam = family(name)
    return render(lambda: fam.draw(inputs),
                  provenance_footer(inputs.provenance, inputs.config_name),
                  Path(out_dir) / fam.stem)


def make(name: str, tables_dir: str | Path, provenance: str | Path, config: str | Path,
         out_dir: str | Path, config_name: str | None = None) -> list[Path]:
    """``hepfmt figure``: read the tables the family needs, draw it, write PNG and PDF."""
    return draw(name, load_inputs(name, tables_dir, provenance, config, config_name), out_dir)
