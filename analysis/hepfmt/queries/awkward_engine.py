"""The tasks in awkward-array with ``vector`` four-vectors, as coffea users write them: read the
task's columns (uproot for a TTree or RNTuple, awkward's Parquet reader, pyarrow for Arrow IPC),
zip them into records, and work with ``ak.combinations`` / ``ak.cartesian`` and ``argmin``.

Kinematics are computed in float64 (the stored floats are cast first) so that the results equal
the reference's to the last bit wherever only IEEE arithmetic is involved.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import awkward as ak
import numpy as np

from hepfmt.queries import tasks as T
from hepfmt.queries.tasks import Hists, Task

#: file suffix -> how to read it
READERS = ("root", "parquet", "arrow")


def prepare(threads: int = 1) -> None:
    """Nothing to JIT; registering vector's awkward behaviours and importing the readers'
    libraries are the one-time costs: here, not on a run's first read, or a process's time to
    its first histogram would hold an import."""
    import pyarrow.parquet  # noqa: F401  (awkward's Parquet reader imports it on first use)
    import uproot  # noqa: F401
    import vector

    vector.register_awkward()


def read(path: str | Path, columns: list[str], piece: tuple[int, int] | None = None) -> ak.Array:
    """The columns of every event (of the entries ``[start, stop)`` of ``piece``, one of
    :func:`pieces`), as one awkward array of records."""
    suffix = Path(path).suffix.lstrip(".")
    start, stop = piece or (None, None)
    if suffix == "root":
        import uproot

        from hepfmt.formats.root.backend import TREE

        with uproot.open(path) as f:
            return f[TREE].arrays(columns, entry_start=start, entry_stop=stop)
    if suffix == "parquet":
        if piece is None:
            return ak.from_parquet(path, columns=columns)
        bounds = _parquet_bounds(path)
        return ak.from_parquet(path, columns=columns,
                               row_groups=[i for i, b in enumerate(bounds) if b == piece])
    if suffix == "arrow":
        import pyarrow as pa

        with pa.memory_map(str(path)) as source:
            table = pa.ipc.open_file(source).read_all().select(columns)
            if piece is not None:
                table = table.slice(start, stop - start)
            return ak.from_arrow(table)
    raise ValueError(f"{path}: the awkward engine reads {READERS}, not .{suffix}")


def _parquet_bounds(path: str | Path) -> list[tuple[int, int]]:
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    return _bounds([meta.row_group(i).num_rows for i in range(meta.num_row_groups)])


def _bounds(counts: list[int]) -> list[tuple[int, int]]:
    return list(itertools.pairwise(np.cumsum([0, *counts]).tolist()))


def pieces(path: str | Path) -> list[tuple[int, int]]:
    """The file's clusters (TTree, RNTuple), row groups (Parquet) or record batches (Arrow
    IPC) as entry ranges ``(start, stop)``: the natural unit of work to spread over workers,
    since each is read and decompressed on its own."""
    suffix = Path(path).suffix.lstrip(".")
    if suffix == "root":
        import uproot

        from hepfmt.formats.root.backend import TREE

        with uproot.open(path) as f:
            tree = f[TREE]
            if hasattr(tree, "common_entry_offsets"):  # TTree
                return list(itertools.pairwise(int(e) for e in tree.common_entry_offsets()))
            return _bounds([c.num_entries for c in tree.cluster_summaries])  # RNTuple
    if suffix == "parquet":
        return _parquet_bounds(path)
    if suffix == "arrow":
        import pyarrow as pa

        with pa.memory_map(str(path)) as source:
            reader = pa.ipc.open_file(source)
            return _bounds([reader.get_batch(i).num_rows for i in range(reader.num_record_batches)])
    raise ValueError(f"{path}: the awkward engine reads {READERS}, not .{suffix}")


def _f8(x: ak.Array) -> ak.Array:
    return ak.values_astype(x, np.float64)


def _vectors(events: ak.Array, name: str, extra: tuple[str, ...] = ()) -> ak.Array:
    """The collection ``name`` as Momentum4D records (float64), with ``extra`` fields kept."""
    fields = {"pt": _f8(events[f"{name}_pt"]), "eta": _f8(events[f"{name}_eta"]),
              "phi": _f8(events[f"{name}_phi"])}
    if f"{name}_mass" in events.fields:
        fields["mass"] = _f8(events[f"{name}_mass"])
    fields.update({f: events[f"{name}_{f}"] for f in extra})
    return ak.zip(fields, with_name="Momentum4D" if "mass" in fields else "Momentum3D")


def _flat(x: ak.Array) -> np.ndarray:
    return ak.to_numpy(ak.flatten(x, axis=None)).astype(np.float64)


def _delta_phi(a: ak.Array, b: ak.Array) -> ak.Array:
    """The benchmark's wrapping (one step of 2 pi), not vector's modulo: the same bits as the
    reference (the inputs are within [-pi, pi])."""
    d = a - b
    return ak.where(d > np.pi, d - 2 * np.pi, ak.where(d < -np.pi, d + 2 * np.pi, d))


def _task1(ev: ak.Array) -> dict:
    return {"met": ev.MET_pt}


def _task2(ev: ak.Array) -> dict:
    return {"jet_pt": ev.Jet_pt}


def _task3(ev: ak.Array) -> dict:
    central = (ev.Jet_pt > T.CENTRAL_JET_PT) & (abs(ev.Jet_eta) < T.CENTRAL_ETA)
    return {"central_jet_pt": ev.Jet_pt[central]}


def _task4(ev: ak.Array) -> dict:
    return {"dijet_met": ev.MET_pt[ak.sum(ev.Jet_pt > T.DIJET_PT, axis=1) >= T.DIJET_COUNT]}


def _task5(ev: ak.Array) -> dict:
    mu1, mu2 = ak.unzip(ak.combinations(_vectors(ev, "Muon", ("charge",)), 2))
    mass = (mu1 + mu2).mass
    lo, hi = T.DIMUON_MASS
    good = (mu1.charge != mu2.charge) & (mass > lo) & (mass < hi)
    return {"dimuon_met": ev.MET_pt[ak.any(good, axis=1)]}


def _task6(ev: ak.Array) -> dict:
    jets = _vectors(ev, "Jet", ("btagDeepFlavB",))
    j1, j2, j3 = ak.unzip(ak.combinations(jets, 3))
    trijet = j1 + j2 + j3
    # argmin keeps the first of equal distances: the benchmark's tie-break
    best = ak.argmin(abs(trijet.mass - T.TOP_MASS), axis=1, keepdims=True)
    btag = np.maximum(np.maximum(j1.btagDeepFlavB, j2.btagDeepFlavB), j3.btagDeepFlavB)
    return {"trijet_pt": trijet.pt[best], "trijet_btag": btag[best]}


def _task7(ev: ak.Array) -> dict:
    jets = _vectors(ev, "Jet")
    leptons = ak.concatenate([_vectors(ev, "Muon"), _vectors(ev, "Electron")], axis=1)
    leptons = leptons[leptons.pt > T.HT_LEPTON_PT]
    jet, lep = ak.unzip(ak.cartesian([jets, leptons], nested=True))
    dr = np.sqrt((jet.eta - lep.eta) ** 2 + _delta_phi(jet.phi, lep.phi) ** 2)
    good = (jets.pt > T.HT_JET_PT) & ak.all(dr >= T.HT_DELTA_R, axis=2)
    ht = ak.sum(jets.pt[good], axis=1)
    return {"jet_ht": ht[ak.any(good, axis=1)]}


def _task8(ev: ak.Array) -> dict:
    def leptons(name: str, flavour: int) -> ak.Array:
        v = _vectors(ev, name, ("charge",))
        return ak.with_field(v, ak.zeros_like(v.charge) + flavour, "flavour")

    lep = ak.concatenate([leptons("Muon", T.MUON), leptons("Electron", T.ELECTRON)], axis=1)
    lep = ak.with_field(lep, ak.local_index(lep, axis=1), "index")
    lep = lep[ak.num(lep) >= 3]
    a, b = ak.unzip(ak.combinations(lep, 2))
    sfos = (a.charge != b.charge) & (a.flavour == b.flavour)
    distance = ak.where(sfos, abs((a + b).mass - T.Z_MASS), np.inf)
    best = ak.argmin(distance, axis=1, keepdims=True)
    found = ak.fill_none(ak.firsts(sfos[best]), False)
    lep, a, b = lep[found], ak.firsts(a[best][found]), ak.firsts(b[best][found])
    others = lep[(lep.index != a.index) & (lep.index != b.index)]
    lead = ak.firsts(others[ak.argmax(others.pt, axis=1, keepdims=True)])
    met = ev[ak.num(ev.Muon_pt) + ak.num(ev.Electron_pt) >= 3][found]
    dphi = _delta_phi(_f8(met.MET_phi), lead.phi)
    return {"lepton_mt": np.sqrt(2.0 * lead.pt * _f8(met.MET_pt) * (1.0 - np.cos(dphi)))}


_TASKS = {1: _task1, 2: _task2, 3: _task3, 4: _task4, 5: _task5, 6: _task6, 7: _task7,
          8: _task8}


def values(events: ak.Array, task: Task) -> dict:
    """What each of the task's axes plots, per event or per object, from ``events`` (an awkward
    array, or a dask-awkward collection: every step dispatches to dask-awkward)."""
    return _TASKS[task.number](events)


def histograms(events: ak.Array, tasks: list[Task]) -> Hists:
    """Every histogram of ``tasks`` from events already read (all of a file, or one piece)."""
    out: Hists = {}
    for task in tasks:
        out.update(T.fill(task, {k: _flat(v) for k, v in values(events, task).items()}))
    return out


def run(path: str | Path, tasks: list[Task]) -> Hists:
    """Every histogram of ``tasks``; the columns they need are read once."""
    prepare()
    return histograms(read(path, T.columns(tasks)), tasks)
