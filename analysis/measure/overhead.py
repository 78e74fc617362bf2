"""What the harness adds to a read: its timed scan next to the bare library call a user would
make on the same file, in one fresh process per reader, alternating so that both see the same
machine.

The bare calls are written here, apart from the adapters, as a user would write them from the
library's documentation; a reader whose timed scan costs more than a few percent over its bare
call measures hepfmt, not the library.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from analysis import formats
from analysis.formats.base import Marks
from analysis.measure import isolated
from analysis.measure.reads import ReadSpec, timed_scan
from analysis.samples.source import read_source_meta, schema_of

#: The overhead the harness may add to a read, as a fraction of the bare call.
TARGET = 0.03

Bare = Callable[[str, list[str], int], object]


def _pyarrow_parquet(path: str, branches: list[str], threads: int) -> object:
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).read(columns=branches, use_threads=threads > 1)


def _awkward_parquet(path: str, branches: list[str], threads: int) -> object:
    import awkward as ak

    return ak.from_parquet(path, columns=branches)


def _polars_parquet(path: str, branches: list[str], threads: int) -> object:
    import polars as pl

    return pl.read_parquet(path, columns=branches)


def _duckdb_parquet(path: str, branches: list[str], threads: int) -> object:
    import duckdb

    cols = ", ".join('"' + b.replace('"', '""') + '"' for b in branches)
    with duckdb.connect(config={"threads": max(1, threads)}) as con:
        return con.sql(f"SELECT {cols} FROM read_parquet(?)", params=[path]).to_arrow_table()


def _pyarrow_feather(path: str, branches: list[str], threads: int) -> object:
    import pyarrow.feather as feather

    return feather.read_table(path, columns=branches, memory_map=False, use_threads=threads > 1)


def _h5py(path: str, branches: list[str], threads: int) -> object:
    import h5py

    with h5py.File(path, "r") as f:
        return [f["Events"][b][()] for b in branches]


def _lance(path: str, branches: list[str], threads: int) -> object:
    from lance.file import LanceFileReader

    return LanceFileReader(path, columns=branches).read_all().to_table()


def _vortex(path: str, branches: list[str], threads: int) -> object:
    import vortex as vx

    return vx.open(path).to_arrow(branches).read_all()


def _uproot(path: str, branches: list[str], threads: int) -> object:
    import uproot

    with uproot.open(path) as f:
        return f["Events"].arrays(branches)


def _compiled(loop: str) -> Bare:
    """The compiled loop itself, called straight from Python: no marks kept, no clusters."""

    def call(path: str, branches: list[str], threads: int) -> object:
        from analysis.formats.root.backend import READERS, TREE, root

        return getattr(root(READERS).hepfmt, f"{loop}_scan")(path, TREE, branches, [])

    return call


BARE: dict[tuple[str, str], Bare] = {
    ("parquet", "pyarrow"): _pyarrow_parquet, ("parquet", "awkward"): _awkward_parquet,
    ("parquet", "polars"): _polars_parquet, ("parquet", "duckdb"): _duckdb_parquet,
    ("feather", "pyarrow"): _pyarrow_feather, ("hdf5", "h5py"): _h5py,
    ("lance", "lance"): _lance, ("vortex", "vortex"): _vortex,
    ("ttree", "uproot"): _uproot, ("rntuple", "uproot"): _uproot,
    **{("ttree", loop): _compiled(loop) for loop in ("rdf", "ttreereader", "getentry")},
    ("rntuple", "rdf"): _compiled("rdf"),
}


def compare(path: str, source: str, adapter: str, reader: str, branches: list[str],
            runs: int, threads: int = 1) -> dict:
    """In this process: the harness's timed scan and the bare call, ``runs`` times each,
    alternating, warm (after one untimed call of each); medians and the overhead."""
    if (adapter, reader) not in BARE:
        raise KeyError(f"no bare call for {adapter}/{reader}")
    bare = BARE[(adapter, reader)]
    r = formats.get(adapter).readers[reader]
    n_events = int(read_source_meta(source)["n_events"])
    spec = ReadSpec(path, source, adapter, reader, "bench", branches, ["warm"], runs, threads,
                    n_events=n_events)
    r.prepare(threads)
    r.scan(path, branches, threads, Marks())
    bare(path, branches, threads)
    harness, plain = [], []
    for _ in range(runs):
        harness.append(timed_scan(r, spec)["wall_s"])
        t0 = time.perf_counter()
        data = bare(path, branches, threads)
        plain.append(time.perf_counter() - t0)
        del data  # freed after the clock stopped, as the harness frees a scan's
    h, b = float(np.median(harness)), float(np.median(plain))
    return {"reader": reader, "harness_s": h, "bare_s": b, "overhead": h / b - 1, "runs": runs}


def bench(path: str, source: str, adapter: str, readers: list[str],
          selections: dict[str, list[str] | str], runs: int, threads: int = 1,
          timeout: float = 3600.0) -> list[dict]:
    """:func:`compare` for every reader and selection, each in a fresh process."""
    names = schema_of(read_source_meta(source)).names
    rows = []
    for reader in readers:
        for sel_name, sel in selections.items():
            branches = names if sel == "*" else list(sel)
            row = isolated.call("analysis.measure.overhead:compare", {
                "path": str(path), "source": str(source), "adapter": adapter,
                "reader": reader, "branches": branches, "runs": runs, "threads": threads},
                path, f"{reader}/{sel_name} overhead bench", timeout,
                data_bytes=read_source_meta(source)["naive_bytes"])
            rows.append({**row, "selection": sel_name})
    return rows


def report(rows: list[dict], adapter: str) -> str:
    """The rows as a plain-text table, each overhead against :data:`TARGET`."""
    lines = [f"{'format':8} {'reader':12} {'selection':9} {'harness ms':>11} {'bare ms':>9} "
             f"{'overhead':>9}  runs"]
    for r in rows:
        verdict = "ok" if r["overhead"] <= TARGET else f"over {TARGET:.0%}"
        lines.append(f"{adapter:8} {r['reader']:12} {r['selection']:9} "
                     f"{r['harness_s'] * 1e3:11.2f} {r['bare_s'] * 1e3:9.2f} "
                     f"{r['overhead']:+9.1%}  {r['runs']}  {verdict}")
    return "\n".join(lines)
