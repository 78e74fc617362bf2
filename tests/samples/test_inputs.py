"""Real NanoAOD in, whatever wrote it: a TTree (ROOT- or uproot-written, one counter per
collection or one per branch), an RNTuple (uproot or ROOT's RDataFrame) and Parquet (a file or a
directory, as awkward writes it), all made here from the shared ``nano_dy.root``.

Every kind must give the same schema, the same learned model and, imported, the same checksums
as the TTree; collections are found by name, so a file with uproot's per-branch counters gives
the same collections, process factors that act on them and synthetic files of the real size.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import awkward as ak
import numpy as np
import pytest
import uproot

from hepfmt.cli import main
from hepfmt.errors import InputError
from hepfmt.measure import fidelity
from hepfmt.measure.fidelity import compare
from hepfmt.samples.generate import generate
from hepfmt.samples.inputs import detect, extract_schema, open_input
from hepfmt.samples.learn import extract
from hepfmt.samples.model import Model
from hepfmt.samples.processes import PROCESSES
from hepfmt.samples.source import open_source, read_source_meta, to_column

NANO = Path(__file__).resolve().parents[3] / "shared" / "nanoaod" / "nano_dy.root"
COLLECTIONS = ("Jet", "Muon", "Electron", "GenPart")
pytestmark = pytest.mark.skipif(not NANO.is_file(), reason=f"needs {NANO}")


def _subset() -> ak.Array:
    """A few collections, event scalars and triggers of the real file: every kind of branch,
    small enough to write and read in a moment."""
    t = uproot.open(NANO)["Events"]
    keys = list(t.keys())
    names = [k for k in keys if k.split("_")[0] in COLLECTIONS
             or k.startswith("MET_") or k in ("run", "luminosityBlock", "event")]
    names += [k for k in keys if k.startswith("HLT_")][:60]
    return t.arrays(names + [f"n{c}" for c in COLLECTIONS])


def _counted(arrays: ak.Array) -> dict:
    """Branches as uproot's mktree takes them: one record per collection gives one counter
    ``nJet``; passed one by one, each jagged branch gets its own counter ``nJet_pt``."""
    return {c: ak.zip({k[len(c) + 1:]: arrays[k] for k in arrays.fields
                       if k.startswith(c + "_")}) for c in COLLECTIONS} | {
        k: arrays[k] for k in arrays.fields if arrays[k].ndim == 1
        and not k.startswith("n") and k.split("_")[0] not in COLLECTIONS}


def _write_tree(path: Path, branches: dict) -> Path:
    with uproot.recreate(path) as f:
        f.mktree("Events", {k: v.type.content for k, v in branches.items()})
        f["Events"].extend(branches)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("nano")
    arrays = _subset()
    flat = {k: arrays[k] for k in arrays.fields}
    out = {"ttree": _write_tree(d / "nano.root", _counted(arrays)),
           "per_branch": _write_tree(d / "per_branch.root",
                                     {k: v for k, v in flat.items() if k not in
                                      {f"n{c}" for c in COLLECTIONS}})}
    with uproot.recreate(d / "rntuple.root") as f:
        f.mkrntuple("Events", flat)
    out["rntuple"] = d / "rntuple.root"
    # named .root on purpose: the kind comes from the content
    ak.to_parquet(arrays, d / "parquet.root")
    out["parquet"] = d / "parquet.root"
    (d / "parts").mkdir()
    ak.to_parquet(arrays[:25], d / "parts" / "part-0.parquet")
    ak.to_parquet(arrays[25:], d / "parts" / "part-1.parquet")
    out["parquet_dir"] = d / "parts"
    return out


@pytest.fixture(scope="module")
def reference(files: dict[str, Path]) -> Model:
    return extract(files["ttree"])


def _shape(schema) -> set[tuple]:
    """Names, counters and dtypes; a counter's dtype aside (uproot writes TTree counters as
    int32, NanoAOD's are uint32: the same bits)."""
    counters = schema.counters()
    return {(b.name, b.counter, None if b.name in counters else b.dtype)
            for b in schema.branches}


def _values(model: Model) -> tuple[dict, set[frozenset]]:
    """Value models, and identical flags as groups: which flag leads a group follows the
    file's column order, which differs between writers."""
    groups: dict[str, set[str]] = {}
    for name, v in model.values.items():
        if v.same_as:
            groups.setdefault(v.same_as, {v.same_as}).add(name)
    return ({k: replace(v, same_as=None) for k, v in model.values.items()},
            {frozenset(g) for g in groups.values()})


def _imported(path: Path, tmp_path: Path) -> dict:
    out = tmp_path / f"{path.name}.arrow"
    assert main(["import", str(path), "-o", str(out)]) == 0
    return read_source_meta(out)


def test_kind_comes_from_the_content(files: dict[str, Path]) -> None:
    assert detect(files["parquet"]) == "parquet" and detect(files["parquet_dir"]) == "parquet"
    assert detect(files["rntuple"]) == "root"
    assert open_input(files["rntuple"]).kind == "rntuple"
    assert open_input(files["ttree"]).kind == "ttree"


@pytest.mark.parametrize("kind", ["rntuple", "parquet", "parquet_dir"])
def test_every_kind_gives_the_trees_model_and_checksums(kind: str, files: dict[str, Path],
                                                        reference: Model,
                                                        tmp_path: Path) -> None:
    model = extract(files[kind])
    assert _shape(model.schema) == _shape(reference.schema)
    assert model.multiplicity == reference.multiplicity
    assert _values(model) == _values(reference)
    meta, want = _imported(files[kind], tmp_path), _imported(files["ttree"], tmp_path)
    assert meta["n_events"] == want["n_events"] == 40
    assert meta["checksums"] == want["checksums"]


def test_rntuple_written_by_rdataframe(files: dict[str, Path], reference: Model,
                                       tmp_path: Path) -> None:
    """NanoAOD RNTuples come from RDataFrame's Snapshot (RVec fields beside nJet)."""
    import ROOT

    opts = ROOT.RDF.RSnapshotOptions()
    opts.fOutputFormat = ROOT.RDF.ESnapshotOutputFormat.kRNTuple
    out = tmp_path / "snapshot.root"
    ROOT.RDataFrame("Events", str(files["ttree"])).Snapshot("Events", str(out), "", opts)
    assert open_input(out).kind == "rntuple"
    assert _shape(extract_schema(out)) == _shape(reference.schema)
    assert _imported(out, tmp_path)["checksums"] == _imported(files["ttree"],
                                                              tmp_path)["checksums"]


def test_schema_extract_cli_on_parquet_and_rntuple(files: dict[str, Path],
                                                   tmp_path: Path) -> None:
    for kind in ("parquet", "rntuple"):
        out = tmp_path / f"{kind}.json"
        assert main(["schema", "extract", str(files[kind]), "-o", str(out)]) == 0
        assert sorted(Model.from_json(out).multiplicity) == sorted(COLLECTIONS)


# --- collections by name ---------------------------------------------------------------------

def test_per_branch_counters_form_one_collection(files: dict[str, Path],
                                                 reference: Model) -> None:
    model = extract(files["per_branch"])
    s = model.schema
    assert s["Jet_pt"].counter == "nJet_pt" and s["Jet_eta"].counter == "nJet_eta"
    assert s["Jet_pt"].collection == s["Jet_eta"].collection == s["Jet_pt"].group == "Jet"
    jets = s.collections()["Jet"]
    assert "nJet_pt" in jets and len(jets) == len([n for n in s.names if n.startswith("Jet_")])
    assert sorted(model.multiplicity) == sorted(COLLECTIONS)
    assert model.multiplicity == reference.multiplicity


def test_per_branch_synthetic_lengths_agree(files: dict[str, Path], tmp_path: Path) -> None:
    """Every counter of a collection holds the same lengths, and every member has them."""
    model = extract(files["per_branch"])
    out = tmp_path / "g.arrow"
    generate(model, "DYJetsToLL", 2, 500, out)
    t = open_source(out).read_all()
    for collection, counters in model.schema.collections().items():
        n = to_column(t.column(counters[0])).values
        for c in counters:
            np.testing.assert_array_equal(to_column(t.column(c)).values, n, err_msg=c)
        for b in model.schema.branches:
            if b.collection == collection:
                np.testing.assert_array_equal(np.diff(to_column(t.column(b.name)).offsets), n,
                                              err_msg=b.name)


def test_process_factors_act_on_per_branch_collections(files: dict[str, Path],
                                                       tmp_path: Path) -> None:
    model = extract(files["per_branch"])
    learned = sum(int(k) * p for k, p in model.multiplicity["Jet"].items())
    means = {}
    for process in ("DYJetsToLL", "TTJets"):
        out = tmp_path / f"{process}.arrow"
        generate(model, process, 3, 6000, out)
        t = open_source(out).read_all()
        means[process] = {c: to_column(t.column(c)).values.mean() for c in ("nJet_pt",
                                                                           "nJet_eta")}
    assert means["DYJetsToLL"]["nJet_pt"] == pytest.approx(learned, rel=0.05)
    assert means["TTJets"]["nJet_pt"] == means["TTJets"]["nJet_eta"]
    assert means["TTJets"]["nJet_pt"] == pytest.approx(PROCESSES["TTJets"].scale["Jet"]
                                                       * learned, rel=0.05)


def test_per_branch_synthetic_rntuple_has_the_real_size(files: dict[str, Path]) -> None:
    """Independent lengths per counter made these files 57-73% too large (ROOT stores a
    collection's identical counter and offset pages once only when they are identical); the
    generator record drawn value by value made GenPart 15-17% too large in RNTuple lz4-4 and
    lzma-9 (its status/pdgId/mother sequences are now a chain: tests/samples/test_chain.py)."""
    model = extract(files["per_branch"])
    assert model.values["GenPart_status"].follows and model.values["GenPart_pdgId"].follows
    tables = compare(str(files["per_branch"]), model,
                     codecs=[("rntuple", "zstd-5"), ("rntuple", "none"), ("rntuple", "lz4-4"),
                             ("rntuple", "lzma-9"), ("ttree", "zlib-1")])
    checks = tables["checks"]
    assert checks["within goal"].all(), checks[~checks["within goal"]]
    assert "GenPart" in set(checks["group"])
    assert set(tables["multiplicity"]["collection"]) == set(COLLECTIONS)


def test_validate_model_exit_status(files: dict[str, Path], tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A model that misses the goal (three times the jets) fails the command unless only a
    report is asked for; the report says so."""
    monkeypatch.setattr(fidelity, "CODECS", [("rntuple", "zstd-5"), ("parquet", "zstd-3")])
    model = extract(files["per_branch"])
    model.multiplicity["Jet"] = {str(3 * int(k)): p for k, p in model.multiplicity["Jet"].items()}
    model.to_json(tmp_path / "wrong.json")
    args = ["validate-model", str(files["per_branch"]), str(tmp_path / "wrong.json"),
            "-o", str(tmp_path / "report.md")]
    assert main(args) == 2
    assert "Goal missed" in (tmp_path / "report.md").read_text()
    assert main([*args, "--report-only"]) == 0


# --- errors ----------------------------------------------------------------------------------

def test_counter_that_disagrees_with_its_lists(files: dict[str, Path], tmp_path: Path) -> None:
    arrays = _subset()
    bad = ak.with_field(arrays, arrays["nJet"] + 1, "nJet")
    ak.to_parquet(bad, tmp_path / "bad.parquet")
    with pytest.raises(InputError, match=r"Jet_.* other lengths than its counter nJet"):
        extract(tmp_path / "bad.parquet")


def test_one_collection_by_name_needs_one_length(tmp_path: Path) -> None:
    x = ak.Array([[1.0, 2.0], [], [3.0]])
    y = ak.Array([[1.0], [2.0], [3.0, 4.0]])
    path = _write_tree(tmp_path / "two.root", {"Jet_pt": x, "Jet_eta": y})
    with pytest.raises(InputError, match="differ in 3 entries"):
        extract(path)


def test_missing_tree_names_what_the_file_holds(files: dict[str, Path]) -> None:
    with pytest.raises(InputError, match=r"NoSuchTree'.*the file's trees are 'Events'"):
        extract_schema(files["ttree"], "NoSuchTree")
