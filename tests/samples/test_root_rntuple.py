"""RNTuple NanoAOD as ROOT writes it: ``RNTupleImporter`` keeps each TTree collection as an
untyped record collection (``_collection15`` holding ``Muon_pt``, ...) and shows it through
projected fields (``Muon_pt`` as ``RVec<float>``, ``nMuon`` as a cardinality), the usual way an
RNTuple NanoAOD is made from a TTree. Made here from the shared ``nano_dy.root`` (all 1499
branches), it must import to the same values as the TTree, branch by branch, and learn the
same model; a field hepfmt cannot take is named with its type as ROOT spells it.
"""

from __future__ import annotations

from pathlib import Path

import awkward as ak
import pytest
import uproot

from hepfmt.cli import main
from hepfmt.errors import InputError
from hepfmt.measure import fidelity
from hepfmt.samples.inputs import extract_schema, open_input
from hepfmt.samples.learn import extract
from hepfmt.samples.model import Model
from hepfmt.samples.source import read_source_meta

NANO = Path(__file__).resolve().parents[3] / "shared" / "nanoaod" / "nano_dy.root"
pytestmark = pytest.mark.skipif(not NANO.is_file(), reason=f"needs {NANO}")


def rntuple_importer(src: Path, out: Path) -> Path:
    """``src``'s Events TTree as ROOT's RNTupleImporter writes it (ROOT 6.40 keeps the
    importer in ROOT::Experimental)."""
    import ROOT

    importer = getattr(ROOT, "RNTupleImporter", None) or ROOT.Experimental.RNTupleImporter
    imp = importer.Create(str(src), "Events", str(out))
    imp.SetIsQuiet(True)
    imp.Import()
    return out


@pytest.fixture(scope="module")
def importer_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return rntuple_importer(NANO, tmp_path_factory.mktemp("root_rntuple") / "nano_dy.rntuple.root")


@pytest.fixture(scope="module")
def imported(importer_file: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    d = tmp_path_factory.mktemp("imported")
    out = {}
    for kind, path in (("rntuple", importer_file), ("ttree", NANO)):
        assert main(["import", str(path), "-o", str(d / f"{kind}.arrow")]) == 0
        out[kind] = read_source_meta(d / f"{kind}.arrow")
    return out


def test_the_importer_writes_records_with_projections(importer_file: Path) -> None:
    """What this test is about: the file holds untyped record collections (type "") and
    projected fields, which a type-name whitelist refused."""
    records = open_input(importer_file).obj.field_records
    untyped = [r.field_name for i, r in enumerate(records)
               if r.parent_field_id == i and not r.type_name]
    assert untyped and all(n.startswith("_collection") for n in untyped)
    assert any(r.field_name == "nMuon" and "Cardinality" in r.type_name for r in records)


def test_imports_to_the_trees_values_branch_by_branch(imported: dict[str, dict]) -> None:
    rnt, tree = imported["rntuple"], imported["ttree"]
    assert rnt["n_events"] == tree["n_events"] == 40
    assert len(rnt["checksums"]) == len(tree["checksums"]) == 1499
    differ = [b for b in tree["checksums"] if rnt["checksums"].get(b) != tree["checksums"][b]]
    assert not differ, differ[:10]
    key = lambda b: (b["name"], b["dtype"], b["counter"])  # noqa: E731 (the file order differs)
    assert sorted(map(key, rnt["schema"])) == sorted(map(key, tree["schema"]))


def test_cardinality_fields_are_the_counters(importer_file: Path) -> None:
    s = extract_schema(importer_file)
    assert s["Muon_pt"].counter == "nMuon" and s["nMuon"].dtype == "uint32"
    assert "_collection0" not in s.names


def test_schema_extract_learns_the_trees_model(importer_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "model.json"
    assert main(["schema", "extract", str(importer_file), "-o", str(out)]) == 0
    model, reference = Model.from_json(out), extract(NANO)
    assert model.multiplicity == reference.multiplicity
    assert model.values["Muon_pt"] == reference.values["Muon_pt"]
    assert model.values["GenPart_pdgId"] == reference.values["GenPart_pdgId"]


def test_validate_model_on_it(importer_file: Path, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture) -> None:
    """The built-in model has nano_dy's schema: no mismatch is reported, and the report is
    written (the verdict is the model's business, not this test's)."""
    monkeypatch.setattr(fidelity, "CODECS", [("rntuple", "zstd-5")])
    report = tmp_path / "report.md"
    assert main(["validate-model", str(importer_file), "--report-only", "-o", str(report)]) == 0
    assert "differs from the file's" not in capsys.readouterr().err
    assert "rntuple" in report.read_text()


def test_a_field_it_cannot_take_is_named_with_its_type(tmp_path: Path) -> None:
    path = tmp_path / "nested.root"
    with uproot.recreate(path) as f:
        f.mkrntuple("Events", ak.Array({"Jet_pt": [[[1.0]], [[2.0, 3.0]]], "run": [1, 2]}))
    with pytest.raises(InputError, match=r"nested.root: field Jet_pt: unsupported type "
                                         r"std::vector<std::vector<double>>"):
        extract_schema(path)
    out = tmp_path / "nested.arrow"
    assert main(["import", str(path), "-o", str(out)]) == 2
    assert not out.exists()
