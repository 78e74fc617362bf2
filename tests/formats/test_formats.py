"""Format adapters: cluster layout, exact round trip, reader agreement and writer options.

Every format is written from the same source; a difference in any branch, or a reader that
disagrees with the source checksums, would make size and speed comparisons meaningless.
"""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from hepfmt import formats
from hepfmt.codec import Variant
from hepfmt.formats import protobuf
from hepfmt.formats.base import Marks
from hepfmt.formats.parquet import writer_options
from hepfmt.samples.source import to_column

#: Variants written per format: what its adapter names for tests (the registry's own).
VARIANTS = {f: list(formats.get(f).tested_variants) for f in formats.names()}
FILES = [(f, v) for f in VARIANTS for v in VARIANTS[f]]
READS = [(f, v, r) for f, v in FILES for r in formats.get(f).readers]


def _ids(params):
    return "/".join(params)


def test_every_format_is_covered():
    assert set(formats.names()) == set(VARIANTS)
    for name in formats.names():
        assert formats.get(name).readers, f"{name} has no readers"


@pytest.mark.parametrize(("fmt", "variant"), FILES, ids=[_ids(p) for p in FILES])
def test_describe_clusters(written, fmt, variant):
    """600 events in clusters of 250 are exactly [250, 250, 100] (row groups / TTree clusters);
    the partial last cluster must not be merged or padded."""
    path = written(fmt, variant)
    f = formats.get(fmt)
    d = f.describe(path)
    if f.exact_clusters:
        assert d["clusters"] == [250, 250, 100]
    else:  # the format cuts its own (Vortex, ORC: docs/formats.md)
        assert sum(d["clusters"]) == 600 and min(d["clusters"]) > 0
    assert d["entries"] == 600
    assert d["branches"] == 1499
    assert d["file_bytes"] == path.stat().st_size
    if fmt in ("ttree", "rntuple", "parquet") or d["zip_bytes_by_branch"]:
        # the compared formats must say it; others where their library exposes it
        assert set(d["zip_bytes_by_branch"]) >= {"nJet", "Jet_pt", "HLT_IsoMu24"}
    assert 0 < d["zip_bytes"] <= d["file_bytes"]


def _from_arrow(table, names: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    assert table.column_names == names
    out = {}
    for name in names:
        col = to_column(table.column(name))
        out[name] = (col.values, None if col.offsets is None else np.diff(col.offsets))
    return out


def _read_parquet(path, names):
    return _from_arrow(pq.read_table(path), names)


def _read_root(path, names):
    import awkward as ak
    import uproot

    out = {}
    with uproot.open(path) as f:
        tree = f["Events"]
        assert list(tree.keys()) == names
        arrays = tree.arrays(library="ak")
    for name in names:
        arr = arrays[name]
        if arr.ndim == 1:
            out[name] = (ak.to_numpy(arr), None)
        else:
            out[name] = (ak.to_numpy(ak.flatten(arr)), ak.to_numpy(ak.num(arr)))
    return out


def _read_feather(path, names):
    import pyarrow as pa

    return _from_arrow(pa.ipc.open_file(str(path)).read_all(), names)


def _read_lance(path, names):
    from lance.file import LanceFileReader

    return _from_arrow(LanceFileReader(str(path)).read_all().to_table(), names)


def _read_vortex(path, names):
    import pyarrow as pa
    import vortex

    return _from_arrow(pa.Table.from_struct_array(
        vortex.open(str(path)).scan().read_all().to_arrow_array()), names)


def _read_hdf5(path, names):
    """Values from each dataset; a collection's lengths from the counter dataset its
    ``counter`` attribute names."""
    import h5py

    out = {}
    with h5py.File(path, "r") as f:
        g = f["Events"]
        assert list(g) == names  # the group tracks creation order
        for name in names:
            counter = g[name].attrs.get("counter")
            out[name] = (g[name][...], None if counter is None else g[counter][...])
    return out


#: Every branch of a written file as (flat values, per-event lengths or None), read by a library
#: other than the adapter's own code where one exists (uproot for ROOT files); any other format
#: through its first reader's scan (what gets timed), which must hand over Arrow.
READ_BACK = {"parquet": _read_parquet, "ttree": _read_root, "rntuple": _read_root,
             "feather": _read_feather, "hdf5": _read_hdf5, "lance": _read_lance,
             "vortex": _read_vortex}


def _read_back(fmt: str, path, names: list[str]) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    if fmt in READ_BACK:
        return READ_BACK[fmt](path, names)
    import pyarrow as pa

    reader = next(iter(formats.get(fmt).readers.values()))
    reader.prepare(1)
    marks = Marks()
    reader.scan(str(path), names, 1, marks)
    assert all(isinstance(c, pa.RecordBatch | pa.Table) for c in marks.held), \
        f"{fmt}: give it a READ_BACK (its reader does not hand over Arrow)"
    return _from_arrow(pa.Table.from_batches([b for c in marks.held for b in (
        c.to_batches() if isinstance(c, pa.Table) else [c])]), names)


@pytest.mark.parametrize(("fmt", "variant"), FILES, ids=[_ids(p) for p in FILES])
def test_round_trip_every_branch(written, schema, source_table, fmt, variant):
    """Read back with an independent library (pyarrow.parquet / uproot): every branch has the
    source's dtype, bit-identical values and identical per-event lengths."""
    got = _read_back(fmt, written(fmt, variant), schema.names)
    for b in schema.branches:
        src = to_column(source_table.column(b.name))
        values, lengths = got[b.name]
        assert values.dtype == np.dtype(b.dtype), b.name
        assert values.tobytes() == src.values.tobytes(), b.name
        if b.jagged:
            np.testing.assert_array_equal(lengths, np.diff(src.offsets), err_msg=b.name)
        else:
            assert lengths is None, b.name


@pytest.mark.parametrize(("fmt", "variant", "reader"), READS, ids=[_ids(p) for p in READS])
def test_readers_match_source_checksums(written, source_meta, selection, fmt, variant, reader):
    """Every reader (ROOT RDataFrame, uproot, pyarrow) reproduces the source checksums exactly,
    for all branches and for the 10-branch analysis selection."""
    r = formats.get(fmt).readers[reader]
    r.prepare(1)
    path = str(written(fmt, variant))
    want = {b: tuple(c) for b, c in source_meta["checksums"].items()}
    everything = r.read(path, list(want))
    assert everything.keys() == want.keys()
    bad = {b: (everything[b], want[b]) for b in want if tuple(everything[b]) != want[b]}
    assert not bad, f"{len(bad)} branches differ, e.g. {list(bad.items())[:3]}"
    sel = r.read(path, selection)
    assert list(sel) == selection
    assert {b: tuple(c) for b, c in sel.items()} == {b: want[b] for b in selection}


# --- writer options ----------------------------------------------------------------------------

PARQUET_CODEC = {"none": "UNCOMPRESSED", "zstd-3": "ZSTD", "none+dict": "UNCOMPRESSED",
                 "snappy": "SNAPPY"}


@pytest.mark.parametrize("variant", VARIANTS["parquet"])
def test_parquet_compression_and_dictionary_in_metadata(written, variant):
    """The variant is what the file says: codec of every column chunk, dictionary pages only
    with +dict (on every column pyarrow can dictionary-encode, i.e. all but booleans)."""
    md = pq.ParquetFile(written("parquet", variant)).metadata
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        for j in range(rg.num_columns):
            col = rg.column(j)
            assert col.compression == PARQUET_CODEC[variant], col.path_in_schema
            dictionary = variant.endswith("+dict") and col.physical_type != "BOOLEAN"
            assert col.has_dictionary_page == dictionary, col.path_in_schema


def test_parquet_compression_shrinks(written):
    d = formats.get("parquet").describe
    assert d(written("parquet", "zstd-3"))["zip_bytes"] < d(written("parquet", "none"))["zip_bytes"]


def test_parquet_writer_options():
    """Config options pass through; the variant alone decides codec, level and dictionary."""
    assert writer_options(Variant("zstd", 3), {}) == {
        "data_page_size": 32000, "compression": "ZSTD", "use_dictionary": False,
        "compression_level": 3}
    opts = writer_options(Variant("none", None, True), {
        "data_page_size": 1024, "compression": "GZIP", "write_statistics": False})
    assert opts == {"data_page_size": 1024, "compression": "NONE", "use_dictionary": True,
                    "write_statistics": False}


# A minimal Thrift compact-protocol reader, enough to walk Parquet page headers: pyarrow
# exposes no page-level metadata, and data_page_size only shows in the page layout.

#: Thrift's compact protocol writes varints as protobuf does.
_varint = protobuf.varint


def _skip(buf: bytes, pos: int, ttype: int) -> int:
    if ttype in (1, 2):  # bool true/false, value in the type nibble
        return pos
    if ttype == 3:  # byte
        return pos + 1
    if ttype in (4, 5, 6):  # i16, i32, i64 as zigzag varints
        return _varint(buf, pos)[1]
    if ttype == 7:  # double
        return pos + 8
    if ttype == 8:  # binary
        n, pos = _varint(buf, pos)
        return pos + n
    if ttype in (9, 10):  # list, set
        head = buf[pos]
        pos += 1
        n, etype = head >> 4, head & 0x0F
        if n == 15:
            n, pos = _varint(buf, pos)
        for _ in range(n):
            pos = pos + 1 if etype in (1, 2) else _skip(buf, pos, etype)
        return pos
    if ttype == 11:  # map
        n, pos = _varint(buf, pos)
        if n:
            kv = buf[pos]
            pos += 1
            for _ in range(n):
                pos = _skip(buf, _skip(buf, pos, kv >> 4), kv & 0x0F)
        return pos
    if ttype == 12:  # struct
        return _struct(buf, pos)[1]
    raise ValueError(f"thrift type {ttype}")


def _struct(buf: bytes, pos: int) -> tuple[dict[int, int], int]:
    """Top-level i32 fields of a struct by field id; everything else is skipped."""
    fields, fid = {}, 0
    while True:
        head = buf[pos]
        pos += 1
        if head == 0:
            return fields, pos
        ttype, delta = head & 0x0F, head >> 4
        if delta:
            fid += delta
        else:
            z, pos = _varint(buf, pos)
            fid = (z >> 1) ^ -(z & 1)
        if ttype == 5:
            z, pos = _varint(buf, pos)
            fields[fid] = (z >> 1) ^ -(z & 1)
        else:
            pos = _skip(buf, pos, ttype)


def _data_pages(path, row_group: int, branch: str) -> list[tuple[int, int]]:
    """(uncompressed, compressed) sizes of the data pages of one column chunk."""
    rg = pq.ParquetFile(path).metadata.row_group(row_group)
    col = next(rg.column(j) for j in range(rg.num_columns)
               if rg.column(j).path_in_schema.split(".")[0] == branch)
    start = col.dictionary_page_offset if col.has_dictionary_page else col.data_page_offset
    buf = path.read_bytes()
    pos, end, pages = start, start + col.total_compressed_size, []
    while pos < end:
        header, pos = _struct(buf, pos)
        if header[1] in (0, 3):  # DATA_PAGE, DATA_PAGE_V2
            pages.append((header[2], header[3]))
        pos += header[3]
    assert pos == end
    return pages


def test_parquet_data_page_size_is_applied(written):
    """data_page_size is the basket-size analogue: the ~27 kB GenPart_pt chunk of the first row
    group fits one page at the 32000-byte default and is split into many at 1024 bytes."""
    default = _data_pages(written("parquet", "none"), 0, "GenPart_pt")
    small = _data_pages(written("parquet", "none", data_page_size=1024), 0, "GenPart_pt")
    assert len(default) == 1
    assert 20_000 < default[0][0] <= 32_000
    assert len(small) >= 5
    assert sum(u for u, _ in small) >= default[0][0]
    zstd = _data_pages(written("parquet", "zstd-3"), 0, "GenPart_pt")
    assert [u for u, _ in zstd] == [u for u, _ in default]
    assert all(c < u for u, c in zstd)


TTREE_SETTINGS = {"none": 0, "zstd-5": 505, "lz4-4": 404}


@pytest.mark.parametrize("variant", VARIANTS["ttree"])
def test_ttree_compression_settings(written, variant):
    """ROOT records algorithm*100 + level; the file must carry the variant asked for."""
    d = formats.get("ttree").describe(written("ttree", variant))
    assert d["compression_settings"] == TTREE_SETTINGS[variant]
    if variant != "none":
        assert d["zip_bytes"] < d["tot_bytes"]


def test_ttree_default_level_and_cluster_baskets(written):
    """'zlib' without a level uses ROOT's level 1 (101); basket_policy=cluster writes exactly
    one basket per branch per cluster."""
    d = formats.get("ttree").describe(written("ttree", "zlib", basket_policy="cluster"))
    assert d["compression_settings"] == 101
    assert d["clusters"] == [250, 250, 100]
    assert d["baskets"] == 3 * d["branches"]
