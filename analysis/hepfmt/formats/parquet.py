"""Apache Parquet, written and read by pyarrow (Arrow C++).

Each cluster of the source becomes exactly one row group: ``ParquetWriter.write_table`` is called
once per ``cluster_size`` rows and never merges calls. Pages are matched to ROOT baskets through
``data_page_size`` (bytes of encoded data per page, before compression, like a basket buffer).
Every other pyarrow writer option can be set from the config (``options``) and is passed through
unchanged, so the knobs are pyarrow's own (``data_page_version``, ``version``,
``write_statistics``, ``column_encoding``, ...). Two shorthands name what NanoAOD users ask for:

* ``statistics: none | chunk | page``: no min/max statistics, per column chunk, or also per page
  (the page index, which lets a reader skip pages);
* ``byte_stream_split: floats``: ``BYTE_STREAM_SPLIT`` encoding for every float column, jagged
  ones included (bytes of equal significance stored together, so that reduced-mantissa floats
  compress better).

Readers: pyarrow (row group by row group; one name per memory pool and per mode,
:func:`pyarrow_readers`), awkward (``ak.from_parquet``), polars and DuckDB (each
decodes every value of the selection into its own memory, then hands it over as Arrow).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hepfmt.atomic import atomic_path
from hepfmt.checksum import EMPTY, Checksum
from hepfmt.codec import PARQUET_CODECS, RAW_DECOMPRESSION, Variant, pyarrow_levels
from hepfmt.errors import ConfigError, InputError, VerificationError
from hepfmt.formats import arrow_pool, parquet_pages
from hepfmt.formats.base import (
    HANDOVER,
    STREAM,
    Blocks,
    Format,
    Layout,
    Marks,
    ReadCost,
    Reader,
    ReadParts,
    WriteMemory,
    WriteParts,
    add_checksums,
    arrow_reader,
    awkward_checksums,
    check_layout,
    is_url,
    keep_chunks,
    require_branches,
)
from hepfmt.samples.source import open_source, read_source_meta

#: The ``statistics`` shorthand as pyarrow writer options (also the metadata study's levels).
STATISTICS = {"none": {"write_statistics": False, "write_page_index": False},
              "chunk": {"write_statistics": True, "write_page_index": False},
              "page": {"write_statistics": True, "write_page_index": True}}
BYTE_STREAM_SPLIT = ("none", "floats")


def _float_paths(schema: pa.Schema) -> list[str]:
    """Leaf column paths of float columns as pyarrow names them (``Muon_pt.list.element``)."""
    out = []
    for f in schema:
        t, path = f.type, f.name
        while pa.types.is_list(t):
            t, path = t.value_type, f"{path}.list.element"
        if pa.types.is_floating(t):
            out.append(path)
    return out


def _shorthands(options: dict, schema: pa.Schema | None) -> dict:
    opts = dict(options)
    stats = opts.pop("statistics", None)
    if stats is not None:
        if stats not in STATISTICS:
            raise ConfigError("options.statistics", f"{stats!r} is not one of {list(STATISTICS)}")
        opts.update(STATISTICS[stats])
    bss = opts.pop("byte_stream_split", "none")
    if bss not in BYTE_STREAM_SPLIT:
        raise ConfigError("options.byte_stream_split", f"{bss!r} is not one of {BYTE_STREAM_SPLIT}")
    if bss == "floats" and schema is not None:
        opts["use_byte_stream_split"] = _float_paths(schema)
    return opts


def writer_options(variant: Variant, options: dict, schema: pa.Schema | None = None) -> dict:
    """pyarrow ``ParquetWriter`` keyword arguments for a variant plus config pass-through
    (the float columns of ``schema`` for ``byte_stream_split: floats``)."""
    opts = {"data_page_size": 32000, **_shorthands(options, schema)}
    return {**opts, **variant.pyarrow_parquet()}


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    meta = read_source_meta(source)
    table = open_source(source).read_all()  # memory-mapped: no copy of the source
    opts = writer_options(variant, options, table.schema)
    with atomic_path(out) as tmp:
        try:
            with pq.ParquetWriter(str(tmp), table.schema, **opts) as w:
                for start in range(0, table.num_rows, cluster_size):
                    w.write_table(table.slice(start, cluster_size), row_group_size=cluster_size)
        except (TypeError, ValueError, pa.ArrowException) as exc:
            shown = {k: v if k != "use_byte_stream_split" else f"<{len(v)} columns>"
                     for k, v in opts.items()}
            raise VerificationError(out, f"pyarrow refused the writer options {shown}: {exc}") \
                from exc
        _verify(tmp, out, meta["n_events"], cluster_size, table.num_columns)


def open_url(url: str):
    """A served file as a Python file object for the Arrow-based readers: fsspec's HTTP (or
    XRootD) file with ``cache_type="none"``, so every range the reader asks for is one request
    and no read-ahead of fsspec's own hides what the reader does."""
    import fsspec

    return fsspec.open(url, "rb", cache_type="none").open()


def _source(path: str | Path):
    return open_url(str(path)) if is_url(path) else str(path)


def _open(path: str | Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(_source(path))
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"not a readable Parquet file ({exc})") from exc


def _verify(path: Path, name: Path, n_events: int, cluster_size: int, n_columns: int) -> None:
    check_layout(describe(path), name, n_events, cluster_size, n_columns, "row groups")


def describe(path: Path) -> Layout:
    pf = _open(path)
    md = pf.metadata
    by_branch: dict[str, int] = {}
    encodings: set[str] = set()
    stats = page_index = 0
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        for j in range(rg.num_columns):
            col = rg.column(j)
            name = col.path_in_schema.split(".", 1)[0]
            by_branch[name] = by_branch.get(name, 0) + col.total_compressed_size
            encodings.update(col.encodings)
            stats += col.is_stats_set
            page_index += col.has_offset_index  # page locations: written for every chunk
    chunks = sum(md.row_group(i).num_columns for i in range(md.num_row_groups))
    return Layout.of(**{
        "entries": md.num_rows,
        "clusters": [md.row_group(i).num_rows for i in range(md.num_row_groups)],
        "branches": len(pf.schema_arrow),
        "footer_bytes": md.serialized_size,
        "zip_bytes": sum(by_branch.values()),
        "zip_bytes_by_branch": by_branch,
        "created_by": md.created_by,
        "encodings": sorted(encodings),
        # the level the file shows: page index on every chunk, statistics on every chunk, none
        "statistics": "page" if page_index == chunks else "chunk" if stats == chunks else
                      "none" if stats == 0 else "partial",
        "format_version": md.format_version,
        "file_bytes": Path(path).stat().st_size,
    })


def _prepare_pyarrow(threads: int) -> None:
    pa.set_cpu_count(max(1, threads))
    pa.set_io_thread_count(max(1, threads))


def _prepare_pool(name: str, pool: str):
    """``prepare`` of the pyarrow reader ``name``: its memory pool, set before it allocates
    anything (a pool this pyarrow lacks refuses the reader), then pyarrow's threads."""

    def prepare(threads: int) -> None:
        arrow_pool.use(name, pool)
        _prepare_pyarrow(threads)

    return prepare


#: What planning assumes any pyarrow reader of Parquet costs (analysis/hepfmt/plan/cost.py).
PYARROW_COST = ReadCost(0.4, ReadParts(0.016, 0.0002, 2_260_000), ReadParts(0.012, 0.0, 29_200))


def pyarrow_readers() -> dict[str, Reader]:
    """pyarrow row group by row group, once per memory pool (``pyarrow``, ``pyarrow-system``,
    ``pyarrow-jemalloc``) and per mode: every row group kept to the end (hand-over, pyarrow's
    Table) or touched and dropped (``pyarrow-stream``, as ROOT's columnar reader drops each
    basket)."""
    out = {}
    for mode, base in ((HANDOVER, "pyarrow"), (STREAM, "pyarrow-stream")):
        for pool in (arrow_pool.DEFAULT, *arrow_pool.POOLS):
            name = arrow_pool.reader_name(base, pool)
            out[name] = arrow_reader(
                name, "pyarrow", _prepare_pool(name, pool), _pyarrow_chunks, _check_branches,
                bare=_bare_pyarrow, url_scheme="http", marks_clusters=True, cost=PYARROW_COST,
                on_storage=name == "pyarrow", mode=mode, knobs={"memory_pool": pool},
                facts=arrow_pool.facts)
    return out


def _check_branches(path: str, branches: list[str]) -> None:
    require_branches(path, _open(path).schema_arrow.names, branches)


def _pyarrow_chunks(path: str, branches: list[str], threads: int, marks: Marks):
    """Row group by row group, as a reader that streams a file does."""
    pf = _open(path)
    marks.opened()
    try:
        for i in range(pf.metadata.num_row_groups):
            yield pf.read_row_group(i, columns=branches, use_threads=threads > 1)
    except pa.ArrowException as exc:
        raise InputError(path, f"pyarrow could not read it: {exc}") from exc


def _awkward_arrays(path: str, branches: list[str]):
    """The whole selection in one call, as awkward users read a file."""
    import awkward as ak

    try:
        return ak.from_parquet(path, columns=branches)  # fsspec opens a URL itself
    except (pa.ArrowException, ValueError) as exc:
        raise InputError(path, f"awkward could not read it: {exc}") from exc


def _read_awkward(path: str, branches: list[str], threads: int = 1) -> dict[str, Checksum]:
    _check_branches(path, branches)
    return awkward_checksums([_awkward_arrays(path, branches)], branches)


def _scan_awkward(path: str, branches: list[str], threads: int, marks: Marks) -> int:
    return keep_chunks([_awkward_arrays(path, branches)], marks)


def _prepare_polars(threads: int) -> None:
    """polars sizes its thread pool once, at import, from POLARS_MAX_THREADS."""
    import os

    os.environ["POLARS_MAX_THREADS"] = str(max(1, threads))
    import polars  # noqa: F401


def _polars_chunks(path: str, branches: list[str], threads: int, marks: Marks):
    """One frame, decoded into polars' own memory; handed over as Arrow (zero-copy) only to
    be checksummed, so ``scan`` keeps the polars frame itself."""
    import polars as pl

    try:
        # polars' own HTTP client needs range support XrdHttp does not advertise, so a URL
        # goes through fsspec's file, which polars reads whole
        frame = pl.read_parquet(_source(path), columns=branches)
    except pl.exceptions.PolarsError as exc:
        raise InputError(path, f"polars could not read it: {exc}") from exc
    yield frame


def _read_polars(path: str, branches: list[str], threads: int = 1) -> dict[str, Checksum]:
    _check_branches(path, branches)
    out: dict[str, Checksum] = dict.fromkeys(branches, EMPTY)
    for frame in _polars_chunks(path, branches, threads, Marks()):
        add_checksums(out, frame.to_arrow(), branches)
    return out


def _scan_polars(path: str, branches: list[str], threads: int, marks: Marks) -> int:
    return keep_chunks(_polars_chunks(path, branches, threads, marks), marks)


def _prepare_duckdb(threads: int) -> None:
    import duckdb  # noqa: F401


@functools.cache
def _duckdb_http():
    """fsspec's HTTP filesystem for DuckDB's ``register_filesystem`` (one per process, as
    fsspec keeps its own): DuckDB's own HTTP client is its ``httpfs`` extension, which it
    would download at run time (never done here). Ranges are fetched as asked
    (``cache_type="none"``, as :func:`open_url` for the other readers).
    DuckDB asks a filesystem for a file's modification time; fsspec's HTTP filesystem has
    none, so it is the server's ``Last-Modified``, or the epoch where the server sends none
    (XrdHttp): DuckDB only compares it to invalidate its cache of a file, and a file does not
    change while it is read."""
    import datetime
    import email.utils

    from fsspec.implementations.http import HTTPFileSystem

    class ModifiedHTTPFileSystem(HTTPFileSystem):
        def modified(self, path: str) -> datetime.datetime:
            stamp = self.info(path).get("Last-Modified")
            return email.utils.parsedate_to_datetime(stamp) if stamp else \
                datetime.datetime.fromtimestamp(0, datetime.UTC)

    return ModifiedHTTPFileSystem(cache_type="none")


def _duckdb_chunks(path: str, branches: list[str], threads: int, marks: Marks):
    """A full scan of the selection: DuckDB decodes it into its vectors and hands them over as
    one Arrow table; the file is open once the query is bound (its schema read). A URL is read
    through fsspec (:func:`_duckdb_http`)."""
    import duckdb

    cols = ", ".join('"' + b.replace('"', '""') + '"' for b in branches)
    try:
        with duckdb.connect(config={"threads": max(1, threads)}) as con:
            if is_url(path):
                con.register_filesystem(_duckdb_http())
            rel = con.sql(f"SELECT {cols} FROM read_parquet(?)", params=[path])
            marks.opened()
            yield rel.to_arrow_table()
    except duckdb.Error as exc:
        raise InputError(path, f"DuckDB could not read it: {exc}") from exc


def _prepare_awkward(threads: int) -> None:
    import awkward  # noqa: F401

    _prepare_pyarrow(threads)


def blocks(path: Path, branches: list[str]) -> Blocks:
    """The pages of ``branches`` (dictionary pages too), from their headers."""
    _check_branches(str(path), branches)
    try:
        parquet_codec, pages = parquet_pages.pages(path, set(branches))
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot list its pages ({exc})") from exc
    names = {v: k for k, v in PARQUET_CODECS.items()} | {"UNCOMPRESSED": "none",
                                                         "LZ4_RAW": "lz4"}
    codec = names.get(parquet_codec, parquet_codec.lower())
    library, reused = RAW_DECOMPRESSION.get(codec, (None, None))
    return Blocks(codec, library, reused, [p.offset for p in pages], [p.zipped for p in pages],
                  [p.unzipped for p in pages],
                  None if library else f"no {codec} decompressor is measured here")


def _bare_pyarrow(path: str, branches: list[str], threads: int) -> object:
    return pq.ParquetFile(path).read(columns=branches, use_threads=threads > 1)


def _bare_awkward(path: str, branches: list[str], threads: int) -> object:
    import awkward as ak

    return ak.from_parquet(path, columns=branches)


def _bare_polars(path: str, branches: list[str], threads: int) -> object:
    import polars as pl

    return pl.read_parquet(path, columns=branches)


def _bare_duckdb(path: str, branches: list[str], threads: int) -> object:
    import duckdb

    cols = ", ".join('"' + b.replace('"', '""') + '"' for b in branches)
    with duckdb.connect(config={"threads": max(1, threads)}) as con:
        return con.sql(f"SELECT {cols} FROM read_parquet(?)", params=[path]).to_arrow_table()


# Bare calls as a user writes them from each library's documentation (bench overhead); costs:
# analysis/hepfmt/plan/cost.py says how they were measured; every reader opens a served file
# by HTTP.
FORMAT = Format(
    algorithms=frozenset(PARQUET_CODECS), dictionary=True,
    levels=pyarrow_levels(list(PARQUET_CODECS)),
    write=write, describe=describe, blocks=blocks,
    readers={
        **pyarrow_readers(),
        "awkward": Reader(
            "awkward", "awkward", _prepare_awkward, _read_awkward, _scan_awkward,
            bare=_bare_awkward, url_scheme="http",
            cost=ReadCost(0.3, ReadParts(0.0, 0.061, 1_120_000), ReadParts(0.0, 0.108, 31_100))),
        "polars": Reader(
            "polars", "polars", _prepare_polars, _read_polars, _scan_polars,
            bare=_bare_polars, url_scheme="http", on_storage=True,
            cost=ReadCost(0.6, ReadParts(0.0, 0.0041, 1_660_000), ReadParts(0.0, 0.013, 64_800))),
        "duckdb": arrow_reader(
            "duckdb", "duckdb", _prepare_duckdb, _duckdb_chunks, _check_branches,
            bare=_bare_duckdb, url_scheme="http", on_storage=True,
            cost=ReadCost(0.5, ReadParts(0.017, 0.006, 347_000),
                          ReadParts(0.044, 0.061, 42_100))),
    },
    write_cost=WriteParts(0.56, 10_400, "zstd-3"),
    write_memory=WriteMemory(300, 8),  # pyarrow holds a row group of arrays and pages (measured)
    test_variants=("none", "zstd-3", "none+dict", "snappy"),
)
