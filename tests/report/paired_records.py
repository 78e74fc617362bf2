"""Paired measurements made by hand, shaped as ``hepfmt pair`` writes them (a ROOT and a
Parquet scan per pair, rounds of a first pair and repeat pairs), with their summary from
:mod:`hepfmt.paired`: the report's tests need no ROOT to read what a pair says."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from hepfmt.paired import summarize_pair

PROV = {"date": "2026-01-01T00:00:00+00:00", "versions": {"pyarrow": "26.0.1", "ROOT": "6.40.00"},
        "machine": {"cpu": "pair cpu", "cores": 2, "memory_bytes": 2**30, "kernel": "k",
                    "hostname": "h"},
        "filesystem": {"type": "ext4", "mount": "/"}}

#: A scan's parts: (open s, set-up s, steady events/s).
Parts = tuple[float, float, float]


def scan(n_events: int, cluster: int, parts: Parts, share: float = 0.0) -> dict:
    """One timed scan's marks: opened, the first event after the set-up, then every cluster at
    the steady rate."""
    open_s, setup_s, rate = parts
    ends = [*range(cluster, n_events, cluster), n_events]
    start = open_s + setup_s
    return {"wall_s": start + n_events / rate, "cpu_s": start + n_events / rate,
            "opened_s": open_s, "chunks": [[e, start + e / rate] for e in ends],
            "minflt": 1000, "majflt": 0, "read_peak_rss_bytes": 10 * 2**20,
            "other_cpu_share": share}


def _pair(n_events: int, cluster: int, root: Parts, parquet: Parts) -> dict:
    return {"kept": True, "order": ["ttree", "parquet"],
            "ttree": scan(n_events, cluster, root), "parquet": scan(n_events, cluster, parquet)}


def record(first: Sequence[tuple[Parts, Parts]], repeats: Sequence[Sequence[tuple[Parts, Parts]]],
           *, pair: str = "uncompressed", sample: str = "S", process: str = "p",
           cluster: int = 1000, n_events: int = 4000, threads: int = 1,
           variants: tuple[str, str] = ("none", "none"), readers: tuple[str, str] = ("rdf",
                                                                                    "pyarrow"),
           selections: Sequence[str] = ("all",), discarded: int = 0,
           provenance: dict | None = None, file_events: int = 1_000_000) -> dict:
    """A paired measurement: round i's first pair is ``first[i]`` (ROOT's parts, Parquet's),
    its repeat pairs ``repeats[i]``; every selection alike."""
    sides = {s: {"format": s, "adapter": s, "variant": v, "reader": r, "path": f"f.{s}"}
             for s, v, r in zip(("ttree", "parquet"), variants, readers, strict=True)}
    rounds = [{"first": _pair(n_events, cluster, *f),
               "repeats": [_pair(n_events, cluster, *p) for p in reps]}
              for f, reps in zip(first, repeats, strict=True)]
    doc = {"pair": pair, "sample": sample, "process": process, "cluster_size": cluster,
           "threads": threads, "n_events": n_events, "file_events": file_events,
           "sides": sides, "provenance": provenance or PROV,
           "selections": [{"selection": sel, "rounds": rounds, "discarded": discarded,
                           "worst_other_cpu_share": 0.05} for sel in selections]}
    return {**doc, "summary": summarize_pair(doc)}


def with_selections(docs: Sequence[dict]) -> dict:
    """The first of ``docs`` holding every one's selections (one record per selection, each
    timed apart, as one measurement of them all)."""
    doc = {k: v for k, v in docs[0].items() if k != "summary"}
    doc["selections"] = [sel for d in docs for sel in d["selections"]]
    return {**doc, "summary": summarize_pair(doc)}


def write(tmp: Path, doc: dict) -> Path:
    path = tmp / f"pair-{doc['pair']}-{doc['sample']}-c{doc['cluster_size']}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def plan(file_events: int, labels: tuple[str, str] = ("ttree", "parquet")) -> dict:
    """The plan record of an uncompressed TTree / Parquet pairing read by RDataFrame and
    pyarrow over all branches (``labels``: how the tables call the two formats)."""
    return {"formats": [{"name": f, "label": label, "adapter": f, "variants": ["none"],
                         "readers": [r]}
                        for f, label, r in zip(("ttree", "parquet"), labels, ("rdf", "pyarrow"),
                                               strict=True)],
            "pairs": [{"label": "uncompressed",
                       "ttree": {"format": "ttree", "variant": "none", "reader": "rdf"},
                       "parquet": {"format": "parquet", "variant": "none",
                                   "reader": "pyarrow"}}],
            "selections": [{"name": "all", "branches": "*"}], "threads": [1],
            "file_events": file_events, "config": {"results": "r"}}


def size_records(tmp: Path, samples: Sequence[str], cluster: int, n_events: int,
                 provenance: dict | None = None) -> list[Path]:
    """Size records of an uncompressed TTree (1200 bytes) and Parquet file (1000) per sample,
    as ``hepfmt convert`` writes them."""
    out = []
    for sample in samples:
        for fmt, nbytes in (("ttree", 1200), ("parquet", 1000)):
            p = tmp / f"size-{sample}-{fmt}.json"
            p.write_text(json.dumps({"sample": sample, "process": "p", "format": fmt,
                                     "variant": "none", "cluster_size": cluster,
                                     "n_events": n_events, "provenance": provenance or PROV,
                                     "file_bytes": nbytes, "naive_bytes": 1000.0,
                                     "normalized_size": nbytes / 1000}))
            out.append(p)
    return out
