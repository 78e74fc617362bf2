"""The tasks as CMS analysts write them: coffea's ``NanoEventsFactory`` with ``NanoAODSchema``
turns the flat NanoAOD branches (``nMuon``, ``Muon_pt``, ...) into collections (``events.Muon``)
whose records carry coffea's ``vector``-backed behaviours (``+``, ``.mass``, ``.delta_r``), and
the tasks use those, as coffea's own ADL benchmark examples do.

Files are opened in coffea's *virtual* mode, its default and the backend its releases recommend for
analysis since 2025.7: building the events reads only the file's metadata, and a column is read and
decompressed the first time a task touches it. That is the point of measuring coffea beside the
awkward engine, which reads its columns eagerly with uproot: whether a lazy open escapes the cost of
interpreting a 1499-branch file. One factory per run, as one analysis job opens one file.

Kinematics stay in the stored float32, as an analyst's code would leave them: tasks 5, 6 and 8
(masses) allow 0.1 % of entries to move a bin through rounding, which covers it; task 7's delta R
(no tolerance) moved none on the samples tested.
"""

from __future__ import annotations

import warnings
from functools import cache
from pathlib import Path

import awkward as ak
import numpy as np

from hepfmt.queries import tasks as T
from hepfmt.queries.tasks import Hists, Task

#: the file suffixes NanoEventsFactory opens: TTree and RNTuple through uproot, Parquet through
#: pyarrow (Arrow IPC has no NanoEvents reader)
READERS = ("root", "parquet")


def prepare(threads: int = 1) -> None:
    """Importing coffea (numba, its behaviours) is the one-time cost. ``threads`` is not passed
    on: like the awkward engine's readers, coffea gets no executor (uproot's and pyarrow's
    defaults)."""
    import coffea.nanoevents  # noqa: F401


@cache
def _schema() -> type:
    """``NanoAODSchema`` accepting a file without the event IDs (``run``, ``luminosityBlock``,
    ``event``): every NanoAOD file has them, but a file holding only a selection of columns (as
    hepfmt can write) need not, and no task uses them. A subclass, so that coffea's own class
    keeps its default for any other user in the process."""
    from coffea.nanoevents import NanoAODSchema

    class Schema(NanoAODSchema):
        error_missing_event_ids = False

    return Schema


def events(path: str | Path) -> ak.Array:
    """The file's events as NanoEvents, nothing read yet but the metadata."""
    from coffea.nanoevents import NanoEventsFactory

    suffix = Path(path).suffix.lstrip(".")
    with warnings.catch_warnings():
        # The schema warns about every cross-reference (``Muon_genPartIdx``) whose target
        # collection a file lacks (hepfmt's generated samples lack the generator-level ones)
        # and about missing event IDs: notes on the sample, not on the read, on every open.
        warnings.filterwarnings("ignore", category=RuntimeWarning,
                                module=r"coffea\.nanoevents\.schemas")
        if suffix == "root":
            from hepfmt.formats.root.backend import TREE

            factory = NanoEventsFactory.from_root({str(path): TREE}, schemaclass=_schema(),
                                                  mode="virtual")
        elif suffix == "parquet":
            factory = NanoEventsFactory.from_parquet(str(path), schemaclass=_schema(),
                                                     mode="virtual")
        else:
            raise ValueError(f"{path}: the coffea engine reads {READERS}, not .{suffix}")
        return factory.events()


def _flat(x: ak.Array) -> np.ndarray:
    return ak.to_numpy(ak.flatten(x, axis=None)).astype(np.float64)


def _task1(ev: ak.Array) -> dict:
    return {"met": ev.MET.pt}


def _task2(ev: ak.Array) -> dict:
    return {"jet_pt": ev.Jet.pt}


def _task3(ev: ak.Array) -> dict:
    jets = ev.Jet
    return {"central_jet_pt": jets[(jets.pt > T.CENTRAL_JET_PT)
                                   & (abs(jets.eta) < T.CENTRAL_ETA)].pt}


def _task4(ev: ak.Array) -> dict:
    return {"dijet_met": ev.MET[ak.sum(ev.Jet.pt > T.DIJET_PT, axis=1) >= T.DIJET_COUNT].pt}


def _task5(ev: ak.Array) -> dict:
    pairs = ak.combinations(ev.Muon, 2, fields=["mu1", "mu2"])
    mass = (pairs.mu1 + pairs.mu2).mass
    lo, hi = T.DIMUON_MASS
    good = (pairs.mu1.charge != pairs.mu2.charge) & (mass > lo) & (mass < hi)
    return {"dimuon_met": ev.MET[ak.any(good, axis=1)].pt}


def _task6(ev: ak.Array) -> dict:
    trijet = ak.combinations(ev.Jet, 3, fields=["j1", "j2", "j3"])
    p4 = trijet.j1 + trijet.j2 + trijet.j3
    # argmin keeps the first of equal distances: the benchmark's tie-break
    best = ak.argmin(abs(p4.mass - T.TOP_MASS), axis=1, keepdims=True)
    btag = np.maximum(np.maximum(trijet.j1.btagDeepFlavB, trijet.j2.btagDeepFlavB),
                      trijet.j3.btagDeepFlavB)
    return {"trijet_pt": p4[best].pt, "trijet_btag": btag[best]}


def _task7(ev: ak.Array) -> dict:
    def away(leptons: ak.Array) -> ak.Array:
        # metric_table: every (jet, lepton) delta R of the event, one row per jet
        return ak.all(ev.Jet.metric_table(leptons[leptons.pt > T.HT_LEPTON_PT])
                      >= T.HT_DELTA_R, axis=2)

    jets = ev.Jet[(ev.Jet.pt > T.HT_JET_PT) & away(ev.Muon) & away(ev.Electron)]
    return {"jet_ht": ak.sum(jets.pt, axis=1)[ak.num(jets) > 0]}


def _leptons(ev: ak.Array) -> ak.Array:
    """Muons then electrons (the benchmark's order) as one collection of candidates, each with its
    flavour. Concatenating ``ev.Muon`` and ``ev.Electron`` as they are would make a union of two
    record types (they have different fields), which vector's behaviours cannot add: the fields
    the task needs are kept, as ``PtEtaPhiMCandidate`` records."""
    from coffea.nanoevents.methods import candidate

    def of(collection: ak.Array, flavour: int) -> ak.Array:
        return ak.zip({"pt": collection.pt, "eta": collection.eta, "phi": collection.phi,
                       "mass": collection.mass, "charge": collection.charge,
                       "flavour": ak.full_like(collection.charge, flavour)},
                      with_name="PtEtaPhiMCandidate", behavior=candidate.behavior)

    return ak.concatenate([of(ev.Muon, T.MUON), of(ev.Electron, T.ELECTRON)], axis=1)


def _task8(ev: ak.Array) -> dict:
    ev = ev[ak.num(ev.Muon) + ak.num(ev.Electron) >= 3]
    leptons = _leptons(ev)
    pairs = ak.argcombinations(leptons, 2, fields=["l1", "l2"])
    l1, l2 = leptons[pairs.l1], leptons[pairs.l2]
    pairs = pairs[(l1.charge != l2.charge) & (l1.flavour == l2.flavour)]
    z = pairs[ak.argmin(abs((leptons[pairs.l1] + leptons[pairs.l2]).mass - T.Z_MASS),
                        axis=1, keepdims=True)]
    has_z = ak.num(z) > 0
    ev, leptons, z = ev[has_z], leptons[has_z], ak.firsts(z[has_z])
    index = ak.local_index(leptons)
    others = leptons[(index != z.l1) & (index != z.l2)]
    lead = ak.firsts(others[ak.argmax(others.pt, axis=1, keepdims=True)])
    return {"lepton_mt": np.sqrt(2.0 * lead.pt * ev.MET.pt
                                 * (1.0 - np.cos(ev.MET.delta_phi(lead))))}


_TASKS = {1: _task1, 2: _task2, 3: _task3, 4: _task4, 5: _task5, 6: _task6, 7: _task7,
          8: _task8}


def histograms(events: ak.Array, tasks: list[Task]) -> Hists:
    """Every histogram of ``tasks`` from NanoEvents (columns are read as the tasks touch them)."""
    out: Hists = {}
    for task in tasks:
        values = _TASKS[task.number](events)
        out.update(T.fill(task, {k: _flat(v) for k, v in values.items()}))
    return out


def run(path: str | Path, tasks: list[Task]) -> Hists:
    """Every histogram of ``tasks``, from one open of the file."""
    return histograms(events(path), tasks)
