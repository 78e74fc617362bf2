"""The reference answer of every task, and the comparison every engine's answer must pass.

The reference is deliberately written the slow, obvious way: one Python loop per event over
plain lists, each task a transcription of the benchmark's wording (:mod:`.tasks`), sharing no
code with the engines beyond the task definitions. It reads the source sample (Arrow IPC), so it
does not depend on any writer either. A few thousand events take seconds.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from itertools import combinations
from pathlib import Path

import numpy as np

from hepfmt.errors import VerificationError
from hepfmt.queries import tasks as T
from hepfmt.queries.tasks import Hists, Task


def _p4(pt: float, eta: float, phi: float, m: float) -> tuple[float, float, float, float]:
    px, py, pz = pt * math.cos(phi), pt * math.sin(phi), pt * math.sinh(eta)
    return px, py, pz, math.sqrt(max(px * px + py * py + pz * pz + m * abs(m), 0.0))


def _mass(*p4s: tuple[float, float, float, float]) -> float:
    px, py, pz, e = (sum(p[i] for p in p4s) for i in range(4))
    m2 = e * e - px * px - py * py - pz * pz
    return math.copysign(math.sqrt(abs(m2)), m2)


def _pt(*p4s: tuple[float, float, float, float]) -> float:
    return math.hypot(sum(p[0] for p in p4s), sum(p[1] for p in p4s))


def _delta_phi(a: float, b: float) -> float:
    d = a - b
    if d > math.pi:
        return d - 2 * math.pi
    if d < -math.pi:
        return d + 2 * math.pi
    return d


def _collection(ev: dict, name: str, fields: tuple[str, ...]) -> list[tuple]:
    return list(zip(*(ev[f"{name}_{f}"] for f in fields), strict=True))


def _events(source: str | Path, task: Task) -> Iterator[dict]:
    from hepfmt.samples.source import iter_batches

    for batch in iter_batches(source, list(task.columns)):
        yield from batch.to_pylist()


# -- one function per task: event -> {axis name: values to fill} ---------------------------


def _task1(ev: dict) -> dict[str, list[float]]:
    return {"met": [ev["MET_pt"]]}


def _task2(ev: dict) -> dict[str, list[float]]:
    return {"jet_pt": ev["Jet_pt"]}


def _task3(ev: dict) -> dict[str, list[float]]:
    return {"central_jet_pt": [pt for pt, eta in _collection(ev, "Jet", ("pt", "eta"))
                               if pt > T.CENTRAL_JET_PT and abs(eta) < T.CENTRAL_ETA]}


def _task4(ev: dict) -> dict[str, list[float]]:
    n = sum(pt > T.DIJET_PT for pt in ev["Jet_pt"])
    return {"dijet_met": [ev["MET_pt"]] if n >= T.DIJET_COUNT else []}


def _task5(ev: dict) -> dict[str, list[float]]:
    muons = _collection(ev, "Muon", ("pt", "eta", "phi", "mass", "charge"))
    lo, hi = T.DIMUON_MASS
    for a, b in combinations(muons, 2):
        if a[4] != b[4] and lo < _mass(_p4(*a[:4]), _p4(*b[:4])) < hi:
            return {"dimuon_met": [ev["MET_pt"]]}
    return {"dimuon_met": []}


def _task6(ev: dict) -> dict[str, list[float]]:
    jets = _collection(ev, "Jet", ("pt", "eta", "phi", "mass", "btagDeepFlavB"))
    best, best_distance = None, math.inf
    for trio in combinations(jets, 3):
        p4s = [_p4(*j[:4]) for j in trio]
        distance = abs(_mass(*p4s) - T.TOP_MASS)
        if distance < best_distance:
            best, best_distance = (_pt(*p4s), max(j[4] for j in trio)), distance
    if best is None:
        return {"trijet_pt": [], "trijet_btag": []}
    return {"trijet_pt": [best[0]], "trijet_btag": [best[1]]}


def _task7(ev: dict) -> dict[str, list[float]]:
    leptons = [(eta, phi) for name in ("Muon", "Electron")
               for pt, eta, phi in _collection(ev, name, ("pt", "eta", "phi"))
               if pt > T.HT_LEPTON_PT]
    good = [pt for pt, eta, phi in _collection(ev, "Jet", ("pt", "eta", "phi"))
            if pt > T.HT_JET_PT and all(
                math.sqrt((eta - le) ** 2 + _delta_phi(phi, lp) ** 2) >= T.HT_DELTA_R
                for le, lp in leptons)]
    return {"jet_ht": [sum(good)] if good else []}


def _task8(ev: dict) -> dict[str, list[float]]:
    fields = ("pt", "eta", "phi", "mass", "charge")
    leptons = ([(*mu, T.MUON) for mu in _collection(ev, "Muon", fields)]
               + [(*el, T.ELECTRON) for el in _collection(ev, "Electron", fields)])
    if len(leptons) < 3:
        return {"lepton_mt": []}
    pair, best_distance = None, math.inf
    for i, j in combinations(range(len(leptons)), 2):
        a, b = leptons[i], leptons[j]
        if a[4] == b[4] or a[5] != b[5]:
            continue
        distance = abs(_mass(_p4(*a[:4]), _p4(*b[:4])) - T.Z_MASS)
        if distance < best_distance:
            pair, best_distance = (i, j), distance
    if pair is None:
        return {"lepton_mt": []}
    others = [k for k in range(len(leptons)) if k not in pair]
    lead = leptons[max(others, key=lambda k: (leptons[k][0], -k))]
    met, met_phi = ev["MET_pt"], ev["MET_phi"]
    dphi = _delta_phi(met_phi, lead[2])
    return {"lepton_mt": [math.sqrt(2.0 * lead[0] * met * (1.0 - math.cos(dphi)))]}


_PER_EVENT = {1: _task1, 2: _task2, 3: _task3, 4: _task4, 5: _task5, 6: _task6, 7: _task7,
              8: _task8}


def _collect(source: str | Path, task: Task) -> tuple[dict[str, np.ndarray], int]:
    """What the task plots, per axis, and how many events pass its selection (fill its first
    histogram at least once), in one pass over the source sample."""
    out: dict[str, list[float]] = {a.name: [] for a in task.axes}
    first, selected = task.axes[0].name, 0
    for ev in _events(source, task):
        answer = _PER_EVENT[task.number](ev)
        selected += bool(answer[first])
        for name, vals in answer.items():
            out[name].extend(vals)
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}, selected


def values(source: str | Path, task: Task) -> dict[str, np.ndarray]:
    """What the task plots, per axis, over every event of the source sample."""
    return _collect(source, task)[0]


def reference(source: str | Path, task: Task) -> Hists:
    return T.fill(task, values(source, task))


def passing(source: str | Path, task: Task) -> int:
    """Events that pass the task's selection (fill its first histogram at least once)."""
    return _collect(source, task)[1]


def summary(source: str | Path, task: Task) -> tuple[Hists, int]:
    """:func:`reference` and :func:`passing` of one task, for the price of one pass."""
    vals, selected = _collect(source, task)
    return T.fill(task, vals), selected


def compare(task: Task, expected: Hists, got: Hists, what: str = "engine") -> None:
    """Fail unless ``got`` has ``expected``'s counts in every bin (flow bins included), up to
    the task's tolerance: at most ``task.allowed(entries)`` entries may differ, an entry that
    moved to another bin counting once (two bins off by one) and so does one that crossed a cut
    (one bin off by one)."""
    for axis in task.axes:
        if axis.name not in got:
            raise VerificationError(what, f"{task.name}: no histogram {axis.name!r}")
        want = expected[axis.name].values(flow=True)
        have = got[axis.name].values(flow=True)
        if want.shape != have.shape:
            raise VerificationError(what, f"{task.name}/{axis.name}: {have.shape[0]} bins, "
                                          f"expected {want.shape[0]}")
        diff = have - want
        differ = (np.abs(diff).sum() + abs(diff.sum())) / 2
        allowed = task.allowed(want.sum())
        if differ > allowed:
            bins = np.flatnonzero(diff)[:5].tolist()
            raise VerificationError(what, f"{task.name}/{axis.name}: counts differ in bins "
                                          f"{bins} (flow index; {differ:g} entries differ, "
                                          f"{allowed} allowed)")
