"""Arrow IPC file format (Feather v2), written and read by pyarrow.

Arrow's in-memory layout on disk: no encoding step, each buffer optionally compressed with lz4
(LZ4 frame) or zstd (``IpcWriteOptions.compression``); a buffer that compressing would not shrink
is stored raw. One record batch per cluster: the batch is the IPC format's unit of reading, as the
row group is Parquet's. Jagged branches are Arrow list columns, counters their own columns,
exactly as in the source.

``describe`` reads the layout from the IPC messages' own metadata (flatbuffers) without touching
the data: each batch's row count, its codec (``BodyCompression``) and the stored extent of every
buffer, which gives exact compressed bytes per branch. The codec level is not part of the IPC
format; the writer records it in the schema metadata (``hepfmt.level``).
"""

from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from hepfmt.atomic import atomic_path
from hepfmt.codec import RAW_DECOMPRESSION, Variant, pyarrow_levels
from hepfmt.errors import InputError, VerificationError
from hepfmt.formats.base import (
    Blocks,
    Format,
    Layout,
    Marks,
    ReadCost,
    ReadParts,
    WriteParts,
    arrow_reader,
    check_layout,
    require_branches,
)
from hepfmt.samples.source import iter_clusters, read_source_meta, schema_of

ALGORITHMS = {"none": None, "lz4": "lz4", "zstd": "zstd"}
CODECS = {0: "lz4", 1: "zstd"}  # IPC CompressionType: LZ4_FRAME, ZSTD
LEVEL_KEY = b"hepfmt.level"


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    meta = read_source_meta(source)
    schema = schema_of(meta)
    codec = ALGORITHMS[variant.algorithm]
    compression = None if codec is None else pa.Codec(codec, variant.level)
    opts = pa.ipc.IpcWriteOptions(compression=compression)
    tag = {LEVEL_KEY: str(variant.level or "").encode()}
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
        _verify(tmp, out, meta["n_events"], cluster_size, len(schema.branches), codec)


def _open(path: str | Path, options: pa.ipc.IpcReadOptions | None = None):
    try:
        return pa.ipc.open_file(pa.memory_map(str(path), "r"), options=options)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"not a readable Arrow IPC file ({exc})") from exc


# --- the IPC messages' flatbuffer metadata ------------------------------------------------------

def _table(buf: bytes, pos: int) -> tuple[int, int]:
    """(table position, vtable position) of the flatbuffer table at ``pos``."""
    return pos, pos - struct.unpack_from("<i", buf, pos)[0]


def _field(buf: bytes, table: tuple[int, int], index: int) -> int | None:
    """Position of field ``index`` of a table, or None if absent (default value)."""
    pos, vtable = table
    vsize = struct.unpack_from("<H", buf, vtable)[0]
    if 4 + 2 * index >= vsize:
        return None
    off = struct.unpack_from("<H", buf, vtable + 4 + 2 * index)[0]
    return pos + off if off else None


def _deref(buf: bytes, pos: int) -> int:
    return pos + struct.unpack_from("<I", buf, pos)[0]


@dataclass(frozen=True)
class _Batch:
    rows: int
    codec: str  # "none", "lz4" or "zstd"
    spans: list[int]  # stored bytes of each buffer, with its padding, in schema order
    #: (offset in the body, length) of each buffer, in schema order
    buffers: list[tuple[int, int]] = ()  # type: ignore[assignment]


def _batch(meta: bytes, body_size: int) -> _Batch:
    """Message{header: RecordBatch{length, nodes, buffers: [Buffer{offset, length}],
    compression: BodyCompression{codec}}} as the Arrow format's Message.fbs defines it."""
    message = _table(meta, _deref(meta, 0))
    rb = _table(meta, _deref(meta, _field(meta, message, 2)))
    rows_at = _field(meta, rb, 0)
    rows = struct.unpack_from("<q", meta, rows_at)[0] if rows_at else 0
    at = _field(meta, rb, 2)
    buffers: list[tuple[int, int]] = []
    if at is not None:
        vec = _deref(meta, at)
        n = struct.unpack_from("<I", meta, vec)[0]
        buffers = [struct.unpack_from("<qq", meta, vec + 4 + 16 * i) for i in range(n)]
    offsets = [o for o, _ in buffers]
    codec = "none"
    at = _field(meta, rb, 3)
    if at is not None:
        comp = _table(meta, _deref(meta, at))
        codec_at = _field(meta, comp, 0)
        codec = CODECS[meta[codec_at] if codec_at else 0]
    ends = [*offsets[1:], body_size]
    return _Batch(rows, codec, [b - a for a, b in zip(offsets, ends, strict=True)], buffers)


def _batches(path: str | Path) -> list[_Batch]:
    """Every record batch message of the file, in order (the file embeds an IPC stream after
    its 8-byte magic)."""
    try:
        with pa.memory_map(str(path), "r") as source:
            source.seek(8)
            return [_batch(m.metadata.to_pybytes(), m.body.size)
                    for m in pa.ipc.MessageReader.open_stream(source)
                    if m.type == "record batch"]
    except (OSError, pa.ArrowException, struct.error, IndexError, KeyError) as exc:
        raise InputError(path, f"unreadable Arrow IPC messages ({exc})") from exc


def _footer_blocks(path: str | Path) -> list[tuple[int, int, int]]:
    """(offset, metadata length, body length) of every record batch, from the file's footer:
    Footer{version, schema, dictionaries, recordBatches: [Block]} behind the trailing
    ``<int32 footer length>ARROW1``; a Block is {offset: int64, metaDataLength: int32, pad,
    bodyLength: int64}."""
    total = Path(path).stat().st_size
    with open(path, "rb") as f:
        f.seek(max(0, total - 10))
        tail = f.read(10)
        if total < 18 or tail[-6:] != b"ARROW1":
            raise InputError(path, "no Arrow IPC file footer")
        size = struct.unpack_from("<i", tail, 0)[0]
        start = total - 10 - size
        if size <= 0 or start < 8:
            raise InputError(path, f"Arrow IPC footer length {size} does not fit the file")
        f.seek(start)
        footer = f.read(size)
    at = _field(footer, _table(footer, _deref(footer, 0)), 3)
    if at is None:
        return []
    vec = _deref(footer, at)
    n = struct.unpack_from("<I", footer, vec)[0]
    return [(o, m, b) for o, m, _, b in (struct.unpack_from("<qiiq", footer, vec + 4 + 24 * i)
                                         for i in range(n))]


def blocks(path: Path, branches: list[str]) -> Blocks:
    """The buffers of ``branches`` in every record batch. A compressed buffer starts with its
    uncompressed length (int64; -1: stored as it is) before the codec's frame."""
    schema = _open(path).schema
    require_branches(path, schema.names, branches)
    counts = _buffer_counts(schema)
    first = dict(zip(schema.names, itertools.accumulate([0, *counts]), strict=False))
    wanted = [i for b in branches for i in range(first[b], first[b] + counts[
        schema.get_field_index(b)])]
    offsets, zipped, unzipped, codecs = [], [], [], set()
    try:
        with open(path, "rb") as f:
            for offset, meta_len, body_len in _footer_blocks(path):
                f.seek(offset)
                head = f.read(meta_len)
                meta = head[8:] if head[:4] == b"\xff\xff\xff\xff" else head[4:]
                batch = _batch(meta, body_len)
                codecs.add(batch.codec)
                body = offset + meta_len
                for i in wanted:
                    at, length = batch.buffers[i]
                    if length == 0:
                        continue
                    if batch.codec == "none":
                        offsets.append(body + at)
                        zipped.append(length)
                        unzipped.append(length)
                        continue
                    f.seek(body + at)
                    raw = struct.unpack("<q", f.read(8))[0]
                    offsets.append(body + at + 8)
                    zipped.append(length - 8)
                    unzipped.append(length - 8 if raw == -1 else raw)
    except (OSError, struct.error, IndexError, KeyError) as exc:
        raise InputError(path, f"unreadable Arrow IPC buffers ({exc})") from exc
    codec = codecs.pop() if len(codecs) == 1 else "none" if not codecs else "mixed"
    library, reused = RAW_DECOMPRESSION.get(codec, (None, None)) if codec != "lz4" \
        else (None, None)
    why = None if library else (
        "LZ4 frames: no LZ4 frame decompressor is linked here" if codec == "lz4"
        else f"{codec} buffers")
    return Blocks(codec, library, reused, offsets, zipped, unzipped, why)


def _buffer_counts(schema: pa.Schema) -> list[int]:
    """IPC buffers per top-level field (validity, offsets, values, and its children's)."""
    return [len(pa.array([], type=f.type).buffers()) for f in schema]


def _verify(path: Path, name: Path, n_events: int, cluster_size: int, n_columns: int,
            codec: str | None) -> None:
    d = describe(path)
    check_layout(d, name, n_events, cluster_size, n_columns, "record batches")
    if d["compression"] != (codec or "none"):
        raise VerificationError(name, f"batches are {d['compression']}, not {codec or 'none'}")


def describe(path: Path) -> Layout:
    schema = _open(path).schema
    batches = _batches(path)
    counts = _buffer_counts(schema)
    by_branch = dict.fromkeys(schema.names, 0)
    for batch in batches:
        if len(batch.spans) != sum(counts):
            raise InputError(path, f"a record batch has {len(batch.spans)} buffers, the schema "
                                   f"needs {sum(counts)}")
        pos = 0
        for name, n in zip(schema.names, counts, strict=True):
            by_branch[name] += sum(batch.spans[pos:pos + n])
            pos += n
    file_bytes = Path(path).stat().st_size
    body = sum(by_branch.values())
    codecs = {b.codec for b in batches} or {"none"}
    level = (schema.metadata or {}).get(LEVEL_KEY, b"").decode()
    return Layout.of(**{
        "entries": sum(b.rows for b in batches),
        "clusters": [b.rows for b in batches],
        "branches": len(schema),
        "file_bytes": file_bytes,
        "zip_bytes": body,
        "zip_bytes_by_branch": by_branch,
        "footer_bytes": file_bytes - body,
        "footer_bytes_note": "all but the batch bodies: schema, footer, message headers",
        "record_batches": len(batches),
        "compression": codecs.pop() if len(codecs) == 1 else "mixed",
        "compression_level": int(level) if level else None,
    })


def _prepare(threads: int) -> None:
    pa.set_cpu_count(max(1, threads))


def _check(path: str, branches: list[str]) -> None:
    """Nothing to do before the read: :func:`_chunks` checks the selection against the schema
    its own open reads, so the proof opens the file no more often than the timed scan does."""


def _fields(path: str, schema: pa.Schema, branches: list[str]) -> list[int]:
    fields = [schema.get_field_index(b) for b in branches]
    if -1 in fields:  # absent, or named twice: no index to read it by
        require_branches(path, [n for n in schema.names if schema.get_field_index(n) != -1],
                         branches)
    return fields


def _chunks(path: str, branches: list[str], threads: int, marks: Marks):
    """Batch by batch; only the selected columns' buffers are read and decompressed. Read
    from the file, not memory-mapped: a mapped uncompressed batch would be handed over
    without a byte of it read, and a scan must bring every value into memory.

    pyarrow selects columns by index, fixed when the file is opened, so naming them takes two
    opens of the footer (one for the schema, one with the indices): exactly what
    ``pyarrow.feather.read_table(columns=names)`` does inside. Both opens share one file
    handle, as the library's call does; a third open to check the selection is not made."""
    try:
        with pa.OSFile(str(path), "rb") as source:
            fields = _fields(path, pa.ipc.open_file(source).schema, branches)
            reader = pa.ipc.open_file(source, options=pa.ipc.IpcReadOptions(
                included_fields=fields, use_threads=threads > 1))
            marks.opened()
            for i in range(reader.num_record_batches):
                yield reader.get_batch(i)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"pyarrow could not read it: {exc}") from exc


def _bare(path: str, branches: list[str], threads: int) -> object:
    """As a user reads it from pyarrow's documentation."""
    import pyarrow.feather as feather

    return feather.read_table(path, columns=branches, memory_map=False, use_threads=threads > 1)


FORMAT = Format(
    algorithms=frozenset(ALGORITHMS), dictionary=False,
    levels=pyarrow_levels(["lz4", "zstd"]),
    write=write, describe=describe, options=frozenset(), blocks=blocks,
    readers={"pyarrow": arrow_reader(
        "pyarrow", "pyarrow", _prepare, _chunks, _check, bare=_bare, marks_clusters=True,
        # analysis/hepfmt/plan/cost.py says how it was measured
        cost=ReadCost(0.3, ReadParts(0.0012, 0.0002, 2_690_000), ReadParts(0.0021, 0.0, 53_600)))},
    write_cost=WriteParts(0.42, 12_500, "zstd-3"),
    queries_cost_as="parquet",
    test_variants=("none", "lz4", "zstd-3"),
)
