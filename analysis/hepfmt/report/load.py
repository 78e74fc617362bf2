"""Size, read and pair records (the JSON each stage writes) loaded into frames: one row per
file, per read, per pair side; a record that lacks a key is an error naming its file."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from hepfmt import paired
from hepfmt.errors import InputError
from hepfmt.records import PairRecord, ReadRecord, ReadRow, SizeRecord
from hepfmt.report.documents import (
    cpus_of,
)
from hepfmt.report.frames import OWN_CHUNKS


def load_sizes(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, list[dict]]:
    """One row per written file: its size figures and compressed bytes per branch group."""
    rows, provs = [], []
    for p in paths:
        doc = SizeRecord.load(p)
        groups = {f"zip_bytes:{g}": v for g, v in doc.zip_bytes_by_group.items()}
        # what is in no branch's data: headers, footers, keys, basket/page headers, offsets
        # the adapter does not attribute to a branch
        # (all of it is "unattributed" when the adapter cannot split bytes by branch)
        rest = "metadata" if groups else "unattributed"
        groups[f"zip_bytes:{rest}"] = doc.file_bytes - sum(groups.values())
        rows.append({**doc.identity(), "cpu": cpus_of([doc.provenance])[0],
                     "file_bytes": doc.file_bytes, "naive_bytes": doc.naive_bytes,
                     "normalized_size": doc.normalized_size,
                     "normalized_size_no_triggers": doc.normalized_size_no_triggers,
                     **groups})
        provs.append(doc.provenance)
    return pd.DataFrame(rows), provs


def load_reads(paths: Iterable[str | Path]) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """One row per (file, reader, selection, mode), its columns the fields of
    :class:`~hepfmt.records.ReadRow` (what a record from before some of them lacks taken
    from its repetitions, or empty), and one row per timed repetition."""
    reads, reps, provs = [], [], []
    for p in paths:
        doc = ReadRecord.load(p)
        base = {**doc.identity(), "cpu": cpus_of([doc.provenance])[0]}
        for row in doc.rows(p):
            figures = dataclasses.asdict(row)
            del figures["repetitions"]
            reads.append({**base, **figures})
            for i, rep in enumerate(row.repetitions):
                reps.append({**base, "reader": row.reader, "threads": row.threads,
                             "selection": row.selection, "mode": row.mode,
                             "repetition": i, **rep})
        provs.append(doc.provenance)
    reads = pd.DataFrame(reads)
    for c in ReadRow.numbers() if not reads.empty else ():
        reads[c] = pd.to_numeric(reads[c])  # None -> NaN, so that means skip it
    return reads, pd.DataFrame(reps), provs


#: The cache mode of every paired read: the page cache is warm (the digest check read the files
#: just before), only the process is fresh or not (``read``).
PAIRED_MODE = "warm"


def _throughput_method(side: dict) -> str:
    """How one side's steady rate was found: from its own chunks, or not at all (a pair's
    throughput is never another file's)."""
    if side["events_per_s_steady"] is not None:
        return OWN_CHUNKS
    return "not separable: one chunk" if side["chunks"] <= 1 else \
        "not separable in every scan"


def _pair_rows(doc: dict, file_events: int) -> tuple[list[dict], list[dict]]:
    """One paired measurement's per-sample ratio rows (:func:`hepfmt.paired.ratio_rows`,
    whole-file time at the study's ``file_events``) and side rows
    (:func:`hepfmt.paired.side_rows`), each naming the CPU it was measured on."""
    cpu = cpus_of([doc["provenance"]])[0]
    sides = [{**r, "cpu": cpu} for r in paired.side_rows(doc)]
    method = {(r["selection"], r["read"], r["side"]): _throughput_method(r) for r in sides}
    variants = {s: doc["sides"][s]["variant"] for s in paired.SIDES}
    ratios = [{**r, **variants, "mode": PAIRED_MODE, "cpu": cpu,
               **{f"throughput_method_{s}": method[r["selection"], r["read"], s]
                  for s in paired.SIDES}}
              for r in paired.ratio_rows(doc, file_events)]
    return ratios, sides


def _once(seen: dict[tuple, str | Path], key: tuple, path: str | Path) -> None:
    """Refuse a pairing × sample × cluster size × threads × selection measured twice on one
    CPU model: two measurements of one sample would be averaged as two samples (on two models
    they are tabulated apart: hepfmt.report.tables ``_per_cpu``)."""
    if key in seen:
        raise InputError(path, "pair {!r}, sample {!r}, cluster size {}, {} threads, selection "
                               "{!r}, CPU {!r} is also measured in {}".format(*key, seen[key]))
    seen[key] = path


def load_pairs(paths: Iterable[str | Path],
               file_events: int) -> tuple[pd.DataFrame, pd.DataFrame, list[dict]]:
    """Per-sample ratio rows and side rows of every paired measurement (:func:`_pair_rows`),
    and their provenances."""
    ratios, sides, provs = [], [], []
    seen: dict[tuple, str | Path] = {}
    for p in paths:
        doc = PairRecord.load(p).as_dict()
        try:
            r, s = _pair_rows(doc, file_events)
            for sel in doc["selections"]:
                _once(seen, (doc["pair"], doc["sample"], doc["cluster_size"], doc["threads"],
                             sel["selection"], cpus_of([doc["provenance"]])[0]), p)
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise InputError(p, f"not a complete paired measurement ({exc!r})") from exc
        ratios += r
        sides += s
        provs.append(doc["provenance"])
    return pd.DataFrame(ratios), pd.DataFrame(sides), provs
