"""Lance (pylance): a columnar format built for fast scans and random access, written as one
file with ``lance.file.LanceFileWriter`` (no dataset directory: one output file per job).

Codecs: Lance picks a structural encoding per column and page by itself (bit-packing, RLE,
dictionary, FSST, byte-stream split, ...); the general-purpose compression applied on top of it
is set per field through Arrow field metadata, ``lance-encoding:compression`` (``none``, ``lz4``,
``zstd``) and ``lance-encoding:compression-level``. The variant ``default`` sets no metadata and
leaves the choice to Lance; ``none``, ``lz4`` and ``zstd[-<level>]`` tag every leaf field (for a
jagged branch the list's item field: that is where Lance looks). The tags are stored in the
file's schema, so the file says which codec was asked for, and each page's encoding says where
Lance applied it (``general_compression_pages``). Lance may still skip compressing a page where it
does not pay; zstd-3 makes the 600-event test sample smaller than ``none`` and ``default``.

Clusters: Lance has no row groups, but each column is cut into pages, and the writer flushes a
column's buffered rows into a page once they exceed its share of ``data_cache_bytes``. The writer
gives every column a one-byte share, so each ``write_batch`` call (one per cluster) ends a page
of every column: pages are aligned to clusters, as Parquet's column chunks are to row groups.
``describe`` reads every page's row count back from the file's column metadata and reports as
clusters the row ranges no page of any column crosses. ``max_page_bytes`` may split a page
further (never across clusters). Format versions: 2.1 and 2.2 (the default); 2.0 stores list
offsets in separate columns counted in items, not events, so it is not offered.

Jagged branches are Arrow list columns, counters their own columns, as in the source.
"""

from __future__ import annotations

import itertools
import re
import struct
from pathlib import Path

import pyarrow as pa

from hepfmt.atomic import atomic_path
from hepfmt.codec import Variant
from hepfmt.errors import ConfigError, InputError, VerificationError
from hepfmt.formats import protobuf
from hepfmt.formats.base import (
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

ALGORITHMS = ("default", "none", "lz4", "zstd")
VERSIONS = ("2.1", "2.2")
COMPRESSION = "lance-encoding:compression"
LEVEL = "lance-encoding:compression-level"
READ_BATCH = 4096
FOOTER = struct.Struct("<QQQIIHH4s")  # the fixed 40-byte tail of a Lance 2.x file


def field_metadata(variant: Variant) -> dict[str, str]:
    """The field metadata that asks Lance for the variant's general-purpose compression (its
    level was checked with the variant: ``FORMAT.levels``)."""
    if variant.algorithm == "default":
        return {}
    md = {COMPRESSION: variant.algorithm}
    if variant.level is not None:
        md[LEVEL] = str(variant.level)
    return md


def _tagged(field: pa.Field, md: dict[str, str]) -> pa.Field:
    if pa.types.is_list(field.type):
        return field.with_type(pa.list_(field.type.value_field.with_metadata(md)))
    return field.with_metadata(md)


def _writer_options(options: dict, n_columns: int) -> dict:
    """Config options (unknown keys are refused before any job) plus the page-per-cluster
    buffer setting."""
    version = str(options.get("version", VERSIONS[-1]))
    if version not in VERSIONS:
        raise ConfigError("options.version", f"{version!r} is not one of {list(VERSIONS)}")
    # one byte of buffer per column: every write_batch call ends a page of every column
    return {**options, "version": version, "data_cache_bytes": n_columns}


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    from lance.file import LanceFileWriter

    meta = read_source_meta(source)
    schema = schema_of(meta)
    md = field_metadata(variant)
    opts = _writer_options(options, len(schema.branches))
    with atomic_path(out) as tmp:
        writer = None
        try:
            for table, _ in iter_clusters(source, schema.names, cluster_size):
                if writer is None:
                    tagged = pa.schema([_tagged(f, md) for f in table.schema]) if md \
                        else table.schema
                    writer = LanceFileWriter(str(tmp), tagged, **opts)
                writer.write_batch(table.cast(tagged) if md else table)
            if writer is not None:
                writer.close()
        except (OSError, ValueError, TypeError) as exc:
            raise VerificationError(out, f"lance could not write it ({exc})") from exc
        _verify(tmp, out, meta["n_events"], cluster_size, len(schema.branches))


def _verify(path: Path, name: Path, n_events: int, cluster_size: int, n_branches: int) -> None:
    check_layout(describe(path), name, n_events, cluster_size, n_branches,
                 "page-aligned clusters")


def _reader(path: str | Path, columns: list[str] | None = None):
    from lance.file import LanceFileReader

    if not Path(path).is_file():
        raise InputError(path, "no such file")
    try:
        return LanceFileReader(str(path), columns=columns)
    except (OSError, ValueError) as exc:
        raise InputError(path, f"not a readable Lance file ({exc})") from exc


def _page_rows(path: str | Path) -> list[list[int]]:
    """Rows of every page of every column: ``ColumnMetadata.pages`` (field 2), each page's
    ``length`` (field 3), located through the footer's column-metadata offset table."""
    try:
        with open(path, "rb") as f:
            f.seek(-FOOTER.size, 2)
            meta_start, offsets_start, _, _, n_columns, _, _, magic = FOOTER.unpack(
                f.read(FOOTER.size))
            if magic != b"LANC":
                raise ValueError("no Lance footer")
            f.seek(meta_start)
            tail = f.read()
        table = offsets_start - meta_start
        pages = []
        for i in range(n_columns):
            pos, size = struct.unpack_from("<QQ", tail, table + 16 * i)
            column = tail[pos - meta_start:pos - meta_start + size]
            pages.append([dict(protobuf.fields(page)).get(3, 0)
                          for field, page in protobuf.fields(column) if field == 2])
        return pages
    except (OSError, ValueError, IndexError, struct.error) as exc:
        raise InputError(path, f"unreadable Lance column metadata ({exc})") from exc


def _clusters(pages: list[list[int]], rows: int) -> list[int]:
    """Row ranges that no page of any column crosses (boundaries every column shares)."""
    common = set.intersection(*(set(itertools.accumulate(p)) for p in pages)) if pages \
        else {rows}
    ends = sorted(e for e in common if e > 0)
    return [b - a for a, b in itertools.pairwise([0, *ends])]


def _general_pages(md) -> dict[str, int]:
    """Pages whose encoding applies general-purpose compression, by scheme."""
    counts: dict[str, int] = {}
    for column in md.columns:
        for page in column.pages:
            for scheme in set(re.findall(r"scheme: CompressionAlgorithm(\w+)", page.encoding)):
                counts[scheme.lower()] = counts.get(scheme.lower(), 0) + 1
    return counts


def describe(path: Path) -> Layout:
    r = _reader(path)
    md = r.metadata()
    names = md.schema.names
    rows = int(r.num_rows())
    stats = r.file_statistics().columns  # one per column; 2.1+ has one column per field
    if len(stats) != len(names):
        raise InputError(path, f"{len(stats)} columns for {len(names)} fields: not a Lance 2.1+ "
                               "file as hepfmt writes them")
    by_branch = {name: int(col.size_bytes) for name, col in zip(names, stats, strict=True)}
    leaf = md.schema.field(0) if names else None
    if leaf is not None and pa.types.is_list(leaf.type):
        leaf = leaf.type.value_field
    tags = {k.decode(): v.decode() for k, v in ((leaf.metadata or {}) if leaf else {}).items()}
    file_bytes = Path(path).stat().st_size
    return Layout.of(**{
        "entries": rows,
        "clusters": _clusters(_page_rows(path), rows),
        "clusters_note": "row ranges no page crosses (the writer ends a page per cluster)",
        "branches": len(names),
        "file_bytes": file_bytes,
        "zip_bytes": sum(by_branch.values()),
        "zip_bytes_by_branch": by_branch,
        "footer_bytes": md.num_column_metadata_bytes + md.num_global_buffer_bytes,
        "footer_bytes_note": "column metadata (page tables, encodings) and global buffers "
                             "(schema, with the compression tags); the rest of the file "
                             "beyond the pages is buffer alignment",
        "pages": sum(int(c.num_pages) for c in stats),
        "compression": tags.get(COMPRESSION, "default"),
        "compression_level": tags.get(LEVEL),
        "general_compression_pages": _general_pages(md),
        "format_version": f"{md.major_version}.{md.minor_version}",
    })


def _prepare(threads: int) -> None:
    """Lance sizes its compute pool from LANCE_CPU_THREADS when its runtime starts (first use in
    the process), so the setting must come before any Lance call."""
    import os

    os.environ["LANCE_CPU_THREADS"] = str(max(1, threads))
    import lance.file  # noqa: F401


def _check(path: str, branches: list[str]) -> None:
    require_branches(path, set(_reader(path).metadata().schema.names), branches)


def _chunks(path: str, branches: list[str], threads: int, marks: Marks):
    reader = _reader(path, branches)
    marks.opened()
    try:
        yield from reader.read_all(batch_size=READ_BATCH).to_batches()
    except (OSError, ValueError) as exc:
        raise InputError(path, f"lance could not read it: {exc}") from exc


def _bare(path: str, branches: list[str], threads: int) -> object:
    """As a user reads it from Lance's documentation."""
    from lance.file import LanceFileReader

    return LanceFileReader(path, columns=branches).read_all().to_table()


FORMAT = Format(
    algorithms=frozenset(ALGORITHMS), dictionary=False,
    write=write, describe=describe, options=frozenset({"max_page_bytes", "version"}),
    levels={"zstd": (1, 22)},
    readers={"lance": arrow_reader(
        "lance", "pylance", _prepare, _chunks, _check, bare=_bare,
        # analysis/hepfmt/plan/cost.py says how it was measured
        cost=ReadCost(0.9, ReadParts(0.012, 0.0038, 6_650_000), ReadParts(0.013, 0.21, 122_900)))},
    write_cost=WriteParts(0.67, 8_700, "default"),
    plain="default", test_variants=("default", "none", "zstd-3"),
)
