"""The contract every format adapter meets, and the checks they all share.

An adapter module defines ``FORMAT``, a :class:`Format`: how to write a source sample, how to
read the written file's own metadata back (:class:`Layout`), and its named :class:`Reader` s.
The checks that every adapter needs (clusters of the requested size, the branches a selection
names, checksums of Arrow chunks) live here once, so that an adapter holds only what is
particular to its library.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from hepfmt.checksum import EMPTY, Checksum, checksum, merge
from hepfmt.codec import Levels, Variant
from hepfmt.errors import InputError, VerificationError


def is_url(path: str | Path) -> bool:
    """A remote file (``root://``, ``http://``): ROOT, uproot and fsspec open it through their
    own network clients, so it is not a local path to check."""
    return "://" in str(path)


class WriteFn(Protocol):
    def __call__(self, source: Path, out: Path, variant: Variant, cluster_size: int,
                 options: dict) -> None:
        """Write ``source`` to ``out`` atomically, verified from the written file."""


class DescribeFn(Protocol):
    def __call__(self, path: Path) -> Layout:
        """The written file's layout, from its own metadata."""


class BlocksFn(Protocol):
    def __call__(self, path: Path, branches: list[str]) -> Blocks:
        """The compressed blocks holding ``branches``, from the file's own metadata."""


class PrepareFn(Protocol):
    def __call__(self, threads: int) -> None:
        """Imports, JIT declarations and thread settings: once per process, never timed."""


class ReadFn(Protocol):
    def __call__(self, path: str, branches: list[str], threads: int = 1) -> dict[str, Checksum]:
        """Decode every value of ``branches``; their checksums prove it was done."""


class ScanFn(Protocol):
    def __call__(self, path: str, branches: list[str], threads: int, marks: Marks) -> int:
        """What a user's read does and nothing else: decode every value of ``branches`` into
        memory and hold it until returning; report progress to ``marks``; return the entries
        read."""


class Marks:
    """When a scan reached each part of a read, on the clock of ``time.perf_counter``
    (CLOCK_MONOTONIC on Linux, the clock C++'s ``std::chrono::steady_clock`` reads, so compiled
    loops can hand their own times over).

    A scan calls :meth:`opened` once the file and its metadata are open and :meth:`chunk` after
    each cluster / row group / record batch it has decoded; the harness turns the marks into
    open time, set-up and steady throughput. Kept free of any measurement code: formats only
    report, ``hepfmt.measure`` interprets.
    """

    __slots__ = ("chunks", "held", "opened_at")

    def __init__(self) -> None:
        self.opened_at: float | None = None
        #: (entries done, time) after each chunk, in reading order
        self.chunks: list[tuple[int, float]] = []
        #: the decoded data, alive until the harness has stopped its clock: freeing it is not
        #: reading it (a user's read hands it over too)
        self.held: list[object] = []

    def hold(self, data: object) -> None:
        self.held.append(data)

    def opened(self, at: float | None = None) -> None:
        self.opened_at = time.perf_counter() if at is None else at

    def chunk(self, entries_done: int, at: float | None = None) -> None:
        self.chunks.append((int(entries_done), time.perf_counter() if at is None else at))

    def since(self, start: float) -> dict:
        """The marks as seconds after ``start`` (when the scan was called), for a record."""
        return {"opened_s": None if self.opened_at is None else self.opened_at - start,
                "chunks": [(n, t - start) for n, t in self.chunks]}


@dataclass(frozen=True)
class Layout(Mapping):
    """What a written file says about itself. The fields every format has are typed; the
    facts only some formats have (baskets, encodings, footer bytes, ...) are in ``extra``.

    It is also a read-only mapping of all of them, flat, which is how size records store it.
    """

    entries: int
    clusters: list[int]
    branches: int
    file_bytes: int
    zip_bytes: int
    #: compressed bytes of each branch; empty where the library does not say
    zip_bytes_by_branch: dict[str, int]
    extra: dict[str, object] = field(default_factory=dict)

    @classmethod
    def of(cls, **facts: object) -> Layout:
        """A layout from the flat facts an adapter gathers (the typed ones by name)."""
        typed = {k: facts.pop(k) for k in ("entries", "clusters", "branches", "file_bytes",
                                            "zip_bytes", "zip_bytes_by_branch")}
        return cls(**typed, extra=facts)

    def _flat(self) -> dict[str, object]:
        return {"entries": self.entries, "clusters": self.clusters, "branches": self.branches,
                "file_bytes": self.file_bytes, "zip_bytes": self.zip_bytes,
                "zip_bytes_by_branch": self.zip_bytes_by_branch, **self.extra}

    def __getitem__(self, key: str) -> object:
        return self._flat()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._flat())

    def __len__(self) -> int:
        return len(self._flat())


@dataclass(frozen=True)
class Blocks:
    """Where a file keeps the compressed bytes of a selection (TTree baskets, RNTuple pages,
    Parquet pages), for the codec bound (:mod:`hepfmt.measure.bound`): each block is
    ``zipped`` bytes at ``offset`` that decompress to ``unzipped`` bytes. A block whose two sizes
    are equal is stored as it is (a copy is its bound).

    ``library`` names how the format's own library decompresses them, ``reused`` the same codec
    with one context kept across blocks (None: the codec keeps none, or the format's library
    already reuses it); both are ``decompress_blocks`` modes of ``cxx/codecs.cxx``.
    """

    codec: str
    library: str | None
    reused: str | None
    offsets: list[int]
    zipped: list[int]
    unzipped: list[int]
    #: why no bound can be taken (a codec with no library here); None: it can
    why_not: str | None = None


#: The two ways a reader goes through a file (:attr:`Reader.kind`).
EVENT_LOOP, COLUMNAR = "event loop", "columnar"
#: What a read leaves the user with (:attr:`Reader.mode`): ``stream``, each cluster / row group
#: decoded, every value touched and released before the next (memory bounded by a cluster);
#: ``hand-over``, the whole selection returned as arrays (pyarrow's Table, uproot's ``arrays``).
#: A ratio of two readers in different modes compares two different jobs, so each is named.
STREAM, HANDOVER = "stream", "hand-over"
MODES = (STREAM, HANDOVER)


class BareFn(Protocol):
    def __call__(self, path: str, branches: list[str], threads: int) -> object:
        """The library's own call a user would write, returning the data (``bench overhead``
        times the harness against it)."""


@dataclass(frozen=True)
class ReadParts:
    """One pass over a file: open, set-up (to the first event at speed), steady throughput."""

    open_s: float
    setup_s: float
    events_per_s: float

    def seconds(self, n_events: int) -> float:
        return self.open_s + self.setup_s + n_events / self.events_per_s


@dataclass(frozen=True)
class ReadCost:
    """What planning assumes a reader costs (:mod:`hepfmt.plan.cost` says how these were
    measured): its process start-up, and a pass over ten branches and over all of them."""

    start_s: float
    ten: ReadParts
    all: ReadParts


#: What a measurement job spends on one file besides its readers, unless the format says.
DEFAULT_FILE_OVERHEAD_S = 1.0


@dataclass(frozen=True)
class WriteParts:
    """``hepfmt convert`` of one file: a fixed part (start-up, open, close) plus events at a
    steady rate, with the codec of ``variant`` (:mod:`hepfmt.plan.cost` adds slower codecs)."""

    fixed_s: float
    events_per_s: float
    variant: str


@dataclass(frozen=True)
class WriteMemory:
    """What planning assumes ``hepfmt convert`` holds in memory (MB): its process's base, plus
    ``cluster_bytes`` per value of the one cluster (row group, stripe) it holds at once
    (:mod:`hepfmt.plan.resources` pads and scales it)."""

    base_mb: float
    cluster_bytes: float


#: A write's memory unless the format says: a ROOT process's base (the larger one measured) and
#: pyarrow's bytes per value of a row group.
DEFAULT_WRITE_MEMORY = WriteMemory(700, 8)


@dataclass(frozen=True)
class Reader:
    """A way to read a format. ``prepare`` runs once per process before any timing (imports,
    JIT declarations, thread settings); ``read`` returns checksums, to prove the reader right,
    untimed; ``scan`` is the same read without the proof: what gets timed."""

    name: str
    library: str  # the package whose version the provenance must name
    prepare: PrepareFn
    read: ReadFn
    scan: ScanFn
    #: how it reads: an event at a time through every selected column (:data:`EVENT_LOOP`),
    #: or a column at a time (:data:`COLUMNAR`); a ratio says which two it compares
    kind: str = COLUMNAR
    #: the library's own call, for ``bench overhead`` (None: not benchmarked)
    bare: BareFn | None = None
    #: the URL scheme it opens a served file by (``root``: XRootD, ``http``); None: local only
    url_scheme: str | None = None
    #: read on every storage profile by the ``storage`` target
    on_storage: bool = False
    #: what planning assumes it costs (None: the slowest reader of its format, else of all)
    cost: ReadCost | None = None
    #: its scan marks the end of every cluster / row group of the file (a chunk each, so a
    #: read's steady rate is found from its own chunks); False: the library decodes the file
    #: in one call, or in batches of its own size
    marks_clusters: bool = False
    #: what the read leaves the user with (:data:`STREAM` or :data:`HANDOVER`)
    mode: str = HANDOVER
    #: the knobs a reader name stands for besides its library (``{"memory_pool": "system"}``),
    #: so that tables can say which pyarrow pool a row was read with
    knobs: Mapping[str, object] = field(default_factory=dict, hash=False)
    #: the knobs as the process actually has them once ``prepare`` ran (the pool pyarrow
    #: really allocates from), for the read's provenance; None: nothing beyond ``knobs``
    facts: Callable[[], dict[str, object]] | None = None

    def run_facts(self) -> dict[str, object]:
        """What this process's read used: ``knobs``, overridden by what ``facts`` observes."""
        return {**self.knobs, **(self.facts() if self.facts else {})}


@dataclass(frozen=True)
class Format:
    algorithms: frozenset[str]
    dictionary: bool
    write: WriteFn
    describe: DescribeFn
    readers: dict[str, Reader] = field(default_factory=dict)
    #: writer options the adapter understands; None = passed through to a library that checks
    #: them itself (pyarrow's ParquetWriter)
    options: frozenset[str] | None = None
    #: the level range of each algorithm that takes one; None = not checked here (the adapter
    #: or its library checks)
    levels: Levels | None = None
    #: the reader that reads every written file back to prove it (default: the first reader)
    verifier: str | None = None
    #: why a file written with these writer options cannot be proven by any reader (None: it
    #: can); such a file's size is recorded as unverified, never silently as verified
    unverifiable: Callable[[dict], str | None] | None = None
    #: the file's compressed blocks of a selection, for the codec bound (None: not listed)
    blocks: BlocksFn | None = None
    #: what planning assumes a write costs (None: the slowest writer)
    write_cost: WriteParts | None = None
    #: what planning assumes a write holds in memory (default: :data:`DEFAULT_WRITE_MEMORY`)
    write_memory: WriteMemory = DEFAULT_WRITE_MEMORY
    #: the format whose query costs an engine's queries of this one are assumed to have where
    #: they were not timed (engines read them alike); None: its own, else the slowest engine's
    queries_cost_as: str | None = None
    #: seconds a measurement job spends on a file besides its readers (CLI, provenance)
    file_overhead_s: float = DEFAULT_FILE_OVERHEAD_S
    #: the plainest variant: what the tests write when any variant will do
    plain: str = "none"
    #: the variants the format's tests write and read back (default: :attr:`plain`)
    test_variants: tuple[str, ...] = ()
    #: whether its clusters are exactly the requested entries (False: the format cuts its own)
    exact_clusters: bool = True

    @property
    def tested_variants(self) -> tuple[str, ...]:
        return self.test_variants or (self.plain,)

    @property
    def compressed_variant(self) -> str:
        """The first tested variant that compresses (else the plainest): what the scan and
        fault tests and ``tools/fault_study.py`` write, so that a read (and damage) meets a
        decompressor."""
        return next((v for v in self.tested_variants
                     if self.variant(v).algorithm not in ("none", "default")), self.plain)

    def variant(self, text: str, key: str = "variant") -> Variant:
        return Variant.parse(text, set(self.algorithms), self.dictionary, key, self.levels)


def check_layout(layout: Layout, name: str | Path, n_events: int, cluster_size: int | None,
                 n_branches: int, unit: str = "clusters") -> None:
    """The written file holds every event and branch of the source, in clusters of exactly
    ``cluster_size`` entries but a shorter last one (``None``: the format chooses its own)."""
    if layout.entries != n_events:
        raise VerificationError(name, f"{layout.entries} entries written, {n_events} expected")
    if layout.branches != n_branches:
        raise VerificationError(name, f"{layout.branches} branches written, {n_branches} in "
                                      "the source")
    sizes = layout.clusters
    if cluster_size is not None and (not sizes or any(s != cluster_size for s in sizes[:-1])
                                     or not 0 < sizes[-1] <= cluster_size):
        raise VerificationError(name, f"{unit} {sizes[:5]}... are not {cluster_size} entries "
                                      "each")


def require_branches(path: str | Path, available, branches: list[str]) -> None:
    """Every reader's check: a selection naming branches the file lacks names them and it."""
    have = set(available)
    missing = [b for b in branches if b not in have]
    if missing:
        raise InputError(path, f"missing branches {missing[:5]}")


def add_checksums(out: dict[str, Checksum], table, branches: list[str]) -> None:
    """Fold one chunk (an Arrow table or record batch) into the running per-branch
    checksums of the readers that hand their data over as Arrow."""
    from hepfmt.samples.source import to_column

    for b in branches:
        out[b] = merge(out[b], checksum(to_column(table.column(b)).values))


#: Chunks of a read handed over as Arrow tables or record batches, after ``marks.opened()``
#: was called once the file was open.
ChunksFn = Callable[[str, list[str], int, Marks], Iterable]


def arrow_reader(name: str, library: str, prepare: PrepareFn, chunks: ChunksFn,
                 check: Callable[[str, list[str]], None], **facts: object) -> Reader:
    """A reader whose library hands its data over as Arrow chunks: ``read`` checks the
    selection (``check``) and checksums every chunk, ``scan`` keeps every chunk until it
    returns (``mode=STREAM``: touches every value of each chunk and drops it), so both do
    exactly the same decoding and only ``read`` pays for the proof."""
    keep = touch_chunks if facts.get("mode") == STREAM else keep_chunks

    def read(path: str, branches: list[str], threads: int = 1) -> dict[str, Checksum]:
        check(path, branches)
        out: dict[str, Checksum] = dict.fromkeys(branches, EMPTY)
        for chunk in chunks(path, branches, threads, Marks()):
            add_checksums(out, chunk, branches)
        return out

    def scan(path: str, branches: list[str], threads: int, marks: Marks) -> int:
        return keep(chunks(path, branches, threads, marks), marks)

    return Reader(name, library, prepare, read, scan, **facts)


def keep_chunks(chunks: Iterable, marks: Marks) -> int:
    """Hold every decoded chunk until the whole read is done (as a user's read returns all
    of it), marking each; the entries read."""
    entries = 0
    for chunk in chunks:
        marks.hold(chunk)
        entries += len(chunk)
        marks.chunk(entries)
    return entries


def touch_chunks(chunks: Iterable, marks: Marks) -> int:
    """Touch every value of each decoded Arrow chunk, then drop it before the next is decoded
    (the stream mode, as ROOT's columnar reader drops each basket); the entries read."""
    entries = 0
    for chunk in chunks:
        touch(chunk)
        entries += len(chunk)
        marks.chunk(entries)
        del chunk  # the next row group is decoded with this one's memory already released
    return entries


def touch(chunk) -> int:
    """Read every byte of every buffer of an Arrow table or record batch (values, offsets,
    validity) in one vectorised pass, as ROOT's scans load every value: numpy's ``max`` must
    look at each byte, so no value is skipped, and it costs a pass over the data, no more. The
    result is returned so the pass cannot be elided."""
    import numpy as np

    seen = 0
    for column in chunk.columns:
        for array in getattr(column, "chunks", [column]):
            for buf in array.buffers():
                if buf is not None and buf.size:
                    seen |= int(np.frombuffer(buf, dtype=np.uint8).max())
    return seen


def awkward_checksums(chunks: Iterable, branches: list[str]) -> dict[str, Checksum]:
    """Per-branch checksums of the readers that hand their data over as awkward arrays
    (chunks indexable by branch name)."""
    import awkward as ak

    out: dict[str, Checksum] = dict.fromkeys(branches, EMPTY)
    for arrays in chunks:
        for b in branches:
            out[b] = merge(out[b], checksum(ak.to_numpy(ak.flatten(arrays[b], axis=None))))
    return out
