"""Apache ORC, written and read by pyarrow (the Apache ORC C++ library inside Arrow C++).

A stripe is ORC's unit of reading, as the row group is Parquet's; it holds each column as streams
in ORC's encodings (RLE v2 integers and list lengths, bit-packed booleans, plain floats),
compressed in blocks of ``compression_block_size`` bytes: 64 KiB, the smallest ORC C++ takes
(a multiple of its 64 KiB memory block; 32000 or 32768, the other formats' page size, is
refused), so ORC's blocks are twice the others' pages. Jagged branches are ORC lists.

Clusters: ORC cuts stripes by bytes (``stripe_size``), with no call to end one after N rows. But
ORC C++ compares a stripe's bytes with ``stripe_size`` only after each batch it is given, and
pyarrow hands over a ``write`` call's table in batches of ``batch_size`` rows: one ``write`` per
cluster, ``batch_size = cluster_size`` and a stripe size of 1 byte end a stripe at the first
cluster boundary where it has any bytes. Compressed, it has none until one of its streams has
filled a compression block: a stripe is one cluster once a cluster fills a block of some stream
(DYJetsToLL, 64 KiB blocks: from 500 events; uncompressed always), else the fewest whole
clusters that do (600 events for clusters of 200). The write checks that stripes are whole
clusters; ``describe`` reports them. The price is write time: pyarrow grows a batch's list
columns a row at a time, each growth an allocation and a copy, so a batch costs time quadratic
in its rows (DYJetsToLL, 1499 branches: 1.6 s per 4000-event cluster, 38 s per 20000; the same
events take 0.6 s and 2.8 s in pyarrow's batches of 1024). The option ``stripe_size`` (bytes)
gives the cut back to ORC, in pyarrow's own batches.

Codecs: none, snappy, zlib, lz4, zstd, at no level (pyarrow's writer takes none). ORC C++ sets
one per ``compression_strategy``: ``compression`` (the default here) zlib 6, zstd 3 and LZ4
acceleration 1, the codecs' own defaults; ``speed`` (pyarrow's default) zlib 2, zstd 1 and LZ4
at its maximum acceleration, which stores every block raw (refused: an ``lz4`` file larger than
``none``). ``speed`` also packs RLE v2 at aligned bit widths: 1% more bytes even with ``none``.
ORC's dictionary encoding is for strings, which this data lacks.

Types: ORC has no unsigned integers (pyarrow refuses them). An unsigned branch is stored as the
signed integer of its width, the same bits (a zero-copy view), its type kept in the field's
metadata (an ORC type attribute); the reader views it back, handing over the source's types.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import lz4.block
import pyarrow as pa

from hepfmt.atomic import atomic_path
from hepfmt.codec import RAW_DECOMPRESSION, Variant
from hepfmt.errors import ConfigError, InputError, VerificationError
from hepfmt.formats import protobuf
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

#: variant algorithm -> pyarrow's ORC compression name (ORCFile.compression is its upper case)
ALGORITHMS = {"none": "uncompressed", "snappy": "snappy", "zlib": "zlib", "lz4": "lz4",
              "zstd": "zstd"}
OPTIONS = {"compression_block_size": 65536, "stripe_size": None,
           "compression_strategy": "compression"}
STRATEGIES = ("compression", "speed")
#: a stripe size any bytes reach: a stripe ends after the first cluster that gives it some
EVERY_WRITE = 1
#: an unsigned branch's Arrow type, in the field metadata of its signed stand-in
UNSIGNED_KEY = b"hepfmt.unsigned"
SIGNED = {pa.uint8(): pa.int8(), pa.uint16(): pa.int16(), pa.uint32(): pa.int32(),
          pa.uint64(): pa.int64()}
UNSIGNED = {str(t): t for t in SIGNED}


def _with_leaf(t: pa.DataType, leaf: pa.DataType) -> pa.DataType:
    return pa.list_(t.value_field.with_type(leaf)) if pa.types.is_list(t) else leaf


def _leaf(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_list(t) else t


def _stored_schema(schema: pa.Schema) -> pa.Schema:
    """The source's schema with every unsigned leaf as the signed type of its width, tagged."""
    return pa.schema([
        f.with_type(_with_leaf(f.type, SIGNED[_leaf(f.type)])).with_metadata(
            {UNSIGNED_KEY: str(_leaf(f.type)).encode()}) if _leaf(f.type) in SIGNED else f
        for f in schema])


def _restored(path: str | Path, schema: pa.Schema) -> dict[str, pa.DataType]:
    """Branch -> the unsigned type its signed stand-in holds, from the file's field metadata."""
    out = {}
    for f in schema:
        tag = (f.metadata or {}).get(UNSIGNED_KEY)
        if tag is not None:
            unsigned = UNSIGNED.get(tag.decode(errors="replace"))
            if unsigned is None or SIGNED[unsigned] != _leaf(f.type):
                raise InputError(path, f"branch {f.name}: {_leaf(f.type)} cannot hold {tag!r}")
            out[f.name] = _with_leaf(f.type, unsigned)
    return out


def _view(column: pa.ChunkedArray, t: pa.DataType) -> pa.ChunkedArray:
    return pa.chunked_array([c.view(t) for c in column.chunks], type=t)


def _writer_options(options: dict, variant: Variant, cluster_size: int) -> dict:
    """pyarrow ``ORCWriter`` keywords from the variant and the options, checked (their names
    were, before any job)."""
    opts = {**OPTIONS, **options}
    key, strategy = "options.compression_strategy", opts["compression_strategy"]
    if strategy not in STRATEGIES:
        raise ConfigError(key, f"{strategy!r} is not one of {list(STRATEGIES)}")
    if strategy == "speed" and variant.algorithm == "lz4":
        raise ConfigError(key, "'speed' makes ORC's lz4 store every block uncompressed")
    for key in ("compression_block_size", "stripe_size"):
        n = opts[key]
        if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n <= 0):
            raise ConfigError(f"options.{key}", f"{n!r} is not a positive number of bytes")
    kw = {"compression": ALGORITHMS[variant.algorithm], "compression_strategy": strategy,
          "compression_block_size": opts["compression_block_size"]}
    if opts["stripe_size"] is not None:  # ORC's own stripes, in pyarrow's own batches
        return {**kw, "stripe_size": opts["stripe_size"]}
    return {**kw, "batch_size": cluster_size, "stripe_size": EVERY_WRITE}


def _types(path: str | Path, schema: pa.Schema) -> dict[str, pa.DataType]:
    """Branch -> the type it holds (an unsigned one's, for its signed stand-in)."""
    return {f.name: f.type for f in schema} | _restored(path, schema)


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    import pyarrow.orc as orc

    kw = _writer_options(options, variant, cluster_size)
    meta = read_source_meta(source)
    schema = schema_of(meta)
    stored: pa.Schema | None = None
    with atomic_path(out) as tmp:
        # Made in memory, written by Python: ORC C++ ends the process (std::terminate on an
        # orc::ParseError) when writing to a full disk fails, where Python's write raises ENOSPC.
        sink = pa.BufferOutputStream()
        try:
            with orc.ORCWriter(sink, **kw) as w:
                for table, _ in iter_clusters(source, schema.names, cluster_size):
                    if stored is None:
                        stored = _stored_schema(table.schema)
                    w.write(pa.Table.from_arrays(
                        [c if c.type == f.type else _view(c, f.type)
                         for c, f in zip(table.columns, stored, strict=True)], schema=stored))
        except pa.ArrowException as exc:
            raise VerificationError(out, f"pyarrow could not write it as ORC ({exc})") from exc
        with open(tmp, "wb") as f:
            f.write(memoryview(sink.getvalue()))
        d = describe(tmp)
        check_layout(d, out, meta["n_events"], None, len(schema.branches), "stripes")
        if "batch_size" in kw and any(n % cluster_size for n in d.clusters[:-1]):
            raise VerificationError(out, f"stripes {d.clusters[:5]}... are not whole clusters "
                                         f"of {cluster_size}")
        if d["compression"] != variant.algorithm:
            raise VerificationError(out, f"stripes are {d['compression']}, not "
                                         f"{variant.algorithm}")
        want, got = _types(out, stored or pa.schema([])), _types(out, _open(tmp).schema)
        lost = [f"{n}: {t} read back as {got.get(n)}" for n, t in want.items() if got.get(n) != t]
        if lost:
            raise VerificationError(out, f"ORC does not keep the type of {len(lost)} branches "
                                         f"({'; '.join(lost[:3])})")


def _open(path: str | Path, source: pa.NativeFile | None = None):
    import pyarrow.orc as orc

    if not Path(path).is_file():
        raise InputError(path, "no such file")
    try:
        f = orc.ORCFile(source if source is not None else str(path))
        names = f.schema.names  # a garbled footer can fail here: names that are not UTF-8
    except (OSError, pa.ArrowException, ValueError) as exc:
        raise InputError(path, f"not a readable ORC file ({exc})") from exc
    if not names:
        raise InputError(path, "an ORC file without columns")
    return f


def _footer(f) -> dict[int, list]:
    """The file's Footer message (orc_proto.proto FileTail.footer), which pyarrow hands over
    decompressed and serialized; a malformed one raises ValueError or IndexError."""
    return protobuf.message(protobuf.message(f.reader.serialized_file_tail())[2][0])


def _stripes(path: str | Path, f) -> list[dict[str, int]]:
    """Every stripe's rows and byte extents, from the file's footer (orc_proto.proto:
    FileTail{footer: Footer{stripes: [StripeInformation{offset, indexLength, dataLength,
    footerLength, numberOfRows}]}}), which pyarrow hands over decompressed and serialized."""
    fields = {"index": 2, "data": 3, "footer": 4, "rows": 5}
    try:
        footer = _footer(f)
        stripes = [{k: m.get(i, [0])[0] for k, i in fields.items()}
                   for m in map(protobuf.message, footer.get(3, []))]
    except (OSError, pa.ArrowException, ValueError, IndexError, KeyError) as exc:
        raise InputError(path, f"unreadable ORC footer ({exc})") from exc
    if sum(s["rows"] for s in stripes) != f.nrows or len(stripes) != f.nstripes:
        raise InputError(path, f"the footer's {len(stripes)} stripes do not hold its "
                               f"{f.nrows} rows")
    return stripes


def describe(path: Path) -> Layout:
    """Stripes, their rows and extents, from the file's footer. No bytes per branch: ORC lists
    a column's streams only in each stripe's footer, compressed in ORC's block framing, which
    pyarrow neither lists nor can decompress (``Codec.decompress`` needs the output size, which
    an LZ4 block does not record)."""
    f = _open(path)
    stripes = _stripes(path, f)
    file_bytes = Path(path).stat().st_size
    return Layout.of(**{
        "entries": f.nrows,
        "clusters": [s["rows"] for s in stripes],
        "clusters_note": "rows of each ORC stripe",
        "branches": len(f.schema),
        "file_bytes": file_bytes,
        "zip_bytes": sum(s["data"] for s in stripes),
        "zip_bytes_by_branch": {},
        "index_bytes": sum(s["index"] for s in stripes),
        "stripe_footer_bytes": sum(s["footer"] for s in stripes),
        "footer_bytes": file_bytes - f.content_length,
        "footer_bytes_note": "the file tail: stripe statistics, footer and postscript; row "
                             "indexes are in index_bytes, stripe footers in stripe_footer_bytes",
        "stripes": len(stripes),
        "compression": {"uncompressed": "none"}.get(f.compression.lower(),
                                                    f.compression.lower()),
        "compression_block_size": f.compression_size,
        "row_index_stride": f.row_index_stride,
        "unsigned_stored_signed": len(_restored(path, f.schema)),
        "format_version": f.file_version,
        "created_by": f.software_version,
    })


#: ORC codec -> how the codec bound decompresses its blocks (a key of RAW_DECOMPRESSION):
#: ORC's zlib is raw deflate; an LZ4 block is LZ4's block format. Snappy has none here (no
#: snappy library in the bound's C++)
BOUND_CODECS = {"none": "none", "zstd": "zstd", "zlib": "deflate", "lz4": "lz4"}
#: A block's 3-byte header holds its length in 23 bits: no ORC writer makes larger blocks, and
#: a footer that states more is damaged (nothing is allocated for it)
MAX_BLOCK_SIZE = 2**23
#: Stream kinds (orc_proto.proto Stream.Kind) a reader decodes: PRESENT, DATA, LENGTH,
#: DICTIONARY_DATA, DICTIONARY_COUNT, SECONDARY; the row index and bloom filters it may skip
DATA_STREAMS = frozenset({0, 1, 2, 3, 4, 5})
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _zstd_content_size(frame: bytes) -> int:
    """The decompressed size a zstd frame header states (RFC 8878 3.1.1.1)."""
    if frame[:4] != ZSTD_MAGIC:
        raise ValueError("a compressed block that is not a zstd frame")
    fhd = frame[4]
    single, fcs_flag, dict_flag = fhd >> 5 & 1, fhd >> 6, fhd & 3
    at = 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag]
    width = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if not width:
        raise ValueError("a zstd frame that does not state its size")
    size = int.from_bytes(frame[at:at + width], "little")
    return size + 256 if width == 2 else size


def _columns(footer: dict, names: list[str], wanted: list[str]) -> set[int]:
    """The ORC column ids of ``wanted`` and of everything nested in them (a list's values), from
    the footer's type tree (Footer.types: column i is types[i]; the root struct's subtypes are
    the top-level fields)."""
    types = [protobuf.message(t) for t in footer.get(4, [])]

    def subtypes(i: int) -> list[int]:
        out = []
        for packed in types[i].get(2, []):  # packed varints, or one varint per value
            if isinstance(packed, int):
                out.append(packed)
                continue
            pos = 0
            while pos < len(packed):
                v, pos = protobuf.varint(packed, pos)
                out.append(v)
        return out

    top = dict(zip(names, subtypes(0), strict=True))
    ids, todo = set(), [top[b] for b in wanted]
    while todo:
        i = todo.pop()
        ids.add(i)
        todo.extend(subtypes(i))
    return ids


def _inflate(body: bytes, codec: str, limit: int) -> bytes:
    """One compressed block, decompressed into at most ``limit`` bytes (the file's block size:
    a block that would be larger is damaged, and no more is ever allocated)."""
    if codec == "zstd":
        return pa.Codec("zstd").decompress(body, decompressed_size=_zstd_content_size(body)
                                           ).to_pybytes()
    if codec == "zlib":
        d = zlib.decompressobj(-15)  # raw deflate
        try:
            out = d.decompress(body, limit)
        except zlib.error as exc:
            raise ValueError(f"a zlib block that does not decompress ({exc})") from exc
        if d.unconsumed_tail or not d.eof:
            raise ValueError("a zlib block larger than the file's block size, or cut short")
        return out
    if codec == "lz4":
        try:
            return lz4.block.decompress(body, uncompressed_size=limit)
        except lz4.block.LZ4BlockError as exc:
            raise ValueError(f"an LZ4 block that does not decompress ({exc})") from exc
    raise ValueError(f"ORC's {codec} blocks are not decompressed here")


def _compression_blocks(data: bytes, start: int, codec: str,
                        limit: int) -> list[tuple[int, int, int]]:
    """(offset, zipped, unzipped) of every compression block of one stream (``data``, at file
    offset ``start``): a 3-byte header (length << 1 | stored-as-is) before each block, which
    holds at most ``limit`` bytes (the file's compression block size). A zstd frame states its
    size; a zlib or LZ4 block is decompressed once to learn it."""
    if codec == "none":
        return [(start, len(data), len(data))] if data else []
    out, pos = [], 0
    while pos < len(data):
        if pos + 3 > len(data):
            raise ValueError("a compression block header past the end of its stream")
        head = int.from_bytes(data[pos:pos + 3], "little")
        n, original = head >> 1, head & 1
        body = data[pos + 3:pos + 3 + n]
        if len(body) != n:
            raise ValueError("a compression block past the end of its stream")
        unzipped = (n if original else _zstd_content_size(body) if codec == "zstd"
                    else len(_inflate(body, codec, limit)))
        if unzipped > limit:
            raise ValueError(f"a block states {unzipped} bytes, above the file's block size")
        out.append((start + pos + 3, n, unzipped))
        pos += 3 + n
    return out


def _decompressed(stream: bytes, codec: str, limit: int) -> bytes:
    """A whole stream in ORC's block framing, decompressed (a stripe footer)."""
    if codec == "none":
        return stream
    parts = []
    pos = 0
    while pos < len(stream):
        head = int.from_bytes(stream[pos:pos + 3], "little")
        body = stream[pos + 3:pos + 3 + (head >> 1)]
        if pos + 3 > len(stream) or len(body) != head >> 1:
            raise ValueError("a compression block past the end of its stream")
        parts.append(body if head & 1 else _inflate(body, codec, limit))
        pos += 3 + (head >> 1)
    return b"".join(parts)


def blocks(path: Path, branches: list[str]) -> Blocks:
    """Every compression block of the data streams of ``branches`` (and their nested columns)
    in every stripe, from the stripe footers (StripeFooter.streams: kind, column, length, in
    file order after the stripe's offset). pyarrow lists none of this, so the footers are read
    here; a stripe footer is itself in ORC's block framing (decompressed here)."""
    f = _open(path)
    require_branches(path, f.schema.names, branches)
    codec = {"uncompressed": "none"}.get(f.compression.lower(), f.compression.lower())
    if codec not in BOUND_CODECS:
        return Blocks(codec, None, None, [], [], [],
                      f"ORC's {codec} blocks are not decompressed by the bound's C++ (no "
                      f"{codec} library there)")
    library, reused = RAW_DECOMPRESSION[BOUND_CODECS[codec]]
    if not 0 < f.compression_size <= MAX_BLOCK_SIZE:
        raise InputError(path, f"its footer states a compression block size of "
                               f"{f.compression_size} bytes (ORC's are 1 to {MAX_BLOCK_SIZE})")
    offsets, zipped, unzipped = [], [], []
    try:
        footer = _footer(f)
        ids = _columns(footer, f.schema.names, branches)
        with open(path, "rb") as raw:
            for s in map(protobuf.message, footer.get(3, [])):
                offset, index, data, length = (s.get(i, [0])[0] for i in (1, 2, 3, 4))
                raw.seek(offset + index + data)
                tail = raw.read(length)
                stripe_footer = protobuf.message(_decompressed(tail, codec, f.compression_size))
                at = offset
                for stream in map(protobuf.message, stripe_footer.get(1, [])):
                    kind, column, n = (stream.get(i, [0])[0] for i in (1, 2, 3))
                    if kind in DATA_STREAMS and column in ids:
                        raw.seek(at)
                        for o, z, u in _compression_blocks(raw.read(n), at, codec,
                                                           f.compression_size):
                            offsets.append(o)
                            zipped.append(z)
                            unzipped.append(u)
                    at += n
    except (OSError, pa.ArrowException, ValueError, IndexError, KeyError) as exc:
        raise InputError(path, f"cannot list its ORC streams ({exc})") from exc
    return Blocks(codec, library, reused, offsets, zipped, unzipped)



def _prepare(threads: int) -> None:
    """Nothing to set: pyarrow's ORC reader decodes a stripe in the calling thread and takes no
    thread count, so ``threads`` cannot change it."""
    import pyarrow.orc  # noqa: F401


def _check(path: str, branches: list[str]) -> None:
    require_branches(path, _open(path).schema.names, branches)


def _chunks(path: str, branches: list[str], threads: int, marks: Marks):
    """Stripe by stripe; only the selected columns' streams are read and decoded. Read from
    the file, not memory-mapped (pyarrow's default for a path), as the other pyarrow readers."""
    if not Path(path).is_file():  # pa.OSFile would say it less clearly
        raise InputError(path, "no such file")
    try:
        with pa.OSFile(str(path), "rb") as source:
            f = _open(path, source)
            require_branches(path, f.schema.names, branches)
            restore = {b: t for b, t in _restored(path, f.schema).items() if b in branches}
            marks.opened()
            for i in range(f.nstripes):
                batch = f.read_stripe(i, columns=branches)
                if restore:
                    names = batch.schema.names
                    batch = pa.RecordBatch.from_arrays(
                        [c.view(restore[n]) if n in restore else c
                         for n, c in zip(names, batch.columns, strict=True)], names=names)
                yield batch
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"pyarrow could not read it: {exc}") from exc


def _bare(path: str, branches: list[str], threads: int) -> object:
    """As a user reads it from pyarrow's documentation."""
    import pyarrow.orc as orc

    return orc.read_table(path, columns=branches)


FORMAT = Format(
    algorithms=frozenset(ALGORITHMS), dictionary=False, levels={},
    write=write, describe=describe, options=frozenset(OPTIONS), blocks=blocks,
    # costs: analysis/hepfmt/plan/cost.py says how they were measured (2026-11-26, AMD EPYC
    # 2-core VM)
    readers={"pyarrow": arrow_reader(
        "pyarrow", "pyarrow", _prepare, _chunks, _check, bare=_bare,
        cost=ReadCost(1.0, ReadParts(0.0025, 0.0, 550_000), ReadParts(0.0030, 0.0, 22_000)))},
    write_cost=WriteParts(1.59, 4_110, "zstd"),
    test_variants=("none", "zstd", "lz4"), exact_clusters=False,
)
