"""The tasks on RDataFrame's own Dask backend (``ROOT.RDataFrame(..., executor=client)``): ROOT
splits the file into one range per cluster, sends the graph to the connected cluster's workers,
runs it there and merges the histograms, as a ROOT user scales out.

A distributed RDataFrame records its graph in Python and replays it on each worker, so it books
string expressions, not the typed C++ task functions :mod:`.rdf` calls; the expressions call the
same per-event functions of ``queries.cxx`` (``central_jet_pt``, ``has_pair``, ...), which every
worker declares before it runs (:func:`_declare`, ROOT's ``initialize``), with the cuts of
:mod:`.tasks`. The workers must see the file at the same path and have hepfmt installed (a shared
filesystem and environment, or workers on this machine).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from hepfmt.queries import awkward_engine, cluster, rdf
from hepfmt.queries.tasks import Hists, Task

MUONS = ("Muon_pt", "Muon_eta", "Muon_phi", "Muon_mass", "Muon_charge")
ELECTRONS = ("Electron_pt", "Electron_eta", "Electron_phi", "Electron_mass", "Electron_charge")
JETS = ("Jet_pt", "Jet_eta", "Jet_phi", "Jet_mass")


def _declare() -> None:
    """On every worker (and here), before the graph runs: the task code, once per process."""
    rdf.declared()


def prepare(threads: int = 1) -> None:
    """ROOT and the task code here; the workers declare theirs when a graph first reaches them."""
    import ROOT

    _declare()
    ROOT.RDF.Distributed.initialize(_declare)


def connect(address: str) -> None:
    """Connect to the scheduler at ``address`` (``tcp://host:8786``), outside any timing."""
    cluster.connect(address)


def _call(function: str, columns: tuple[str, ...], cuts: tuple[float, ...]) -> str:
    """A C++ call of a ``queries.cxx`` per-event function: columns, then cuts as literals."""
    return f"hepfmt_queries::{function}({', '.join([*columns, *map(repr, cuts)])})"


def _task6(df, models, cuts):
    node = (df.Define("trijet", _call("trijet", (*JETS, "Jet_btagDeepFlavB"), cuts))
            .Filter("trijet.size() == 2")
            .Define("trijet_pt", "trijet[0]").Define("trijet_btag", "trijet[1]"))
    return [node.Histo1D(models[0], "trijet_pt"), node.Histo1D(models[1], "trijet_btag")]


#: task number -> how it is booked on a distributed dataframe (models, then the task's cuts)
BOOK: dict[int, Callable] = {
    1: lambda df, m, c: [df.Histo1D(m[0], "MET_pt")],
    2: lambda df, m, c: [df.Histo1D(m[0], "Jet_pt")],
    3: lambda df, m, c: [df.Define("central_jet_pt", _call("central_jet_pt",
                                                           ("Jet_pt", "Jet_eta"), c))
                         .Histo1D(m[0], "central_jet_pt")],
    4: lambda df, m, c: [df.Filter(_call("enough_jets", ("Jet_pt",), c)).Histo1D(m[0], "MET_pt")],
    5: lambda df, m, c: [df.Filter(_call("has_pair", MUONS, c)).Histo1D(m[0], "MET_pt")],
    6: _task6,
    7: lambda df, m, c: [df.Define("jet_ht", _call(
        "jet_ht", ("Jet_pt", "Jet_eta", "Jet_phi", *MUONS[:3], *ELECTRONS[:3]), c))
        .Histo1D(m[0], "jet_ht")],
    8: lambda df, m, c: [df.Define("lepton_mt", _call(
        "lepton_mt", (*MUONS, *ELECTRONS, "MET_pt", "MET_phi"), c)).Histo1D(m[0], "lepton_mt")],
}


def run(path: str | Path, tasks: list[Task]) -> Hists:
    """Every histogram of ``tasks`` from the TTree or RNTuple ``Events`` in ``path``, one
    partition per cluster, computed on the connected cluster."""
    import ROOT

    from hepfmt.formats.root.backend import TREE, require_root_file

    require_root_file(path)
    client = cluster.client()
    df = ROOT.RDataFrame(TREE, str(path), executor=client,
                         npartitions=len(awkward_engine.pieces(path)))
    booked = []
    for task in tasks:
        models = [(a.name, a.label, a.bins, a.start, a.stop) for a in task.axes]
        booked.append((task, BOOK[task.number](df, models, rdf.ARGS[task.number])))
    # Every task is booked on one dataframe: the first result runs the one graph, in this
    # thread (ROOT's RunGraphs would run it in threads of its own), with the connected client
    # as dask's current one, which ROOT's backend persists with and shows progress from.
    with client.as_current():
        booked[0][1][0].GetValue()
    return {axis.name: rdf.to_hist(axis, h.GetValue())
            for task, hs in booked for axis, h in zip(task.axes, hs, strict=True)}
