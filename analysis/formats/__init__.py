"""Format adapters: one module per on-disk format, all with the same small interface.

Each adapter module defines ``FORMAT``, a :class:`Format` with

* ``write(source, out, variant, cluster_size, options)``: write the source sample, atomically,
  then verify from the written file's own metadata that clusters have the requested size;
* ``describe(path)``: layout facts read back from the file (cluster sizes, baskets/pages, bytes
  per branch group) that tables and tests use;
* ``readers``: named readers, each computing per-branch checksums of a branch selection.

Modules are imported on first use so that a Parquet-only job never loads ROOT.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from analysis.checksum import Checksum, checksum, merge
from analysis.codecs import Variant
from analysis.errors import ConfigError, InputError


@dataclass(frozen=True)
class Reader:
    """A way to read a format. ``prepare`` runs once per process before any timing (imports,
    JIT declarations, thread settings); ``read`` is what gets timed."""

    name: str
    library: str  # the package whose version the provenance must name
    prepare: Callable[[int], None]
    read: Callable[[str, list[str]], dict[str, Checksum]]


@dataclass(frozen=True)
class Format:
    name: str
    extension: str
    algorithms: frozenset[str]
    dictionary: bool
    write: Callable[[Path, Path, Variant, int, dict], None]
    describe: Callable[[Path], dict]
    readers: dict[str, Reader] = field(default_factory=dict)
    #: writer options the adapter understands; None = passed through to a library that checks
    #: them itself (pyarrow's ParquetWriter)
    options: frozenset[str] | None = None

    def variant(self, text: str, key: str = "variant") -> Variant:
        return Variant.parse(text, set(self.algorithms), self.dictionary, key)


def require_branches(path: str | Path, available, branches: list[str]) -> None:
    """Every reader's check: a selection naming branches the file lacks names them and it."""
    have = set(available)
    missing = [b for b in branches if b not in have]
    if missing:
        raise InputError(path, f"missing branches {missing[:5]}")


def add_checksums(out: dict[str, Checksum], table, branches: list[str]) -> None:
    """Fold one chunk (an Arrow table or record batch) into the running per-branch
    checksums of the readers that hand their data over as Arrow."""
    from analysis.source import to_column  # source imports nothing from here; keep it lazy

    for b in branches:
        out[b] = merge(out[b], checksum(to_column(table.column(b)).values))


_MODULES = {name: f"analysis.formats.{name}"
            for name in ("ttree", "rntuple", "parquet", "feather", "hdf5", "lance", "vortex")}


#: How tables and figures name each adapter's files (known without importing the adapter, so
#: that tabulating and plotting need neither ROOT nor the newer formats' libraries).
LABELS = {"ttree": "TTree", "rntuple": "RNTuple", "parquet": "Parquet", "feather": "Arrow IPC",
          "hdf5": "HDF5", "lance": "Lance", "vortex": "Vortex"}


def names() -> list[str]:
    return list(_MODULES)


def get(name: str) -> Format:
    if name not in _MODULES:
        raise ConfigError("formats", f"unknown format {name!r}; known: {names()}")
    return importlib.import_module(_MODULES[name]).FORMAT
