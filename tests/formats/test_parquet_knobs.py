"""Parquet's 2026 knobs (statistics level, BYTE_STREAM_SPLIT, data page v2) and its readers
(pyarrow, awkward, polars, DuckDB): the file must show the knob, and every reader must still
return the source's exact checksums from it."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from hepfmt import formats
from hepfmt.errors import ConfigError, InputError

TUNED = {"byte_stream_split": "floats", "statistics": "page", "data_page_version": "2.0"}


@pytest.mark.parametrize("level", ["none", "chunk", "page"])
def test_statistics_level_is_what_the_file_shows(written, level):
    d = formats.get("parquet").describe(written("parquet", "zstd-3", statistics=level))
    assert d["statistics"] == level
    assert d["clusters"] == [250, 250, 100]


def test_byte_stream_split_on_floats_only(written, schema):
    """Every float column (jagged ones through their list element) and nothing else."""
    md = pq.ParquetFile(written("parquet", "zstd-3", **TUNED)).metadata
    rg = md.row_group(0)
    floats = {b.name for b in schema.branches if b.dtype.startswith("float")}
    for j in range(rg.num_columns):
        col = rg.column(j)
        bss = "BYTE_STREAM_SPLIT" in col.encodings
        assert bss == (col.path_in_schema.split(".")[0] in floats), col.path_in_schema


def test_byte_stream_split_helps_reduced_precision_floats(written):
    d = formats.get("parquet").describe
    plain = d(written("parquet", "zstd-3"))["zip_bytes_by_branch"]
    split = d(written("parquet", "zstd-3", byte_stream_split="floats"))["zip_bytes_by_branch"]
    floats = ["Muon_pt", "Jet_eta", "GenPart_phi", "MET_phi"]
    assert sum(split[b] for b in floats) < sum(plain[b] for b in floats)


@pytest.mark.parametrize("reader", ["pyarrow", "awkward", "polars", "duckdb"])
def test_readers_on_tuned_file(written, source_meta, selection, reader):
    r = formats.get("parquet").readers[reader]
    r.prepare(1)
    path = str(written("parquet", "zstd-3", **TUNED))
    want = {b: tuple(c) for b, c in source_meta["checksums"].items()}
    got = r.read(path, list(want))
    bad = [b for b in want if tuple(got[b]) != want[b]]
    assert not bad, f"{len(bad)} differ, e.g. {bad[:3]}"
    assert {b: tuple(c) for b, c in r.read(path, selection).items()} == \
        {b: want[b] for b in selection}


@pytest.mark.parametrize("reader", ["pyarrow", "awkward", "polars", "duckdb"])
def test_readers_name_the_file_on_bad_input(written, tmp_path, reader):
    r = formats.get("parquet").readers[reader]
    r.prepare(1)
    with pytest.raises(InputError, match="missing branches"):
        r.read(str(written("parquet", "none")), ["nMuon", "Muon_nonexistent"])
    bad = tmp_path / "truncated.parquet"
    bad.write_bytes(written("parquet", "none").read_bytes()[:5000])
    with pytest.raises(InputError, match=r"truncated\.parquet"):
        r.read(str(bad), ["nMuon"])


@pytest.mark.parametrize(("key", "value"), [("statistics", "full"), ("byte_stream_split", "ints")])
def test_bad_shorthand_is_a_config_error(source, tmp_path, key, value):
    f = formats.get("parquet")
    with pytest.raises(ConfigError, match=key):
        f.write(source, tmp_path / "x.parquet", f.variant("zstd-3"), 250, {key: value})
    assert not list(tmp_path.iterdir())
