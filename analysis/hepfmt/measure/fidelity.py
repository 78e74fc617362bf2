"""Is the synthetic sample faithful? Write a real file and a synthetic sample through the same
converters (every codec of TTree, RNTuple and Parquet) and put their sizes, byte budgets per
collection, multiplicities and mantissa bits side by side.

The goal (``hepfmt validate-model``): per codec, the data-only normalised size (compressed bytes
of all branches / naive bytes) and the compressed bytes per event of every collection or group
holding at least 1% of the real file's bytes, within 15% of the real file's; and at each
format's reference codec, every branch holding at least 1% of its bytes within 25%. Data only,
because
a small file's whole size is dominated by per-branch metadata, identical for two files of the
same schema; the whole-file size of the real file is shown for context.

The model is learned from the real file, so the only difference left is sampling noise, large
for a small file (a collection present in 9 of 40 events). The synthetic sample is therefore
several replicas of the real file's size, written in clusters of exactly that size: each
cluster compresses as the real file does, and the averages over replicas are stable.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from hepfmt import formats
from hepfmt.atomic import scratch_dir
from hepfmt.errors import InputError
from hepfmt.measure.sizes import size_record
from hepfmt.samples.generate import generate
from hepfmt.samples.importer import import_tree
from hepfmt.samples.inputs import open_input
from hepfmt.samples.model import Model, mantissa_bits
from hepfmt.samples.relations_model import (
    Relations,
    broken_relations,
    relations_of_source,
)
from hepfmt.samples.schema import Schema
from hepfmt.samples.source import (
    iter_batches,
    read_source_meta,
    schema_of,
    to_column,
    write_sidecar,
)

#: Every codec of the three formats the goal names: (format, variant).
ROOT_VARIANTS = ("none", "zlib-1", "lz4-4", "lzma-9", "zstd-5")
PARQUET_VARIANTS = ("none", "snappy", "gzip-6", "lz4", "zstd-3", "brotli-5", "none+dict")
CODECS = [*((f, v) for f in ("ttree", "rntuple") for v in ROOT_VARIANTS),
          *(("parquet", v) for v in PARQUET_VARIANTS)]
#: Relative difference the model aims to stay within, per codec and per group.
GOAL = 0.15
#: Groups (and branches) holding less than this share of the real file's compressed bytes
#: are not judged.
MIN_SHARE = 0.01
#: Relative difference the model aims to stay within per branch (at each format's
#: :data:`REFERENCE` codec), for every branch over :data:`MIN_SHARE` of the format's bytes: a
#: group within 15% may still hide a branch the model gets wrong.
BRANCH_GOAL = 0.25
#: The synthetic sample has at least this many events (whole replicas of the real file).
MIN_SYNTHETIC_EVENTS = 1000
#: The fewest real events a judgement is made on. The synthetic sample is written in clusters
#: of the real file's size, so a file of 2 events asked for 500 clusters of 2 events (a
#: Parquet file of 500 row groups x 1582 columns: 3.2 GB and a C++ abort in 2026-11); from 5
#: events on, the replicas (at most 200) keep every written file's metadata small.
MIN_JUDGED_EVENTS = 5
#: The codec per format whose group budgets the report tabulates.
REFERENCE = {"ttree": "zstd-5", "rntuple": "zstd-5", "parquet": "zstd-3"}
#: Rows of the worst-offenders list.
WORST = 10


#: The most seconds one write of a judgement takes (a codec of the synthetic sample: at most
#: 1000 events x 1582 branches, 2-6 s on a 2-core VM, 2026-11), with room for a machine
#: several times slower: what a judgement's time limit allows per write, whatever the size of
#: the real file (``validate-model --held-out`` on a 10-event file was stopped at a limit
#: made for reading 10 events).
WRITE_S = 30.0


def work_s(n_models: int, codecs: list[tuple[str, str]] | None = None) -> float:
    """The seconds a judgement of ``n_models`` models may spend writing: the real file and
    each model's synthetic sample through every codec."""
    return WRITE_S * len(codecs or CODECS) * (1 + n_models)


def replicas(n_events: int) -> int:
    """How many real-file-sized replicas the synthetic sample holds."""
    return max(1, math.ceil(MIN_SYNTHETIC_EVENTS / max(n_events, MIN_JUDGED_EVENTS)))


def require_events(path: str, tree: str, needed: int, what: str) -> int:
    """The entries of ``path``'s ``tree``, refused in one line before anything is written when
    fewer than ``needed`` (a judgement on fewer events says nothing and writes clusters too
    small to be files)."""
    n = open_input(path, tree).require_entries()
    if n < needed:
        raise InputError(path, f"{n} entries: {what} needs at least {needed}")
    return n


def _sizes(source: Path, work: Path, codecs: list[tuple[str, str]],
           cluster_size: int) -> dict[tuple, dict]:
    out = {}
    for fmt_name, variant in codecs:
        fmt = formats.get(fmt_name)
        path = work / f"{source.stem}.{fmt_name}.{variant}.{formats.extension(fmt_name)}"
        fmt.write(source, path, fmt.variant(variant), cluster_size, {})
        out[fmt_name, variant] = size_record(path, fmt_name, source)
        path.unlink()
    return out


def _stats(source: Path) -> tuple[dict[str, float], dict[str, int | None]]:
    """Mean multiplicity per collection and stored mantissa bits per float32 branch."""
    schema = schema_of(read_source_meta(source))
    floats = [b.name for b in schema.branches if b.dtype == "float32"]
    counters = {c: ks[0] for c, ks in schema.collections().items()}
    cols: dict[str, list[np.ndarray]] = {c: [] for c in [*counters.values(), *floats]}
    for batch in iter_batches(source, list(cols)):
        for c in cols:
            cols[c].append(to_column(batch.column(c)).values)
    flat = {c: np.concatenate(v) for c, v in cols.items()}
    return ({c: float(flat[k].mean()) for c, k in counters.items()},
            {f: mantissa_bits(flat[f]) for f in floats})


def _checks(sizes: dict[str, dict], events: dict[str, int], codecs: list[tuple[str, str]],
            unjudged: frozenset[str], groups_of: dict[str, str]) -> pd.DataFrame:
    """One row per quantity (``level``): each codec's data size ("all"), each group's bytes
    per event at each codec where it holds at least MIN_SHARE of the real file's bytes, and,
    at each format's reference codec, each such branch's (``groups_of``: branch -> group);
    groups in ``unjudged`` (and their branches) are listed but not judged."""
    rows = []
    for key in codecs:
        r, s = sizes["real"][key], sizes["synthetic"][key]
        zr, zs = r["zip_bytes_by_group"], s["zip_bytes_by_group"]
        total = sum(zr.values())
        at = {"format": key[0], "variant": key[1]}
        rows.append({**at, "level": "codec", "group": "all", "branch": "", "share %": 100.0,
                     "real": total / r["naive_bytes"],
                     "synthetic": sum(zs.values()) / s["naive_bytes"], "goal %": 100 * GOAL})
        for g, z in zr.items():
            if z >= MIN_SHARE * total:
                rows.append({**at, "level": "group", "group": g, "branch": "",
                             "share %": 100 * z / total, "real": z / events["real"],
                             "synthetic": zs.get(g, 0) / events["synthetic"],
                             "goal %": 100 * GOAL})
        if REFERENCE.get(key[0]) != key[1]:
            continue
        br, bs = r["zip_bytes_by_branch"], s["zip_bytes_by_branch"]
        for b, z in br.items():
            if z >= MIN_SHARE * total:
                rows.append({**at, "level": "branch", "group": groups_of.get(b, ""),
                             "branch": b, "share %": 100 * z / total,
                             "real": z / events["real"],
                             "synthetic": bs.get(b, 0) / events["synthetic"],
                             "goal %": 100 * BRANCH_GOAL})
    checks = pd.DataFrame(rows)
    checks["diff %"] = 100 * (checks["synthetic"] / checks["real"] - 1)
    checks["within goal"] = checks["diff %"].abs() <= checks["goal %"]
    checks["judged"] = ~checks["group"].isin(unjudged)
    return checks


def compare(real: str, model: Model, tree: str = "Events", seed: int = 1,
            codecs: list[tuple[str, str]] | None = None,
            unjudged: frozenset[str] = frozenset()) -> dict[str, pd.DataFrame]:
    """The side-by-side tables (see the module docstring); the groups in ``unjudged`` are shown
    but left out of the verdict (a collection the model has never seen an object of)."""
    return compare_models(real, {"": (model, unjudged)}, tree, seed, codecs)[""]


def compare_models(real: str, models: dict[str, tuple[Model, frozenset[str]]],
                   tree: str = "Events", seed: int = 1,
                   codecs: list[tuple[str, str]] | None = None,
                   relations: Relations | None = None) -> dict[str, dict]:
    """:func:`compare` of one real file with several models (name -> model and its unjudged
    groups): the real file is imported and written through the codecs once. ``relations``:
    those every sample must keep (default: the real file's own; a held-out judgement gives
    the whole file's, of which the judged events are a part)."""
    codecs = codecs or CODECS
    require_events(real, tree, MIN_JUDGED_EVENTS, "a judgement of a model")
    out = {}
    with scratch_dir(prefix="hepfmt-fidelity-") as work:
        real_src = work / "real.arrow"
        schema = import_tree(real, tree, real_src)
        n = write_sidecar(real_src, schema, "real", source_file=real, tree=tree)["n_events"]
        real_sizes, real_stats = _sizes(real_src, work, codecs, n), _stats(real_src)
        for name, (model, unjudged) in models.items():
            synth_src = work / "synthetic.arrow"
            generate(model, "DYJetsToLL", seed, n * replicas(n), synth_src)
            write_sidecar(synth_src, model.schema, "synthetic", process="DYJetsToLL",
                          seed=seed)
            sizes = {"real": real_sizes, "synthetic": _sizes(synth_src, work, codecs, n)}
            stats = {"real": real_stats, "synthetic": _stats(synth_src)}
            out[name] = _tables(sizes, stats, n, codecs, model.schema, unjudged)
            # the real file's relations (any model, the built-in one too), checked on the sample
            kept = relations_of_source(real_src, schema) if relations is None else relations
            broken = broken_relations(synth_src, model, kept)
            out[name]["relations"] = pd.DataFrame({"relation": broken}, dtype=object)
    return out


def _tables(sizes: dict[str, dict], stats: dict[str, tuple], n: int,
            codecs: list[tuple[str, str]], schema: Schema,
            unjudged: frozenset[str]) -> dict[str, pd.DataFrame]:
    """The report's tables from the real and synthetic sizes and statistics."""
    events = {"real": n, "synthetic": n * replicas(n)}
    checks = _checks(sizes, events, codecs, unjudged,
                     {b.name: b.group for b in schema.branches})
    codec_rows = checks[checks["level"] == "codec"]
    size = pd.DataFrame({
        "format": codec_rows["format"], "variant": codec_rows["variant"],
        "file real": [sizes["real"][k]["normalized_size"] for k in codecs],
        "data real": codec_rows["real"], "data synthetic": codec_rows["synthetic"],
        "data diff %": codec_rows["diff %"], "within goal": codec_rows["within goal"]})
    mult = pd.DataFrame({f"{who} mean": pd.Series(stats[who][0]) for who in stats})
    bits = pd.DataFrame({f"{who} bits": pd.Series(stats[who][1], dtype="Int64")
                         for who in stats})
    bits_summary = pd.DataFrame({
        "float32 branches": [len(bits)],
        "same stored bits": [int((bits.iloc[:, 0] == bits.iloc[:, 1]).sum())],
        "real ≤ 12 bits": [int((bits.iloc[:, 0] <= 12).sum())],
        "synthetic ≤ 12 bits": [int((bits.iloc[:, 1] <= 12).sum())]})
    return {"size": size.reset_index(drop=True), "groups": _groups(checks),
            "branches": _branches(sizes, events, schema),
            "checks": checks, "multiplicity": mult.reset_index(names="collection"),
            "mantissa": bits_summary,
            "replicas": pd.DataFrame([{"real events": n, "replicas": replicas(n)}])}


def _groups(checks: pd.DataFrame) -> pd.DataFrame:
    """Group budgets at each format's reference codec: share of the real bytes, real bytes per
    event and the synthetic sample's difference, one column pair per format."""
    ref = checks[(checks["level"] == "group")
                 & (checks["variant"] == checks["format"].map(REFERENCE))]
    wide = ref.pivot(index="group", columns="format", values=["share %", "diff %"])
    wide.columns = [f"{fmt} {what}" for what, fmt in wide.columns]
    order = [f"{f} {w}" for f in REFERENCE for w in ("share %", "diff %")
             if f"{f} {w}" in wide.columns]
    return wide[order].sort_values(order[0], ascending=False).reset_index()


def _branches(sizes: dict[str, dict], events: dict[str, int], schema: Schema) -> pd.DataFrame:
    """Compressed bytes per event of every branch at each format's reference codec, real and
    synthetic: where inside a group the model's bytes go wrong (worst first, by the bytes per
    event it gets wrong)."""
    rows = []
    groups = {b.name: b.group for b in schema.branches}
    for fmt, variant in REFERENCE.items():
        if (fmt, variant) not in sizes["real"]:
            continue
        real = sizes["real"][fmt, variant]["zip_bytes_by_branch"]
        synth = sizes["synthetic"][fmt, variant]["zip_bytes_by_branch"]
        for name, z in real.items():
            r, y = z / events["real"], synth.get(name, 0) / events["synthetic"]
            rows.append({"format": fmt, "branch": name, "group": groups.get(name, ""),
                         "real": r, "synthetic": y, "bytes/event off": y - r,
                         "diff %": 100 * (y / r - 1) if r else np.nan})
    out = pd.DataFrame(rows, columns=["format", "branch", "group", "real", "synthetic",
                                      "bytes/event off", "diff %"])
    return out.reindex(out["bytes/event off"].abs().sort_values(ascending=False).index)


def schema_mismatch(model: Schema, real: Schema) -> str | None:
    """How the model's branches and the file's differ, counted, in one line (None: the same
    names). A group the model lacks is judged at -100% and one the file lacks not at all, so
    a verdict across two schemas says more about the schemas than about the values."""
    m, r = set(model.names), set(real.names)
    if m == r:
        return None

    def some(names: set[str]) -> str:
        return f" (e.g. {', '.join(sorted(names)[:3])})" if names else ""

    return (f"the model's schema ({model.origin or 'model'}, {len(m)} branches) differs from "
            f"the file's ({len(r)} branches): {len(r - m)} of the file's branches are missing "
            f"from the model{some(r - m)}, {len(m - r)} of the model's from the file"
            f"{some(m - r)}")


def _against_goal(checks: pd.DataFrame) -> pd.Series:
    """How far each check is from its goal (its difference over its goal: above 1, missed)."""
    goal = checks["goal %"] if "goal %" in checks else 100 * GOAL
    return checks["diff %"].abs() / goal


def misses(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The checks beyond their goal, farthest first."""
    checks = tables["checks"]
    missed = checks[checks["judged"] & ~checks["within goal"]]
    return missed.reindex(_against_goal(missed).sort_values(ascending=False).index)


def broken(tables: dict[str, pd.DataFrame]) -> list[str]:
    """The real file's relations the synthetic sample breaks (a counter that is not its
    collection's length, a copy that is not one), one line each."""
    rel = tables.get("relations")
    return [] if rel is None else list(rel["relation"])


def failed(tables: dict[str, pd.DataFrame]) -> list[str]:
    """Every failed check in a few words, worst first: the broken relations, then the checks
    beyond the goal."""
    return [*broken(tables),
            *(f"{r['format']} {r['variant']} {r.get('branch') or r['group']} "
              f"{r['diff %']:+.0f}%" for r in misses(tables).to_dict("records"))]


def shown(checks: pd.DataFrame) -> str:
    """Checks as a Markdown table; a check left unjudged says so in its verdict column."""
    out = checks.drop(columns="judged").round(3)
    out["within goal"] = out["within goal"].where(checks["judged"], "not judged")
    return out.to_markdown(index=False)


def verdict_line(tables: dict[str, pd.DataFrame]) -> str:
    """The verdict in one Markdown line, with the groups left unjudged and why."""
    checks = tables["checks"]
    judged = int(checks["judged"].sum())
    n_missed = len(misses(tables))
    n_broken = len(broken(tables))
    n_branches = int((checks["level"] == "branch").sum()) if "level" in checks else 0
    goal = (f"{GOAL:.0%}" if not n_branches else
            f"their goal ({GOAL:.0%} per codec and group, {BRANCH_GOAL:.0%} for each of the "
            f"{n_branches} branches over {MIN_SHARE:.0%} of a format's bytes)")
    line = (f"**Goal met**: all {judged} checks within {goal}." if not n_missed
            else f"**Goal missed**: {n_missed} of {judged} checks beyond {goal}.")
    if n_broken:
        line += f" **Relations broken**: {n_broken} of the real file's (listed below)."
    skipped = checks[~checks["judged"]]
    if len(skipped):
        line += (f" Not judged: {len(skipped)} checks of "
                 f"{', '.join(sorted(set(skipped['group'])))}, of which the model saw no object.")
    return line


def _relations_section(tables: dict[str, pd.DataFrame]) -> list[str]:
    if "relations" not in tables:
        return []
    lines = broken(tables)
    return ["## Relations of the real file (counters, lengths, copies)", "",
            *([f"- {x}" for x in lines] or ["Every one holds in the synthetic sample."]), ""]


def report(tables: dict[str, pd.DataFrame], real: str, model_origin: str,
           notes: list[str] | None = None) -> str:
    """Markdown: what a user reads to decide whether to trust the synthetic samples;
    ``notes`` (a schema mismatch) go above the verdict."""
    checks = tables["checks"]
    judged = checks[checks["judged"]]
    worst = judged.reindex(_against_goal(judged).sort_values(ascending=False).index)
    rep = tables["replicas"].iloc[0]
    verdict = verdict_line(tables)
    refs = ", ".join(f"{f} {v}" for f, v in REFERENCE.items())
    parts = [
        f"# Model fidelity: {real} vs a synthetic sample from {model_origin}", "",
        f"Synthetic sample: {rep['replicas']} replicas of the real file's {rep['real events']} "
        "events, written in clusters of that size.", "",
        *(f"**Note**: {n}." for n in notes or []), *([""] if notes else []),
        verdict, "",
        *_relations_section(tables),
        "## Normalised size per codec (file = 2018 definition, real file; data = branches only)",
        "", tables["size"].round(3).to_markdown(index=False), "",
        f"Goal: data-only normalised size, and the bytes per event of every group holding at "
        f"least {MIN_SHARE:.0%} of the bytes, within {GOAL:.0%} at every codec; at {refs}, "
        f"the bytes per event of every branch holding at least {MIN_SHARE:.0%} of the bytes "
        f"within {BRANCH_GOAL:.0%}.", "",
        f"## Worst offenders (of {len(judged)} judged checks, farthest from their goal first; "
        "real/synthetic: data normalised size for 'all', compressed bytes per event for a "
        "group or branch)", "",
        shown(worst.head(WORST)), "",
        f"## Compressed bytes by branch group ({refs}; groups with ≥ {MIN_SHARE:.0%} of the "
        "bytes in any)", "", tables["groups"].round(1).to_markdown(index=False), "",
        f"## Branches the model gets most bytes wrong ({refs}; compressed bytes per event)", "",
        tables["branches"].head(WORST).round(2).to_markdown(index=False), "",
        "## Mean multiplicity per collection", "",
        tables["multiplicity"].round(2).to_markdown(index=False), "",
        "## Mantissa bits stored in float32 branches", "",
        tables["mantissa"].to_markdown(index=False), "",
    ]
    return "\n".join(parts)
