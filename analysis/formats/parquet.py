"""Apache Parquet, written and read by pyarrow (Arrow C++).

Each cluster of the source becomes exactly one row group: ``ParquetWriter.write_table`` is called
once per ``cluster_size`` rows and never merges calls. Pages are matched to ROOT baskets through
``data_page_size`` (bytes of encoded data per page, before compression, like a basket buffer).
Every other pyarrow writer option can be set from the config (``options``) and is passed through
unchanged, so the knobs are pyarrow's own.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from analysis.atomic import atomic_path
from analysis.checksum import Checksum, checksum, merge
from analysis.codecs import Variant
from analysis.errors import InputError, VerificationError
from analysis.formats import Format, Reader
from analysis.source import open_source, read_source_meta, to_column

ALGORITHMS = {"none": "NONE", "snappy": "SNAPPY", "gzip": "GZIP", "lz4": "LZ4", "zstd": "ZSTD",
              "brotli": "BROTLI"}


def writer_options(variant: Variant, options: dict) -> dict:
    """pyarrow ``ParquetWriter`` keyword arguments for a variant plus config pass-through."""
    opts = {"data_page_size": 32000, **options}
    opts.update(compression=ALGORITHMS[variant.algorithm], use_dictionary=variant.dictionary)
    if variant.level is not None:
        opts["compression_level"] = variant.level
    return opts


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    meta = read_source_meta(source)
    table = open_source(source).read_all()  # memory-mapped: no copy of the source
    opts = writer_options(variant, options)
    with atomic_path(out) as tmp:
        try:
            with pq.ParquetWriter(str(tmp), table.schema, **opts) as w:
                for start in range(0, table.num_rows, cluster_size):
                    w.write_table(table.slice(start, cluster_size), row_group_size=cluster_size)
        except (TypeError, ValueError, pa.ArrowException) as exc:
            raise VerificationError(out, f"pyarrow refused the writer options {opts}: {exc}") \
                from exc
        _verify(tmp, out, meta["n_events"], cluster_size, table.num_columns)


def _open(path: str | Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(str(path))
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"not a readable Parquet file ({exc})") from exc


def _verify(path: Path, name: Path, n_events: int, cluster_size: int, n_columns: int) -> None:
    md = _open(path).metadata
    if md.num_rows != n_events:
        raise VerificationError(name, f"{md.num_rows} rows written, {n_events} expected")
    if md.num_columns < n_columns:
        raise VerificationError(name, "fewer columns than the source")
    sizes = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
    if any(s != cluster_size for s in sizes[:-1]) or not 0 < sizes[-1] <= cluster_size:
        raise VerificationError(name, f"row groups {sizes[:5]}... are not {cluster_size} rows")


def describe(path: Path) -> dict:
    pf = _open(path)
    md = pf.metadata
    by_branch: dict[str, int] = {}
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        for j in range(rg.num_columns):
            col = rg.column(j)
            name = col.path_in_schema.split(".", 1)[0]
            by_branch[name] = by_branch.get(name, 0) + col.total_compressed_size
    return {
        "entries": md.num_rows,
        "clusters": [md.row_group(i).num_rows for i in range(md.num_row_groups)],
        "branches": len(pf.schema_arrow),
        "footer_bytes": md.serialized_size,
        "zip_bytes": sum(by_branch.values()),
        "zip_bytes_by_branch": by_branch,
        "created_by": md.created_by,
        "format_version": md.format_version,
        "file_bytes": Path(path).stat().st_size,
    }


_threads = {"use": False}


def _prepare_pyarrow(threads: int) -> None:
    pa.set_cpu_count(max(1, threads))
    pa.set_io_thread_count(max(1, threads))
    _threads["use"] = threads > 1


def _read_pyarrow(path: str, branches: list[str]) -> dict[str, Checksum]:
    pf = _open(path)
    names = set(pf.schema_arrow.names)
    missing = [b for b in branches if b not in names]
    if missing:
        raise InputError(path, f"missing branches {missing[:5]}")
    out: dict[str, Checksum] = dict.fromkeys(branches, (0, 0))
    try:
        for i in range(pf.metadata.num_row_groups):
            t = pf.read_row_group(i, columns=branches, use_threads=_threads["use"])
            for b in branches:
                out[b] = merge(out[b], checksum(to_column(t.column(b)).values))
    except pa.ArrowException as exc:
        raise InputError(path, f"pyarrow could not read it: {exc}") from exc
    return out


FORMAT = Format(
    name="parquet", extension="parquet", algorithms=frozenset(ALGORITHMS), dictionary=True,
    write=write, describe=describe,
    readers={"pyarrow": Reader("pyarrow", "pyarrow", _prepare_pyarrow, _read_pyarrow)},
)
