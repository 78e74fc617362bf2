"""Bounded disk: a written file lives only until its size record, its proofs and its reads are
done, unless the config keeps files (``keep_files``, the default).

The 2018 grid writes terabytes, each file needed only by its own size record and reads. Without
``keep_files`` the study is cut into *file groups*, one per sample and cluster size (every file
a measure or pair job reads together is in one: a pairing's two sides, a "fastest" side's
candidates), and at most ``file_groups_in_flight`` groups hold files at once: the conversions
of group *i* wait for group *i - k* to be released, and a group is released once every read of
its files is recorded. Snakemake deletes each written file (a ``temp()`` output) after its last
reader. The schedule is then hepfmt's own, not the scheduler's whim, and its peak is planned:
the sources (kept: every group of a sample is written from it) plus the ``k`` largest groups.

Each release records the bytes written files held at that moment under ``files/``, so a run
shows the peak it really reached beside the planned one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hepfmt.plan import paths, study


@dataclass(frozen=True)
class FileGroup:
    """The files of one sample at one cluster size, released together."""

    sample: str
    cluster_size: int

    @property
    def wildcards(self) -> dict[str, str]:
        return {"sample": self.sample, "cluster": str(self.cluster_size)}


def keep_files(config: Mapping) -> bool:
    """Whether written files stay after their reads (``keep_files``, default true)."""
    return bool(config.get("keep_files", True))


def in_flight(config: Mapping) -> int:
    """How many file groups may hold files at once (``file_groups_in_flight``)."""
    return int(config.get("file_groups_in_flight", 2))


def groups(config: Mapping) -> list[FileGroup]:
    """Every file group, in the order they are written (samples, then cluster sizes)."""
    return list(dict.fromkeys(FileGroup(f.sample, f.cluster_size)
                              for f in study.files(dict(config))))


def gates(config: Mapping) -> dict[FileGroup, list[str]]:
    """What each group's conversions wait for: the release record of the group
    ``file_groups_in_flight`` places before it; nothing where files are kept (computed once
    per workflow: a conversion's input function looks it up)."""
    order, k = groups(config), in_flight(config)
    if keep_files(config):
        return {g: [] for g in order}
    return {g: [paths.release(config["results"], order[i - k])] if i >= k else []
            for i, g in enumerate(order)}


def group_outputs(config: Mapping) -> dict[FileGroup, list[str]]:
    """Per group, every record made from its files: size records, measure records and pair
    records. Once all exist, no job of the study needs the files any more."""
    c, results = dict(config), config["results"]
    out: dict[FileGroup, list[str]] = {g: [] for g in groups(config)}
    for f in study.files(c):
        out[FileGroup(f.sample, f.cluster_size)].append(paths.size(results, f))
    for f in study.read_plan(c):
        out[FileGroup(f.sample, f.cluster_size)].append(paths.measurement(results, f))
    for j in study.pair_plan(c):
        out[FileGroup(j.sample, j.cluster_size)].append(paths.pair(results, j))
    return out


def releases(config: Mapping) -> list[str]:
    """Every group's release record (what target ``all`` asks for without ``keep_files``)."""
    return [] if keep_files(config) else [paths.release(config["results"], g)
                                          for g in groups(config)]


def write_release(results: str | Path, group: FileGroup, out: str | Path) -> dict:
    """Record a group's release: the bytes written files hold under ``files/`` now (the
    disk a run really used at this point of its schedule)."""
    held = sum(p.stat().st_blocks * 512 for p in Path(results, "files").rglob("*")
               if p.is_file())
    doc = {"sample": group.sample, "cluster_size": group.cluster_size,
           "files_bytes_held": held}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(f"{out}.tmp{os.getpid()}")
    tmp.write_text(json.dumps(doc))
    tmp.replace(out)
    return doc


def release_job(results: str | Path, wildcards: Mapping[str, str], out: str | Path,
                log: str | Path) -> None:
    """The ``release`` rule's job: its group's release record, and what it says in the log."""
    doc = write_release(results, FileGroup(wildcards["sample"], int(wildcards["cluster"])), out)
    Path(log).write_text(f"released {doc['sample']} c{doc['cluster_size']}: written files "
                         f"held {doc['files_bytes_held']} bytes\n")


def peak_gb(config: Mapping, file_mb: Mapping[study.FileSpec, float],
            source_mb: Mapping[str, float]) -> float:
    """The planned peak disk: every source and every file where files are kept; else the
    sources and the ``file_groups_in_flight`` largest groups' files (``file_mb``: each written
    file's estimate, ``source_mb``: each sample's source)."""
    sources = sum(source_mb.values())
    if keep_files(config):
        return (sources + sum(file_mb.values())) / 1e3
    by_group: dict[FileGroup, float] = {}
    for f, mb in file_mb.items():
        g = FileGroup(f.sample, f.cluster_size)
        by_group[g] = by_group.get(g, 0.0) + mb
    largest = sorted(by_group.values(), reverse=True)[:in_flight(config)]
    return (sources + sum(largest)) / 1e3
