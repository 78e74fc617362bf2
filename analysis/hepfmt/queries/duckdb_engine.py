"""The tasks in SQL with DuckDB, on Parquet: a jagged branch is a list column, so per-object work
is ``unnest`` (with ``generate_subscripts`` for the object's index) and combinations are
self-joins on the event number; "the best candidate per event" is a window (``QUALIFY``) whose
ORDER BY carries the benchmark's tie-break. Four-vector algebra is a handful of SQL macros.

DuckDB returns the plotted values; :func:`.tasks.fill` histograms them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hepfmt.queries import tasks as T
from hepfmt.queries.tasks import Hists, Task

#: SQL macros every query may use: four-vector components in double, ROOT's convention for a
#: negative mass, and the benchmark's one-step azimuth wrap.
MACROS = """
CREATE OR REPLACE TEMP MACRO px(pt, phi) AS pt::DOUBLE * cos(phi::DOUBLE);
CREATE OR REPLACE TEMP MACRO py(pt, phi) AS pt::DOUBLE * sin(phi::DOUBLE);
CREATE OR REPLACE TEMP MACRO pz(pt, eta) AS pt::DOUBLE * sinh(eta::DOUBLE);
CREATE OR REPLACE TEMP MACRO energy(pt, eta, phi, m) AS sqrt(greatest(
    px(pt, phi) * px(pt, phi) + py(pt, phi) * py(pt, phi) + pz(pt, eta) * pz(pt, eta)
    + m::DOUBLE * abs(m::DOUBLE), 0.0));
CREATE OR REPLACE TEMP MACRO signed_sqrt(m2) AS sign(m2) * sqrt(abs(m2));
CREATE OR REPLACE TEMP MACRO mass_of(e, x, y, z) AS signed_sqrt(e * e - x * x - y * y - z * z);
CREATE OR REPLACE TEMP MACRO delta_phi(a, b) AS CASE
    WHEN a::DOUBLE - b::DOUBLE > pi() THEN a::DOUBLE - b::DOUBLE - 2 * pi()
    WHEN a::DOUBLE - b::DOUBLE < -pi() THEN a::DOUBLE - b::DOUBLE + 2 * pi()
    ELSE a::DOUBLE - b::DOUBLE END;
"""


def _objects(name: str, fields: tuple[str, ...], offset: str = "0") -> str:
    """One row per object of collection ``name``: event number, index ``i`` (0-based, plus
    ``offset``), and the fields."""
    cols = ", ".join(f"unnest({name}_{f}) AS {f}" for f in fields)
    return (f"SELECT ev, generate_subscripts({name}_pt, 1) - 1 + {offset} AS i, {cols} "
            f"FROM events")


def _pair_mass(a: str, b: str) -> str:
    e = f"energy({a}.pt, {a}.eta, {a}.phi, {a}.mass) + energy({b}.pt, {b}.eta, {b}.phi, {b}.mass)"
    return (f"mass_of({e}, px({a}.pt, {a}.phi) + px({b}.pt, {b}.phi), "
            f"py({a}.pt, {a}.phi) + py({b}.pt, {b}.phi), "
            f"pz({a}.pt, {a}.eta) + pz({b}.pt, {b}.eta))")


def _d(x: float) -> str:
    return f"{x!r}::DOUBLE"


def _sql(task: Task) -> dict[str, str]:
    """Axis name -> the query of the values it plots."""
    lo, hi = T.DIMUON_MASS
    kin = ("pt", "eta", "phi", "mass")
    if task.number == 1:
        return {"met": "SELECT MET_pt FROM events"}
    if task.number == 2:
        return {"jet_pt": "SELECT unnest(Jet_pt) FROM events"}
    if task.number == 3:
        return {"central_jet_pt": f"""
            SELECT pt FROM (SELECT unnest(Jet_pt) AS pt, unnest(Jet_eta) AS eta FROM events)
            WHERE pt > {_d(T.CENTRAL_JET_PT)} AND abs(eta) < {_d(T.CENTRAL_ETA)}"""}
    if task.number == 4:
        return {"dijet_met": f"""
            SELECT MET_pt FROM events
            WHERE len([x FOR x IN Jet_pt IF x > {_d(T.DIJET_PT)}]) >= {T.DIJET_COUNT}"""}
    if task.number == 5:
        return {"dimuon_met": f"""
            WITH mu AS ({_objects("Muon", (*kin, "charge"))})
            SELECT MET_pt FROM events WHERE ev IN (
                SELECT a.ev FROM mu a JOIN mu b ON a.ev = b.ev AND a.i < b.i
                WHERE a.charge <> b.charge
                  AND {_pair_mass("a", "b")} > {_d(lo)} AND {_pair_mass("a", "b")} < {_d(hi)})
            ORDER BY ev"""}
    if task.number == 6:
        e = " + ".join(f"energy({j}.pt, {j}.eta, {j}.phi, {j}.mass)" for j in "abc")
        x, y, z = (" + ".join(f"p{c}({j}.pt, {j}.{w})" for j in "abc")
                   for c, w in (("x", "phi"), ("y", "phi"), ("z", "eta")))
        best = f"""
            WITH jet AS ({_objects("Jet", (*kin, "btagDeepFlavB"))}),
            trijet AS (
                SELECT a.ev, a.i, b.i AS j, c.i AS k, {x} AS x, {y} AS y,
                       abs(mass_of({e}, {x}, {y}, {z}) - {_d(T.TOP_MASS)}) AS distance,
                       greatest(a.btagDeepFlavB, b.btagDeepFlavB, c.btagDeepFlavB) AS btag
                FROM jet a JOIN jet b ON a.ev = b.ev AND a.i < b.i
                           JOIN jet c ON b.ev = c.ev AND b.i < c.i)
            SELECT ev, sqrt(x * x + y * y) AS pt, btag FROM trijet
            QUALIFY row_number() OVER (PARTITION BY ev ORDER BY distance, i, j, k) = 1"""
        return {"trijet_pt": f"SELECT pt FROM ({best}) ORDER BY ev",
                "trijet_btag": f"SELECT btag FROM ({best}) ORDER BY ev"}
    if task.number == 7:
        lepton = " UNION ALL ".join(
            f"SELECT * FROM ({_objects(name, ('pt', 'eta', 'phi'))}) "
            f"WHERE pt > {_d(T.HT_LEPTON_PT)}" for name in ("Muon", "Electron"))
        return {"jet_ht": f"""
            WITH jet AS ({_objects("Jet", ("pt", "eta", "phi"))}), lepton AS ({lepton})
            SELECT sum(j.pt::DOUBLE) FROM jet j
            WHERE j.pt > {_d(T.HT_JET_PT)} AND NOT EXISTS (
                SELECT 1 FROM lepton l WHERE l.ev = j.ev AND sqrt(
                    (j.eta::DOUBLE - l.eta::DOUBLE) * (j.eta::DOUBLE - l.eta::DOUBLE)
                    + delta_phi(j.phi, l.phi) * delta_phi(j.phi, l.phi)) < {_d(T.HT_DELTA_R)})
            GROUP BY j.ev ORDER BY j.ev"""}
    if task.number == 8:
        fields = (*kin, "charge")
        return {"lepton_mt": f"""
            WITH lepton AS (
                SELECT *, {T.MUON} AS flavour FROM ({_objects("Muon", fields)})
                UNION ALL
                SELECT *, {T.ELECTRON} AS flavour
                FROM ({_objects("Electron", fields, "len(Muon_pt)")})),
            busy AS (SELECT ev FROM lepton GROUP BY ev HAVING count(*) >= 3),
            z AS (
                SELECT a.ev, a.i AS i, b.i AS j FROM lepton a
                JOIN lepton b ON a.ev = b.ev AND a.i < b.i
                WHERE a.ev IN (SELECT ev FROM busy)
                  AND a.flavour = b.flavour AND a.charge <> b.charge
                QUALIFY row_number() OVER (PARTITION BY a.ev ORDER BY
                    abs({_pair_mass("a", "b")} - {_d(T.Z_MASS)}), a.i, b.i) = 1),
            lead AS (
                SELECT l.ev, l.pt, l.phi FROM lepton l JOIN z ON l.ev = z.ev
                WHERE l.i <> z.i AND l.i <> z.j
                QUALIFY row_number() OVER (PARTITION BY l.ev ORDER BY l.pt DESC, l.i) = 1)
            SELECT sqrt(2.0 * lead.pt::DOUBLE * e.MET_pt::DOUBLE
                        * (1.0 - cos(delta_phi(e.MET_phi, lead.phi))))
            FROM lead JOIN events e ON lead.ev = e.ev ORDER BY lead.ev"""}
    raise ValueError(f"no SQL for task {task.number}")


#: Threads of each connection :func:`run` opens, unless it is given some: set by :func:`prepare`.
_threads = 1


def prepare(threads: int = 1) -> None:
    """DuckDB has nothing to compile; its thread count is set per connection in :func:`run`, so
    it is only remembered here. Importing it is the one-time cost, paid here so that no run
    (the first one's time to its histogram) holds it."""
    global _threads
    import duckdb  # noqa: F401

    _threads = threads


def run(path: str | Path, tasks: list[Task], threads: int | None = None) -> Hists:
    """Every histogram of ``tasks`` from the Parquet file ``path``."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads = {int(threads or _threads)}")
    con.execute(MACROS)
    cols = ", ".join(T.columns(tasks))
    quoted = str(path).replace("'", "''")
    con.execute(f"CREATE TEMP VIEW events AS SELECT file_row_number AS ev, {cols} "
                f"FROM read_parquet('{quoted}', file_row_number = true)")
    out: Hists = {}
    for task in tasks:
        values = {name: _column(con, q) for name, q in _sql(task).items()}
        out.update(T.fill(task, values))
    con.close()
    return out


def _column(con, query: str) -> np.ndarray:
    column = next(iter(con.execute(query).fetchnumpy().values()))
    return np.asarray(column, dtype=np.float64)
