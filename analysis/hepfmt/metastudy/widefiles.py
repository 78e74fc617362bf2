"""The files of the metadata study: wide tables written as Parquet (three statistics levels),
TTree and RNTuple, each verified from its own metadata before it counts.

Two kinds of dataset, named in file paths and tables:

* ``float32-c1000``, ``string-c100``, ...: synthetic, N columns ``col_0..col_{N-1}`` of one type,
  made as alamb/parquet_footer_parsing makes them (so its figures compare): a block of 100 rows
  of random values (float32 uniform in [0, 1); strings of 0-19 random alphanumerics, 9.5
  on average) repeated to fill each row group. The values barely matter to metadata, but the
  block keeps the files small (dictionaries and compressors see the repeats) and fast to write;
* ``nanoaod-<sample>``: one of the study's own generated samples, at the real NanoAOD width and
  types (bools, counters, jagged collections), split into the same number of row groups.

Layouts: ``parquet-none`` (no statistics), ``parquet-chunk`` (column-chunk statistics in the
footer), ``parquet-page`` (plus the page index: column and offset indexes), ``ttree``,
``rntuple``. Everything not under study stays at each library's default or the config's codec.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from hepfmt.atomic import atomic_path
from hepfmt.codec import Variant
from hepfmt.errors import ConfigError, InputError, VerificationError
from hepfmt.formats.root import wide_writer
from hepfmt.metastudy import metabytes
from hepfmt.samples.source import open_source, read_source_meta, schema_of

TYPES = ("float32", "string")
STATS = ("none", "chunk", "page")
FORMATS = ("parquet", "ttree", "rntuple")
#: Distinct rows per synthetic block, as alamb/parquet_footer_parsing (it repeats 100 rows).
BLOCK_ROWS = 100
MAX_STRING = 20  # string lengths are uniform in [0, MAX_STRING)
_ALNUM = np.frombuffer(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                       dtype=np.uint8)


@dataclass(frozen=True)
class WideFileLayout:
    """How one file is written: its format and, for Parquet, its statistics level."""

    format: str
    stats: str | None = None

    @property
    def name(self) -> str:
        return f"parquet-{self.stats}" if self.format == "parquet" else self.format

    @property
    def extension(self) -> str:
        return "parquet" if self.format == "parquet" else "root"

    @classmethod
    def parse(cls, name: str) -> WideFileLayout:
        fmt, _, stats = name.partition("-")
        if fmt == "parquet" and stats in STATS:
            return cls("parquet", stats)
        if fmt in ("ttree", "rntuple") and not stats:
            return cls(fmt)
        raise ConfigError("layout", f"{name!r} is not parquet-<{'|'.join(STATS)}>, ttree or "
                                    "rntuple")


@dataclass(frozen=True)
class Dataset:
    """A wide table to write: its columns and its row groups, as blocks of distinct rows.

    ``groups()`` yields ``(block, rows)``: the group has ``rows`` rows, row r being row
    ``r % block.num_rows`` of ``block``.
    """

    name: str
    columns: list[wide_writer.Column]
    schema: pa.Schema
    groups: Callable[[], Iterator[tuple[pa.Table, int]]]
    rows_per_group: int
    n_groups: int


def synthetic_block(dtype: str, columns: int, rows: int, seed: int) -> pa.Table:
    """``rows`` rows of ``columns`` random columns ``col_i`` of one type (see module doc)."""
    rng = np.random.default_rng(seed)
    names = [f"col_{i}" for i in range(columns)]
    if dtype == "float32":
        values = rng.random((columns, rows), dtype=np.float32)
        return pa.table(list(values), names=names)
    if dtype == "string":
        lengths = rng.integers(0, MAX_STRING, size=(columns, rows))
        chars = pa.py_buffer(_ALNUM[rng.integers(0, _ALNUM.size, size=int(lengths.sum()))])
        ends = np.cumsum(lengths.ravel())
        starts = np.concatenate([[0], ends[:-1]]).reshape(columns, rows)
        arrays = [pa.StringArray.from_buffers(rows, pa.py_buffer(np.concatenate(
            [starts[i], [starts[i, -1] + lengths[i, -1]]]).astype(np.int32)), chars)
                  for i in range(columns)]
        return pa.table(arrays, names=names)
    raise ConfigError("metadata.types", f"{dtype!r} is not one of {TYPES}")


def synthetic(dtype: str, columns: int, row_groups: int, rows_per_group: int,
              seed: int) -> Dataset:
    block = synthetic_block(dtype, columns, min(BLOCK_ROWS, rows_per_group), seed)
    kind = "string" if dtype == "string" else "scalar"
    cols = [wide_writer.Column(n, kind, dtype) for n in block.column_names]
    return Dataset(f"{dtype}-c{columns}", cols, block.schema,
                   lambda: ((block, rows_per_group) for _ in range(row_groups)),
                   rows_per_group, row_groups)


def from_sample(source: str | Path, row_groups: int) -> Dataset:
    """A generated sample (Arrow IPC + sidecar) in ``row_groups`` row groups of equal size
    (the last one may be shorter)."""
    meta = read_source_meta(source)
    schema = schema_of(meta)
    table = open_source(source).read_all()
    per_group = math.ceil(table.num_rows / row_groups)
    cols = [wide_writer.Column(b.name, "jagged" if b.jagged else "scalar", b.dtype, b.counter)
            for b in schema.branches]

    def groups() -> Iterator[tuple[pa.Table, int]]:
        for start in range(0, table.num_rows, per_group):
            part = table.slice(start, per_group)
            yield part, part.num_rows

    return Dataset(f"nanoaod-{meta['sample']}", cols, table.schema, groups, per_group,
                   math.ceil(table.num_rows / per_group))


def _repeat(block: pa.Table, rows: int) -> pa.Table:
    whole, rest = divmod(rows, block.num_rows)
    return pa.concat_tables([block] * whole + ([block.slice(0, rest)] if rest else []))


def _write_parquet(ds: Dataset, out: Path, stats: str, codec: Variant, options: dict) -> None:
    from hepfmt.formats.parquet import writer_options

    opts = writer_options(codec, {**options, "statistics": stats})
    try:
        with pq.ParquetWriter(str(out), ds.schema, **opts) as w:
            for block, rows in ds.groups():
                w.write_table(_repeat(block, rows), row_group_size=rows)
    except (TypeError, ValueError, pa.ArrowException) as exc:
        raise VerificationError(out, f"pyarrow refused the writer options {opts}: {exc}") from exc


def expected(ds: Dataset, layout: WideFileLayout) -> dict:
    """What the written file's own metadata must say."""
    rows = [r for _, r in ds.groups()]
    return {"columns": len(ds.columns), "groups": rows, "stats": layout.stats}


def verify(path: Path, name: str | Path, layout: WideFileLayout, want: dict) -> dict:
    """Read the file's metadata back; raise unless columns, row groups and statistics level are
    the requested ones. Returns the description (with the metadata byte counts)."""
    got = metabytes.describe(path, layout.format)
    for key in ("columns", "groups", "stats"):
        if got[key] != want[key]:
            raise VerificationError(name, f"{key} read back as {_short(got[key])}, "
                                          f"{_short(want[key])} requested")
    return got


def _short(value: object) -> str:
    return f"{value[:5]}... ({len(value)})" if isinstance(value, list) else repr(value)


def write(ds: Dataset, layout: WideFileLayout, out: str | Path, codec: Variant,
          parquet_options: dict | None = None) -> dict:
    """Write ``ds`` in ``layout`` to ``out`` atomically; returns the verified description."""
    out = Path(out)
    want = expected(ds, layout)
    with atomic_path(out) as tmp:
        if layout.format == "parquet":
            _write_parquet(ds, tmp, layout.stats or "none", codec, parquet_options or {})
        else:
            setting = codec.root_setting()
            try:
                wide_writer.write(layout.format, tmp, ds.columns, ds.groups(), ds.rows_per_group,
                               setting)
            except Exception as exc:  # cppyy turns C++ exceptions into Python ones
                raise VerificationError(out, f"ROOT could not write it: {exc}") from exc
        desc = verify(tmp, out, layout, want)
    return {**desc, "dataset": ds.name, "layout": layout.name, "format": layout.format,
            "rows_per_group": ds.rows_per_group, "codec": codec.name,
            "file_bytes": out.stat().st_size}


def dataset(name: str, row_groups: int, rows_per_group: int, seed: int,
            source: str | Path | None = None) -> Dataset:
    """The dataset a name in the study grid stands for (``nanoaod-*`` needs its ``source``)."""
    kind, _, rest = name.partition("-")
    if kind == "nanoaod":
        if source is None:
            raise ConfigError("metadata.nanoaod", f"dataset {name} needs its source sample")
        ds = from_sample(source, row_groups)
        if ds.name != name:
            raise InputError(source, f"is sample {ds.name[8:]!r}, not the {name!r} requested")
        return ds
    if kind in TYPES and rest.startswith("c") and rest[1:].isdigit() and int(rest[1:]) > 0:
        return synthetic(kind, int(rest[1:]), row_groups, rows_per_group, seed)
    raise ConfigError("dataset", f"{name!r} is not <{'|'.join(TYPES)}>-c<columns> or "
                                 "nanoaod-<sample>")
