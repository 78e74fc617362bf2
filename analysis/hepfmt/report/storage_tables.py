"""The storage target's tables: each read on each storage profile, its ratios and its
means over samples."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from hepfmt import formats
from hepfmt.atomic import write_json
from hepfmt.errors import InputError
from hepfmt.records import StorageRecord
from hepfmt.report import sections
from hepfmt.report import table_names as tn
from hepfmt.report.documents import (
    merged_provenance,
    provenance_lines,
    write_csv,
    write_doc,
)
from hepfmt.report.frames import KEYS, all_verified, with_labels

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
        doc = StorageRecord.load(path)
        provs.append(doc.provenance)
        base = {**doc.identity(), "file_bytes": doc.file_bytes}
        for r in doc.reads:
            counted_by, requests, nbytes = _asked(r)
            rows.append({**base, **{k: v for k, v in r.items() if k != "repetitions"},
                         "status": "measured", "counted_by": counted_by,
                         "requests": requests, "bytes": nbytes})
        for name, p in doc.profiles.items():
            if p["status"] == "skipped":
                rows.append({**base, "profile": name, "status": "skipped",
                             "reason": p["reason"]})
        rows += [{**base, **s, "status": "skipped"} for s in doc.skipped_reads]
    return pd.DataFrame(rows), provs


def _asked(read: dict) -> tuple[str, float, float]:
    """(view, requests, bytes) a storage read is tabulated with: what the cost model was given
    (:func:`hepfmt.measure.onstorage.model_input`); from the page cache, which has no model,
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
    """ROOT speed / Parquet speed (Parquet time / ROOT time) per profile and selection: each
    ROOT file × reader against each Parquet file × reader of the same sample (per sample, then
    mean ± std); above 1, ROOT is faster there, as in every ratio a user reads
    (:mod:`hepfmt.report.direction`)."""
    m = t[t["status"] == "measured"]
    root = m[m["adapter"].isin([n for n in formats.names() if formats.extension(n) == "root"])]
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
    pairs["ratio"] = pairs["median_s_parquet"] / pairs["median_s_root"]
    out = pairs.groupby(["profile", "selection", "root", "parquet"], sort=False)["ratio"].agg(
        ["mean", "std", "count"]).reset_index().rename(columns={"count": "n_samples"})
    return out.fillna({"std": 0.0})


def storage_means(t: pd.DataFrame) -> pd.DataFrame:
    """The measured storage reads per file × reader × selection × profile, per-sample
    figures averaged over samples; ``verified``: every cold read verified cold (None: not
    a cold read). ``format``, ``variant`` (and ``label``, where the table has it) name the
    file for the figure."""
    m = t[t["status"] == "measured"].copy()
    if m.empty:
        return pd.DataFrame()
    m["file"] = m["format"] + " " + m["variant"] + " c" + m["cluster_size"].astype(str)
    names = {c: (c, "first") for c in ("format", "variant", "label") if c in m}
    return m.groupby(["file", "reader", "selection", "profile"], sort=False).agg(
        median_s=("median_s", "mean"), predicted_s=("predicted_s", "mean"),
        storage_s=("storage_s", "mean"), requests=("requests", "mean"),
        bytes=("bytes", "mean"), view=("counted_by", "first"),
        events_per_s=("events_per_s", "mean"),
        verified=("cold_verified", all_verified), **names).reset_index()


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
    reps = sorted({prov["repetitions"], int(measured["n"].max()) if not measured.empty else 0})
    counts = (f"{len(storage_files)} files; {len(measured)} storage reads of "
              f"{'-'.join(map(str, reps))} timed repetitions each (column n; after one untimed "
              f"verified read); {int((t['status'] == 'skipped').sum())} profiles or reads "
              "skipped (reason in the table)")
    lines = provenance_lines(prov, counts)
    write_csv(with_labels(plan, t), out / f"{tn.STORAGE}.csv", lines)
    _write_derived(t, out, lines, prov["cpus"])
    write_json(provenance_path or out / "storage-provenance.json", prov)
    return prov


def _write_derived(t: pd.DataFrame, out: Path, lines: list[str], cpus: list[str]) -> None:
    """What ``storage.csv`` determines: the ratios and the document."""
    ratios = storage_ratios(t)
    write_csv(ratios, out / f"{tn.STORAGE_RATIOS}.csv", lines)
    write_doc("Reads on storage profiles: time, requests and bytes, the cost model beside "
              "the measurement", sections.storage_sections(storage_means(t), ratios,
                                                 t[t["status"] == "skipped"]),
              out / f"{tn.STORAGE}.md", lines, cpus)


def rewrite_derived(tables: str | Path, cpus: list[str]) -> None:
    """``storage-ratios.csv`` and ``storage.md`` again from ``storage.csv`` (the record of the
    reads) and its provenance lines: how a committed reference follows a change in how its
    ratios are stated (their direction) without re-measuring."""
    out = Path(tables)
    csv = out / f"{tn.STORAGE}.csv"
    lines = [ln[2:] for ln in csv.read_text().splitlines() if ln.startswith("# ")]
    _write_derived(pd.read_csv(csv, comment="#"), out, lines, cpus)
