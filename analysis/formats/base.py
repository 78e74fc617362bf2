"""The contract every format adapter meets, and the checks they all share.

An adapter module defines ``FORMAT``, a :class:`Format`: how to write a source sample, how to
read the written file's own metadata back (:class:`Layout`), and its named :class:`Reader` s.
The checks that every adapter needs (clusters of the requested size, the branches a selection
names, checksums of Arrow chunks) live here once, so that an adapter holds only what is
particular to its library.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from analysis.checksum import Checksum, checksum, merge
from analysis.codec import Levels, Variant
from analysis.errors import InputError, VerificationError


class WriteFn(Protocol):
    def __call__(self, source: Path, out: Path, variant: Variant, cluster_size: int,
                 options: dict) -> None:
        """Write ``source`` to ``out`` atomically, verified from the written file."""


class DescribeFn(Protocol):
    def __call__(self, path: Path) -> Layout:
        """The written file's layout, from its own metadata."""


class PrepareFn(Protocol):
    def __call__(self, threads: int) -> None:
        """Imports, JIT declarations and thread settings: once per process, never timed."""


class ReadFn(Protocol):
    def __call__(self, path: str, branches: list[str]) -> dict[str, Checksum]:
        """Decode every value of ``branches``; their checksums prove it was done."""


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
class Reader:
    """A way to read a format. ``prepare`` runs once per process before any timing (imports,
    JIT declarations, thread settings); ``read`` is what gets timed."""

    name: str
    library: str  # the package whose version the provenance must name
    prepare: PrepareFn
    read: ReadFn


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
    from analysis.samples.source import to_column

    for b in branches:
        out[b] = merge(out[b], checksum(to_column(table.column(b)).values))
