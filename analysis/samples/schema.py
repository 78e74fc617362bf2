"""Branch schema of a NanoAOD-like event table.

The schema is the contract every format adapter writes and every reader checks against: the
branch names, their numpy dtypes and, for jagged branches, the counter branch that sizes them
(``nMuon`` for ``Muon_pt``). It is derived from a real NanoAOD file so that the mix of booleans,
collections and types is the real one; it is the ``branches`` part of a value model
(:mod:`analysis.samples.model`), so that generation never needs the ROOT file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from analysis.errors import InputError

#: dtypes a branch may have; all are fixed-width so "naive bytes" is well defined.
DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
          "float32", "float64")


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
    def group(self) -> str:
        """Branch group used to report where the bytes go (triggers, a collection, event)."""
        if self.name.startswith(("HLT_", "L1_", "Flag_", "L1simulation", "L1Reco")):
            return "triggers"
        if self.counter is not None:
            return self.counter[1:]
        return "event"


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

    def to_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(
            {"origin": self.origin, "branches": [asdict(b) for b in self.branches]}, indent=0))

    @classmethod
    def from_json(cls, path: str | Path) -> Schema:
        try:
            doc = json.loads(Path(path).read_text())
            return cls(tuple(Branch(**b) for b in doc["branches"]), doc.get("origin", str(path)))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise InputError(path, f"not a hepfmt schema ({exc})") from exc


def extract_schema(path: str | Path, tree: str = "Events") -> Schema:
    """Read names, dtypes and counters of a flat/jagged TTree with uproot."""
    import uproot

    try:
        t = uproot.open(path)[tree]
    except Exception as exc:  # uproot raises many types for unreadable files
        raise InputError(path, f"cannot open tree {tree!r}: {exc}") from exc
    branches = []
    for b in t.values():
        interp = b.interpretation
        counter = None
        content = getattr(interp, "content", None)
        if content is not None:  # AsJagged
            if b.count_branch is None:
                raise InputError(path, f"jagged branch {b.name} has no counter branch")
            counter = b.count_branch.name
            interp = content
        dtype = getattr(interp, "to_dtype", None)
        if dtype is None or dtype.shape:
            raise InputError(path, f"branch {b.name}: unsupported type {b.interpretation}")
        branches.append(Branch(b.name, np.dtype(dtype).newbyteorder("=").name, counter))
    # Counters must come before the branches they size (ROOT leaf lists need that order).
    counters = {b.counter for b in branches if b.counter}
    ordered = [b for b in branches if b.name in counters] + \
              [b for b in branches if b.name not in counters]
    return Schema(tuple(ordered), origin=f"{Path(str(path)).name}:{tree}")
