"""Tables of the metadata study: decode time and metadata bytes, per column, per implementation
and statistics level, and how they scale with the number of columns.

* ``metadata.csv``: one row per (file, implementation, mode): median decode time and its
  interquartile range over the repetitions, µs per column, metadata bytes and bytes per column;
* ``repetitions.csv``: every timed decode;
* ``slopes.csv``: between each pair of successive widths, the local exponent b of
  time ∝ columns^b (1 = linear, 2 = quadratic) and the marginal µs per extra column: what
  compares across machines, unlike absolute times (and a single fit would hide a change of
  regime, as TTree's between 1000 and 10000 columns);
* ``metadata.md``: the same, pivoted by width, with the time ratio to pyarrow at its default
  (chunk statistics), and the NanoAOD-width sample.

Every CSV starts with ``#`` provenance lines and the Markdown ends with them, as the read study's
tables (both are written by :mod:`hepfmt.report.documents`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from hepfmt import records
from hepfmt.errors import InputError
from hepfmt.report.documents import (
    Section,
    merged_provenance,
    provenance_cpus,
    provenance_lines,
    write_csv,
    write_doc,
)

KEYS = ["type", "n_columns", "layout", "stats", "implementation", "mode"]
REFERENCE = ("pyarrow", "chunk")  # pyarrow's default: statistics in the footer, no page index
GROUP = ["type", "implementation", "stats", "mode"]


def load(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """One row per (file, implementation, mode), one per timed decode, and the provenances."""
    rows, reps, provs = [], [], []
    for p in paths:
        doc = records.load(p, ("dataset", "layout", "format", "columns", "metadata_bytes",
                               "timings", "provenance"), "metadata timing")
        kind = doc["dataset"].split("-", 1)[0]
        for t in doc["timings"]:
            page_index = t["implementation"].endswith("+page-index")
            meta = doc["metadata_bytes"] + (doc["page_index_bytes"] if page_index else 0)
            base = {"dataset": doc["dataset"], "type": kind, "n_columns": doc["columns"],
                    "layout": doc["layout"], "format": doc["format"],
                    "stats": doc.get("stats") or "-", "implementation": t["implementation"],
                    "library": t["library"], "mode": t["mode"]}
            rows.append({**base, **{k: t[k] for k in ("median_s", "q25_s", "q75_s", "iqr_s",
                                                       "min_s", "n")},
                         "us_per_column": t["median_s"] * 1e6 / doc["columns"],
                         "metadata_bytes": meta, "bytes_per_column": meta / doc["columns"],
                         "metadata_bytes_uncompressed": doc["metadata_bytes_uncompressed"],
                         "page_index_bytes": doc.get("page_index_bytes", 0),
                         "file_bytes": doc.get("file_bytes"),
                         "resident_fraction": t.get("resident_fraction")})
            reps += [{**base, "repetition": i, "wall_s": w,
                      "cpu_s": t["cpu_s"][i] if i < len(t["cpu_s"]) else None}
                     for i, w in enumerate(t["wall_s"])]
        provs.append(doc["provenance"])
    return pd.DataFrame(rows), pd.DataFrame(reps), provs


def slopes(df: pd.DataFrame) -> pd.DataFrame:
    """Scaling of decode time between successive widths, per (type, implementation, stats,
    mode)."""
    out = []
    for key, d in df[df.type != "nanoaod"].groupby(GROUP):
        d = d.sort_values("n_columns")
        n, t = d.n_columns.to_numpy(dtype=float), d.median_s.to_numpy()
        for i in range(1, len(d)):
            out.append({**dict(zip(GROUP, key, strict=True)),
                        "from_columns": int(n[i - 1]), "to_columns": int(n[i]),
                        "exponent": float(np.log(t[i] / t[i - 1]) / np.log(n[i] / n[i - 1])),
                        "marginal_us_per_column": float((t[i] - t[i - 1]) * 1e6
                                                        / (n[i] - n[i - 1]))})
    return pd.DataFrame(out, columns=[*GROUP, "from_columns", "to_columns", "exponent",
                                      "marginal_us_per_column"])


def _with_ratio(df: pd.DataFrame) -> pd.DataFrame:
    ref = df[(df.implementation == REFERENCE[0]) & (df.stats == REFERENCE[1])]
    ref = ref[["dataset", "mode", "median_s"]].rename(columns={"median_s": "ref_s"})
    out = df.merge(ref, on=["dataset", "mode"], how="left")
    out["ratio_to_pyarrow"] = out.median_s / out.ref_s
    return out.drop(columns="ref_s")


def _row_label(d: pd.DataFrame) -> pd.Series:
    return d.implementation + np.where(d.stats == "-", "", " (" + d.stats + " stats)")


def _duration(seconds: float, spread: float) -> str:
    """``median ± half-IQR`` in the unit that suits the median (µs, ms or s)."""
    scale, unit = next((f, u) for f, u in ((1, "s"), (1e-3, "ms"), (1e-6, "µs"))
                       if seconds >= f or u == "µs")
    half = spread / 2 / scale
    return f"{seconds / scale:.3g} {unit} ± {half:.0f}" if half >= 10 else \
        f"{seconds / scale:.3g} {unit} ± {half:.2g}"


def _time_pivot(d: pd.DataFrame) -> pd.DataFrame:
    cell = [f"{_duration(m, i)} ({u:.3g} µs/col)"
            for m, i, u in zip(d.median_s, d.iqr_s, d.us_per_column, strict=True)]
    p = d.assign(row=_row_label(d), cell=cell).pivot_table(
        index="row", columns="n_columns", values="cell", aggfunc="first")
    p.columns = [f"{c} columns" for c in p.columns]
    return p.reset_index().rename(columns={"row": "implementation"})


def _bytes_pivot(d: pd.DataFrame) -> pd.DataFrame:
    d = d.drop_duplicates(["layout", "n_columns", "metadata_bytes"])
    d = d.assign(what=np.where(d.implementation.str.endswith("+page-index"),
                               d.layout + " + page index", d.layout))
    cell = [f"{b:,.0f} B ({b / c:,.0f} B/col" + (f"; {u / c:,.0f} uncompressed)" if u > b else ")")
            for b, u, c in zip(d.metadata_bytes, d.metadata_bytes_uncompressed, d.n_columns,
                               strict=True)]
    p = d.assign(cell=cell).pivot_table(index="what", columns="n_columns", values="cell",
                                        aggfunc="first")
    p.columns = [f"{c} columns" for c in p.columns]
    return p.reset_index().rename(columns={"what": "layout"})


def _ratio_pivot(d: pd.DataFrame) -> pd.DataFrame:
    p = d.assign(row=_row_label(d)).pivot_table(index="row", columns="n_columns",
                                                values="ratio_to_pyarrow", aggfunc="first")
    p.columns = [f"{c} columns" for c in p.columns]
    return p.round(2).reset_index().rename(columns={"row": "implementation"})


def _sections(df: pd.DataFrame, sl: pd.DataFrame) -> list[Section]:
    sections = []
    synthetic = df[df.type != "nanoaod"]
    for kind in sorted(synthetic.type.unique()):
        d = synthetic[synthetic.type == kind]
        for mode in ("memory", "disk"):
            dm = d[d["mode"] == mode]
            if not dm.empty:
                sections.append((f"{kind}: decode time from {mode}, median ± half the IQR "
                                 "(µs per column)", _time_pivot(dm)))
        sections.append((f"{kind}: metadata bytes as stored (bytes per column)",
                         _bytes_pivot(d)))
        sections.append((f"{kind}: decode time from memory / pyarrow's (chunk statistics)",
                         _ratio_pivot(d[d["mode"] == "memory"])))
    if not sl.empty:
        cell = [f"b = {b:.2f}, {m:.3g} µs/col" for b, m in
                zip(sl.exponent, sl.marginal_us_per_column, strict=True)]
        p = sl.assign(row=_row_label(sl), cell=cell, step=sl.from_columns.astype(str) + " → "
                      + sl.to_columns.astype(str)).pivot_table(
            index=["type", "mode", "row"], columns="step", values="cell", aggfunc="first",
            sort=False)
        steps = sl.drop_duplicates("from_columns").sort_values("from_columns")
        p = p[[f"{a} → {b}" for a, b in zip(steps.from_columns, steps.to_columns, strict=True)
               if f"{a} → {b}" in p.columns]]
        sections.append(("Scaling between successive widths: local exponent b of time ∝ "
                         "columns^b, and marginal µs per extra column",
                         p.reset_index().rename(columns={"row": "implementation"})))
    nano = df[df.type == "nanoaod"]
    for ds in sorted(nano.dataset.unique()):
        d = nano[(nano.dataset == ds) & (nano["mode"] == "memory")]
        table = pd.DataFrame({
            "implementation": _row_label(d), "columns": d.n_columns,
            "median_ms": d.median_s * 1e3, "iqr_ms": d.iqr_s * 1e3,
            "us_per_column": d.us_per_column, "metadata_bytes": d.metadata_bytes,
            "bytes_per_column": d.bytes_per_column}).sort_values("median_ms")
        sections.append((f"{ds} (real NanoAOD types and width): decode time from memory",
                         table.round(3)))
    sections.append(("Legend", "memory: the file's bytes were loaded before timing, only the "
                               "decode is timed; disk: the decoder opens the file, which is in "
                               "the page cache. Metadata bytes: Parquet footer (page index "
                               "apart); TTree key; RNTuple header + footer + page lists "
                               "(compressed, as stored). Different machines: compare "
                               "exponents and ratios, not absolute times."))
    return sections


def tabulate(config: dict, timing_files: Iterable[str | Path], out_dir: str | Path,
             provenance_path: str | Path | None = None) -> pd.DataFrame:
    """Every table of the metadata study from its timing records; returns the main table."""
    from hepfmt.atomic import write_json

    out = Path(out_dir)
    df, reps, provs = load(timing_files)
    if df.empty:
        raise InputError(out, "no metadata timings to tabulate")
    df = _with_ratio(df.sort_values(KEYS).reset_index(drop=True))
    prov = merged_provenance(config, out, provs, len(provs), pd.DataFrame())
    prov.update(n_files=len(provs), n_timings=len(df), repetitions=int(df.n.min()))
    lines = provenance_lines(prov, counts=(
        f"{len(provs)} files; {len(df)} timings of {int(df.n.min())}-{int(df.n.max())} "
        "repetitions each (after one untimed decode per mode, in a fresh process per "
        "implementation); spread = interquartile range of the repetitions"))
    sl = slopes(df)
    write_csv(df, out / "metadata.csv", lines)
    write_csv(reps, out / "repetitions.csv", lines)
    write_csv(sl, out / "slopes.csv", lines)
    write_doc("Metadata cost of wide tables: decode time and size vs number of columns",
             _sections(df, sl), out / "metadata.md", lines, provenance_cpus(prov))
    write_json(provenance_path or out / "provenance.json", prov)
    return df
