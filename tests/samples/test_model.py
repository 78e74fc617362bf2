"""The value model: learned from a ROOT file whose properties the test knows, sampled back.

The file is written here with uproot (a TTree, with counter ``nX``), so every learned number
(types, mantissa bits, multiplicities, rates, orderings, sequences) has a known right answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import awkward as ak
import numpy as np
import pytest
import uproot

from hepfmt.cli import main
from hepfmt.errors import InputError
from hepfmt.samples.generate import generate
from hepfmt.samples.learn import extract
from hepfmt.samples.model import Model, ValueModel, mantissa_bits, round_mantissa
from hepfmt.samples.source import open_source, read_source_meta, to_column

N = 400
PMF = {0: 0.25, 1: 0.25, 2: 0.25, 3: 0.25}
REPEAT = 0.5


@pytest.fixture(scope="module")
def known(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree with known properties (see the assertions below)."""
    rng = np.random.default_rng(11)
    counts = np.repeat(np.array(list(PMF)), N // len(PMF))
    rng.shuffle(counts)
    total = int(counts.sum())
    pt = round_mantissa(rng.exponential(30, total).astype(np.float32) + 5, 10)
    pt = ak.sort(ak.unflatten(pt, counts), ascending=False)  # pt-ordered, like NanoAOD
    eta = ak.unflatten(round_mantissa(rng.normal(0, 1.5, total).astype(np.float32), 12), counts)
    ids = ak.unflatten(rng.choice(np.array([0, 2, 6], np.int32), total, p=[0.1, 0.3, 0.6]),
                       counts)
    vz = rng.normal(0, 5, total).astype(np.float32)  # copies of the previous value half the time
    first = np.cumsum(counts) - counts
    for i in range(1, total):
        if i not in first and rng.random() < REPEAT:
            vz[i] = vz[i - 1]
    X = ak.zip({"pt": ak.values_astype(pt, np.float32), "eta": eta, "id": ids,
                "vz": ak.unflatten(vz, counts)})
    met = (rng.exponential(40, N) + 1).astype(np.float32)  # full precision
    path = tmp_path_factory.mktemp("known") / "known.root"
    with uproot.recreate(path) as f:
        f.mktree("Events", {"X": X.type.content, "flag": np.bool_, "never": np.bool_,
                            "HLT_a": np.bool_, "HLT_b": np.bool_, "HLT_c": np.bool_,
                            "MET_pt": np.float32, "run": np.uint32, "event": np.uint64})
        hlt = rng.random(N) < 0.3
        f["Events"].extend({
            "X": X, "flag": np.arange(N) % 4 == 0, "never": np.zeros(N, bool),
            "HLT_a": hlt, "HLT_b": hlt, "HLT_c": np.arange(N) % 4 == 0, "MET_pt": met,
            "run": np.ones(N, np.uint32),
            "event": rng.permutation(np.arange(1000, 1000 + 3 * N, 3)).astype(np.uint64)})
    return path


@pytest.fixture(scope="module")
def model(known: Path) -> Model:
    return extract(known)


def test_types_and_collections(model: Model) -> None:
    s = model.schema
    assert s["nX"].counter is None and s["X_pt"].counter == "nX"
    assert (s["X_pt"].dtype, s["X_id"].dtype, s["flag"].dtype, s["event"].dtype) == \
        ("float32", "int32", "bool", "uint64")
    assert model.n_events == N


def test_multiplicity_distribution(model: Model) -> None:
    assert {int(k): v for k, v in model.multiplicity["X"].items()} == PMF


def test_mantissa_bits_stored(model: Model) -> None:
    assert model.values["X_pt"].mantissa_bits == 10
    assert model.values["X_eta"].mantissa_bits == 12
    assert model.values["MET_pt"].mantissa_bits == 23


def test_rates_masses_orderings_sequences(model: Model) -> None:
    v = model.values
    assert v["flag"].rate == pytest.approx(0.25) and v["never"].rate == 0.0
    assert set(v["X_id"].masses) == {"0", "2", "6"} and not v["X_id"].quantiles
    assert v["run"].masses == {"1": 1.0}
    assert v["X_pt"].sorted_desc and not v["X_eta"].sorted_desc
    assert v["event"].kind == "sequence" and v["event"].first == 1000
    assert v["event"].masses == {"3": 1.0}


def test_runs_and_identical_flags(model: Model) -> None:
    """Runs within an event (generator-level copies) and bools identical to an earlier one
    (trigger aliases; RNTuple stores their identical pages once) are learned; an alias is
    only taken within a rate class (HLT_c fires with flag, but a process scales HLT rates)."""
    v = model.values
    assert v["X_vz"].repeat == pytest.approx(REPEAT, abs=0.1)
    assert v["X_pt"].repeat == 0.0 and v["X_id"].repeat == 0.0  # chance equalities only
    assert not v["X_id"].follows and not v["X_id"].starts  # independent: no chain
    assert v["HLT_b"].same_as == "HLT_a" and v["HLT_a"].same_as is None
    assert v["HLT_c"].same_as is None and v["never"].same_as is None


def test_json_round_trip_and_schema_only_file(model: Model, tmp_path: Path) -> None:
    model.to_json(tmp_path / "m.json")
    back = Model.from_json(tmp_path / "m.json")
    assert back.schema == model.schema and back.multiplicity == model.multiplicity
    assert back.values["X_pt"].quantiles == model.values["X_pt"].quantiles
    doc = json.loads((tmp_path / "m.json").read_text())
    del doc["values"]
    (tmp_path / "schema.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match="schema extract"):
        Model.from_json(tmp_path / "schema.json")


def test_generated_statistics_follow_the_model(model: Model, tmp_path: Path) -> None:
    out = tmp_path / "g.arrow"
    generate(model, "DYJetsToLL", 3, 20_000, out)
    t = open_source(out).read_all()
    n = to_column(t.column("nX")).values
    assert n.mean() == pytest.approx(1.5, abs=0.05)
    assert set(np.unique(n)) == set(PMF)
    assert to_column(t.column("flag")).values.mean() == pytest.approx(0.25, abs=0.02)
    assert not to_column(t.column("never")).values.any()
    ids = to_column(t.column("X_id")).values
    assert {int(k): round(float((ids == k).mean()), 1) for k in (0, 2, 6)} == \
        {0: 0.1, 2: 0.3, 6: 0.6}
    pt = to_column(t.column("X_pt")).values
    assert mantissa_bits(pt) <= 10 and mantissa_bits(to_column(t.column("MET_pt")).values) > 16
    assert np.median(pt) == pytest.approx(np.median(model.values["X_pt"].quantiles), rel=0.15)
    events = to_column(t.column("event")).values
    assert (np.diff(events[:10_000].astype(np.int64)) == 3).all()
    vz = to_column(t.column("X_vz"))
    same_event = np.repeat(np.arange(len(vz.offsets) - 1), np.diff(vz.offsets))
    pairs = same_event[1:] == same_event[:-1]
    assert np.mean((vz.values[1:] == vz.values[:-1])[pairs]) == pytest.approx(REPEAT, abs=0.1)
    assert (to_column(t.column("HLT_b")).values == to_column(t.column("HLT_a")).values).all()
    assert not (to_column(t.column("HLT_c")).values == to_column(t.column("flag")).values).all()


def test_masses_and_quantiles_mix() -> None:
    """A branch that is 40% exactly -1 (a NanoAOD default) and otherwise continuous."""
    vm = ValueModel("number", masses={"-1.0": 0.4}, quantiles=[0.0, 1.0, 2.0])
    x = vm.sample(np.random.default_rng(5), 100_000, np.dtype(np.float32))
    assert (x == -1).mean() == pytest.approx(0.4, abs=0.01)
    rest = x[x != -1]
    assert rest.min() >= 0 and rest.max() <= 2 and np.median(rest) == pytest.approx(1, abs=0.02)


def test_schema_extract_import_and_validate_cli(known: Path, tmp_path: Path, capsys) -> None:
    assert main(["schema", "extract", str(known), "-o", str(tmp_path / "m.json")]) == 0
    assert Model.from_json(tmp_path / "m.json").schema.names[0] == "nX"

    src = tmp_path / "real.arrow"
    assert main(["import", str(known), "-o", str(src)]) == 0
    meta = read_source_meta(src)
    tree = uproot.open(known)["Events"]
    pt = ak.flatten(tree["X_pt"].array()).to_numpy()
    assert meta["n_events"] == N and meta["checksums"]["X_pt"][0] == pt.size
    assert meta["source_file"] == str(known) and meta["process"] == "real"

    assert main(["validate-model", str(known), str(tmp_path / "m.json"), "--report-only",
                 "-o", str(tmp_path / "fidelity.md")]) == 0
    text = (tmp_path / "fidelity.md").read_text()
    assert "Normalised size per codec" in text and "Worst offenders" in text
    for row in ("| ttree    | lzma-9", "| rntuple  | zstd-5", "| parquet  | none+dict"):
        assert row in text
    assert "hepfmt" not in capsys.readouterr().err  # no error line, whatever the verdict


def test_unreadable_file_names_it(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.root"
    bad.write_bytes(b"not root")
    assert main(["schema", "extract", str(bad), "-o", str(tmp_path / "m.json")]) == 2
    assert "bad.root" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()
