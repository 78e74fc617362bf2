"""The answer of one run, composed from its tables: claims, the tables behind them, and gaps.

A table a section needs may be missing (a run of ``all`` without the metadata study, a study
without pairings): the section then becomes a :class:`~.facts.Gap` naming the table, and the
rest is still written, so a partial run still gets the answer it can support.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from hepfmt.report.answer import cpus, split
from hepfmt.report.answer import facts as f
from hepfmt.report.answer import wording as w
from hepfmt.report.documents import provenance_cpus, read_provenance


@dataclass
class Answer:
    provenance: dict
    facts: f.Facts = field(default_factory=f.Facts)
    #: The tables of the answer, each a title, a note and rows of cells (strings).
    tables: list[tuple[str, str, list[str], list[list[str]]]] = field(default_factory=list)
    #: The same rows as numbers, for answer.json.
    data: dict[str, list[dict]] = field(default_factory=dict)
    n_columns: int | None = None
    where: Path = Path(".")  # the tables' directory


#: The columns each section reads, per table: a table without them (written by an older hepfmt,
#: or damaged) is a gap naming the columns, not a traceback.
REQUIRED = {
    "ratios.csv": ("pair", "quantity", "selection", "read", "cluster_size", "ratio_mean",
                   "ratio_lo", "ratio_hi", "coverage", "n_over", "over", "n_samples",
                   "compares", "ttree", "parquet", "ttree_reader", "parquet_reader", "cpu"),
    "pairs.csv": ("pair", "cluster_size", "selection", "read", "side", "label", "variant",
                  "reader", "read_peak_mb"),
    "size.csv": ("label", "variant", "cluster_size", "normalized_size_mean",
                 "normalized_size_std", "n_samples"),
    "reads.csv": ("label", "variant", "format", "cluster_size", "reader", "threads",
                  "selection", "mode", "median_s_mean", "median_lo_s", "median_hi_s",
                  "median_coverage", "events_per_s", "rss_over_baseline_mb"),
    "metadata.csv": ("type", "mode", "n_columns", "layout", "implementation", "median_s",
                     "us_per_column", "metadata_bytes"),
}


def _table(answer: Answer, path: Path) -> pd.DataFrame | None:
    """The table at ``path``, or None with a gap saying why (missing, unreadable, or without
    the columns the answer reads)."""
    if not path.is_file():
        return None
    try:
        df = pd.read_csv(path, comment="#")
    except (ValueError, OSError, UnicodeDecodeError) as exc:
        answer.facts.gaps.append(f.Gap(f"`{path.name}` could not be read ({exc}): what it "
                                       "holds is left out."))
        return None
    lacking = [c for c in REQUIRED.get(path.name, ()) if c not in df.columns]
    if lacking:
        answer.facts.gaps.append(f.Gap(f"`{path.name}` lacks the column(s) "
                                       f"{', '.join(lacking)} (a table of an older hepfmt?): "
                                       "what the answer reads from it is left out."))
        return None
    return df


def _provenance(tables: Path, provenance: Path | None) -> dict:
    for p in (provenance, tables / "provenance.json", tables.parent / "provenance.json"):
        if p is not None and Path(p).is_file():
            return read_provenance(p)
    return {}


def _missing(answer: Answer, path: Path, what: str) -> None:
    """A gap for a table that is not there (one that is there but unusable has its own)."""
    if not path.is_file():
        answer.facts.gaps.append(f.Gap(f"No `{path.name}` in this run: {what} not stated."))


def _records(df: pd.DataFrame, cols: list[str]) -> list[dict]:
    out = df[cols].astype(object).where(df[cols].notna(), None).to_dict("records")
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
            for r in out]


def build(tables: str | Path, metadata: str | Path | None = None,
          provenance: str | Path | None = None, other: str | Path | None = None) -> Answer:
    """The answer of the run whose tables are in ``tables`` (``results/tables`` of a run, or a
    reference directory), with the metadata study's tables from ``metadata`` if given, and
    its stated ratios set against another run's (``other``: a reference of another CPU) if
    given (:mod:`.cpus`)."""
    tables = Path(tables)
    prov = _provenance(tables, Path(provenance) if provenance else None)
    cpu = ", ".join(provenance_cpus(prov)) if prov else "unknown CPU"
    answer = Answer(prov, where=tables)
    meta = _table(answer, Path(metadata) / "metadata.csv") if metadata else None
    if meta is not None and (meta.type == "nanoaod").any():
        answer.n_columns = int(meta[meta.type == "nanoaod"].n_columns.iloc[0])
    ratios, reads = _table(answer, tables / "ratios.csv"), _table(answer, tables / "reads.csv")
    stated = _speed(answer, ratios, _table(answer, tables / "pairs.csv"), cpu)
    if other is not None and ratios is not None and stated is not None:
        answer.facts.claims += cpus.claims(ratios, stated, cpu, other)
    _size(answer, _table(answer, tables / "size.csv"), cpu)
    _reads(answer, reads, cpu)
    _metadata(answer, meta, metadata)
    _limits(answer, reads, ratios, compared=other is not None)
    return answer


def _speed(answer: Answer, ratios: pd.DataFrame | None, pairs: pd.DataFrame | None,
           cpu: str) -> pd.DataFrame | None:
    """The speed claims and table; the speed rows the claims state (None: none)."""
    if ratios is None:
        _missing(answer, answer.where / "ratios.csv", "ROOT / Parquet speed ratios are")
        return None
    speeds = f.speed_rows(ratios)
    if speeds.empty:
        answer.facts.gaps.append(f.Gap("No paired ROOT / Parquet read in this run: no speed "
                                       "ratio can be stated."))
        return None
    sides = f.sides_of(pairs)
    stated = pd.concat([f.headline_rows(speeds), f.event_loop_rows(speeds)])
    stated = stated[~stated.index.duplicated()]
    answer.facts.claims += [f.speed_claim(x, sides, answer.n_columns,
                                          split.words(ratios, pairs, x))
                            for x in stated.itertuples()]
    cells = [[f"{x.pair} ({x.compares})", f"{int(x.cluster_size):,}", x.selection, x.read,
              x.quantity, w.number(x.speed), w.interval(x.speed_lo, x.speed_hi),
              f"{w.coverage(x.coverage)}, {f.over_words(x)}",
              w.direction_word(x.speed, x.speed_lo, x.speed_hi, cover=x.coverage)]
             for x in speeds.itertuples()]
    answer.tables.append((
        "Every ROOT / Parquet speed ratio",
        "ROOT speed / Parquet speed (above 1: ROOT faster), from `ratios.csv` (`file_time` "
        "and time ratios inverted so that every row reads the same way); a direction only "
        f"where an interval of at least {w.CLAIM_COVERAGE:.0%} coverage excludes 1.",
        ["pairing (compares)", "cluster size", "selection", "read", "quantity",
         "ROOT / Parquet speed", "interval", "coverage, over", "verdict"], cells))
    answer.data["speed"] = _records(speeds, [
        "pair", "compares", "cluster_size", "selection", "read", "quantity", "speed",
        "speed_lo", "speed_hi", "coverage", "n_over", "over", "n_samples", "ttree_reader",
        "parquet_reader", "cpu"])
    if pairs is not None:
        answer.facts.claims += f.memory_claims(pairs, cpu)
    else:
        _missing(answer, answer.where / "pairs.csv", "each side's peak memory is")
    return stated


def _size(answer: Answer, size: pd.DataFrame | None, cpu: str) -> None:
    if size is None:
        _missing(answer, answer.where / "size.csv", "normalized sizes are")
        return
    answer.facts.claims += f.size_claims(size, cpu)
    best = f.smallest(size)
    sizes = sorted(best.cluster_size.unique())
    labels = best.sort_values("normalized_size_mean").label.unique()
    cells = []
    for label in labels:
        row = [label]
        for n in sizes:
            hit = best[(best.label == label) & (best.cluster_size == n)]
            row.append("–" if hit.empty else
                       f"{w.number(hit.normalized_size_mean.iloc[0])} ({hit.variant.iloc[0]})")
        cells.append(row)
    answer.tables.append((
        "Size: each format at its smallest codec",
        "Normalized size = file bytes / naive numpy bytes (a bool as 1 bit); below 1 the file "
        "is smaller than the raw arrays. From `size.csv`; exact (sizes repeat bit for bit).",
        ["format", *[f"{int(n):,}-event clusters" for n in sizes]], cells))
    answer.data["size"] = _records(best, ["label", "variant", "cluster_size",
                                          "normalized_size_mean", "normalized_size_std",
                                          "n_samples"])


def _reads(answer: Answer, reads: pd.DataFrame | None, cpu: str) -> None:
    if reads is None:
        _missing(answer, answer.where / "reads.csv", "formats' read times are")
        return
    r = reads[(reads.selection == "all") & (reads["mode"] == "warm")]
    rows = f.all_readers(r, f.READS_TIME)
    if rows.empty:
        answer.facts.gaps.append(f.Gap("No all-branch warm read in `reads.csv`."))
        return
    rows = rows.assign(us_per_event=1e6 / rows.events_per_s)
    best = rows[rows.fastest].sort_values(["cluster_size", "us_per_event"],
                                          ascending=[False, True])
    cells = []
    for x in best.itertuples():
        others = rows[(rows.label == x.label) & (rows.variant == x.variant)
                      & (rows.cluster_size == x.cluster_size) & ~rows.fastest]
        cells.append([
            f"{int(x.cluster_size):,}", f"{x.label} {x.variant}", x.reader,
            w.number(x.us_per_event), w.number(x.median_s_mean),
            w.interval(x.median_lo_s, x.median_hi_s), w.coverage(x.median_coverage),
            w.number(x.rss_over_baseline_mb),
            ", ".join(f"{o.reader} {w.number(o.median_s_mean)} s"
                      for o in others.sort_values(f.READS_TIME).itertuples()) or "–"])
    answer.tables.append((
        "Each format at its fastest reader (all branches, warm page cache, one thread)",
        f"From `reads.csv` on {cpu}: the median of a reader's timed repetitions after an "
        "untimed read, its interval over those repetitions; time per event = whole read / "
        "events; memory = the read's peak RSS above the process's baseline.",
        ["cluster size", "format", "fastest reader", "µs per event", "whole read, s",
         "interval, s", "coverage", "peak memory, MB", "other readers"], cells))
    answer.data["fastest"] = _records(best, [
        "label", "variant", "cluster_size", "reader", "median_s_mean", "median_lo_s",
        "median_hi_s", "median_coverage", "us_per_event", "rss_over_baseline_mb"])


def _metadata(answer: Answer, meta: pd.DataFrame | None, where: str | Path | None) -> None:
    if meta is None:
        if where is None:
            answer.facts.gaps.append(f.Gap(
                "No metadata study in this run (`hepfmt answer --metadata`, or the config's "
                "`tabulate.answer_metadata`): the metadata cost at its width is not stated."))
        else:
            _missing(answer, Path(where) / "metadata.csv", "the metadata cost is")
        return
    m = f.metadata_rows(meta)
    if m.empty:
        answer.facts.gaps.append(f.Gap("The metadata study has no row for this run's schema "
                                       "(`type` nanoaod): its cost at the run's column count "
                                       "cannot be stated."))
        return
    n = int(m.n_columns.iloc[0])
    cells = [[x.layout, x.implementation, w.number(x.median_s * 1e3),
              w.number(x.us_per_column), f"{int(x.metadata_bytes):,}"] for x in m.itertuples()]
    answer.tables.append((
        f"Metadata: opening a {n:,}-column file",
        "Decoding the footer / header of this run's schema from disk, before any value is "
        "read (median of repetitions; `metadata/metadata.csv`, dataset type `nanoaod`).",
        ["layout", "implementation", "decode, ms", "µs per column", "metadata bytes"], cells))
    fastest = m.iloc[0]
    answer.facts.claims.append(f.Claim(
        "metadata", f"Opening a {n:,}-column file costs from {w.number(fastest.median_s * 1e3)}"
                    f" ms ({fastest.layout}, {fastest.implementation}) to "
                    f"{w.number(m.median_s.iloc[-1] * 1e3)} ms ({m.layout.iloc[-1]}, "
                    f"{m.implementation.iloc[-1]}) of metadata decoding, once per file.",
        float(fastest.median_s),
        f.Source("metadata/metadata.csv", {"type": "nanoaod", "mode": "disk",
                                           "n_columns": n})))
    answer.data["metadata"] = _records(m, ["layout", "implementation", "n_columns", "median_s",
                                           "us_per_column", "metadata_bytes"])


def _limits(answer: Answer, reads: pd.DataFrame | None, ratios: pd.DataFrame | None,
            compared: bool = False) -> None:
    """What the run cannot say, each from the tables or the provenance, never assumed
    (``compared``: set against another CPU's run, which says what one CPU cannot)."""
    gaps = answer.facts.gaps
    prov, cpus = answer.provenance, provenance_cpus(answer.provenance) if answer.provenance \
        else []
    if len(cpus) == 1 and not compared:
        gaps.append(f.Gap(f"One CPU model ({cpus[0]}): whether a ratio holds on another CPU is "
                          "not tested by this run (`hepfmt bench compare-runs` sets two "
                          "references side by side)."))
    if ratios is not None and not ratios.empty:
        if ratios.n_samples.max() <= 1:
            gaps.append(f.Gap("Every ratio rests on one sample: there is no spread over "
                              "samples (2018's ± was over 13)."))
        planned = sorted(prov.get("config", {}).get("compare", {}).get("cluster_sizes", []))
        speed = ratios[ratios.quantity != "size"]
        partial = [f"`{pair}` only at {', '.join(f'{n:,}' for n in sorted(set(g.cluster_size)))}"
                   for pair, g in speed.groupby("pair")
                   if any(n not in set(g.cluster_size) for n in planned)]
        if partial:
            gaps.append(f.Gap(f"Pairings not timed at every paired cluster size "
                              f"({', '.join(f'{n:,}' for n in planned)}): "
                              f"{'; '.join(partial)}. No ratio is stated where none was "
                              "measured."))
        if not split.has_split(ratios):
            gaps.append(f.Gap("How much of each ratio is decoding work (user CPU time) and how "
                              "much is kernel / allocator time: not recorded in this run's "
                              "`ratios.csv`."))
    if reads is not None and not reads.empty:
        if not (reads["mode"] == "cold").any():
            gaps.append(f.Gap("No cold read: every read found the file in the page cache "
                              "(cold reads need the `storage` target on this kind of host)."))
        paired_threads = ratios.threads.max() if ratios is not None and not ratios.empty \
            and "threads" in ratios else 1
        if max(reads.threads.max(), paired_threads) <= 1:
            gaps.append(f.Gap("One thread per read: no multi-threaded reader was timed."))
