"""The tasks with polars lazy frames, on Parquet or Arrow IPC: a jagged branch is a list column,
per-object work explodes a collection's lists together (one row per object, with its event
number and index), combinations are self-joins on the event number, and "the best candidate per
event" is a sort by (event, key, indices) then the first row of each event: the benchmark's
tie-break. Four-vector components are expressions built in float64.

polars returns the plotted values; :func:`.tasks.fill` histograms them.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl

from hepfmt.queries import tasks as T
from hepfmt.queries.tasks import Hists, Task

KIN = ("pt", "eta", "phi", "mass")


def prepare(threads: int = 1) -> None:
    """polars' thread pool is sized by ``POLARS_MAX_THREADS`` before import: the caller's job."""


def scan(path: str | Path, columns: list[str]) -> pl.LazyFrame:
    suffix = Path(path).suffix
    reader = {".parquet": pl.scan_parquet, ".arrow": pl.scan_ipc}.get(suffix)
    if reader is None:
        raise ValueError(f"{path}: the polars engine reads .parquet and .arrow, not {suffix}")
    return reader(path).select(columns).with_row_index("ev")


def _f8(name: str) -> pl.Expr:
    return pl.col(name).cast(pl.Float64)


def objects(events: pl.LazyFrame, name: str, fields: tuple[str, ...],
            offset: pl.Expr | int = 0) -> pl.LazyFrame:
    """One row per object of collection ``name``: ``ev``, index ``i`` (plus ``offset``) and the
    fields (unprefixed)."""
    lists = [f"{name}_{f}" for f in fields]
    return (events.select("ev", pl.int_ranges(offset, pl.col(lists[0]).list.len() + offset)
                          .alias("i"), *lists)
            .explode(["i", *lists])
            .drop_nulls("i")
            .rename(dict(zip(lists, fields, strict=True))))


def _p4(suffix: str = "") -> dict[str, pl.Expr]:
    """px, py, pz, E (ROOT's convention for a negative mass) of the object whose columns end
    with ``suffix``."""
    pt, eta, phi, m = (_f8(f"{k}{suffix}") for k in KIN)
    px, py, pz = pt * phi.cos(), pt * phi.sin(), pt * eta.sinh()
    e = (px * px + py * py + pz * pz + m * m.abs()).clip(lower_bound=0.0).sqrt()
    return {"x": px, "y": py, "z": pz, "e": e}


def _mass(*p4s: dict[str, pl.Expr]) -> pl.Expr:
    x, y, z, e = (pl.sum_horizontal([p[c] for p in p4s]) if len(p4s) > 2
                  else p4s[0][c] + p4s[1][c] for c in "xyze")
    m2 = e * e - x * x - y * y - z * z
    return m2.sign() * m2.abs().sqrt()


def _delta_phi(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    d = a.cast(pl.Float64) - b.cast(pl.Float64)
    return (pl.when(d > math.pi).then(d - 2 * math.pi)
            .when(d < -math.pi).then(d + 2 * math.pi).otherwise(d))


def _pairs(objs: pl.LazyFrame) -> pl.LazyFrame:
    """Every pair (i < j) of objects in the same event; the second's columns end in ``_b``."""
    return objs.join(objs, on="ev", suffix="_b").filter(pl.col("i") < pl.col("i_b"))


def _first_per_event(frame: pl.LazyFrame, *order: str | pl.Expr) -> pl.LazyFrame:
    return frame.sort("ev", *order).group_by("ev", maintain_order=True).first()


def _queries(task: Task, ev: pl.LazyFrame) -> dict[str, pl.LazyFrame]:
    """Axis name -> a frame whose one column is what it plots."""
    n = task.number
    if n == 1:
        return {"met": ev.select("MET_pt")}
    if n == 2:
        return {"jet_pt": ev.select(pl.col("Jet_pt").explode()).drop_nulls()}
    if n == 3:
        jets = objects(ev, "Jet", ("pt", "eta"))
        return {"central_jet_pt": jets.filter((pl.col("pt") > T.CENTRAL_JET_PT)
                                              & (pl.col("eta").abs() < T.CENTRAL_ETA))
                .select("pt")}
    if n == 4:
        hard = pl.col("Jet_pt").list.eval(pl.element() > T.DIJET_PT).list.sum()
        return {"dijet_met": ev.filter(hard >= T.DIJET_COUNT).select("MET_pt")}
    if n == 5:
        lo, hi = T.DIMUON_MASS
        pairs = _pairs(objects(ev, "Muon", (*KIN, "charge")))
        mass = _mass(_p4(), _p4("_b"))
        good = pairs.filter((pl.col("charge") != pl.col("charge_b")) & (mass > lo)
                            & (mass < hi)).select("ev").unique()
        return {"dimuon_met": ev.join(good, on="ev", how="semi").sort("ev").select("MET_pt")}
    if n == 6:
        jets = objects(ev, "Jet", (*KIN, "btagDeepFlavB"))
        trio = (_pairs(jets).join(jets, on="ev", suffix="_c")
                .filter(pl.col("i_b") < pl.col("i_c")))
        p4s = (_p4(), _p4("_b"), _p4("_c"))
        x, y = (pl.sum_horizontal([p[c] for p in p4s]) for c in "xy")
        best = _first_per_event(
            trio.with_columns(distance=(_mass(*p4s) - T.TOP_MASS).abs(),
                              trijet_pt=(x * x + y * y).sqrt(),
                              trijet_btag=pl.max_horizontal(
                                  "btagDeepFlavB", "btagDeepFlavB_b", "btagDeepFlavB_c")),
            "distance", "i", "i_b", "i_c")
        return {"trijet_pt": best.select("trijet_pt"), "trijet_btag": best.select("trijet_btag")}
    if n == 7:
        fields = ("pt", "eta", "phi")
        jets = objects(ev, "Jet", fields).filter(pl.col("pt") > T.HT_JET_PT)
        leptons = pl.concat([objects(ev, name, fields) for name in ("Muon", "Electron")])
        leptons = leptons.filter(pl.col("pt") > T.HT_LEPTON_PT).drop("i")
        deta = _f8("eta") - _f8("eta_l")
        dphi = _delta_phi(pl.col("phi"), pl.col("phi_l"))
        near = (jets.join(leptons, on="ev", suffix="_l")
                .filter((deta * deta + dphi * dphi).sqrt() < T.HT_DELTA_R)
                .select("ev", "i").unique())
        good = jets.join(near, on=["ev", "i"], how="anti")
        return {"jet_ht": good.group_by("ev").agg(_f8("pt").sum()).sort("ev").select("pt")}
    if n == 8:
        fields = (*KIN, "charge")
        leptons = pl.concat([
            objects(ev, "Muon", fields).with_columns(flavour=pl.lit(T.MUON)),
            objects(ev, "Electron", fields, pl.col("Muon_pt").list.len())
            .with_columns(flavour=pl.lit(T.ELECTRON))])
        busy = ev.filter(pl.col("Muon_pt").list.len() + pl.col("Electron_pt").list.len() >= 3)
        leptons = leptons.join(busy.select("ev"), on="ev", how="semi")
        sfos = _pairs(leptons).filter((pl.col("flavour") == pl.col("flavour_b"))
                                      & (pl.col("charge") != pl.col("charge_b")))
        z = _first_per_event(
            sfos.with_columns(distance=(_mass(_p4(), _p4("_b")) - T.Z_MASS).abs()),
            "distance", "i", "i_b").select("ev", pl.col("i").alias("z1"),
                                          pl.col("i_b").alias("z2"))
        others = leptons.join(z, on="ev").filter((pl.col("i") != pl.col("z1"))
                                                  & (pl.col("i") != pl.col("z2")))
        lead = (others.sort("ev", "pt", "i", descending=[False, True, False])
                .group_by("ev", maintain_order=True).first())
        dphi = _delta_phi(pl.col("MET_phi"), pl.col("phi"))
        mt = (2.0 * _f8("pt") * _f8("MET_pt") * (1.0 - dphi.cos())).sqrt()
        return {"lepton_mt": lead.join(busy.select("ev", "MET_pt", "MET_phi"), on="ev")
                .sort("ev").select(mt)}
    raise ValueError(f"no polars query for task {n}")


def run(path: str | Path, tasks: list[Task]) -> Hists:
    """Every histogram of ``tasks`` from the Parquet or Arrow IPC file ``path``."""
    events = scan(path, T.columns(tasks))
    out: Hists = {}
    for task in tasks:
        frames = _queries(task, events)
        results = pl.collect_all(list(frames.values()))
        out.update(T.fill(task, {name: np.asarray(r.to_series(0).to_numpy(), dtype=np.float64)
                                 for name, r in zip(frames, results, strict=True)}))
    return out
