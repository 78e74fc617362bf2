"""Files hepfmt did not write and that are not CMSSW's NanoAOD: Parquet written by awkward with
its Arrow extension types (imported as their plain storage types, as coffea reads them), a tree
of objects (EDM4hep, PHYSLITE, Delphes: refused naming its first object branch and class, never
a Python repr), and a ``--tree`` the file does not have (refused listing the trees it has)."""

from __future__ import annotations

import re
from pathlib import Path

import awkward as ak
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hepfmt.cli import main
from hepfmt.samples.inputs import plain_type
from hepfmt.samples.source import open_source


def test_awkward_extension_types_import_as_their_storage(tmp_path: Path) -> None:
    arrays = ak.Array({"run": np.arange(50, dtype=np.uint32),
                       "Jet_pt": [[float(i), 2.0 * i][: i % 3] for i in range(50)]})
    path = tmp_path / "ak.parquet"
    # awkward's own Arrow types, as its to_arrow_table makes them (ak.to_parquet strips them)
    pq.write_table(ak.to_arrow_table(arrays, extensionarray=True), path)
    schema = pq.read_schema(path)  # awkward is imported: its extension types are registered
    assert isinstance(schema.field("run").type, pa.ExtensionType), schema
    assert plain_type(schema.field("run").type) == pa.uint32()
    out = tmp_path / "ak.arrow"
    assert main(["import", str(path), "-o", str(out)]) == 0
    table = open_source(out).read_all()
    assert table.column("run").type == pa.uint32()
    assert table.column("run").to_pylist() == list(range(50))
    assert [len(x) for x in table.column("Jet_pt").to_pylist()] == [i % 3 for i in range(50)]


def _object_tree(path: Path) -> None:
    import ROOT

    f = ROOT.TFile(str(path), "RECREATE")
    t = ROOT.TTree("events", "a tree of objects")
    v = ROOT.TVector3()
    t.Branch("Hit", v)
    for i in range(5):
        v.SetXYZ(i, 2 * i, 3 * i)
        t.Fill()
    t.Write()
    f.Close()


def test_a_tree_of_objects_is_refused_naming_its_class(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "objects.root"
    _object_tree(path)
    assert main(["import", str(path), "--tree", "events", "-o", str(tmp_path / "o.arrow")]) == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "tree 'events' holds objects, not a flat table" in line, line
    assert "TVector3" in line and "flat and jagged numeric branches" in line
    assert not re.search(r"0x[0-9a-f]{6,}|<\w+ ", line), line  # no repr, no memory address


def test_a_tree_not_there_lists_the_trees_the_file_has(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "objects.root"
    _object_tree(path)
    assert main(["import", str(path), "-o", str(tmp_path / "o.arrow")]) == 2  # --tree Events
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "cannot open tree 'Events': the file's trees are 'events' (--tree names one)" in line
