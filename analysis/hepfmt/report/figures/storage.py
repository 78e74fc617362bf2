"""``storage``: the same files read on each storage profile (the ``storage`` target), one row of
panels per selection: time and throughput per profile, the requests each read made, the ROOT /
Parquet time ratio per profile, and each read's time above the page cache against the cost
model's prediction of it.

On this VM a "cold" read from the disk is as fast as a warm one (the host caches the disk), so
where a format's requests and bytes start to cost is only seen on storage that charges for
them: an emulated disk (cold, verified) or a server behind a network's round trip. The model
panel is how a user reads off storage they do not have: where the points sit on the diagonal,
the counted requests and bytes explain the time. The ROOT / Parquet panel reads as every speed
ratio of the study does, above 1 = ROOT faster (:mod:`hepfmt.report.direction`). Points are
the per-sample medians averaged over samples
(:func:`hepfmt.report.storage_tables.storage_means`, as ``storage.md`` shows them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import LogLocator

from hepfmt.report import direction, plan_record
from hepfmt.report import table_names as tn
from hepfmt.report.figures.axes import legend, plain_log, points, unit_line, unverified
from hepfmt.report.figures.inputs import Inputs
from hepfmt.report.figures.order import ordered, selection_title
from hepfmt.report.storage_tables import storage_means
from hepfmt.report.style import LINESTYLES, MARKERS, PALETTE, figure, message, titled

PAGE_CACHE = "page-cache"
#: Per profile panels: column of ``storage_means``, its axis label.
PER_PROFILE = (("median_s", "time per read (s)"),
               ("events_per_s", "throughput (events/s)"),
               ("requests", "requests per read"))
#: Colours of the profiles in the model panel, apart from the files' (which start the palette).
PROFILE_COLORS = PALETTE[::-1]


def _series(m: pd.DataFrame, plan: dict) -> pd.DataFrame:
    """One line per file · reader, in config order: colour per file, marker and line style
    per reader, so a file and a reader are recognised in every panel."""
    keys = m.drop_duplicates(["file", "reader"]).copy()
    labels = keys["label"] if "label" in keys else pd.Series(np.nan, index=keys.index)
    keys["name"] = labels.fillna(keys.format.map(lambda f: plan_record.label(plan, f))) + \
        " " + keys.variant
    formats = plan_record.format_names(plan)
    keys["rank"] = keys.format.map(lambda f: formats.index(f) if f in formats else len(formats))
    keys = keys.sort_values(["rank", "file"], kind="stable").reset_index(drop=True)
    files = list(dict.fromkeys(keys.file))
    readers = list(dict.fromkeys(keys.reader))
    return keys.assign(
        color=[PALETTE[files.index(f) % len(PALETTE)] for f in keys.file],
        marker=[MARKERS[readers.index(r) % len(MARKERS)] for r in keys.reader],
        linestyle=[LINESTYLES[readers.index(r) % len(LINESTYLES)] for r in keys.reader],
        label=keys.name + " · " + keys.reader,
        # how storage-ratios.csv names a ROOT side
        pair_side=keys.format + "/" + keys.variant + " " + keys.reader)[
        ["file", "reader", "color", "marker", "linestyle", "label", "pair_side"]]


def _log_limits(values: pd.Series) -> tuple[float, float]:
    v = values[values > 0]
    return (v.min() / 1.5, v.max() * 1.5) if not v.empty else (0.1, 10.0)


def _per_profile(ax, d: pd.DataFrame, series: pd.DataFrame, profiles: list[str],
                 column: str) -> None:
    """One line per file · reader across the profiles, dodged a little so they do not hide
    each other; a cold read not verified cold is hollow."""
    for n, s in enumerate(series.itertuples()):
        g = d[(d.file == s.file) & (d.reader == s.reader) & d[column].gt(0)]
        g = g.assign(x=g.profile.map(profiles.index)).sort_values("x")
        if g.empty:
            continue
        dodge = (n - (len(series) - 1) / 2) * 0.3 / max(len(series), 1)
        points(ax, g.x + dodge, g[column], np.zeros(len(g)), s.color, s.marker, s.linestyle,
               s.label, unverified(g.verified))
    ax.set_xticks(range(len(profiles)), profiles)
    ax.set_xlim(-0.5, len(profiles) - 0.5)


def speeds(r: pd.DataFrame) -> pd.DataFrame:
    """storage-ratios.csv's ROOT speed / Parquet speed (already in the direction of every ratio
    a user reads: :func:`hepfmt.report.storage_tables.storage_ratios`), with the bounds of
    its mean ± std over samples: ``speed``, ``speed_lo``, ``speed_hi``."""
    std = r["std"].fillna(0)
    return r.assign(speed=r["mean"], speed_lo=(r["mean"] - std).clip(lower=0),
                    speed_hi=r["mean"] + std)


def _ratios(ax, r: pd.DataFrame, series: pd.DataFrame, profiles: list[str],
            plan: dict) -> list[str]:
    """ROOT speed / Parquet speed per profile against the Parquet format's first reader (the
    table has every pairing of readers), each line in its ROOT file · reader's style; the
    notes of what is left out."""
    if r.empty:
        ax.text(0.5, 0.5, "no ROOT / Parquet pair\nmeasured on a common profile",
                ha="center", va="center", transform=ax.transAxes, fontsize="small")
        return []
    parquet = r.parquet.str.split(" ").str[-1]
    first = next((x for x in plan_record.readers(plan, "parquet") if x in set(parquet)),
                 sorted(set(parquet))[0])
    r = speeds(r[(parquet == first) & r.profile.isin(profiles)])
    style = series.drop_duplicates("pair_side").set_index("pair_side")
    for root, g in r.groupby("root", sort=False):
        g = g.assign(x=g.profile.map(profiles.index)).sort_values("x")
        s = style.loc[root] if root in style.index else None
        bars = np.vstack([g.speed - g.speed_lo, g.speed_hi - g.speed])
        points(ax, g.x, g.speed, np.where(np.isfinite(bars), bars, 0),
               PALETTE[0] if s is None else s.color, "o" if s is None else s.marker,
               "-" if s is None else s.linestyle, "_nolegend_", np.zeros(len(g), bool))
    unit_line(ax, "1 = equal speed")
    ax.set_xticks(range(len(profiles)), profiles)
    ax.set_xlim(-0.5, len(profiles) - 0.5)
    finite = pd.concat([r.speed_lo, r.speed, r.speed_hi]).loc[lambda v: np.isfinite(v)]
    lo, hi = _log_limits(finite)
    plain_log(ax, "y", min(lo, 0.8), max(hi, 1.25))
    return [f"ROOT / Parquet speed (storage-ratios.csv: Parquet's time over ROOT's): each ROOT "
            f"file · reader (its line style) against Parquet read by {first} (the table has "
            "every pairing of readers)"]


def _model(ax, d: pd.DataFrame, series: pd.DataFrame, profiles: list[str]) -> int:
    """Measured time above the page cache against the model's prediction of it, one colour
    per profile; the diagonal is agreement. Returns how many reads could not be drawn (not
    above the page cache's time: CPU-bound reads, within noise)."""
    d = d[d.profile != PAGE_CACHE]
    d = d[d.predicted_s.notna() & d.storage_s.notna()]
    shown = d[(d.storage_s > 0) & (d.predicted_s > 0)]
    remote = [p for p in profiles if p != PAGE_CACHE]
    style = series.set_index(["file", "reader"])
    for _, row in shown.iterrows():
        s = style.loc[(row.file, row.reader)]
        color = PROFILE_COLORS[remote.index(row.profile) % len(PROFILE_COLORS)]
        hollow = unverified([row.verified])[0]
        ax.plot([row.predicted_s], [row.storage_s], linestyle="none", marker=s.marker,
                markersize=6, color=color, markerfacecolor="white" if hollow else color,
                label="_nolegend_")
    if shown.empty:
        ax.text(0.5, 0.5, "no read above the page cache's time\nwith a prediction",
                ha="center", va="center", transform=ax.transAxes, fontsize="small")
        return len(d)
    lo, hi = _log_limits(pd.concat([shown.storage_s, shown.predicted_s]))
    ax.plot([lo, hi], [lo, hi], color="black", linestyle="--", linewidth=1, zorder=0)
    for axis in ("x", "y"):
        plain_log(ax, axis, lo, hi)
        if hi / lo > 1000:  # 1, 2, 5 per decade would overlap over four decades or more
            getattr(ax, f"{axis}axis").set_major_locator(LogLocator(subs=(1.0,)))
    handles = [Line2D([], [], linestyle="none", marker="o", color=PROFILE_COLORS[
        remote.index(p) % len(PROFILE_COLORS)], label=p) for p in remote
        if p in set(shown.profile)]
    ax.legend(handles=handles, loc="upper left", fontsize="x-small", title="profile",
              title_fontsize="x-small")
    return len(d) - len(shown)


def draw(inp: Inputs) -> tuple[Figure, list[str]]:
    t = inp.tables[tn.STORAGE]
    title = "Reads on storage profiles"
    m = storage_means(t) if not t.empty else pd.DataFrame()
    if m.empty:
        return message(title, "No read was measured on any storage profile"
                              + _skipped_text(t)), []
    profiles = list(dict.fromkeys([PAGE_CACHE, *m.profile]) if PAGE_CACHE in set(m.profile)
                    else dict.fromkeys(m.profile))
    series = _series(m, inp.plan)
    sels = ordered(m.selection, plan_record.selections(inp.plan))
    ratios = inp.tables[tn.STORAGE_RATIOS]
    fig, axes = figure(len(sels), len(PER_PROFILE) + 2, 4.2, 3.8)
    ratio_notes: set[str] = set()
    undrawn = 0
    for i, sel in enumerate(sels):
        d = m[m.selection == sel]
        for j, (column, ylabel) in enumerate(PER_PROFILE):
            ax = axes[i, j]
            _per_profile(ax, d, series, profiles, column)
            plain_log(ax, "y", *_log_limits(m[column]))
            ax.set_ylabel(ylabel)
            ax.set_title(selection_title(inp.plan, sel), fontsize="medium")
        ax = axes[i, len(PER_PROFILE)]
        ratio_notes.update(_ratios(ax, ratios[ratios.selection == sel], series, profiles,
                                   inp.plan))
        ax.set_ylabel(direction.SPEED_AXIS)
        ax.set_title(f"ROOT / Parquet, {selection_title(inp.plan, sel)}", fontsize="medium")
        ax = axes[i, len(PER_PROFILE) + 1]
        undrawn += _model(ax, d, series, profiles)
        ax.set_xlabel("cost model's storage time (s)")
        ax.set_ylabel("time above the page cache's (s)")
        ax.set_title(selection_title(inp.plan, sel), fontsize="medium")
    legend(fig, axes, bool(unverified(m.verified).any()))
    titled(fig, title)
    notes = ["per file · reader, the median read time on each profile (hdd etc.: cold, "
             "evicted and verified; remote: through the server), averaged over "
             f"{t['sample'].nunique()} sample(s); requests as the cost model was given them "
             "(the device's on a disk, the reader's or the server's round trips remotely; "
             "the page cache: the reader's own or read syscalls)", *sorted(ratio_notes),
             "right: the model leaves CPU out, so it predicts the time above the same read "
             "from the page cache; markers as the reader's in the other panels"]
    if undrawn:
        notes.append(f"{undrawn} read(s) not in the model panel: not slower than from the page "
                     "cache (CPU-bound, within noise)")
    skipped = _skipped_text(t)
    if skipped:
        notes.append(skipped.strip().removeprefix("(").removesuffix(")"))
    return fig, notes


def _skipped_text(t: pd.DataFrame) -> str:
    """The profiles not measured, with why (each once): never drawn as measured."""
    if t.empty or "status" not in t:
        return ""
    s = t[(t.status == "skipped") & t.reader.isna()] if "reader" in t else t[t.status ==
                                                                              "skipped"]
    reads = t[(t.status == "skipped") & t.reader.notna()] if "reader" in t else t.iloc[:0]
    parts = [f"{p}: {r}" for p, r in s[["profile", "reason"]].drop_duplicates()
             .itertuples(index=False)]
    if not reads.empty:
        parts.append(f"{len(reads)} reads skipped (storage.md says why)")
    return f" (not measured: {'; '.join(parts)})" if parts else ""
