"""The source sample's normalisation (naive bytes) and reference checksums, checked by hand."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from hepfmt.samples.generate import arrow_schema
from hepfmt.samples.schema import Branch, Schema
from hepfmt.samples.source import describe_source, naive_bytes, to_arrow, to_column

F32 = {1.0: 0x3F800000, 2.0: 0x40000000, 3.0: 0x40400000, 4.0: 0x40800000, 5.0: 0x40A00000}


@pytest.mark.parametrize(("dtype", "n", "want"), [
    ("bool", 8, 1.0), ("bool", 12, 1.5), ("bool", 0, 0.0), ("uint8", 5, 5), ("int16", 5, 10),
    ("uint32", 3, 12), ("float32", 10, 40), ("int64", 2, 16), ("float64", 3, 24),
])
def test_naive_bytes(dtype, n, want):
    """The 2018 normalisation: a boolean is one bit, an n-byte number n bytes."""
    assert naive_bytes(Branch("x", dtype), n) == want


def _tiny(tmp_path) -> tuple[Schema, object]:
    """3 events in 2 record batches: nX = [2, 0, 3], X_pt = [[1, 2], [], [3, 4, 5]],
    flag = [True, False, True]."""
    schema = Schema((Branch("nX", "uint32"), Branch("X_pt", "float32", "nX"),
                     Branch("flag", "bool")), origin="tiny")
    batches = [
        ([2, 0], [1.0, 2.0], [0, 2, 2], [True, False]),
        ([3], [3.0, 4.0, 5.0], [0, 3], [True]),
    ]
    path = tmp_path / "tiny.arrow"
    with pa.OSFile(str(path), "wb") as sink, \
            pa.ipc.new_file(sink, arrow_schema(schema)) as w:
        for n, pt, off, flag in batches:
            w.write_batch(pa.RecordBatch.from_arrays([
                to_arrow(schema["nX"], np.array(n, np.uint32), None),
                to_arrow(schema["X_pt"], np.array(pt, np.float32), np.array(off)),
                to_arrow(schema["flag"], np.array(flag), None),
            ], schema=arrow_schema(schema)))
    return schema, path


def test_describe_source_by_hand(tmp_path):
    """Counters count (4 bytes each), jagged values are counted once per value, bools are bits;
    checksums are merged across record batches."""
    schema, path = _tiny(tmp_path)
    d = describe_source(path, schema)
    assert d["n_events"] == 3
    assert d["naive_bytes_by_branch"] == {"nX": 12, "X_pt": 20, "flag": 0.375}
    assert d["naive_bytes"] == 32.375
    assert d["naive_bytes_by_group"] == {"event": 12.375, "X": 20}
    assert {b: c[:2] for b, c in d["checksums"].items()} == {
        "nX": [3, 5],
        "X_pt": [5, sum(F32.values())],
        "flag": [3, 2],
    }
    # positions count over the whole branch, across batches (nX: 2, 0, 3 in two batches)
    assert d["checksums"]["nX"][2:] == [1 * 2 + 2 * 0 + 3 * 3, (ord("i") << 8) | 4]


def test_to_column_of_sliced_list():
    """A sliced Arrow list array has offsets that do not start at 0; the flat view must cover
    only the slice, with offsets rebased to 0."""
    arr = to_arrow(Branch("X_pt", "float32", "nX"), np.arange(6, dtype=np.float32),
                   np.array([0, 1, 3, 6])).slice(1, 2)
    col = to_column(arr)
    np.testing.assert_array_equal(col.offsets, [0, 2, 5])
    np.testing.assert_array_equal(col.values, [1, 2, 3, 4, 5])


def test_branch_groups():
    assert Branch("HLT_IsoMu24", "bool").group == "triggers"
    assert Branch("Flag_goodVertices", "bool").group == "triggers"
    assert Branch("Muon_pt", "float32", "nMuon").group == "Muon"
    assert Branch("nMuon", "uint32").group == "event"
    assert Branch("MET_pt", "float32").group == "event"


def test_fixture_sidecar_arithmetic(source_meta, source_table):
    """The generated sample's sidecar follows the same arithmetic on real-sized data."""
    n = source_meta["n_events"]
    assert n == 600
    by_branch = source_meta["naive_bytes_by_branch"]
    n_jets = int(to_column(source_table.column("nJet")).values.sum())
    assert by_branch["nJet"] == 4 * n
    assert by_branch["Jet_pt"] == 4 * n_jets
    assert by_branch["HLT_IsoMu24"] == n / 8
    assert by_branch["event"] == 8 * n
    assert source_meta["naive_bytes"] == pytest.approx(sum(by_branch.values()), rel=1e-12)
    assert sum(source_meta["naive_bytes_by_group"].values()) == \
        pytest.approx(source_meta["naive_bytes"], rel=1e-12)
    # run == 1 everywhere (learned); event's checksum is the sum of its values
    assert source_meta["checksums"]["run"][:2] == [n, n]
    events = to_column(source_table.column("event")).values
    assert source_meta["checksums"]["event"][:2] == [n, int(events.sum())]
    assert source_meta["checksums"]["Jet_pt"][0] == n_jets
    assert source_meta["process"] == "DYJetsToLL"
    assert source_meta["seed"] == 7
    assert len(source_meta["schema"]) == len(source_meta["checksums"]) == 1499
