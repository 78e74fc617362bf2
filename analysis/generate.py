"""NanoAOD-like sample generation, deterministic from (process, seed, n_events).

Compression ratios depend on what the bytes look like, so values follow NanoAOD's shapes rather
than uniform noise: most trigger bits never fire, collections are pt-ordered, angles are uniform,
identifiers take few values, and floats keep only ~10-12 mantissa bits where NanoAOD rounds them.
This is a first, rule-based value model keyed on branch names; it streams in fixed chunks so that
memory stays bounded and any chunking of the output gives the same events.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa

from analysis.atomic import atomic_path
from analysis.errors import ConfigError
from analysis.processes import FIXED_MULTIPLICITY, PROCESSES, Process
from analysis.schema import Branch, Schema
from analysis.source import to_arrow

#: Events per generated chunk. Part of the determinism contract: changing it changes the events.
CHUNK = 10_000

#: Collections whose float members NanoAOD stores at full precision (pt/eta/phi only).
FULL_PRECISION = {"Muon_pt", "Muon_eta", "Muon_phi", "GenPart_pt", "Electron_pt"}


def _stable(name: str) -> int:
    return zlib.crc32(name.encode())


def _unit(name: str, salt: str = "") -> float:
    """A number in [0, 1) fixed by a branch name: per-branch constants without a table."""
    return (_stable(name + salt) % 10_000) / 10_000


def round_mantissa(x: np.ndarray, bits: int) -> np.ndarray:
    """Round float32 values to ``bits`` explicit mantissa bits, as NanoAOD's precision= does."""
    if bits >= 23:
        return x.astype(np.float32)
    u = x.astype(np.float32).view(np.uint32)
    shift = np.uint32(23 - bits)
    half = np.uint32(1 << (23 - bits - 1))
    return (((u + half) >> shift) << shift).view(np.float32)


def _mantissa_bits(name: str) -> int:
    member = name.split("_", 1)[-1]
    if name in FULL_PRECISION or not name[0].isupper() or name.startswith(("MET_", "PV_")):
        return 23
    return 12 if member in ("eta", "phi") else 10


def _floats(rng: np.random.Generator, name: str, n: int) -> np.ndarray:
    member = name.split("_", 1)[-1].lower()
    coll = name.split("_", 1)[0]
    if member == "pt" or member.endswith("pt") or member in ("sumet", "energy", "e"):
        x = 3 + rng.exponential(40 if coll in ("Jet", "FatJet", "GenJet", "MET") else 20, n)
    elif "eta" in member:
        x = np.clip(rng.normal(0, 1.6, n), -4.7 if "Jet" in coll else -2.5,
                    4.7 if "Jet" in coll else 2.5)
    elif "phi" in member:
        x = rng.uniform(-np.pi, np.pi, n)
    elif member == "mass":
        x = np.full(n, 0.10566) if coll == "Muon" else rng.gamma(2.0, 4.0, n)
    elif member.startswith(("btag", "qgl", "mva", "deep", "raw", "pfreliso", "miniPFRelIso")):
        x = rng.beta(0.5, 3.0, n)
        x[rng.random(n) < 0.3] = -2.0 if member.startswith("btag") else 0.0
    elif member.startswith(("dxy", "dz", "ip3d", "sip3d", "x", "y", "z")):
        x = rng.normal(0, 0.05 if member.startswith(("dxy", "dz")) else 2.0, n)
    elif "weight" in member or "weight" in name.lower():
        x = rng.normal(1.0, 0.05, n)
    else:
        x = rng.lognormal(0.0, 1.0, n) * (0.1 + 10 * _unit(name))
        x[rng.random(n) < 0.5 * _unit(name, "zero")] = 0.0
    return round_mantissa(x.astype(np.float32), _mantissa_bits(name))


def _ints(rng: np.random.Generator, branch: Branch, n: int) -> np.ndarray:
    member = branch.name.split("_", 1)[-1].lower()
    if member == "charge":
        x = rng.choice([-1, 1], n)
    elif member == "pdgid":
        coll = branch.name.split("_", 1)[0]
        base = {"Muon": [13], "Electron": [11], "Tau": [15], "Photon": [22]}.get(
            coll, [1, 2, 3, 4, 5, 11, 13, 21, 22, 211, 111])
        x = rng.choice(base, n) * rng.choice([-1, 1], n)
    elif member.endswith("idx"):
        x = rng.integers(-1, 6, n)
    elif member.endswith("id") or member.startswith(("cut", "id", "flav", "hadron", "parton")):
        x = rng.choice([0, 2, 6], n, p=[0.1, 0.2, 0.7])
    else:
        x = rng.poisson(1 + 20 * _unit(branch.name), n)
    if branch.np_dtype.kind == "u":
        x = np.abs(x)
    info = np.iinfo(branch.np_dtype)
    return np.clip(x, info.min, info.max).astype(branch.np_dtype)


def _bools(rng: np.random.Generator, name: str, n: int, trigger_rate: float) -> np.ndarray:
    if name.startswith("Flag_"):
        rate = 0.999
    elif name.startswith(("HLT_", "L1_")):
        # Most paths never fire in a given sample; the rest fire with rates spread over decades.
        rate = 0.0 if _unit(name) < 0.6 else min(0.9, trigger_rate * 10 ** (-4 * _unit(name, "r")))
    else:
        rate = 0.1 + 0.8 * _unit(name)
    return rng.random(n) < rate


def _values(rng: np.random.Generator, branch: Branch, n: int, proc: Process) -> np.ndarray:
    if branch.dtype == "bool":
        return _bools(rng, branch.name, n, proc.trigger_rate)
    if branch.np_dtype.kind == "f":
        return _floats(rng, branch.name, n).astype(branch.np_dtype)
    return _ints(rng, branch, n)


def _event_scalars(first: int, n: int) -> dict[str, np.ndarray]:
    idx = np.arange(first, first + n, dtype=np.uint64)
    return {
        "run": np.ones(n, dtype=np.uint32),
        "luminosityBlock": (1 + idx // 300).astype(np.uint32),
        "event": (idx * 3 + 1_000_000).astype(np.uint64),
    }


def _counts(rng: np.random.Generator, collection: str, n: int, proc: Process) -> np.ndarray:
    if collection in FIXED_MULTIPLICITY:
        return np.full(n, FIXED_MULTIPLICITY[collection], dtype=np.uint32)
    return rng.poisson(proc.mean(collection), n).astype(np.uint32)


def generate_chunk(schema: Schema, proc: Process, seed: int, chunk: int, n: int) -> pa.RecordBatch:
    """One chunk of events; its content depends only on (schema, process, seed, chunk index, n)."""
    rng = np.random.default_rng([seed, _stable(proc.name), chunk])
    counts = {c: _counts(rng, c[1:], n, proc) for c in schema.counters()}
    scalars = _event_scalars(chunk * CHUNK, n)
    arrays = []
    for b in schema.branches:
        if b.name in counts:
            arrays.append(to_arrow(b, counts[b.name], None))
        elif b.name in scalars:
            arrays.append(to_arrow(b, scalars[b.name].astype(b.np_dtype), None))
        elif b.jagged:
            c = counts[b.counter]
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(c, out=offsets[1:])
            values = _values(rng, b, int(offsets[-1]), proc)
            if b.name.endswith("_pt") and values.size:
                event = np.repeat(np.arange(n), c)
                values = values[np.lexsort((-values, event))]
            arrays.append(to_arrow(b, values, offsets))
        else:
            arrays.append(to_arrow(b, _values(rng, b, n, proc), None))
    return pa.RecordBatch.from_arrays(arrays, schema=arrow_schema(schema))


def arrow_schema(schema: Schema) -> pa.Schema:
    fields = []
    for b in schema.branches:
        t = pa.from_numpy_dtype(b.np_dtype)
        fields.append(pa.field(b.name, pa.list_(t) if b.jagged else t, nullable=False))
    return pa.schema(fields)


def generate(schema: Schema, process: str, seed: int, n_events: int, out: str | Path) -> None:
    """Write ``n_events`` events to an uncompressed Arrow IPC file, atomically."""
    if process not in PROCESSES:
        raise ConfigError(f"samples.{process}", f"unknown process; known: {sorted(PROCESSES)}")
    if n_events <= 0:
        raise ConfigError("n_events", "must be positive")
    proc = PROCESSES[process]
    with atomic_path(out) as tmp, pa.OSFile(str(tmp), "wb") as sink, \
            pa.ipc.new_file(sink, arrow_schema(schema)) as writer:
        for chunk, first in enumerate(range(0, n_events, CHUNK)):
            batch = generate_chunk(schema, proc, seed, chunk, min(CHUNK, n_events - first))
            writer.write_batch(batch)
