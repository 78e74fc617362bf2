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
  table a user picks a format from;
* ``samples``: every sample apart, real (imported) ones marked: normalised size per format ×
  variant × cluster size, and the branches each selection read in it.

A mean over samples of different kinds (real NanoAOD and synthetic samples) describes neither,
so a study with both tabulates each kind apart (a ``kind`` column first) unless its config asks
to mix them (``tabulate.mix_kinds``).

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
#: The ``process`` of a sample imported from a real file (``hepfmt import``); others are
#: generated, "synthetic".
REAL = "real"
KINDS = ("real", "synthetic")


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


def kind_of(process: pd.Series) -> pd.Series:
    """``real`` for a sample imported from a file, ``synthetic`` for a generated one."""
    return process.map(lambda p: KINDS[0] if p == REAL else KINDS[1])


def sample_table(sizes: pd.DataFrame) -> pd.DataFrame:
    """One row per sample × format × variant × cluster size: nothing averaged."""
    cols = ["sample", "kind", "process", *KEYS, "n_events", "file_bytes", "naive_bytes",
            "normalized_size", "normalized_size_no_triggers"]
    return (sizes.assign(kind=kind_of(sizes.process))[cols]
            .sort_values([*KEYS, "sample"]).reset_index(drop=True))


def _summaries(plan: dict, sizes: pd.DataFrame, reads: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The tables that average over samples."""
    st = size_table(sizes)
    rt = read_table(reads) if not reads.empty else pd.DataFrame()
    return {"size": st, "groups": group_table(sizes), "reads": rt,
            "ratios": ratio_table(plan, sizes, reads), "formats": format_table(st, rt)}


def summaries(plan: dict, sizes: pd.DataFrame, reads: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """:func:`_summaries` over every sample, or, for a study of real and synthetic samples that
    does not ask to mix them, over each kind apart, a ``kind`` column first."""
    kinds = kind_of(sizes.process)
    if plan_record.mix_kinds(plan) or kinds.nunique() < 2:
        return _summaries(plan, sizes, reads)
    read_kinds = kind_of(reads.process) if not reads.empty else pd.Series(dtype=str)
    parts: dict[str, list[pd.DataFrame]] = {}
    for kind in KINDS:
        mine = _summaries(plan, sizes[kinds == kind],
                          reads[read_kinds == kind] if not reads.empty else reads)
        for name, df in mine.items():
            if not df.empty:
                parts.setdefault(name, []).append(df.assign(kind=kind))
    return {name: (pd.concat(parts[name], ignore_index=True)[
                ["kind", *(c for c in parts[name][0].columns if c != "kind")]]
                   if name in parts else pd.DataFrame())
            for name in ("size", "groups", "reads", "ratios", "formats")}


def tabulate(plan: dict, size_files: Iterable[str | Path], read_files: Iterable[str | Path],
             out_dir: str | Path, provenance_path: str | Path | None = None) -> dict:
    """Every table of the study from its size records and read measurements, as CSV and (five
    of them) as Markdown + HTML documents; returns the provenance it wrote."""
    out = Path(out_dir)
    sizes, size_provs = load_sizes(size_files)
    if sizes.empty:
        raise InputError(out, "no size records to tabulate")
    reads, reps, read_provs = load_reads(read_files)
    prov = merged_provenance(plan["config"], out, size_provs + read_provs, len(sizes), reads)
    lines = provenance_lines(prov)

    t = summaries(plan, sizes, reads)
    st, gt, rt, ratios, ft = (t[n] for n in ("size", "groups", "reads", "ratios", "formats"))
    samples = sample_table(sizes)
    for name, df in (("size", st), ("groups", gt), ("reads", rt), ("ratios", ratios),
                     ("repetitions", reps), ("formats", ft), ("samples", samples)):
        write_csv(with_labels(plan, df), out / f"{name}.csv", lines)

    write_doc("Normalized size (file bytes / naive bytes)",
              sections.per_kind(sections.size_sections, st, gt), out / "size.md", lines)
    write_doc("Read time (per sample: median of repetitions; mean ± std over samples)",
              sections.per_kind(sections.read_sections, rt), out / "reads.md", lines)
    write_doc("ROOT / Parquet ratios (per sample, then mean ± std over samples)",
              sections.per_kind(sections.ratio_sections, ratios), out / "ratios.md", lines)
    write_doc("Formats side by side",
              sections.per_kind(sections.format_sections, with_labels(plan, ft)),
              out / "formats.md", lines)
    write_doc("Samples one by one (normalized size: file bytes / naive bytes)",
              sections.sample_sections(with_labels(plan, samples),
                                       plan_record.resolved(plan)),
              out / "samples.md", lines)
    write_json(provenance_path or out / "provenance.json", prov)
    return prov


# ---- storage profiles (``hepfmt storage`` records; the ``storage`` target) --------------------

#: One storage read: a file, where it was read from, how, and which branches.
STORAGE_KEYS = ["sample", *KEYS, "profile", "reader", "selection"]
STORAGE_COLUMNS = [
    "adapter", "status", "mode", "cold_verified", "median_s", "page_cache_s", "storage_s",
    "predicted_s", "predicted_bound", "counted_by", "requests", "bytes", "mb_per_s_compressed",
    "events_per_s", "kernel_syscr", "kernel_rchar", "kernel_read_bytes", "device_requests",
    "device_bytes", "reader_requests", "reader_bytes", "server_requests", "server_ranges",
    "server_bytes", "server_size_p10", "server_size_p50", "server_size_p90", "n",
    "reason"]


def load_storage(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, list[dict]]:
    """Every storage read of the records, and one row per profile or reader that was skipped
    (``status`` skipped, with the ``reason``): a skip is shown, never dropped."""
    rows, provs = [], []
    for path in paths:
        doc = records.load(path, (*_BASE, "profiles", "reads", "skipped_reads"),
                           "storage measurement (from 'hepfmt storage')")
        provs.append(doc["provenance"])
        base = {k: doc[k] for k in ("sample", "process", *KEYS, "adapter", "n_events",
                                    "file_bytes")}
        for r in doc["reads"]:
            counted_by, requests, nbytes = _asked(r)
            rows.append({**base, **{k: v for k, v in r.items() if k != "repetitions"},
                         "status": "measured", "counted_by": counted_by,
                         "requests": requests, "bytes": nbytes})
        for name, p in doc["profiles"].items():
            if p["status"] == "skipped":
                rows.append({**base, "profile": name, "status": "skipped",
                             "reason": p["reason"]})
        rows += [{**base, **s, "status": "skipped"} for s in doc["skipped_reads"]]
    return pd.DataFrame(rows), provs


def _asked(read: dict) -> tuple[str, float, float]:
    """(view, requests, bytes) a storage read is tabulated with: what the cost model was given
    (:func:`analysis.measure.onstorage.model_input`); from the page cache, which has no model,
    the reader's own count, else the kernel's read syscalls."""
    if "model_requests" in read:
        return read["model_view"], read["model_requests"], read["model_bytes"]
    if read.get("reader_requests") is not None:
        return "reader", read["reader_requests"], read["reader_bytes"]
    return "syscalls", read["kernel_syscr"], read["kernel_rchar"]


def storage_table(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per sample × file × profile × reader × selection: time, throughput, what the
    read asked of storage in each view, the cost model's prediction from the view it is
    given (``model_view``) and ``storage_s``, the time above the same read from the page
    cache: what the prediction is to be compared with (the model leaves CPU out)."""
    if rows.empty:
        return pd.DataFrame(columns=[*STORAGE_KEYS, *STORAGE_COLUMNS])
    t = rows.copy()
    for col in STORAGE_COLUMNS:
        if col not in t:
            t[col] = None
    warm = t[(t["profile"] == "page-cache") & (t["status"] == "measured")]
    warm = warm[[k for k in STORAGE_KEYS if k != "profile"] + ["median_s"]].rename(
        columns={"median_s": "page_cache_s"})
    t = t.drop(columns="page_cache_s").merge(
        warm, on=[k for k in STORAGE_KEYS if k != "profile"], how="left")
    t["storage_s"] = t["median_s"] - t["page_cache_s"]
    t.loc[t["profile"] == "page-cache", "storage_s"] = None
    # profiles stay in the order measured (the config's): page cache, then slower storage
    return t[[*STORAGE_KEYS, *STORAGE_COLUMNS]].sort_values(
        [k for k in STORAGE_KEYS if k != "profile"], kind="stable").reset_index(drop=True)


def storage_ratios(t: pd.DataFrame) -> pd.DataFrame:
    """ROOT time / Parquet time per profile and selection: each ROOT file × reader against
    each Parquet file × reader of the same sample (per sample, then mean ± std); above 1,
    Parquet is faster there."""
    m = t[t["status"] == "measured"]
    root = m[m["adapter"].isin(["ttree", "rntuple"])]
    parquet = m[m["adapter"] == "parquet"]
    on = ["sample", "profile", "selection"]
    pairs = root.merge(parquet, on=on, suffixes=("_root", "_parquet"))
    if pairs.empty:
        return pd.DataFrame(columns=["profile", "selection", "root", "parquet", "mean", "std",
                                     "n_samples"])
    pairs["root"] = pairs["format_root"] + "/" + pairs["variant_root"] + " " + \
        pairs["reader_root"]
    pairs["parquet"] = pairs["format_parquet"] + "/" + pairs["variant_parquet"] + " " + \
        pairs["reader_parquet"]
    pairs["ratio"] = pairs["median_s_root"] / pairs["median_s_parquet"]
    out = pairs.groupby(["profile", "selection", "root", "parquet"], sort=False)["ratio"].agg(
        ["mean", "std", "count"]).reset_index().rename(columns={"count": "n_samples"})
    return out.fillna({"std": 0.0})


def storage_means(t: pd.DataFrame) -> pd.DataFrame:
    """The measured storage reads per file × reader × selection × profile, per-sample
    figures averaged over samples; ``verified``: every cold read verified cold (None: not
    a cold read)."""
    m = t[t["status"] == "measured"].copy()
    if m.empty:
        return pd.DataFrame()
    m["file"] = m["format"] + " " + m["variant"] + " c" + m["cluster_size"].astype(str)
    return m.groupby(["file", "reader", "selection", "profile"], sort=False).agg(
        median_s=("median_s", "mean"), predicted_s=("predicted_s", "mean"),
        storage_s=("storage_s", "mean"), requests=("requests", "mean"),
        bytes=("bytes", "mean"), view=("counted_by", "first"),
        verified=("cold_verified", all_verified)).reset_index()


def tabulate_storage(plan: dict, storage_files: Iterable[str | Path], out_dir: str | Path,
                     provenance_path: str | Path | None = None) -> dict:
    """``tables/storage.{csv,md,html}`` (and ``storage-ratios.csv``) and their provenance;
    returns the provenance."""
    out = Path(out_dir)
    storage_files = list(storage_files)
    if not storage_files:
        raise InputError(out, "no storage measurements to tabulate")
    rows, provs = load_storage(storage_files)
    t = storage_table(rows)
    measured = t[t["status"] == "measured"]
    prov = merged_provenance(plan["config"], out, provs, len(storage_files),
                             measured if not measured.empty else pd.DataFrame({"n": []}))
    counts = (f"{len(storage_files)} files; {len(measured)} storage reads of "
              f"{prov['repetitions']} timed repetitions each (after one untimed verified "
              f"read); {int((t['status'] == 'skipped').sum())} profiles or reads skipped "
              "(reason in the table)")
    lines = provenance_lines(prov, counts)
    ratios = storage_ratios(t)
    write_csv(with_labels(plan, t), out / "storage.csv", lines)
    write_csv(ratios, out / "storage-ratios.csv", lines)
    write_doc("Reads on storage profiles: time, requests and bytes, the cost model beside "
              "the measurement", sections.storage_sections(storage_means(t), ratios,
                                                 t[t["status"] == "skipped"]),
              out / "storage.md",
              lines)
    write_json(provenance_path or out / "storage-provenance.json", prov)
    return prov
