"""Selections follow each sample's schema: the 2018 ten-branch list reads ``MET_pt`` or
``PFMET_pt``, ``nJet`` or ``nJet_pt``, whichever the sample has; patterns expand; and a branch
no sample has is refused before any job, naming the branch and the sample."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from hepfmt.cli import main
from hepfmt.errors import ConfigError
from hepfmt.plan import commands, selections
from hepfmt.plan import config as cfg
from hepfmt.plan.record import record
from hepfmt.plan.selections import Unresolved, resolve
from hepfmt.samples.schema import Branch, Schema

ROOT = Path(__file__).resolve().parents[2]
#: The 2018 list as the config's default writes it.
TEN = yaml.safe_load("[nMuon, Muon_pt, Muon_eta, Muon_phi, [MET_pt, PFMET_pt], nJet, Jet_pt, "
                     "Jet_eta, Jet_phi, Jet_mass]")


def _nanoaod(met: str = "MET_pt", per_branch_counters: bool = False) -> Schema:
    """A NanoAOD-like schema: CMSSW's shared counters, or uproot's one per jagged branch."""
    branches = [Branch("run", "uint32"), Branch(met, "float32")]
    for collection, members in (("Muon", ["pt", "eta", "phi", "charge"]),
                                ("Jet", ["area", "pt", "eta", "phi", "mass"])):
        if not per_branch_counters:
            branches.append(Branch(f"n{collection}", "uint32"))
        for m in members:
            name = f"{collection}_{m}"
            counter = f"n{name}" if per_branch_counters else f"n{collection}"
            if per_branch_counters:
                branches.append(Branch(counter, "int32"))
            branches.append(Branch(name, "float32", counter))
    return Schema(tuple(branches), "hand-made")


def test_met_is_whichever_the_sample_has() -> None:
    assert resolve(TEN, _nanoaod("MET_pt"))[4] == "MET_pt"
    assert resolve(TEN, _nanoaod("PFMET_pt"))[4] == "PFMET_pt"  # NanoAOD v15
    both = Schema((*_nanoaod().branches, Branch("PFMET_pt", "float32")))
    assert resolve(TEN, both)[4] == "MET_pt"  # the first alternative that exists


def test_counters_follow_the_sample() -> None:
    assert resolve(TEN, _nanoaod()) == ["nMuon", "Muon_pt", "Muon_eta", "Muon_phi", "MET_pt",
                                        "nJet", "Jet_pt", "Jet_eta", "Jet_phi", "Jet_mass"]
    uproot_style = resolve(TEN, _nanoaod(per_branch_counters=True))
    # nJet is the counter of a Jet member the selection reads (not nJet_area, the first)
    assert uproot_style[0] == "nMuon_pt" and uproot_style[5] == "nJet_pt"
    assert resolve(["nJet"], _nanoaod(per_branch_counters=True)) == ["nJet_area"]
    with pytest.raises(Unresolved):
        resolve(["nTau"], _nanoaod())  # no collection Tau: not a counter of anything


def test_patterns_expand_in_schema_order_once() -> None:
    schema = _nanoaod()
    assert resolve(["Muon_*"], schema) == ["Muon_pt", "Muon_eta", "Muon_phi", "Muon_charge"]
    assert resolve(["Muon_pt", "Muon_*", "Jet_[pe]t*"], schema) == [
        "Muon_pt", "Muon_eta", "Muon_phi", "Muon_charge", "Jet_pt", "Jet_eta"]
    assert resolve([["Tau_*", "*MET_pt"]], schema) == ["MET_pt"]
    assert resolve("*", schema) == "*"
    with pytest.raises(Unresolved, match="'Tau_\\*' matches no branch"):
        resolve(["Muon_pt", "Tau_*"], schema)
    with pytest.raises(Unresolved, match="none of \\['MET_pt', 'PuppiMET_pt'\\]"):
        resolve([["MET_pt", "PuppiMET_pt"]], _nanoaod("PFMET_pt"))


def test_the_command_line_spells_alternatives_and_reads_them_back() -> None:
    assert selections.to_cli(TEN).split(",")[4] == "MET_pt|PFMET_pt"
    assert selections.from_cli(selections.to_cli(TEN)) == TEN
    assert selections.from_cli("*") == "*"


def _real_parquet(path: Path, met: str) -> Path:
    """Real NanoAOD as awkward writes it: list columns, no counters."""
    floats = pa.list_(pa.float32())
    cols = {"run": pa.array([1, 1, 1], pa.uint32()), met: pa.array([1.0, 2.0, 3.0], pa.float32())}
    for name in ("Muon_pt", "Muon_eta", "Muon_phi", "Jet_pt", "Jet_eta", "Jet_phi", "Jet_mass"):
        cols[name] = pa.array([[1.0], [], [2.0, 3.0]], floats)
    pq.write_table(pa.table(cols), path)
    return path


def _config(sample_file: Path, **selections_: object) -> dict:
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["cluster_sizes"] = [3]
    c["samples"]["real"] = {"file": str(sample_file)}
    if selections_:
        c["measure"]["selections"] = selections_
    return c


def test_a_real_sample_reads_its_own_branches(tmp_path: Path) -> None:
    c = cfg.validate(_config(_real_parquet(tmp_path / "v15.parquet", "PFMET_pt")))
    plan = {s["name"]: s["resolved"] for s in record(c)["selections"]}
    assert plan["ten"]["real"][4:6] == ["PFMET_pt", "nJet"]  # nJet: made on import
    assert plan["ten"]["TTJets"][4] == "MET_pt"
    assert plan["all"]["real"] == "*"
    words = commands.selections(c, "real").split()
    assert words[words.index("--selection", 1) + 1].startswith("ten=nMuon,Muon_pt")
    assert "PFMET_pt" in words[words.index("--selection", 1) + 1]


def test_a_branch_a_sample_lacks_is_refused_naming_it_and_the_sample(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    c = _config(_real_parquet(tmp_path / "nano.parquet", "MET_pt"),
                taus=["Muon_pt", "Tau_pt"])  # the generated samples have taus, the file not
    with pytest.raises(ConfigError) as err:
        cfg.validate(c)
    assert str(err.value) == ("config key 'measure.selections.taus[1]': 'Tau_pt' matches no "
                              "branch of sample 'real' (nano.parquet)")
    c["measure"]["selections"] = {"met": ["PFMET_pt"]}  # v15's name, not the model's
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(c))
    assert main(["check-config", str(path)]) == 2
    message = capsys.readouterr().err
    assert "config key 'measure.selections.met[0]': 'PFMET_pt' matches no branch of sample " \
           "'DYJetsToLL'" in message


def test_a_selection_item_that_the_command_line_cannot_carry_is_refused(tmp_path: Path) -> None:
    c = _config(_real_parquet(tmp_path / "nano.parquet", "MET_pt"), bad=["Muon_pt,Jet_pt"])
    with pytest.raises(ConfigError, match=r"measure\.selections\.bad"):
        cfg.validate(c)
