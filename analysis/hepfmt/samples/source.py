"""The source sample: one uncompressed Arrow IPC file per sample plus a JSON sidecar.

Every format is written from these identical arrays, and the sidecar holds what every later step
compares against: the naive size (the 2018 normalisation) and the reference checksum of every
branch. Counters (``nMuon``) are stored as their own columns, as in NanoAOD, and jagged branches as
Arrow lists whose lengths equal the counter.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from hepfmt import records
from hepfmt.atomic import write_json
from hepfmt.checksum import EMPTY, Checksum, checksum, merge
from hepfmt.errors import InputError
from hepfmt.samples.schema import Branch, Schema


@dataclass(frozen=True)
class Column:
    """One branch of one chunk as numpy: flat values and, for jagged branches, int64 offsets."""

    values: np.ndarray
    offsets: np.ndarray | None = None


def to_column(arr: pa.Array | pa.ChunkedArray) -> Column:
    """Flat numpy view of an Arrow (list) array; bools become 1-byte numpy bools."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
        offsets = np.asarray(arr.offsets, dtype=np.int64)
        flat = arr.values.slice(offsets[0], offsets[-1] - offsets[0])
        return Column(flat.to_numpy(zero_copy_only=False), offsets - offsets[0])
    return Column(arr.to_numpy(zero_copy_only=False))


def to_arrow(branch: Branch, values: np.ndarray, offsets: np.ndarray | None) -> pa.Array:
    flat = pa.array(values, type=pa.from_numpy_dtype(branch.np_dtype))
    if offsets is None:
        return flat
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), flat)


def naive_bytes(branch: Branch, n_values: int) -> float:
    """Bytes of a branch in plain numpy: n-byte numbers are n bytes, a boolean is 1 bit."""
    return n_values / 8 if branch.dtype == "bool" else n_values * branch.np_dtype.itemsize


def sidecar_path(source: str | Path) -> Path:
    return Path(source).with_suffix(".json")


def open_source(path: str | Path) -> pa.ipc.RecordBatchFileReader:
    try:
        return pa.ipc.open_file(pa.memory_map(str(path), "r"))
    except (OSError, pa.ArrowInvalid) as exc:
        raise InputError(path, f"not a readable Arrow IPC source ({exc})") from exc


def iter_batches(path: str | Path, columns: list[str] | None = None) -> Iterator[pa.RecordBatch]:
    reader = open_source(path)
    for i in range(reader.num_record_batches):
        batch = reader.get_batch(i)
        yield batch if columns is None else batch.select(columns)


def iter_clusters(source: str | Path, names: list[str],
                  cluster_size: int) -> Iterator[tuple[pa.Table, int]]:
    """The source in blocks of exactly ``cluster_size`` rows (the last may be shorter),
    whatever the source's own batch size: each block becomes one cluster / row group / batch
    of a writer that makes one per call."""
    pending: list[pa.RecordBatch] = []
    rows = 0
    for batch in iter_batches(source, names):
        while batch.num_rows:
            take = min(cluster_size - rows, batch.num_rows)
            pending.append(batch.slice(0, take))
            rows += take
            batch = batch.slice(take)
            if rows == cluster_size:
                yield pa.Table.from_batches(pending), rows
                pending, rows = [], 0
    if rows:
        yield pa.Table.from_batches(pending), rows


def read_source_meta(path: str | Path) -> dict:
    """The sidecar of the source ``path``, read bounded and checked
    (:func:`hepfmt.records.sidecar`)."""
    return records.sidecar(sidecar_path(path))


def schema_of(meta: dict) -> Schema:
    return Schema(tuple(Branch(**b) for b in meta["schema"]), meta.get("schema_origin", ""))


def describe_source(path: str | Path, schema: Schema) -> dict:
    """Naive bytes and reference checksums of a written source, computed from the file itself."""
    sums: dict[str, Checksum] = dict.fromkeys(schema.names, EMPTY)
    n_values = dict.fromkeys(schema.names, 0)
    n_events = 0
    for batch in iter_batches(path):
        n_events += batch.num_rows
        for b in schema.branches:
            col = to_column(batch.column(b.name))
            sums[b.name] = merge(sums[b.name], checksum(col.values))
            n_values[b.name] += col.values.size
    naive = {b.name: naive_bytes(b, n_values[b.name]) for b in schema.branches}
    groups: dict[str, float] = {}
    for b in schema.branches:
        groups[b.group] = groups.get(b.group, 0.0) + naive[b.name]
    return {
        "n_events": n_events,
        "naive_bytes": sum(naive.values()),
        "naive_bytes_by_group": groups,
        "naive_bytes_by_branch": naive,
        "checksums": {k: list(v) for k, v in sums.items()},
    }


def write_sidecar(path: str | Path, schema: Schema, sample: str, **identity: object) -> dict:
    """Describe a freshly written source and write its sidecar; ``identity`` says where it came
    from (process and seed, or the real file it was imported from)."""
    meta = describe_source(path, schema)
    meta.update(sample=sample, schema_origin=schema.origin,
                schema=[asdict(b) for b in schema.branches], **identity)
    write_json(sidecar_path(path), meta)
    return meta
