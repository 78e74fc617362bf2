"""Exact relations between a source's branches, so that synthetic events keep them.

The value model draws each branch on its own, which is right for sizes but wrong where the real
file has branches that are *functions* of others: a synthetic sample then contradicts itself.
Two such relations are common in NanoAOD, whatever wrote it:

* a **length**: a flat integer branch equal in every event to a collection's length. uproot
  writes one counter per jagged branch (``nJet_pt``, ``nJet_eta``), and a v15 file written by
  uproot still carries the shared ``nJet`` as a plain integer branch that no list names as its
  counter; drawn from its own distribution, it agreed with ``len(Jet_pt)`` in 11% of events.
* a **copy**: a branch bit for bit equal to an earlier one (``LHE_HTIncoming`` and ``LHE_HT``,
  ``Tau_rawIso`` and ``Tau_chargedIso``): same dtype, same values and, when jagged, the same
  collection (so the same lengths). ROOT's RNTuple stores identical pages once, so a copy drawn
  independently costs bytes the real file does not pay.

Both are found by exact equality over all of the source's events: each column is hashed once,
candidates are the columns with equal hashes, and a candidate is kept only when the arrays are
equal, so a 2600-branch file costs one pass over its bytes, and when the equality is too
unlikely to be chance (:data:`MAX_CHANCE`: a small file's rare flags agree by accident).
Constant branches are left out (a constant comes out constant anyway), and so are event-level
bools, which the value model's ``same_as`` already keeps identical within a rate class (a
process scales trigger rates only).

Counters of a collection (shared or per branch) are not relations here: the schema names them,
and generation writes every one of them from the collection's lengths.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hepfmt.errors import InputError
from hepfmt.samples.schema import Schema
from hepfmt.samples.source import Column, iter_batches, open_source, to_column

if TYPE_CHECKING:
    from hepfmt.samples.model import Model


@dataclass
class Relations:
    """What the source's branches are functions of: ``lengths`` maps a flat integer branch to
    the collection whose length it is; ``copies`` maps a branch to the earlier branch it
    copies (never itself a copy)."""

    lengths: dict[str, str] = field(default_factory=dict)
    copies: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.lengths or self.copies)

    def to_dict(self) -> dict[str, dict[str, str]]:
        return {"lengths": dict(self.lengths), "copies": dict(self.copies)}

    @classmethod
    def from_dict(cls, doc: dict | None) -> Relations:
        doc = doc or {}
        return cls(dict(doc.get("lengths", {})), dict(doc.get("copies", {})))

    def check(self, schema: Schema, origin: str) -> None:
        """Refuse relations a generator could not honour (a model edited by hand, or one whose
        schema was changed): one line naming the branch."""
        names = set(schema.names)
        collections = schema.collections()
        counters = set(schema.counters())
        for name, collection in self.lengths.items():
            if name not in names or collection not in collections:
                raise InputError(origin, f"relation {name} = length of {collection}: "
                                         "no such branch or collection")
            b = schema[name]
            if b.jagged or b.np_dtype.kind not in "iu" or name in counters:
                raise InputError(origin, f"relation {name} = length of {collection}: "
                                         f"{name} is not a flat integer branch")
        position = {n: i for i, n in enumerate(schema.names)}
        for name, leader in self.copies.items():
            if name not in names or leader not in names:
                raise InputError(origin, f"relation {name} = {leader}: no such branch")
            a, b = schema[name], schema[leader]
            if (a.dtype, a.collection) != (b.dtype, b.collection) or leader in self.copies \
                    or position[leader] > position[name] or name in self.lengths:
                raise InputError(origin, f"relation {name} = {leader}: not a copy a generator "
                                         "can make (another dtype or collection, or a chain)")

    def split_by(self, learned: Relations) -> tuple[Relations, Relations]:
        """These relations in two: those ``learned`` (a model's, from part of the events)
        holds too, and those it does not. A relation of a whole file holds in every part of
        it, but a part may hold too few values to tell it from chance (:func:`by_chance`): a
        model learned from that part cannot be blamed for lacking it. A copy counts as held
        where ``learned`` makes both branches copies of one leader (which may be another)."""
        def root(name: str) -> str:
            return learned.copies.get(name, name)

        held = Relations({k: c for k, c in self.lengths.items() if learned.lengths.get(k) == c},
                         {k: v for k, v in self.copies.items() if root(k) == root(v)})
        rest = Relations({k: c for k, c in self.lengths.items() if k not in held.lengths},
                         {k: v for k, v in self.copies.items() if k not in held.copies})
        return held, rest

    def lines(self) -> list[str]:
        """One line per relation, as a report names it."""
        return ([f"{k} = the length of {c}" for k, c in self.lengths.items()]
                + [f"{k} = {v}" for k, v in self.copies.items()])

    def subset(self, schema: Schema) -> Relations:
        """The relations among the branches of ``schema`` (a model's subset)."""
        names, collections = set(schema.names), schema.collections()
        return Relations({k: c for k, c in self.lengths.items()
                          if k in names and c in collections},
                         {k: v for k, v in self.copies.items() if k in names and v in names})


#: A relation is kept only when two independent branches with the same values' frequencies
#: would agree by chance with at most this probability: a 40-event file has muon ID bools
#: that agree on all of its 18 muons by chance (0.9**18 = 0.14), and a copy the real data
#: do not have makes a synthetic sample smaller than the real one.
MAX_CHANCE = 1e-6


def by_chance(x: np.ndarray) -> bool:
    """Whether ``x`` is too short or too predictable for equality with it to be a relation:
    ``sum(p_i**2) ** n`` (the chance that ``n`` independent draws of the same distribution
    agree everywhere) above :data:`MAX_CHANCE`."""
    bits = np.ascontiguousarray(x).view(f"u{x.dtype.itemsize}")  # a NaN is one value
    counts = np.unique(bits, return_counts=True)[1]
    p = counts / max(x.size, 1)
    return x.size * np.log(float((p * p).sum())) > np.log(MAX_CHANCE)


def _bytes(x: np.ndarray) -> np.ndarray:
    """One row of bytes per value: equality of bits, not of numbers (``-0.0`` is not
    ``0.0``, a NaN equals the same NaN)."""
    return np.ascontiguousarray(x).view(np.uint8).reshape(x.size, x.dtype.itemsize)


def _digest(x: np.ndarray) -> bytes:
    return hashlib.blake2b(_bytes(x), digest_size=16).digest()


def _constant(x: np.ndarray) -> bool:
    return x.size == 0 or bool((_bytes(x) == _bytes(x[:1])).all())


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(_bytes(a), _bytes(b))


def find_lengths(schema: Schema, cols: dict[str, Column],
                 lengths: dict[str, np.ndarray]) -> dict[str, str]:
    """Flat integer branches (not counters) equal to a collection's length in every event;
    when several collections fit (equal lengths in every event), the one the branch's name
    says (``nJet`` for ``Jet``), else the first."""
    by_hash: dict[bytes, list[str]] = {}
    for collection, n in lengths.items():
        if not _constant(n):
            by_hash.setdefault(_digest(n.astype(np.int64)), []).append(collection)
    counters = set(schema.counters())
    out = {}
    for b in schema.branches:
        if b.jagged or b.name in counters or b.np_dtype.kind not in "iu":
            continue
        x = cols[b.name].values.astype(np.int64)
        fits = [c for c in by_hash.get(_digest(x), ())
                if _same_bits(x, lengths[c].astype(np.int64)) and not by_chance(x)]
        if fits:
            out[b.name] = b.name[1:] if b.name[1:] in fits else fits[0]
    return out


def find_copies(schema: Schema, cols: dict[str, Column],
                skip: Iterable[str] = ()) -> dict[str, str]:
    """Branches bit for bit equal to an earlier branch of the same dtype and collection:
    branch -> the first such branch (see the module docstring for what is left out)."""
    leave_out = set(skip) | set(schema.counters())
    leaders: dict[tuple, list[str]] = {}
    out = {}
    for b in schema.branches:
        x = cols[b.name].values
        if b.name in leave_out or (b.dtype == "bool" and not b.jagged) or _constant(x):
            continue
        bucket = leaders.setdefault((b.dtype, b.collection, _digest(x)), [])
        leader = next((a for a in bucket if _same_bits(cols[a].values, x)), None)
        if leader is not None and by_chance(x):
            continue
        if leader is None:
            bucket.append(b.name)
        else:
            out[b.name] = leader
    return out


def find_relations(schema: Schema, cols: dict[str, Column],
                   lengths: dict[str, np.ndarray]) -> Relations:
    """Every length and copy relation of a source held in memory (``cols``: all its events;
    ``lengths``: each collection's length per event)."""
    found = find_lengths(schema, cols, lengths)
    return Relations(found, find_copies(schema, cols, skip=found))


def relations_of_source(source: str | Path, schema: Schema) -> Relations:
    """The relations of an Arrow IPC source (an imported real file, held in memory once, as
    learning holds it), for checking a sample against the file rather than against a model
    that may predate relations (the built-in one)."""
    table = open_source(source).read_all()
    cols = {n: to_column(table[n]) for n in schema.names}
    lengths = {c: cols[ks[0]].values for c, ks in schema.collections().items()}
    return find_relations(schema, cols, lengths)


def _list_lengths(col: Column) -> np.ndarray:
    return np.diff(col.offsets)


def broken_relations(source: str | Path, model: Model,
                     relations: Relations | None = None) -> list[str]:
    """One line per relation of ``model`` that the Arrow IPC ``source`` (a generated sample,
    or an imported real one) breaks, naming the branches and how many events break it: every
    counter against its collection's list lengths, every length relation, every copy. An
    empty list: the sample is consistent. Read batch by batch, so a large sample is checked
    in bounded memory; a branch missing from the source is a broken relation too.
    ``relations`` replaces the model's (those of the real file: :func:`relations_of_source`;
    those among the model's branches are checked)."""
    schema = model.schema
    relations = model.relations if relations is None else relations.subset(schema)
    members = {c: next(b.name for b in schema.branches if b.collection == c)
               for c in schema.collections()}
    checks = [(k, members[c], "length") for c, ks in schema.collections().items() for k in ks]
    checks += [(k, members[c], "length") for k, c in relations.lengths.items()]
    checks += [(k, v, "copy") for k, v in relations.copies.items()]
    broken = dict.fromkeys(range(len(checks)), 0)
    missing: list[str] = []
    try:
        for batch in iter_batches(source):
            have = set(batch.schema.names)
            for i, (name, other, how) in enumerate(checks):
                if name not in have or other not in have:
                    missing += [n for n in (name, other) if n not in have and n not in missing]
                    continue
                a, b = to_column(batch.column(name)), to_column(batch.column(other))
                if how == "length":
                    broken[i] += int(np.count_nonzero(a.values != _list_lengths(b)))
                else:
                    broken[i] += _copy_breaks(a, b)
    except InputError:
        raise
    except Exception as exc:  # pyarrow: a truncated or foreign file
        raise InputError(source, f"cannot read the sample to check its relations ({exc})") \
            from exc
    out = [f"{n}: missing from the sample" for n in missing]
    for i, (name, other, how) in enumerate(checks):
        if broken[i]:
            what = f"the length of {other}" if how == "length" else f"a copy of {other}"
            out.append(f"{name} is not {what} in {broken[i]} events")
    return out


def _rows_differ(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per value: whether ``a`` and ``b`` (same dtype and size) differ in any bit."""
    return (_bytes(a) != _bytes(b)).any(axis=1)


def _copy_breaks(a: Column, b: Column) -> int:
    """Events in which ``a`` is not bit for bit ``b``."""
    events = a.values.size if a.offsets is None else a.offsets.size - 1
    if (a.offsets is None) != (b.offsets is None) or a.values.dtype != b.values.dtype:
        return events
    if a.offsets is None:
        return int(np.count_nonzero(_rows_differ(a.values, b.values)))
    la, lb = np.diff(a.offsets), np.diff(b.offsets)
    if (la != lb).any():
        return int(np.count_nonzero(la != lb))
    bad = np.zeros(la.size, dtype=bool)
    bad[np.repeat(np.arange(la.size), la)[_rows_differ(a.values, b.values)]] = True
    return int(np.count_nonzero(bad))
