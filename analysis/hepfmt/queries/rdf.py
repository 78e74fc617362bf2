"""The tasks with ROOT's RDataFrame, on a TTree or an RNTuple (RDataFrame opens either by name).

The task graphs are C++ (``queries.cxx``), declared once per process through the ROOT backend;
Python only passes each task its histogram models and cuts from :mod:`.tasks`. All requested
tasks are booked on one dataframe, so they share one event loop, as an analysis would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hepfmt.queries import tasks as T
from hepfmt.queries.tasks import Hists, Task

CXX = Path(__file__).resolve().with_name("queries.cxx")
#: The cuts each C++ task function takes after its models, in its parameter order.
ARGS: dict[int, tuple[float, ...]] = {
    1: (), 2: (),
    3: (T.CENTRAL_JET_PT, T.CENTRAL_ETA),
    4: (T.DIJET_PT, T.DIJET_COUNT),
    5: T.DIMUON_MASS,
    6: (T.TOP_MASS,),
    7: (T.HT_JET_PT, T.HT_LEPTON_PT, T.HT_DELTA_R),
    8: (T.Z_MASS,),
}


def declared() -> Any:
    """ROOT, with the task code declared (once per process)."""
    from hepfmt.formats.root.backend import root

    return root(CXX)


def prepare(threads: int = 1) -> None:
    """Declare the task graphs (the JIT cost) and set the thread count: once per process."""
    ROOT = declared()
    if threads > 1:
        ROOT.EnableImplicitMT(threads)


def to_hist(axis: T.Axis, th1) -> T.hist.Hist:
    return axis.with_counts(np.array([th1.GetBinContent(i) for i in range(axis.bins + 2)]))


def run(path: str | Path, tasks: list[Task]) -> Hists:
    """Every histogram of ``tasks`` from the TTree or RNTuple ``Events`` in ``path``."""
    from hepfmt.formats.root.backend import TREE, require_root_file

    require_root_file(path)
    ROOT = declared()
    df = ROOT.RDataFrame(TREE, str(path))
    node = ROOT.RDF.AsRNode(df)
    booked = []
    for task in tasks:
        models = ROOT.std.vector["ROOT::RDF::TH1DModel"]()
        for axis in task.axes:
            models.push_back(ROOT.RDF.TH1DModel(axis.name, axis.label, axis.bins, axis.start,
                                                axis.stop))
        fn = getattr(ROOT.hepfmt_queries, f"task{task.number}")
        booked.append((task, fn(node, models, *ARGS[task.number])))
    if booked:
        ROOT.RDF.RunGraphs([h for _, hs in booked for h in hs])
    return {axis.name: to_hist(axis, h.GetValue())
            for task, hs in booked for axis, h in zip(task.axes, hs, strict=True)}
