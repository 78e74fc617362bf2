"""Arrow IPC file format (Feather v2), written and read by pyarrow.

Arrow's in-memory layout on disk: no encoding step, each buffer optionally compressed with lz4
or zstd (``IpcWriteOptions.compression``). One record batch per cluster: the batch is the IPC
format's unit of reading, as the row group is Parquet's. Jagged branches are Arrow list columns,
counters their own columns, exactly as in the source.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from analysis.atomic import atomic_path
from analysis.checksum import Checksum, checksum, merge
from analysis.codecs import Variant
from analysis.errors import InputError, VerificationError
from analysis.formats import Format, Reader
from analysis.source import iter_clusters, read_source_meta, schema_of, to_column

ALGORITHMS = {"none": None, "lz4": "lz4", "zstd": "zstd"}


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    meta = read_source_meta(source)
    schema = schema_of(meta)
    codec = ALGORITHMS[variant.algorithm]
    compression = None if codec is None else pa.Codec(codec, variant.level)
    opts = pa.ipc.IpcWriteOptions(compression=compression)
    # the codec in the file itself: describe() needs it, and IPC metadata does not name it
    tag = {"hepfmt.codec": variant.algorithm, "hepfmt.level": str(variant.level or "")}
    with atomic_path(out) as tmp:
        writer = None
        for table, _ in iter_clusters(source, schema.names, cluster_size):
            batch = table.combine_chunks().to_batches()[0]
            if writer is None:
                writer = pa.ipc.new_file(str(tmp), batch.schema.with_metadata(tag),
                                         options=opts)
            writer.write_batch(batch)
        if writer is not None:
            writer.close()
        _verify(tmp, out, meta["n_events"], cluster_size, len(schema.branches))


def _open(path: str | Path) -> pa.ipc.RecordBatchFileReader:
    try:
        return pa.ipc.open_file(pa.memory_map(str(path), "r"))
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"not a readable Arrow IPC file ({exc})") from exc


def _batch_rows(reader: pa.ipc.RecordBatchFileReader, path: str | Path) -> list[int]:
    try:
        return [reader.get_batch(i).num_rows for i in range(reader.num_record_batches)]
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"unreadable record batch ({exc})") from exc


def _verify(path: Path, name: Path, n_events: int, cluster_size: int, n_columns: int) -> None:
    reader = _open(path)
    sizes = _batch_rows(reader, path)
    if sum(sizes) != n_events:
        raise VerificationError(name, f"{sum(sizes)} rows written, {n_events} expected")
    if len(reader.schema) != n_columns:
        raise VerificationError(name, "column count differs from the source")
    if any(s != cluster_size for s in sizes[:-1]) or not 0 < sizes[-1] <= cluster_size:
        raise VerificationError(name, f"record batches {sizes[:5]}... are not {cluster_size} rows")


def _codec(reader: pa.ipc.RecordBatchFileReader) -> pa.Codec | None:
    meta = reader.schema.metadata or {}
    name = meta.get(b"hepfmt.codec", b"none").decode()
    level = meta.get(b"hepfmt.level", b"").decode()
    return None if name == "none" else pa.Codec(name, int(level) if level else None)


def _stored(buf: pa.Buffer | None, codec: pa.Codec | None) -> int:
    """Bytes a buffer takes in a batch body: IPC compresses each buffer on its own (after an
    8-byte length) and pads to 8 bytes, so compressing it again with the same codec gives its
    stored size."""
    if buf is None:
        return 0
    n = buf.size if codec is None else 8 + codec.compress(buf).size
    return -(-n // 8) * 8


def _body_sizes(path: Path) -> list[int]:
    """Stored body bytes of each record batch, from the IPC messages themselves."""
    with pa.memory_map(str(path), "r") as source:
        source.seek(8)  # past the file magic "ARROW1" and its padding
        return [m.body.size for m in pa.ipc.MessageReader.open_stream(source)
                if m.type == "record batch"]


def describe(path: Path) -> dict:
    """Per-column stored bytes are not in the IPC metadata; they are recomputed by compressing
    each buffer again with the file's codec (recorded in the schema metadata), which is what
    the writer stored. The total is the sum of the messages' bodies."""
    reader = _open(path)
    sizes = _batch_rows(reader, path)
    codec = _codec(reader)
    by_branch = dict.fromkeys(reader.schema.names, 0)
    for i in range(reader.num_record_batches):
        batch = reader.get_batch(i)
        for name, col in zip(reader.schema.names, batch.columns, strict=True):
            by_branch[name] += sum(_stored(b, codec) for b in col.buffers())
    file_bytes = Path(path).stat().st_size
    body = sum(_body_sizes(path))
    return {
        "entries": sum(sizes),
        "clusters": sizes,
        "branches": len(reader.schema),
        "file_bytes": file_bytes,
        "zip_bytes": body,
        "zip_bytes_by_branch": by_branch,
        "footer_bytes": file_bytes - body,
        "footer_bytes_note": "all but the batch bodies: schema, footer, message headers",
        "compression": "none" if codec is None else codec.name,
    }


def _prepare(threads: int) -> None:
    pa.set_cpu_count(max(1, threads))


def _read(path: str, branches: list[str]) -> dict[str, Checksum]:
    schema = _open(path).schema
    missing = [b for b in branches if b not in set(schema.names)]
    if missing:
        raise InputError(path, f"missing branches {missing[:5]}")
    # only the selected columns' buffers are decompressed
    fields = [schema.get_field_index(b) for b in branches]
    try:
        reader = pa.ipc.open_file(pa.memory_map(str(path), "r"),
                                  options=pa.ipc.IpcReadOptions(included_fields=fields))
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"not a readable Arrow IPC file ({exc})") from exc
    out: dict[str, Checksum] = dict.fromkeys(branches, (0, 0))
    try:
        for i in range(reader.num_record_batches):
            batch = reader.get_batch(i)
            for b in branches:
                out[b] = merge(out[b], checksum(to_column(batch.column(b)).values))
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"pyarrow could not read it: {exc}") from exc
    return out


FORMAT = Format(
    name="feather", extension="arrow", algorithms=frozenset(ALGORITHMS), dictionary=False,
    write=write, describe=describe, options=frozenset(),
    readers={"pyarrow": Reader("pyarrow", "pyarrow", _prepare, _read)},
)
