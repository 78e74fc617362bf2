"""NanoAOD-like sample generation from a learned value model, deterministic from
(model, process, seed, n_events).

Events are made in fixed chunks, each from its own random stream seeded by (seed, process,
chunk index), so memory stays bounded (1M events never need all of it in memory) and the events
do not depend on how the output is later split. Everything is vectorised per branch: one uniform
draw per value (see :mod:`hepfmt.samples.model`). A branch the model knows to be a
collection's length is written from the generated lengths, and a copy copies its leader
(:mod:`hepfmt.samples.relations_model`), so a sample never contradicts itself.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa

from hepfmt.atomic import atomic_path
from hepfmt.errors import ConfigError
from hepfmt.samples.model import Model, apply_repeat
from hepfmt.samples.processes import PROCESSES, TRIGGER_PREFIXES, Process
from hepfmt.samples.schema import Branch, Schema
from hepfmt.samples.source import to_arrow

#: Events per generated chunk. Part of the determinism contract: changing it changes the events.
CHUNK = 10_000


def _stable(name: str) -> int:
    return zlib.crc32(name.encode())


def _counts(rng: np.random.Generator, pmf: dict[str, float], n: int, scale: float) -> np.ndarray:
    """Multiplicities drawn from the learned distribution, scaled by stochastic rounding.

    ``floor(scale * k + u)`` keeps the distribution's shape and multiplies its mean by
    ``scale``; fixed-length vectors (one possible length, e.g. 33 PDF weights) are not scaled.
    """
    values = np.array([int(k) for k in pmf], dtype=np.int64)
    cum = np.cumsum(np.array(list(pmf.values())))
    k = values[np.minimum(np.searchsorted(cum / cum[-1], rng.random(n), side="right"),
                          values.size - 1)]
    if scale != 1.0 and values.size > 1:
        k = np.floor(scale * k + rng.random(n)).astype(np.int64)
    return k.astype(np.uint32)


def _sort_desc_within_events(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    event = np.repeat(np.arange(counts.size), counts)
    return values[np.lexsort((-values, event))]


def _jagged(rng: np.random.Generator, model: Model, b: Branch, proc: Process,
            c: np.ndarray) -> pa.Array:
    """One jagged branch of a chunk, ``c`` values per event."""
    vm = model.values[b.name]
    rate = proc.trigger_rate if b.name.startswith(TRIGGER_PREFIXES) else 1.0
    offsets = np.zeros(c.size + 1, dtype=np.int64)
    np.cumsum(c, out=offsets[1:])
    if vm.follows:
        values = vm.sample_chain(rng, c, b.np_dtype)
    else:
        values = vm.sample(rng, int(offsets[-1]), b.np_dtype, rate)
    if vm.repeat and values.size:
        values = apply_repeat(rng, values, c, vm.repeat)
    if vm.sorted_desc and values.size:
        values = _sort_desc_within_events(values, c)
    return to_arrow(b, values, offsets)


def generate_chunk(model: Model, proc: Process, seed: int, chunk: int, n: int) -> pa.RecordBatch:
    """One chunk of events; its content depends only on (model, process, seed, chunk, n)."""
    rng = np.random.default_rng([seed, _stable(proc.name), chunk])
    schema = model.schema
    # one length per collection, whatever its counters: Jet_pt and Jet_eta describe the same jets
    lengths = {c: _counts(rng, model.multiplicity[c], n, proc.scale.get(c, 1.0))
               for c in schema.collections()}
    collection_of = {k: c for c, ks in schema.collections().items() for k in ks}
    relations = model.relations
    made: dict[str, pa.Array] = {}
    flags: dict[str, np.ndarray] = {}  # event-level bools, for the branches identical to them
    for b in schema.branches:
        if b.name in collection_of:
            made[b.name] = to_arrow(b, lengths[collection_of[b.name]].astype(b.np_dtype), None)
            continue
        if b.jagged:
            made[b.name] = _jagged(rng, model, b, proc, lengths[b.collection])
        else:
            vm = model.values[b.name]
            rate = proc.trigger_rate if b.name.startswith(TRIGGER_PREFIXES) else 1.0
            values = flags[vm.same_as] if vm.same_as in flags else \
                vm.sample(rng, n, b.np_dtype, rate, chunk * CHUNK)
            if b.dtype == "bool":
                flags[b.name] = values
            made[b.name] = to_arrow(b, values, None)
        # a relation replaces the values just drawn: drawing them anyway keeps every other
        # branch's random stream, so the relations change their own branches only
        if b.name in relations.lengths:
            made[b.name] = to_arrow(b, lengths[relations.lengths[b.name]].astype(b.np_dtype),
                                    None)
        elif b.name in relations.copies:
            made[b.name] = made[relations.copies[b.name]]
    arrays = [made[name] for name in schema.names]
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(schema))


def arrow_schema(schema: Schema) -> pa.Schema:
    fields = []
    for b in schema.branches:
        t = pa.from_numpy_dtype(b.np_dtype)
        fields.append(pa.field(b.name, pa.list_(t) if b.jagged else t, nullable=False))
    return pa.schema(fields)


def generate(model: Model, process: str, seed: int, n_events: int, out: str | Path) -> None:
    """Write ``n_events`` events to an uncompressed Arrow IPC file, atomically."""
    if process not in PROCESSES:
        raise ConfigError(f"samples.{process}", f"unknown process; known: {sorted(PROCESSES)}")
    if n_events <= 0:
        raise ConfigError("n_events", "must be positive")
    proc = PROCESSES[process]
    with atomic_path(out) as tmp, pa.OSFile(str(tmp), "wb") as sink, \
            pa.ipc.new_file(sink, arrow_schema(model.schema)) as writer:
        for chunk, first in enumerate(range(0, n_events, CHUNK)):
            writer.write_batch(generate_chunk(model, proc, seed, chunk,
                                              min(CHUNK, n_events - first)))
