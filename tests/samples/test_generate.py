"""The generator: deterministic NanoAOD-shaped events (counters, order, precision, processes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import hepfmt.samples.generate as gen
from hepfmt.errors import ConfigError
from hepfmt.samples.model import Model, default_model, round_mantissa
from hepfmt.samples.processes import PROCESSES
from hepfmt.samples.source import open_source, to_column

MODEL = default_model()
SMALL = MODEL.subset(["Jet_pt", "Jet_eta", "HLT_IsoMu24", "event"])


def _generate(tmp_path: Path, process: str = "DYJetsToLL", seed: int = 7, n: int = 600,
              model: Model | None = None, name: str | None = None) -> Path:
    out = tmp_path / (name or f"{process}_{seed}_{n}.arrow")
    gen.generate(model or MODEL, process, seed, n, out)
    return out


def _same(a: pa.RecordBatch | pa.Table, b: pa.RecordBatch | pa.Table) -> bool:
    """Bit-for-bit equality (NanoAOD has NaN-valued branches, which ``equals`` calls unequal)."""
    if a.schema != b.schema or a.num_rows != b.num_rows:
        return False
    for name in a.schema.names:
        x, y = to_column(a.column(name)), to_column(b.column(name))
        if x.values.tobytes() != y.values.tobytes():
            return False
        if (x.offsets is None) != (y.offsets is None) or (
                x.offsets is not None and not np.array_equal(x.offsets, y.offsets)):
            return False
    return True


def _batches(path: Path) -> list[pa.RecordBatch]:
    reader = open_source(path)
    return [reader.get_batch(i) for i in range(reader.num_record_batches)]


# --- determinism -------------------------------------------------------------------------------

def test_same_inputs_give_byte_identical_files(tmp_path, source):
    """Every number in the study depends on the source; it must be reproducible from
    (process, seed, n) alone, down to the bytes, including the fixture made through the CLI."""
    a = _generate(tmp_path, name="a.arrow")
    b = _generate(tmp_path, name="b.arrow")
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() == source.read_bytes()


def test_different_seed_gives_different_events(tmp_path, source_table):
    """The seed must actually matter, or 'independent samples' would be copies."""
    other = open_source(_generate(tmp_path, seed=8)).read_all()
    assert other.schema == source_table.schema
    assert not other.column("Jet_pt").equals(source_table.column("Jet_pt"))
    assert not other.column("nJet").equals(source_table.column("nJet"))


def test_one_go_equals_chunk_zero(source_table):
    """Fewer events than CHUNK are exactly chunk 0 of the chunk contract."""
    proc = PROCESSES["DYJetsToLL"]
    batch = gen.generate_chunk(MODEL, proc, 7, 0, 600)
    assert _same(pa.Table.from_batches([batch]), source_table)


def test_chunk_contract(tmp_path, monkeypatch):
    """Events are streamed in CHUNK-sized chunks whose content depends only on the chunk index:
    a longer sample extends a shorter one chunk by chunk, and event numbers are continuous."""
    monkeypatch.setattr(gen, "CHUNK", 200)
    proc = PROCESSES["TTJets"]
    long = _batches(_generate(tmp_path, "TTJets", 3, 600, SMALL))
    short = _batches(_generate(tmp_path, "TTJets", 3, 450, SMALL))
    assert [b.num_rows for b in long] == [200, 200, 200]
    assert [b.num_rows for b in short] == [200, 200, 50]
    for i, batch in enumerate(long):
        assert _same(batch, gen.generate_chunk(SMALL, proc, 3, i, 200))
    assert _same(short[0], long[0])
    assert _same(short[1], long[1])
    assert _same(short[2], gen.generate_chunk(SMALL, proc, 3, 2, 50))
    # event numbers: a sequence learned from the real file, continued chunk by chunk
    seq = SMALL.values["event"]
    for i, batch in enumerate(long):
        events = batch.column("event").to_numpy().astype(np.int64)
        assert (np.diff(events) > 0).all()
        assert events[0] == round(seq.first + i * 200 * seq.mean())


# --- NanoAOD shapes ----------------------------------------------------------------------------

def test_counters_equal_list_lengths(schema, source_table):
    """Readers (and ROOT leaf lists like Muon_pt[nMuon]) rely on every member of a collection
    having exactly counter-many values per event."""
    counters = schema.counters()
    assert len(counters) > 10
    for counter, members in counters.items():
        n = to_column(source_table.column(counter)).values
        assert n.dtype == np.dtype(schema[counter].dtype)
        for b in members:
            col = to_column(source_table.column(b.name))
            np.testing.assert_array_equal(np.diff(col.offsets), n, err_msg=b.name)
            assert col.values.dtype == np.dtype(b.dtype), b.name
        pmf = MODEL.multiplicity[members[0].collection]
        if len(pmf) == 1:  # fixed-length vectors (e.g. 33 PDF weights) stay fixed
            assert (n == int(next(iter(pmf)))).all(), counter


def test_jagged_pt_is_descending_within_events(schema, source_table):
    """NanoAOD collections are pt-ordered; the ordering changes how well pt compresses. The
    model learns which branches are ordered; the generator must keep them so."""
    checked = 0
    for b in schema.branches:
        if not MODEL.values.get(b.name) or not MODEL.values[b.name].sorted_desc:
            continue
        col = to_column(source_table.column(b.name))
        event = np.repeat(np.arange(len(col.offsets) - 1), np.diff(col.offsets))
        same_event = event[1:] == event[:-1]
        assert (col.values[1:][same_event] <= col.values[:-1][same_event]).all(), b.name
        checked += 1
    assert checked >= 5
    assert MODEL.values["Jet_pt"].sorted_desc and MODEL.values["Muon_pt"].sorted_desc


def test_reduced_mantissa_precision(source_table):
    """NanoAOD stores most floats with 10-12 mantissa bits; the trailing zero bits are what
    makes them compress, so the generator must reproduce them (and keep full precision where
    NanoAOD does)."""
    def low_bits(name: str, nbits: int) -> np.ndarray:
        u = to_column(source_table.column(name)).values.view(np.uint32)
        return u & np.uint32((1 << nbits) - 1)

    assert to_column(source_table.column("Jet_pt")).values.size > 1000
    assert (low_bits("Jet_pt", 13) == 0).all()  # 10 explicit bits kept
    assert (low_bits("Jet_eta", 11) == 0).all()  # 12 explicit bits kept
    assert (low_bits("Muon_pt", 13) != 0).any()  # full precision
    assert (low_bits("MET_pt", 13) != 0).any()  # full precision


def test_round_mantissa_known_values():
    """Rounding to nearest (ties away from zero) on hand-computed float32 bit patterns."""
    x = np.array([1.0, 1 + 2**-10, 1 + 2**-11, 1 + 2**-12, -(1 + 2**-11), 1.5,
                  np.float32(2 - 2**-23), 0.0], dtype=np.float32)
    got = round_mantissa(x, 10)
    want = np.array([1.0, 1 + 2**-10, 1 + 2**-10, 1.0, -(1 + 2**-10), 1.5, 2.0, 0.0],
                    dtype=np.float32)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    # 3.14159274 (0x40490FDB) to 3 bits: 1.1001001 -> 1.101 (0x40500000 = 3.25)
    assert round_mantissa(np.array([np.pi], np.float32), 3).view(np.uint32)[0] == 0x40500000
    # 23 or more bits keeps the value exactly
    y = np.array([np.pi, -1e-30], np.float32)
    np.testing.assert_array_equal(round_mantissa(y, 23).view(np.uint32), y.view(np.uint32))


def test_process_multiplicities_differ(tmp_path, source_table):
    """Samples exist because their content differs: ttbar has more jets than Drell-Yan."""
    dy = to_column(source_table.column("nJet")).values.astype(float)
    tt = to_column(open_source(_generate(tmp_path, "TTJets", 7, 6000, SMALL)).read_all()
                   .column("nJet")).values.astype(float)
    learned = sum(int(k) * p for k, p in MODEL.multiplicity["Jet"].items())
    assert abs(dy.mean() - learned) < 0.5
    assert tt.mean() == pytest.approx(PROCESSES["TTJets"].scale["Jet"] * learned, rel=0.05)


# --- errors ------------------------------------------------------------------------------------

def test_unknown_process_is_config_error(tmp_path):
    """A typo in a sample's process must name the key, not generate something."""
    out = tmp_path / "x.arrow"
    with pytest.raises(ConfigError, match="NoSuchProcess") as exc:
        gen.generate(SMALL, "NoSuchProcess", 1, 10, out)
    assert exc.value.key == "samples.NoSuchProcess"
    assert not out.exists()


@pytest.mark.parametrize("n", [0, -5])
def test_non_positive_events_is_config_error(tmp_path, n):
    out = tmp_path / "x.arrow"
    with pytest.raises(ConfigError, match="n_events"):
        gen.generate(SMALL, "DYJetsToLL", 1, n, out)
    assert not out.exists()
