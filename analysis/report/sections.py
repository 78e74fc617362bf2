"""The sections of the study's table documents (Markdown + HTML): the tables pivoted for
reading, each cell ``mean ± std`` over samples, a cold figure whose eviction was not verified
marked with †."""

from __future__ import annotations

import pandas as pd

from analysis.report.documents import Section

UNVERIFIED_LEGEND = ("† cold-cache eviction not verified: mincore found pages still resident in "
                     "at least one repetition, or the file is on a filesystem where eviction "
                     "cannot be verified (tmpfs, NFS, Lustre, GPFS, CVMFS/FUSE): not a cold "
                     "figure")


def _pm(mean: float, std: float, digits: int = 3) -> str:
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def _pivot(df: pd.DataFrame, index: list[str], column: str, mean: str, std: str,
           digits: int = 3, mark: pd.Series | None = None) -> pd.DataFrame:
    cell = [_pm(a, b, digits) for a, b in zip(df[mean], df[std], strict=True)]
    if mark is not None:
        cell = [c + (" †" if m is False else "") for c, m in zip(cell, mark, strict=True)]
    d = df.assign(cell=cell)
    p = d.pivot_table(index=index, columns=column, values="cell", aggfunc="first")
    p.columns = [str(c) for c in p.columns]
    return p.reset_index()


def size_sections(st: pd.DataFrame, gt: pd.DataFrame) -> list[Section]:
    sections = [(
        "mean ± std over samples, per cluster size (entries per cluster / rows per row group)",
        _pivot(st, ["format", "variant"], "cluster_size", "normalized_size_mean",
               "normalized_size_std"))]
    if "normalized_size_no_triggers_mean" in st:
        sections.append(("Without the trigger/flag branches (as the 2018 table)", _pivot(
            st, ["format", "variant"], "cluster_size", "normalized_size_no_triggers_mean",
            "normalized_size_no_triggers_std")))
    largest = gt.cluster_size.max()
    sections.append((f"Compressed bytes per event by branch group, cluster size {largest}",
                     gt[gt.cluster_size == largest].drop(columns="cluster_size").round(1)))
    return sections


def read_sections(rt: pd.DataFrame) -> list[Section]:
    if rt.empty:
        return [("No read measurements", "The config's measure sub-grid is empty.")]
    largest = rt.cluster_size.max()
    sections = []
    for sel in rt.selection.unique():
        d = rt[(rt.selection == sel) & (rt.cluster_size == largest)]
        sections.append((f"Read time in seconds, selection '{sel}', cluster size {largest}",
                         _pivot(d, ["format", "variant", "reader", "threads"], "mode",
                                "median_s_mean", "median_s_std", 4, mark=d.cold_verified)))
        for mode in rt["mode"].unique():
            d = rt[(rt.selection == sel) & (rt["mode"] == mode)]
            sections.append((f"Events/s by cluster size, selection '{sel}', {mode} cache",
                             d.pivot_table(index=["format", "variant", "reader", "threads"],
                                           columns="cluster_size", values="events_per_s")
                             .round(0).reset_index()))
    sections.append(("Peak memory of the reading process above its RSS after imports (MB), by "
                     "selection",
                     rt.pivot_table(index=["format", "reader", "threads"], columns="selection",
                                    values="rss_over_baseline_mb", aggfunc="max")
                     .round(0).reset_index()))
    sections.append(("Legend", UNVERIFIED_LEGEND))
    return sections


def format_sections(ft: pd.DataFrame) -> list[Section]:
    """The table a user picks a format from: size, read times, memory, one row per reader."""
    if ft.empty:
        return [("No formats", "Nothing was written.")]
    size = [_pm(a, b) for a, b in zip(ft.normalized_size_mean, ft.normalized_size_std,
                                      strict=True)]
    cols = {"format": ft.label, "variant": ft.variant, "normalized size": size}
    if "reader" in ft:
        cols["reader"] = ft.reader.fillna("(size only)")  # written, but not read-measured
        if ft.threads.nunique() > 1:
            cols["threads"] = ft.threads
        for c in [c for c in ft.columns if c.endswith(("_warm_s", "_cold_s"))]:
            mark = ft.cold_verified if c.endswith("_cold_s") else None
            cols[c.removesuffix("_s").replace("_", " ") + " (s)"] = [
                "" if pd.isna(v) else f"{v:.4f}" + (" †" if mark is not None and m is False
                                                    else "")
                for v, m in zip(ft[c], mark if mark is not None else [None] * len(ft),
                                strict=True)]
        cols["peak RSS over baseline (MB)"] = [
            "" if pd.isna(v) else f"{'' if exact is not False else '≥ '}{v:.0f}"
            for v, exact in zip(ft.rss_over_baseline_mb, ft.get("rss_exact", [None] * len(ft)),
                                strict=True)]
    d = pd.DataFrame(cols)
    return [(f"Cluster size {int(ft.cluster_size.max())}; read times: per sample the median of "
             "the repetitions, mean over samples; † = cold eviction not verified; peak RSS: the "
             "reads' own high-water mark over the resident set they started from (≥ = only a "
             "lower bound: the kernel refused to reset the mark)",
             d)]


def ratio_sections(ratios: pd.DataFrame) -> list[Section]:
    if ratios.empty:
        return [("No ratios", "No ROOT/Parquet pairing had files on both sides.")]
    sections = [("ROOT size / Parquet size", _pivot(
        ratios[ratios.quantity == "size"], ["pair"], "cluster_size", "ratio_mean",
        "ratio_std"))]
    r = ratios[ratios.quantity == "rate"]
    for (sel, mode, threads), d in r.groupby(["selection", "mode", "threads"]):
        th = f", {threads} threads" if r.threads.nunique() > 1 else ""
        sections.append((f"ROOT rate / Parquet rate, selection '{sel}', {mode} cache{th}",
                         _pivot(d, ["pair"], "cluster_size", "ratio_mean", "ratio_std", 2)))
    return sections
