"""Synthetic samples keep the exact relations of their source (issue 41, item 1).

The source is written here with uproot as NanoAOD v15 written by uproot is: one counter per
jagged branch (``nJet_pt``, ``nJet_eta``) plus the shared ``nJet`` as a plain integer branch
that no list names as its counter, and branches that are exact copies of others (a jagged
``Jet_etacopy``, a flat ``LHE_HTIncoming``). Before relations were learned, ``nJet`` agreed
with ``len(Jet_pt)`` in a fraction of the generated events and copies were drawn apart.
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
from hepfmt.samples.importer import import_tree
from hepfmt.samples.learn import extract
from hepfmt.samples.model import Model
from hepfmt.samples.relations_model import (
    Relations,
    broken_relations,
    by_chance,
    relations_of_source,
)
from hepfmt.samples.source import open_source, to_column

N = 400


def _write(path: Path, branches: dict[str, object]) -> Path:
    with uproot.recreate(path) as f:
        f.mktree("Events", {k: v.type.content if isinstance(v, ak.Array) else v.dtype
                            for k, v in branches.items()})
        f["Events"].extend(branches)
    return path


@pytest.fixture(scope="module")
def per_branch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Per-branch counters, a plain shared counter per collection, and copies."""
    rng = np.random.default_rng(5)
    nj, nm = rng.poisson(3, N).astype(np.int32), rng.poisson(1, N).astype(np.int32)
    eta = ak.unflatten(rng.normal(0, 2, int(nj.sum())).astype(np.float32), nj)
    ht = rng.exponential(100, N).astype(np.float32)
    return _write(tmp_path_factory.mktemp("relations") / "per_branch.root", {
        "nJet": nj.astype(np.uint32),
        "Jet_pt": ak.unflatten(rng.exponential(30, int(nj.sum())).astype(np.float32), nj),
        "Jet_eta": eta, "Jet_etacopy": eta,
        "nMuon": nm, "Muon_pt": ak.unflatten(rng.exponential(20, int(nm.sum())), nm),
        "LHE_HT": ht, "LHE_HTIncoming": ht.copy(),
        "nOther": rng.poisson(3, N).astype(np.int32),  # not a length: drawn on its own
        "run": np.ones(N, np.uint32)})


@pytest.fixture(scope="module")
def model(per_branch: Path) -> Model:
    return extract(per_branch)


def _lengths(table, name: str) -> np.ndarray:
    return np.diff(to_column(table[name]).offsets)


def test_relations_learned(model: Model) -> None:
    assert model.schema["Jet_pt"].counter == "nJet_pt"  # uproot's per-branch counter
    assert model.schema["nJet"].counter is None and "nJet" not in model.schema.counters()
    assert model.relations.lengths == {"nJet": "Jet", "nMuon": "Muon"}
    assert model.relations.copies == {"Jet_etacopy": "Jet_eta", "LHE_HTIncoming": "LHE_HT"}


@pytest.mark.parametrize("process", ["DYJetsToLL", "TTJets"])  # TTJets scales Jet by 1.7
def test_generated_sample_keeps_them(model: Model, tmp_path: Path, process: str) -> None:
    out = tmp_path / "s.arrow"
    generate(model, process, 3, 200, out)
    t = open_source(out).read_all()
    jets = _lengths(t, "Jet_pt")
    assert np.array_equal(t["nJet"].to_numpy(), jets)  # in 100% of events
    assert np.array_equal(t["nJet_eta"].to_numpy(), jets)
    assert np.array_equal(t["nMuon"].to_numpy(), _lengths(t, "Muon_pt"))
    assert t["Jet_etacopy"].equals(t["Jet_eta"]) and t["LHE_HTIncoming"].equals(t["LHE_HT"])
    assert not np.array_equal(t["nOther"].to_numpy(), jets)
    assert broken_relations(out, model) == []


def test_broken_relations_are_named(model: Model, tmp_path: Path) -> None:
    """A sample generated without the relations breaks each one, and each is named."""
    out = tmp_path / "s.arrow"
    bare = Model(model.schema, model.values, model.multiplicity, model.n_events, model.origin)
    generate(bare, "DYJetsToLL", 3, 200, out)
    lines = broken_relations(out, model)
    assert [line.split()[0] for line in lines] == \
        ["nJet", "nMuon", "Jet_etacopy", "LHE_HTIncoming"]
    assert lines[0].startswith("nJet is not the length of Jet_pt in ")


def test_real_files_relations_check_a_model_without_them(model: Model, per_branch: Path,
                                                         tmp_path: Path) -> None:
    """The relations of the imported real file judge a sample of a model that has none (a
    model learned before relations were, or the built-in one)."""
    real = tmp_path / "real.arrow"
    schema = import_tree(str(per_branch), "Events", real)
    found = relations_of_source(real, schema)
    assert found == model.relations
    assert broken_relations(real, model, found) == []
    bare = Model(model.schema, model.values, model.multiplicity, model.n_events, model.origin)
    generate(bare, "DYJetsToLL", 3, 100, tmp_path / "s.arrow")
    assert len(broken_relations(tmp_path / "s.arrow", bare, found)) == 4


def test_relations_change_only_their_own_branches(model: Model, tmp_path: Path) -> None:
    """Values drawn for a related branch are replaced, not skipped: every other branch is what
    it was without the relations."""
    bare = Model(model.schema, model.values, model.multiplicity, model.n_events, model.origin)
    generate(model, "DYJetsToLL", 3, 200, tmp_path / "with.arrow")
    generate(bare, "DYJetsToLL", 3, 200, tmp_path / "without.arrow")
    a, b = (open_source(tmp_path / f).read_all() for f in ("with.arrow", "without.arrow"))
    changed = {n for n in a.schema.names if not a[n].equals(b[n])}
    assert changed == {"nJet", "nMuon", "Jet_etacopy", "LHE_HTIncoming"}


def test_model_file_round_trip_and_old_models(model: Model, tmp_path: Path,
                                              per_branch: Path) -> None:
    assert main(["schema", "extract", str(per_branch), "-o", str(tmp_path / "m.json")]) == 0
    again = Model.from_json(tmp_path / "m.json")
    assert again.relations == model.relations
    doc = json.loads((tmp_path / "m.json").read_text())
    del doc["relations"]  # a model written before relations were learned
    (tmp_path / "old.json").write_text(json.dumps(doc))
    assert not Model.from_json(tmp_path / "old.json").relations


def test_impossible_relation_refused(model: Model, tmp_path: Path) -> None:
    doc = json.loads(Path(_saved(model, tmp_path)).read_text())
    doc["relations"]["copies"]["run"] = "LHE_HT"  # uint32 and float32
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"bad.json: relation run = LHE_HT: not a copy"):
        Model.from_json(tmp_path / "bad.json")


def _saved(model: Model, tmp_path: Path) -> Path:
    model.to_json(tmp_path / "m.json")
    return tmp_path / "m.json"


def test_subset_keeps_relations_with_both_ends(model: Model) -> None:
    sub = model.subset(["Jet_pt", "Jet_etacopy", "nJet", "LHE_HTIncoming"])
    assert sub.relations == Relations({"nJet": "Jet"}, {})


def test_shared_counter_file_has_no_length_relation(tmp_path: Path) -> None:
    """CMSSW-style: one counter ``nX`` named by every ``X_*`` list is the schema's counter,
    not a relation; equality by chance on a few values is no relation either."""
    rng = np.random.default_rng(2)
    counts = rng.poisson(2, 50)
    flags = rng.random(int(counts.sum())) < 0.98
    x = ak.zip({"pt": ak.unflatten(rng.random(int(counts.sum())).astype(np.float32), counts),
                "a": ak.unflatten(flags, counts), "b": ak.unflatten(flags.copy(), counts)})
    m = extract(_write(tmp_path / "shared.root", {"X": x}))
    assert m.schema["X_pt"].counter == "nX"
    assert m.relations == Relations()  # X_b == X_a: 92 values at 98%, chance 0.02


def test_chance_of_agreement() -> None:
    rng = np.random.default_rng(0)
    assert by_chance(np.array([0, 1] * 5))  # 2**-10: ten coin flips agree by chance
    assert not by_chance(np.array([0, 1] * 20))  # 2**-40
    assert not by_chance(rng.random(10).astype(np.float32))
