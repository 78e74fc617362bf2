"""The JSON records one stage leaves for the next, as typed records.

Each kind of record is a dataclass here, shared by the stage that writes it (``measure``: a
size record at convert, a read, pair, storage or query measurement) and the stage that reads it
(``report``): its keys are written down once, the writer cannot leave one out (the dataclass
will not build) and the reader names the file and the keys it lacks when one does
(:class:`~analysis.errors.InputError`, never a ``KeyError`` deep inside a table). Keys a
record from an older hepfmt may lack have defaults; keys this one does not know are ignored.
A record's rows (one per read, per query, ...) stay mappings, described where they are made.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import ClassVar, Self

from analysis.atomic import write_json
from analysis.errors import InputError


def load(path: str | Path, keys: Iterable[str], kind: str = "hepfmt result") -> dict:
    """The JSON object at ``path``, which must hold every one of ``keys``; ``kind`` says in the
    error what the file should have been."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise InputError(path, f"not a readable {kind} ({exc})") from exc
    if not isinstance(doc, dict):
        raise InputError(path, f"not a {kind} (not a JSON object)")
    missing = [k for k in keys if k not in doc]
    if missing:
        raise InputError(path, f"not a complete {kind} (no {', '.join(missing)})")
    return doc


@dataclass(frozen=True, kw_only=True)
class Record:
    """A record's common part: the provenance of the process that made it."""

    KIND: ClassVar[str] = "hepfmt result"
    provenance: dict

    @classmethod
    def required(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls)
                     if f.default is MISSING and f.default_factory is MISSING)

    @classmethod
    def load(cls, path: str | Path) -> Self:
        doc = load(path, cls.required(), cls.KIND)
        known = {f.name for f in fields(cls)}
        try:
            return cls(**{k: v for k, v in doc.items() if k in known})
        except (TypeError, ValueError) as exc:
            raise InputError(path, f"not a {cls.KIND} ({exc})") from exc

    def as_dict(self) -> dict:
        return asdict(self)

    def write(self, path: str | Path) -> dict:
        """Write atomically (nothing half-written is ever a record); the dict written."""
        doc = self.as_dict()
        write_json(path, doc)
        return doc


@dataclass(frozen=True, kw_only=True)
class FileRecord(Record):
    """What every record of one written file says about it: which file of the grid it is."""

    file: str = ""
    sample: str
    process: str
    format: str  # the config's name of the format
    adapter: str = ""  # the adapter (analysis.formats); older records: the format's name
    variant: str
    cluster_size: int
    n_events: int

    def __post_init__(self) -> None:
        if not self.adapter:
            object.__setattr__(self, "adapter", self.format)

    def identity(self) -> dict:
        """The columns every table row of this file starts with."""
        return {"sample": self.sample, "process": self.process, "format": self.format,
                "adapter": self.adapter, "variant": self.variant,
                "cluster_size": self.cluster_size, "n_events": self.n_events}


@dataclass(frozen=True, kw_only=True)
class SizeRecord(FileRecord):
    """``hepfmt convert --size-output``: a written file's size, bytes per branch and group,
    its layout, and the readers proven on it (analysis.measure.sizes)."""

    KIND: ClassVar[str] = "size record (from 'hepfmt convert')"
    file_bytes: int
    naive_bytes: float
    normalized_size: float
    normalized_size_no_triggers: float | None = None
    options: dict = field(default_factory=dict)
    verified: bool = True
    unverifiable: str | None = None
    proofs: dict = field(default_factory=dict)
    digest: str = ""
    zip_bytes_by_group: dict = field(default_factory=dict)
    naive_bytes_by_group: dict = field(default_factory=dict)
    zip_bytes_by_branch: dict = field(default_factory=dict)
    layout: dict = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class ReadRecord(FileRecord):
    """``hepfmt measure``: one row per reader × selection × threads × cache mode
    (analysis.measure.reads), and each selection's codec bound."""

    KIND: ClassVar[str] = "read measurement (from 'hepfmt measure')"
    reads: list[dict]
    bounds: dict = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class StorageRecord(FileRecord):
    """``hepfmt storage``: reads of one file on each storage profile
    (analysis.measure.onstorage), and the profiles and reads that could not run, with why."""

    KIND: ClassVar[str] = "storage measurement (from 'hepfmt storage')"
    file_bytes: int
    profiles: dict
    skipped_reads: list
    reads: list[dict]


@dataclass(frozen=True, kw_only=True)
class QueryRecord(FileRecord):
    """``hepfmt query``: one row per task × engine × cache mode (analysis.measure.workload);
    per engine, its process's first run timed (``first_histogram``: task, wall_s, cpu_s, the
    file's resident and total pages; empty in a record from before it)."""

    KIND: ClassVar[str] = "query measurement (from 'hepfmt query')"
    threads: int = 1
    scheduler: str = ""
    queries: list[dict]
    first_histogram: dict = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class PairRecord(Record):
    """``hepfmt pair``: both sides of one ROOT / Parquet pairing read in one measurement
    (analysis.measure.pairs), per selection its rounds and repeat pairs; ``summary`` is
    :func:`analysis.paired.summarize_pair` of the rest."""

    KIND: ClassVar[str] = "paired measurement (from 'hepfmt pair')"
    pair: str
    sample: str
    process: str
    cluster_size: int
    n_events: int
    threads: int
    sides: dict
    selections: list[dict]
    file_events: int = 1_000_000
    max_load: float | None = None
    stopping: dict = field(default_factory=dict)
    rounds: int | None = None
    summary: dict = field(default_factory=dict)
