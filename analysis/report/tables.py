"""Tables in the shape of the 2018 study, from size records and read measurements.

* ``size``: normalised size (file bytes / naive bytes), mean ± std over samples, per format ×
  variant × cluster size;
* ``reads``: read time per format × variant × reader × selection × cache mode (per sample the
  median of the repetitions; across samples mean ± std), with MB/s and events/s;
* ``ratios``: ROOT / Parquet size ratio and ROOT rate / Parquet rate ratio per pairing, cluster
  size, selection and mode (the ratio is taken per sample, then averaged), with the reader of
  each side and whether both sides' cold reads were verified cold;
* ``repetitions``: every timed repetition, for anyone who wants other statistics;
* ``groups``: compressed bytes per event of each branch group;
* ``formats``: one row per format × variant × reader at the largest measured cluster size:
  normalised size, warm and cold read time per selection and the reader's peak memory, the
  table a user picks a format from.

Formats are the config's names (``ttree_nooffsets``); ``adapter`` and ``label`` columns, from the
plan record, say what each one is. A cold figure whose eviction was not verified by mincore has
a false ``cold_verified`` column (and a † in the documents, see :mod:`.sections`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from analysis import records
from analysis.atomic import write_json
from analysis.errors import InputError
from analysis.report import plan_record, sections
from analysis.report.documents import merged_provenance, provenance_lines, write_csv, write_doc

KEYS = ["format", "variant", "cluster_size"]
READ_KEYS = [*KEYS, "reader", "threads", "selection", "mode"]
RATIO_KEYS = ["pair", "ttree", "parquet", "quantity", "selection", "mode", "threads",
              "cluster_size"]
#: What a ratio row says beyond its value: the reader of each side, and whether a cold ratio's
#: reads were all verified cold (empty for size and warm ratios).
RATIO_EXTRA = ["ttree_reader", "parquet_reader", "cold_verified"]

_BASE = ("sample", "process", *KEYS, "n_events", "provenance")


def load_sizes(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, list[dict]]:
    """One row per written file: its size figures and compressed bytes per branch group."""
    rows, provs = [], []
    for p in paths:
        doc = records.load(p, (*_BASE, "file_bytes", "naive_bytes", "normalized_size"))
        groups = {f"zip_bytes:{g}": v for g, v in doc.get("zip_bytes_by_group", {}).items()}
        # what is in no branch's data: headers, footers, keys, basket/page headers, offsets
        # the adapter does not attribute to a branch
        # (all of it is "unattributed" when the adapter cannot split bytes by branch)
        rest = "metadata" if groups else "unattributed"
        groups[f"zip_bytes:{rest}"] = doc["file_bytes"] - sum(groups.values())
        rows.append({**{k: doc[k] for k in _BASE if k != "provenance"},
                     "adapter": doc.get("adapter", doc["format"]),
                     "file_bytes": doc["file_bytes"], "naive_bytes": doc["naive_bytes"],
                     "normalized_size": doc["normalized_size"],
                     "normalized_size_no_triggers": doc.get("normalized_size_no_triggers"),
                     **groups})
        provs.append(doc["provenance"])
    return pd.DataFrame(rows), provs


def load_reads(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """One row per (file, reader, selection, mode), and one per timed repetition."""
    reads, reps, provs = [], [], []
    for p in paths:
        doc = records.load(p, (*_BASE, "reads"))
        base = {k: doc[k] for k in _BASE if k != "provenance"}
        base["adapter"] = doc.get("adapter", doc["format"])
        for r in doc["reads"]:
            reads.append({**base, **{k: v for k, v in r.items() if k != "repetitions"}})
            for i, rep in enumerate(r["repetitions"]):
                reps.append({**base, **{k: r[k] for k in ("reader", "threads", "selection",
                                                          "mode")},
                             "repetition": i, **rep})
        provs.append(doc["provenance"])
    return pd.DataFrame(reads), pd.DataFrame(reps), provs


def mean_std(df: pd.DataFrame, keys: list[str], col: str) -> pd.DataFrame:
    g = df.groupby(keys, sort=True)[col]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["std"] = out["std"].fillna(0.0)
    return out.rename(columns={"mean": f"{col}_mean", "std": f"{col}_std",
                               "count": "n_samples"})


def all_verified(x: pd.Series) -> bool | None:
    """Of ``cold_verified`` cells taken together: empty if none was a cold read, else whether
    every cold read was verified (one unverified read spoils the figure)."""
    return None if x.isna().all() else bool(x.dropna().all())


def size_table(sizes: pd.DataFrame) -> pd.DataFrame:
    t = mean_std(sizes, KEYS, "normalized_size")
    if sizes["normalized_size_no_triggers"].notna().any():
        nt = mean_std(sizes, KEYS, "normalized_size_no_triggers").drop(columns="n_samples")
        t = t.merge(nt, on=KEYS)
    return t


def group_table(sizes: pd.DataFrame) -> pd.DataFrame:
    """Where the bytes go: mean compressed bytes per event of each branch group."""
    cols = [c for c in sizes.columns if c.startswith("zip_bytes:")]
    per_event = sizes[cols].div(sizes["n_events"], axis=0)
    per_event.columns = [c.split(":", 1)[1] for c in cols]
    d = pd.concat([sizes[KEYS], per_event], axis=1)
    return d.groupby(KEYS, sort=True).mean().reset_index()


def read_table(reads: pd.DataFrame) -> pd.DataFrame:
    if "rss_over_baseline_bytes" not in reads:  # records from before the read's own peak
        reads = reads.assign(rss_over_baseline_bytes=reads.peak_rss_bytes
                             - reads.baseline_rss_bytes)
    if "rss_method" not in reads:
        reads = reads.assign(rss_method="ru_maxrss (lower bound)")
    t = mean_std(reads, READ_KEYS, "median_s")
    extra = reads.groupby(READ_KEYS).agg(
        iqr_s_mean=("iqr_s", "mean"), repetitions=("n", "min"),
        mb_per_s_compressed=("mb_per_s_compressed", "mean"),
        mb_per_s_naive=("mb_per_s_naive", "mean"), events_per_s=("events_per_s", "mean"),
        peak_rss_mb=("peak_rss_bytes", lambda x: x.max() / 2**20),
        rss_over_baseline_mb=("rss_over_baseline_bytes", lambda x: x.max() / 2**20),
        # a lower bound anywhere makes the figure one: say so in the table
        rss_exact=("rss_method", lambda x: bool((x == "vmhwm-reset").all())),
        cpu_s_mean=("cpu_median_s", "mean"),
        disk_read_bytes=("disk_read_bytes_median", "mean"),
        cold_verified=("cold_verified", all_verified),
    ).reset_index()
    return t.merge(extra, on=READ_KEYS)


def _side(df: pd.DataFrame, side: dict, by_reader: bool) -> pd.DataFrame:
    """The rows of one side of a pairing: its format and variant (and reader, for reads)."""
    keep = (df.format == side["format"]) & (df.variant == side["variant"])
    if by_reader:
        keep &= df.reader == side["reader"]
    return df[keep]


def _ratio_rows(pair: dict, sizes: pd.DataFrame, reads: pd.DataFrame) -> list[dict]:
    """One pairing's per-sample ratios: sizes at every cluster size, then (if reads were
    measured) rates at every cluster size, thread count, selection and cache mode."""
    base = {"pair": pair["label"], "ttree": pair["ttree"]["variant"],
            "parquet": pair["parquet"]["variant"]}
    m = _side(sizes, pair["ttree"], False).merge(_side(sizes, pair["parquet"], False),
                                                 on=["sample", "cluster_size"],
                                                 suffixes=("_r", "_p"))
    rows = [{**base, "cluster_size": x.cluster_size, "sample": x["sample"], "quantity": "size",
             "selection": "", "mode": "", "threads": 0,
             "ratio": x.file_bytes_r / x.file_bytes_p} for _, x in m.iterrows()]
    if reads.empty:
        return rows
    m = _side(reads, pair["ttree"], True).merge(
        _side(reads, pair["parquet"], True),
        on=["sample", "cluster_size", "threads", "selection", "mode"], suffixes=("_r", "_p"))
    for _, x in m.iterrows():
        rows.append({**base, "cluster_size": x.cluster_size, "sample": x["sample"],
                     "quantity": "rate", "selection": x.selection, "mode": x["mode"],
                     "threads": x.threads,
                     # ROOT rate / Parquet rate = Parquet time / ROOT time
                     "ratio": x.median_s_p / x.median_s_r,
                     "ttree_reader": pair["ttree"]["reader"],
                     "parquet_reader": pair["parquet"]["reader"],
                     "cold_verified": all_verified(pd.Series([x.cold_verified_r,
                                                              x.cold_verified_p]))})
    return rows


def ratio_table(plan: dict, sizes: pd.DataFrame, reads: pd.DataFrame) -> pd.DataFrame:
    rows = [r for pair in plan["pairs"] for r in _ratio_rows(pair, sizes, reads)]
    if not rows:
        return pd.DataFrame(columns=[*RATIO_KEYS, "ratio_mean", "ratio_std", "n_samples",
                                     *RATIO_EXTRA])
    df = pd.DataFrame(rows).reindex(columns=[*RATIO_KEYS, "sample", "ratio", *RATIO_EXTRA])
    extra = df.groupby(RATIO_KEYS).agg(
        ttree_reader=("ttree_reader", "first"), parquet_reader=("parquet_reader", "first"),
        cold_verified=("cold_verified", all_verified)).reset_index()
    return mean_std(df, RATIO_KEYS, "ratio").merge(extra, on=RATIO_KEYS, how="left")


def format_table(st: pd.DataFrame, rt: pd.DataFrame) -> pd.DataFrame:
    """One row per format × variant × reader × threads at the largest cluster size whose reads
    were measured (the largest written one if none were): normalised size, the read time of
    each selection and cache mode, and the reader's peak memory over its post-import baseline.
    """
    if rt.empty:
        largest = st.cluster_size.max()
        return st[st.cluster_size == largest].reset_index(drop=True)
    largest = rt.cluster_size.max()
    rows = rt[rt.cluster_size == largest]
    wide = rows.pivot_table(index=["format", "variant", "reader", "threads"],
                            columns=["selection", "mode"], values="median_s_mean",
                            aggfunc="first")
    wide.columns = [f"{sel}_{mode}_s" for sel, mode in wide.columns]
    rss = rows.groupby(["format", "variant", "reader", "threads"]).agg(
        rss_over_baseline_mb=("rss_over_baseline_mb", "max"), peak_rss_mb=("peak_rss_mb", "max"),
        rss_exact=("rss_exact", "all"), cold_verified=("cold_verified", all_verified))
    sizes = st[st.cluster_size == largest][["format", "variant", "cluster_size",
                                            "normalized_size_mean", "normalized_size_std"]]
    return sizes.merge(wide.join(rss).reset_index(), on=["format", "variant"], how="left")


def with_labels(plan: dict, df: pd.DataFrame) -> pd.DataFrame:
    """``label`` and ``adapter`` columns first after ``format``: what each format name is."""
    if df.empty or "format" not in df:
        return df
    labels = df.format.map(lambda f: plan_record.label(plan, f))
    adapters = df.format.map(lambda f: plan_record.adapter(plan, f))
    out = df.drop(columns=[c for c in ("label", "adapter") if c in df])
    i = list(out.columns).index("format") + 1
    out.insert(i, "label", labels)
    out.insert(i + 1, "adapter", adapters)
    return out


def tabulate(plan: dict, size_files: Iterable[str | Path], read_files: Iterable[str | Path],
             out_dir: str | Path, provenance_path: str | Path | None = None) -> dict:
    """Every table of the study from its size records and read measurements, as CSV and (four
    of them) as Markdown + HTML documents; returns the provenance it wrote."""
    out = Path(out_dir)
    sizes, size_provs = load_sizes(size_files)
    if sizes.empty:
        raise InputError(out, "no size records to tabulate")
    reads, reps, read_provs = load_reads(read_files)
    prov = merged_provenance(plan["config"], out, size_provs + read_provs, len(sizes), reads)
    lines = provenance_lines(prov)

    st = size_table(sizes)
    gt = group_table(sizes)
    rt = read_table(reads) if not reads.empty else pd.DataFrame()
    ratios = ratio_table(plan, sizes, reads)
    ft = format_table(st, rt)
    for name, df in (("size", st), ("groups", gt), ("reads", rt), ("ratios", ratios),
                     ("repetitions", reps), ("formats", ft)):
        write_csv(with_labels(plan, df), out / f"{name}.csv", lines)

    write_doc("Normalized size (file bytes / naive bytes)", sections.size_sections(st, gt),
              out / "size.md", lines)
    write_doc("Read time (per sample: median of repetitions; mean ± std over samples)",
              sections.read_sections(rt), out / "reads.md", lines)
    write_doc("ROOT / Parquet ratios (per sample, then mean ± std over samples)",
              sections.ratio_sections(ratios), out / "ratios.md", lines)
    write_doc("Formats side by side", sections.format_sections(with_labels(plan, ft)),
              out / "formats.md", lines)
    write_json(provenance_path or out / "provenance.json", prov)
    return prov
