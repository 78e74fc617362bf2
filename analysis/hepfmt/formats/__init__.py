"""Format adapters: one module per on-disk format, all meeting :mod:`.base`'s contract.

:data:`REGISTRY` is the one list of formats: adding a format is its adapter module plus one line
here. Name, label and file extension are known without importing the adapter, so that planning,
tabulating and plotting need neither ROOT nor the newer formats' libraries; modules are imported
on first use, so a Parquet-only job never loads ROOT.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from hepfmt.errors import ConfigError
from hepfmt.formats.base import (
    Format,
    Layout,
    Reader,
    add_checksums,
    check_layout,
    require_branches,
)

__all__ = ["FASTEST", "REGISTRY", "Entry", "Format", "Layout", "Reader", "add_checksums",
           "check_layout", "entry", "extension", "get", "label", "load", "names", "register",
           "require_branches"]

#: Not a reader but a request for one: a pairing side whose reader the run chooses, the
#: quickest its measure jobs timed on the side's files (hepfmt.measure.fastest). No adapter
#: may name a reader so.
FASTEST = "fastest"


@dataclass(frozen=True)
class Entry:
    name: str  # the adapter's name in configs, file paths and tables
    label: str  # how tables and figures call its files
    extension: str
    module: str  # defines FORMAT


REGISTRY: dict[str, Entry] = {e.name: e for e in (
    Entry("ttree", "TTree", "root", "hepfmt.formats.root.ttree"),
    Entry("rntuple", "RNTuple", "root", "hepfmt.formats.root.rntuple"),
    Entry("parquet", "Parquet", "parquet", "hepfmt.formats.parquet"),
    Entry("feather", "Arrow IPC", "arrow", "hepfmt.formats.arrow_ipc"),
    Entry("hdf5", "HDF5", "h5", "hepfmt.formats.hdf5"),
    Entry("lance", "Lance", "lance", "hepfmt.formats.lance"),
    Entry("vortex", "Vortex", "vortex", "hepfmt.formats.vortex"),
    Entry("orc", "ORC", "orc", "hepfmt.formats.orc"),
)}


def register(e: Entry) -> None:
    """Add a format at run time (a plug-in, or a test's toy format)."""
    REGISTRY[e.name] = e


def names() -> list[str]:
    return list(REGISTRY)


def entry(name: str) -> Entry:
    if name not in REGISTRY:
        raise ConfigError("formats", f"unknown format {name!r}; known: {names()}")
    return REGISTRY[name]


def label(name: str) -> str:
    return entry(name).label


def extension(name: str) -> str:
    return entry(name).extension


def load(module: str) -> Format:
    """The ``FORMAT`` an adapter module defines."""
    return importlib.import_module(module).FORMAT


def get(name: str) -> Format:
    return load(entry(name).module)
