"""The codec bound: every format's blocks decompress to exactly the sizes its metadata states,
the arithmetic on a hand-made file, and the Parquet page headers read by hand.

``decompress_blocks`` checks each block's output size against the stated one, so a bound that
runs is a bound over the right bytes: a wrong offset or size lands in a codec error, not in a
number.
"""

from __future__ import annotations

import gzip
import os

import pytest

from hepfmt import formats
from hepfmt.errors import InputError
from hepfmt.formats.base import Blocks
from hepfmt.formats.parquet_pages import ThriftError, chunk_pages
from hepfmt.measure import bound
from hepfmt.stats import bound_fractions

#: Every codec each format's bound takes, and the uncompressed floor.
FILES = [("ttree", "none", {}), ("ttree", "zstd-5", {}), ("ttree", "lz4-4", {}),
         ("ttree", "zlib-1", {}), ("ttree", "lzma-1", {}), ("rntuple", "none", {}),
         ("rntuple", "zstd-5", {}), ("parquet", "none", {}), ("parquet", "zstd-3", {}),
         ("parquet", "gzip-6", {}), ("parquet", "lz4", {}), ("parquet", "none+dict", {}),
         ("parquet", "zstd-3", {"data_page_version": "2.0", "byte_stream_split": "floats"}),
         ("feather", "none", {}), ("feather", "zstd-3", {}), ("hdf5", "none", {}),
         ("hdf5", "gzip-4", {}), ("hdf5", "gzip-4", {"shuffle": True}),
         ("orc", "none", {}), ("orc", "zstd", {}), ("orc", "zlib", {}), ("orc", "lz4", {})]


def _id(case) -> str:
    fmt, variant, options = case
    return "/".join([fmt, variant, *(f"{k}={v}" for k, v in options.items())])


@pytest.mark.parametrize("case", FILES, ids=[_id(c) for c in FILES])
def test_every_block_decompresses_to_its_stated_size(written, source_meta, case):
    fmt, variant, options = case
    path = written(fmt, variant, **options)
    names = list(source_meta["checksums"])
    rec = bound.measure(path, formats.entry(fmt).module, names, source_meta["n_events"],
                        passes=1)
    assert rec["why_not"] is None
    algorithm = variant.split("-")[0].split("+")[0]
    assert rec["codec"] == algorithm
    # each stored block is one: as many as the file's own count where it states one
    layout = formats.get(fmt).describe(path)
    if fmt == "ttree":
        assert rec["blocks"] == layout["baskets"]
    if fmt == "rntuple":
        assert rec["blocks"] == layout["pages"]
    if fmt == "hdf5":  # every stored chunk of every dataset
        assert rec["zipped_bytes"] == layout["zip_bytes"]
    if fmt == "orc":  # the stripes' data streams, less the blocks' 3-byte headers
        assert rec["zipped_bytes"] + 3 * rec["blocks"] * (algorithm != "none") == \
            layout["zip_bytes"]
    assert rec["events_per_s_new"] > 0
    keeps_context = algorithm in ("zstd", "gzip") or (fmt, algorithm) == ("orc", "zlib")
    assert (rec["events_per_s_reused"] is not None) == keeps_context
    if algorithm == "none":
        assert rec["new_how"] == "memcpy"
        assert rec["zipped_bytes"] == rec["unzipped_bytes"]
    else:
        assert rec["zipped_bytes"] < rec["unzipped_bytes"]


def test_a_selection_takes_only_its_blocks(written, source_meta, selection):
    path = written("ttree", "zstd-5")
    b = formats.get("ttree").blocks(path, selection)
    everything = formats.get("ttree").blocks(path, list(source_meta["checksums"]))
    assert 0 < len(b.offsets) < len(everything.offsets)
    assert set(b.offsets) < set(everything.offsets)


@pytest.mark.parametrize(("fmt", "variant", "why"), [("parquet", "snappy", "snappy"),
                                                     ("feather", "lz4", "LZ4 frame"),
                                                     ("hdf5", "lzf", "lzf"),
                                                     ("orc", "snappy", "snappy")])
def test_a_file_without_a_bound_says_why(written, source_meta, fmt, variant, why):
    rec = bound.measure(written(fmt, variant), formats.entry(fmt).module, ["nMuon"],
                        source_meta["n_events"], passes=1)
    assert rec.get("new_s") is None and why in rec["why_not"]


def _hand_made(tmp_path):
    """A file of three gzip members and a stored block between them, at known offsets."""
    parts = [gzip.compress(bytes(range(256)) * 40, mtime=0), b"x" * 1000,
             gzip.compress(b"hepfmt" * 5000, mtime=0), gzip.compress(b"\0" * 70000, mtime=0)]
    sizes = [10240, 1000, 30000, 70000]
    path = tmp_path / "blocks.bin"
    offsets, data = [], b"HEAD"
    for p in parts:
        offsets.append(len(data))
        data += p + b"pad"
    path.write_bytes(data)
    return path, Blocks("gzip", "gzip", "gzip-reused", offsets, [len(p) for p in parts], sizes)


def test_the_bound_of_a_hand_made_file(tmp_path):
    path, blocks = _hand_made(tmp_path)
    for how in ("gzip", "gzip-reused"):
        s = bound.median_pass(path, blocks, how, 3)
        assert 0 < s < 10
    rec = bound.CodecBound("gzip", 4, sum(blocks.zipped), sum(blocks.unzipped), 3, "gzip",
                           "gzip-reused", 0.002, 0.001, 1000)
    assert rec.events_per_s() == pytest.approx(500_000)
    assert rec.events_per_s(reused=True) == pytest.approx(1_000_000)
    assert rec.mb_per_s() == pytest.approx(111240 / 0.002 / 1e6)
    fr = bound_fractions(250_000, rec.record())
    assert fr["fraction_of_bound_new"] == pytest.approx(0.5)
    assert fr["fraction_of_bound_reused"] == pytest.approx(0.25)
    assert bound_fractions(None, rec.record())["fraction_of_bound_new"] is None
    assert bound_fractions(1.0, None)["fraction_of_bound_new"] is None


def test_a_wrong_size_or_offset_is_an_error_naming_the_file(tmp_path):
    path, blocks = _hand_made(tmp_path)
    wrong = Blocks("gzip", "gzip", None, blocks.offsets, blocks.zipped,
                   [blocks.unzipped[0] + 1, *blocks.unzipped[1:]])
    with pytest.raises(InputError, match=r"blocks\.bin.*block 0"):
        bound.median_pass(path, wrong, "gzip", 1)
    beyond = Blocks("gzip", "gzip", None, [os.path.getsize(path)], [10], [10])
    with pytest.raises(InputError, match="beyond the end"):
        bound.median_pass(path, beyond, "memcpy", 1)
    shifted = Blocks("gzip", "gzip", None, [o + 1 for o in blocks.offsets], blocks.zipped,
                     blocks.unzipped)
    with pytest.raises(InputError, match=r"blocks\.bin"):
        bound.median_pass(path, shifted, "gzip", 1)


def test_a_listing_that_does_not_fit_the_file_is_refused(tmp_path):
    """Damaged metadata can state any size: refused before the bound allocates for it."""
    path, good = _hand_made(tmp_path)
    bound.check_listing(path, good)
    for bad, why in ((Blocks("gzip", "gzip", None, good.offsets, [10**9] * 4, good.unzipped),
                      "more than the file"),
                     (Blocks("gzip", "gzip", None, good.offsets, good.zipped, [2**40] * 4),
                      "more than any format stores")):
        with pytest.raises(InputError, match=why):
            bound.check_listing(path, bad)


def _varint(n: int) -> bytes:
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out


def _i32(delta: int, v: int) -> bytes:
    return bytes([delta << 4 | 5]) + _varint((v << 1) ^ (v >> 31))


def test_parquet_page_headers_by_hand():
    """Two pages in Thrift's compact protocol: a v1 page with statistics to skip (a binary
    field, booleans), then a v2 page whose 7 level bytes precede its compressed values."""
    stats = bytes([0x18]) + _varint(3) + b"abc" + bytes([0x11, 0x12, 0x00])  # binary, bools
    v1 = (_i32(1, 0) + _i32(1, 100) + _i32(1, 40)
          + bytes([0x2C]) + _i32(1, 10) + _i32(1, 0) + bytes([0x3C]) + stats + b"\0" + b"\0")
    v2 = (_i32(1, 3) + _i32(1, 107) + _i32(1, 57)
          + bytes([0x5C]) + _i32(1, 10) + _i32(1, 0) + _i32(1, 10) + _i32(1, 0) + _i32(1, 4)
          + _i32(1, 3) + b"\0" + b"\0")
    data = v1 + b"p" * 40 + v2 + b"q" * 57
    pages = chunk_pages(data, 1000)
    assert [(p.offset, p.zipped, p.unzipped) for p in pages] == [
        (1000 + len(v1), 40, 100), (1000 + len(v1) + 40 + len(v2) + 7, 50, 100)]
    with pytest.raises(ThriftError):
        chunk_pages(data[:-10], 1000)  # the last page runs past the chunk
    with pytest.raises(ThriftError):
        chunk_pages(v1[:5], 0)


def test_layers_sorts_perf_symbols():
    from hepfmt.measure.layers import OTHER, classify

    report = """# comment
    40.00%  libCore.so          [.] ZSTD_decompressBlock_internal
    30.00%  libTree.so          [.] TBranch::GetEntry(long long, int)
    10.00%  libTreePlayer.so    [.] (anonymous namespace)::TObjectArrayReader::At
    10.00%  libROOTDataFrame.so [.] ROOT::Detail::RDF::RLoopManager::RunAndCheckFilters
     5.00%  [kernel.kallsyms]   [k] clear_page_erms
     5.00%  libfoo.so           [.] mystery
"""
    shares, others = classify(report)
    assert shares["decompression"] == pytest.approx(0.40)
    assert shares["per-entry branch reading (TTree I/O)"] == pytest.approx(0.30)
    assert shares["reader proxies (TTreeReader)"] == pytest.approx(0.10)
    assert shares["RDataFrame actions and column readers"] == pytest.approx(0.10)
    assert shares["memory (allocation, copies, page faults)"] == pytest.approx(0.05)
    assert shares[OTHER] == pytest.approx(0.05)
    assert others == [(pytest.approx(0.05), "libfoo.so [.] mystery")]
