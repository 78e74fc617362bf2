"""The JSON records one stage leaves for the next, as typed records.

Each kind of record is a dataclass here, shared by the stage that writes it (``measure``: a
size record at convert, a read, pair, storage or query measurement) and the stage that reads it
(``report``): its keys are written down once, the writer cannot leave one out (the dataclass
will not build) and the reader names the file and the keys it lacks when one does
(:class:`~analysis.errors.InputError`, never a ``KeyError`` deep inside a table). Keys a
record from an older hepfmt may lack have defaults; keys this one does not know are ignored.

A read record's rows are typed too (:class:`ReadRow`: one per reader × selection × threads ×
cache mode, the largest rows and the most read back). The other rows stay mappings, described
where they are made: a storage row (analysis.measure.onstorage) is a read's figures plus the
counts of whichever storage views its profile has (a device's, an XRootD server's), so its keys
differ from profile to profile; a query row (analysis.measure.workload, read by
analysis.report.query_tables) and a pair's selections and sides (analysis.paired) are each made
in one module and read in one, and are not typed yet. A row's repetitions stay mappings too:
their keys depend on the reader and the cache mode.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import ClassVar, Self

from analysis.atomic import write_json
from analysis.errors import InputError
from analysis.stats import median_interval, parts_of


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


def required(cls: type) -> tuple[str, ...]:
    """The fields of a dataclass without a default: the keys every record of it holds."""
    return tuple(f.name for f in fields(cls)
                 if f.default is MISSING and f.default_factory is MISSING)


@dataclass(frozen=True, kw_only=True)
class Record:
    """A record's common part: the provenance of the process that made it."""

    KIND: ClassVar[str] = "hepfmt result"
    provenance: dict

    @classmethod
    def required(cls) -> tuple[str, ...]:
        return required(cls)

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
class ReadRow:
    """One read of a :class:`ReadRecord`: one reader × selection × threads × cache mode, its
    figures and its timed repetitions (made by analysis.measure.reads ``_read_record``).

    The keys without a default are those every read record has held; the others a record from
    an older hepfmt may lack (None then, or what its repetitions give: :meth:`from_dict`).
    """

    KIND: ClassVar[str] = "read row (of a 'hepfmt measure' record)"
    #: keys a new row holds only sometimes, left out of :meth:`as_dict` when None
    #: (``setup_raw_s``: only a read whose set-up the marks separate, analysis.stats.parts)
    SOMETIMES: ClassVar[tuple[str, ...]] = ("setup_raw_s",)
    #: what a record from before the read's own peak memory measured it with
    OLD_RSS_METHOD: ClassVar[str] = "ru_maxrss (lower bound)"

    # what was read, and how
    reader: str
    library: str | None = None
    selection: str
    n_branches: int | None = None
    mode: str
    threads: int
    cold_verified: bool | None  # None: a warm read
    proven_by: str | None = None  # "convert" or "measure": where the reader was proven
    selection_zip_bytes: int | None = None
    selection_naive_bytes: float | None = None
    selection_values: int | None = None
    # the time: analysis.stats.summarize of the repetitions, and the median's interval
    median_s: float
    q25_s: float | None = None
    q75_s: float | None = None
    iqr_s: float
    std_s: float | None = None
    min_s: float | None = None
    n: int
    median_lo_s: float | None = None
    median_hi_s: float | None = None
    median_coverage: float | None = None
    # how the repetitions stopped (analysis.measure.timing.interleaved)
    n_repetitions: int | None = None
    precision_target: float | None = None
    budget_s: float | None = None
    precision_reached: bool | None = None
    # rates over the whole read
    mb_per_s_compressed: float
    mb_per_s_naive: float
    events_per_s: float
    # the read's parts (analysis.stats.parts_of) and its steady rate in bytes
    open_s: float | None = None
    setup_s: float | None = None
    setup_raw_s: float | None = None
    events_per_s_steady: float | None = None
    chunks: int | None = None
    throughput_method: str | None = None
    mb_per_s_steady_compressed: float | None = None
    mb_per_s_steady_naive: float | None = None
    # the process's first read (the smallest selection's, warm rows only)
    first_read_s: float | None = None
    first_read_minflt: int | None = None
    # medians over the repetitions
    cpu_median_s: float
    minflt_median: float | None = None
    disk_read_bytes_median: float
    # memory (analysis.measure.reads.start_read_peak)
    peak_rss_bytes: int
    baseline_rss_bytes: int
    rss_over_baseline_bytes: int | None = None
    rss_method: str = OLD_RSS_METHOD
    # the selection's codec bound and the steady rate's fraction of it (analysis.stats)
    bound_events_per_s_new: float | None = None
    bound_events_per_s_reused: float | None = None
    fraction_of_bound_new: float | None = None
    fraction_of_bound_reused: float | None = None
    repetitions: list[dict]

    def __post_init__(self) -> None:
        if self.rss_over_baseline_bytes is None:  # a record from before the read's own peak
            object.__setattr__(self, "rss_over_baseline_bytes",
                               self.peak_rss_bytes - self.baseline_rss_bytes)

    @classmethod
    def required(cls) -> tuple[str, ...]:
        return required(cls)

    @classmethod
    def numbers(cls) -> tuple[str, ...]:
        """The fields that are numbers (None where a row has none: NaN in a table)."""
        return tuple(f.name for f in fields(cls)
                     if str(f.type).split(" | ")[0] in ("int", "float"))

    @classmethod
    def new(cls, **values: object) -> Self:
        """A row as a measurement makes it: every key given (but :attr:`SOMETIMES`), so that
        the writer cannot leave one out; a key not a field is an error too (``TypeError``)."""
        missing = [f.name for f in fields(cls)
                   if f.name not in values and f.name not in cls.SOMETIMES]
        if missing:
            raise TypeError(f"a read row needs {', '.join(missing)}")
        return cls(**values)

    @classmethod
    def from_dict(cls, d: dict, where: str | Path = "read record") -> Self:
        """A row as a record holds it (``where``: the record, for the error). Keys it does not
        know are ignored; a key without a default it lacks is an :class:`InputError` naming
        it; the parts, the median's interval and the repetitions' count a record from before
        them lacks are taken from its repetitions."""
        if not isinstance(d, dict):
            raise InputError(where, f"not a {cls.KIND} (not a JSON object)")
        missing = [k for k in cls.required() if k not in d]
        if missing:
            raise InputError(where, f"not a complete {cls.KIND} (no {', '.join(missing)})")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in known}
        reps = values["repetitions"]
        try:
            derived = {"n_repetitions": len(reps), **parts_of(reps)}
            if reps:
                ci = median_interval([r["wall_s"] for r in reps])
                derived.update(median_lo_s=ci["lo_s"], median_hi_s=ci["hi_s"],
                               median_coverage=ci["coverage"])
            return cls(**{**derived, **values})
        except (TypeError, ValueError, KeyError, AttributeError) as exc:
            raise InputError(where, f"not a {cls.KIND} ({exc!r})") from exc

    def as_dict(self) -> dict:
        """The row as a record holds it (the keys of :attr:`SOMETIMES` only where set)."""
        out = asdict(self)
        for k in self.SOMETIMES:
            if out[k] is None:
                del out[k]
        return out


@dataclass(frozen=True, kw_only=True)
class ReadRecord(FileRecord):
    """``hepfmt measure``: one row per reader × selection × threads × cache mode
    (:class:`ReadRow`, analysis.measure.reads; held as written, made typed by :meth:`rows`),
    and each selection's codec bound."""

    KIND: ClassVar[str] = "read measurement (from 'hepfmt measure')"
    reads: list[dict]
    bounds: dict = field(default_factory=dict)

    def rows(self, where: str | Path) -> list[ReadRow]:
        """The reads as :class:`ReadRow` (``where``: the record's path, for an error)."""
        return [ReadRow.from_dict(r, where) for r in self.reads]


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
