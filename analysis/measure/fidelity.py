"""Is the synthetic sample faithful? Write a real file and a synthetic sample of the same size
through the same converters and put their sizes, byte budgets, multiplicities and mantissa bits
side by side.

Two normalised sizes are shown per codec: the whole file (the 2018 definition) and the data
alone (compressed bytes of all branches / naive bytes). For small files the first is dominated by
the per-branch metadata, which is identical for two files with the same schema, so the second is
the sharper test of the value model.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import formats
from analysis.measure.sizes import size_record
from analysis.samples.generate import generate
from analysis.samples.importer import import_tree
from analysis.samples.model import Model, mantissa_bits
from analysis.samples.source import (
    iter_batches,
    read_source_meta,
    schema_of,
    to_column,
    write_sidecar,
)

#: The codecs the fidelity goal names: (format, variant).
CODECS = [("ttree", "zlib-1"), ("ttree", "lz4-4"), ("ttree", "lzma-9"), ("ttree", "zstd-5"),
          ("parquet", "none"), ("parquet", "snappy"), ("parquet", "gzip-6"),
          ("parquet", "zstd-3"), ("parquet", "none+dict")]
#: Relative difference of normalised size the model aims to stay within, per codec.
GOAL = 0.15


def _sizes(source: Path, work: Path, codecs: list[tuple[str, str]]) -> dict[tuple, dict]:
    n = read_source_meta(source)["n_events"]
    out = {}
    for fmt_name, variant in codecs:
        fmt = formats.get(fmt_name)
        path = work / f"{source.stem}.{variant}.{formats.extension(fmt_name)}"
        fmt.write(source, path, fmt.variant(variant), n, {})
        out[fmt_name, variant] = size_record(path, fmt_name, source)
    return out


def _stats(source: Path) -> tuple[dict[str, float], dict[str, int | None]]:
    """Mean multiplicity per collection and stored mantissa bits per float32 branch."""
    schema = schema_of(read_source_meta(source))
    floats = [b.name for b in schema.branches if b.dtype == "float32"]
    counters = list(schema.counters())
    cols: dict[str, list[np.ndarray]] = {c: [] for c in [*counters, *floats]}
    for batch in iter_batches(source, list(cols)):
        for c in cols:
            cols[c].append(to_column(batch.column(c)).values)
    flat = {c: np.concatenate(v) for c, v in cols.items()}
    return ({c[1:]: float(flat[c].mean()) for c in counters},
            {f: mantissa_bits(flat[f]) for f in floats})


def compare(real: str, model: Model, tree: str = "Events", seed: int = 1,
            codecs: list[tuple[str, str]] | None = None) -> dict[str, pd.DataFrame]:
    """The side-by-side tables (see the module docstring)."""
    codecs = codecs or CODECS
    with tempfile.TemporaryDirectory(prefix="hepfmt-fidelity-") as tmp:
        work = Path(tmp)
        real_src = work / "real.arrow"
        schema = import_tree(real, tree, real_src)
        meta = write_sidecar(real_src, schema, "real", source_file=real, tree=tree)
        synth_src = work / "synthetic.arrow"
        generate(model, "DYJetsToLL", seed, meta["n_events"], synth_src)
        write_sidecar(synth_src, model.schema, "synthetic", process="DYJetsToLL", seed=seed)
        sizes = {"real": _sizes(real_src, work, codecs),
                 "synthetic": _sizes(synth_src, work, codecs)}
        stats = {"real": _stats(real_src), "synthetic": _stats(synth_src)}

    rows = []
    for key in codecs:
        r, s = sizes["real"][key], sizes["synthetic"][key]
        data_r = sum(r["zip_bytes_by_group"].values()) / r["naive_bytes"]
        data_s = sum(s["zip_bytes_by_group"].values()) / s["naive_bytes"]
        rows.append({"format": key[0], "variant": key[1],
                     "file real": r["normalized_size"], "file synthetic": s["normalized_size"],
                     "file diff %": 100 * (s["normalized_size"] / r["normalized_size"] - 1),
                     "data real": data_r, "data synthetic": data_s,
                     "data diff %": 100 * (data_s / data_r - 1)})
    size = pd.DataFrame(rows)
    size["within goal"] = size["data diff %"].abs() <= 100 * GOAL

    ref = ("parquet", "zstd-3") if ("parquet", "zstd-3") in codecs else codecs[0]
    groups = pd.DataFrame({
        f"{who} bytes/event": pd.Series(sizes[who][ref]["zip_bytes_by_group"]) / meta["n_events"]
        for who in ("real", "synthetic")}).fillna(0.0)
    groups["diff %"] = 100 * (groups.iloc[:, 1] / groups.iloc[:, 0].replace(0, np.nan) - 1)
    mult = pd.DataFrame({f"{who} mean": pd.Series(stats[who][0]) for who in stats})
    bits = pd.DataFrame({f"{who} bits": pd.Series(stats[who][1], dtype="Int64")
                         for who in stats})
    bits_summary = pd.DataFrame({
        "float32 branches": [len(bits)],
        "same stored bits": [int((bits.iloc[:, 0] == bits.iloc[:, 1]).sum())],
        "real ≤ 12 bits": [int((bits.iloc[:, 0] <= 12).sum())],
        "synthetic ≤ 12 bits": [int((bits.iloc[:, 1] <= 12).sum())]})
    return {"size": size, "groups": groups.reset_index(names="group"),
            "multiplicity": mult.reset_index(names="collection"), "mantissa": bits_summary,
            "groups_codec": pd.DataFrame([{"format": ref[0], "variant": ref[1]}])}


def report(tables: dict[str, pd.DataFrame], real: str, model_origin: str) -> str:
    """Markdown: what a user reads to decide whether to trust the synthetic samples."""
    g = tables["groups_codec"].iloc[0]
    parts = [
        f"# Model fidelity: {real} vs a synthetic sample from {model_origin}", "",
        "## Normalised size per codec (file = 2018 definition; data = branches only)", "",
        tables["size"].round(3).to_markdown(index=False), "",
        f"Goal: data-only normalised size within {GOAL:.0%} for every codec.", "",
        f"## Compressed bytes per event by branch group ({g.format} {g.variant})", "",
        tables["groups"].round(1).to_markdown(index=False), "",
        "## Mean multiplicity per collection", "",
        tables["multiplicity"].round(2).to_markdown(index=False), "",
        "## Mantissa bits stored in float32 branches", "",
        tables["mantissa"].to_markdown(index=False), "",
    ]
    return "\n".join(parts)
