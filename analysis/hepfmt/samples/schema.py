"""Branch schema of a NanoAOD-like event table.

The schema is the contract every format adapter writes and every reader checks against: the
branch names, their numpy dtypes and, for jagged branches, the counter branch that sizes them
(``nMuon`` for ``Muon_pt``). It is derived from a real NanoAOD file so that the mix of booleans,
collections and types is the real one; it is the ``branches`` part of a value model
(:mod:`hepfmt.samples.model`), so that generation never needs the ROOT file.

Collections are found by name, not by counter: NanoAOD written by CMSSW has one counter per
collection (``nJet`` sizes every ``Jet_*``), but uproot writes one counter per jagged branch
(``nJet_pt``, ``nJet_eta``, ...). Both are one collection ``Jet`` with one length per event; the
schema keeps the file's counter branches as they are, so that written files have the real
file's structure, and every counter of a collection holds the same lengths.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from hepfmt import records
from hepfmt.errors import InputError

#: dtypes a branch may have; all are fixed-width so "naive bytes" is well defined.
DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float32", "float64")
#: dtype of a counter hepfmt makes for a file that has none (NanoAOD's ``UInt_t``).
COUNTER_DTYPE = "uint32"


@dataclass(frozen=True)
class Field:
    """One column of a real file, before hepfmt names its counter and collection."""

    name: str
    dtype: str  # numpy dtype name of the (flattened) values
    jagged: bool
    counter: str | None = None  # the counter the file itself names (a TTree leaf list, or an
    # RNTuple cardinality field projected onto the same collection)


@dataclass(frozen=True)
class Branch:
    name: str
    dtype: str
    counter: str | None = None  # name of the counter branch for jagged branches

    @property
    def jagged(self) -> bool:
        return self.counter is not None

    @property
    def np_dtype(self) -> np.dtype:
        return np.dtype(self.dtype)

    @property
    def collection(self) -> str | None:
        """The collection a jagged branch belongs to: ``Jet`` for ``Jet_pt``.

        A counter named after the branch itself (``nJet_pt``, uproot's default) says nothing
        about the collection, so the name's prefix does; a shared counter (``nJet``, or any
        ``n`` sizing ``pt`` and ``eta`` of a non-NanoAOD tree) names it.
        """
        if self.counter is None:
            return None
        if self.counter == "n" + self.name:
            return self.name.split("_", 1)[0] or self.name
        return self.counter[1:] if self.counter.startswith("n") and len(self.counter) > 1 \
            else self.counter

    @property
    def group(self) -> str:
        """Branch group used to report where the bytes go (triggers, a collection, event)."""
        if self.name.startswith(("HLT_", "L1_", "Flag_", "L1simulation", "L1Reco")):
            return "triggers"
        return self.collection or "event"


@dataclass(frozen=True)
class Schema:
    branches: tuple[Branch, ...]
    origin: str = ""

    def __post_init__(self) -> None:
        names = [b.name for b in self.branches]
        if len(set(names)) != len(names):
            raise InputError(self.origin or "schema", "duplicate branch names")
        known = set(names)
        for b in self.branches:
            if b.dtype not in DTYPES:
                raise InputError(self.origin or "schema", f"branch {b.name}: bad dtype {b.dtype}")
            if b.counter is not None and b.counter not in known:
                raise InputError(self.origin or "schema",
                                 f"branch {b.name}: counter {b.counter} is not a branch")
        for counter, members in self.counters().items():
            if self[counter].jagged:
                raise InputError(self.origin or "schema", f"counter {counter} is jagged")
            found = {b.collection for b in members}
            if len(found) > 1:
                raise InputError(self.origin or "schema", f"counter {counter} sizes branches "
                                 f"of several collections {sorted(found)}")

    @property
    def names(self) -> list[str]:
        return [b.name for b in self.branches]

    def __getitem__(self, name: str) -> Branch:
        for b in self.branches:
            if b.name == name:
                return b
        raise KeyError(name)

    def counters(self) -> dict[str, list[Branch]]:
        """Counter name -> the jagged branches it sizes (a NanoAOD 'collection')."""
        out: dict[str, list[Branch]] = {}
        for b in self.branches:
            if b.counter is not None:
                out.setdefault(b.counter, []).append(b)
        return out

    def collections(self) -> dict[str, list[str]]:
        """Collection -> its counter branches (one, or one per member), in schema order: each
        collection has one length per event, whatever its counters."""
        out: dict[str, list[str]] = {}
        for b in self.branches:
            if b.counter is not None and b.counter not in out.setdefault(b.collection, []):
                out[b.collection].append(b.counter)
        return out

    def to_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(
            {"origin": self.origin, "branches": [asdict(b) for b in self.branches]}, indent=0))

    @classmethod
    def from_json(cls, path: str | Path) -> Schema:
        try:
            doc = records.read_json(path, "hepfmt schema")
            return cls(tuple(Branch(**b) for b in doc["branches"]), doc.get("origin", str(path)))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputError(path, f"not a hepfmt schema ({exc})") from exc


def _counter(field: Field, flat_ints: set[str]) -> tuple[str, bool]:
    """The counter of a jagged column and whether the file holds it.

    A TTree names it in the leaf list; RNTuple and Parquet files keep counters as plain integer
    columns (``nJet`` from RDataFrame or awkward, ``nJet_pt`` from uproot), found by name; a
    file without one gets ``n<collection>``, made from the list lengths on import.
    """
    if field.counter is not None:
        return field.counter, True
    collection = field.name.split("_", 1)[0] or field.name
    for name in (f"n{field.name}", f"n{collection}"):
        if name in flat_ints:
            return name, True
    return f"n{collection}", False


def schema_from_fields(fields: list[Field], origin: str) -> Schema:
    """Branches of a real file's columns, counters named (see :func:`_counter`)."""
    flat_ints = {f.name for f in fields if not f.jagged and np.dtype(f.dtype).kind in "iu"}
    branches, made = [], {}
    for f in fields:
        counter = None
        if f.jagged:
            counter, held = _counter(f, flat_ints)
            if not held:
                made[counter] = Branch(counter, COUNTER_DTYPE)
        branches.append(Branch(f.name, f.dtype, counter))
    branches += made.values()
    # Counters must come before the branches they size (ROOT leaf lists need that order).
    counters = {b.counter for b in branches if b.counter}
    ordered = [b for b in branches if b.name in counters] + \
              [b for b in branches if b.name not in counters]
    return Schema(tuple(ordered), origin=origin)
