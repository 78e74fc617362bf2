"""Learning a value model from a real NanoAOD file, whatever wrote it.

Reads every event (chunked) of a TTree, an RNTuple or Parquet NanoAOD (:mod:`.inputs`) and
learns what :mod:`.model` samples from: the value distributions of each branch, the
multiplicity of each collection (found by name: :mod:`.schema`), repeats and sequences
(:mod:`.chain`) within events, identical event-level flags, and the branches that are exact
functions of others (lengths and copies: :mod:`.relations_model`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hepfmt.errors import InputError
from hepfmt.samples.chain import learn_chain
from hepfmt.samples.importer import read_events
from hepfmt.samples.inputs import Input, extract_schema, open_input
from hepfmt.samples.model import (
    Model,
    ValueModel,
    learn_repeat,
    learn_sequence,
    learn_values,
    sorted_desc,
)
from hepfmt.samples.processes import TRIGGER_PREFIXES
from hepfmt.samples.relations_model import find_relations
from hepfmt.samples.schema import Schema
from hepfmt.samples.source import Column


def _concat(chunks: list[Column]) -> Column:
    """One branch's chunks as one column (offsets continued across chunks)."""
    values = np.concatenate([c.values for c in chunks])
    if chunks[0].offsets is None:
        return Column(values)
    lengths = np.concatenate([np.diff(c.offsets) for c in chunks])
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return Column(values, offsets)


def _lengths(path: str | Path, schema: Schema, cols: dict[str, Column]) -> dict[str, np.ndarray]:
    """Collection -> its length per event; every counter of a collection must agree, since the
    collection is one set of objects (``Jet_pt`` and ``Jet_eta`` of the same jets)."""
    out = {}
    for collection, counters in schema.collections().items():
        first = cols[counters[0]].values
        for c in counters[1:]:
            bad = np.count_nonzero(cols[c].values != first)
            if bad:
                raise InputError(path, f"{c} and {counters[0]} differ in {bad} entries, but "
                                       f"hepfmt takes every {collection}_* branch as one "
                                       "collection with one length per entry")
        out[collection] = first
    return out


def learn_aliases(schema: Schema, cols: dict[str, Column]) -> dict[str, str]:
    """Event-level bools identical in every entry to an earlier one of the same rate class (a
    process scales trigger rates only): branch -> that earlier branch. Constant ones are
    left out: they come out identical anyway."""
    leaders: dict[tuple[bytes, bool], str] = {}
    out = {}
    for b in schema.branches:
        v = cols[b.name].values
        if b.dtype != "bool" or b.jagged or v.all() or not v.any():
            continue
        leader = leaders.setdefault((np.packbits(v).tobytes(),
                                     b.name.startswith(TRIGGER_PREFIXES)), b.name)
        if leader != b.name:
            out[b.name] = leader
    return out


def _read(inp: Input, schema: Schema) -> dict[str, Column]:
    """Every branch of ``schema``, all events, each as one column."""
    chunks: dict[str, list[Column]] = {n: [] for n in schema.names}
    for chunk in read_events(inp, schema):
        for name, col in chunk.items():
            chunks[name].append(col)
    return {n: _concat(c) for n, c in chunks.items()}


def _multiplicity(lengths: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Collection -> {count: fraction of events}."""
    out = {}
    for collection, n in lengths.items():
        c, k = np.unique(n, return_counts=True)
        out[collection] = {str(int(m)): float(f) for m, f in zip(c, k / n.size, strict=True)}
    return out


def learn_multiplicity(path: str | Path, tree: str = "Events") -> dict[str, dict[str, float]]:
    """The multiplicity of each collection alone (its counters and one member are read), for
    judging a value model at the multiplicities of the events it is compared with."""
    inp = open_input(path, tree)
    inp.require_entries()
    schema = extract_schema(inp)
    sized = schema.counters()
    keep = set(sized) | {members[0].name for members in sized.values()}
    sub = Schema(tuple(b for b in schema.branches if b.name in keep), schema.origin)
    return _multiplicity(_lengths(path, sub, _read(inp, sub)))


def extract(path: str | Path, tree: str = "Events") -> Model:
    """Learn the model of a TTree, an RNTuple or Parquet NanoAOD (all events are read into
    memory, in chunks)."""
    inp = open_input(path, tree)
    inp.require_entries()
    schema = extract_schema(inp)
    cols = _read(inp, schema)
    lengths = _lengths(path, schema, cols)
    n_events = len(next(iter(lengths.values()))) if lengths else cols[schema.names[0]].values.size
    values: dict[str, ValueModel] = {}
    multiplicity = _multiplicity(lengths)
    counters = schema.counters()
    for b in schema.branches:
        if b.name in counters:
            continue
        flat = cols[b.name].values
        model = None if b.jagged else learn_sequence(flat, b.np_dtype)
        if model is None:
            model = learn_values(flat, b.np_dtype)
        if b.jagged and b.dtype != "bool":
            counts = np.diff(cols[b.name].offsets)
            model.sorted_desc = sorted_desc(flat, counts)
            if not model.quantiles and not model.sorted_desc:  # categorical: maybe a chain
                model.starts, model.follows = learn_chain(flat, counts)
            if not model.follows:  # a chain holds the repeats already
                model.repeat = learn_repeat(flat, counts, model)
        values[b.name] = model
    for name, leader in learn_aliases(schema, cols).items():
        values[name].same_as = leader
    return Model(schema, values, multiplicity, n_events, inp.label,
                 find_relations(schema, cols, lengths))
