"""The tasks as dask-awkward task graphs: the file opened as a dask-awkward collection (one
partition per cluster or row group: ``uproot.dask`` for a TTree or RNTuple, ``dak.from_parquet``
for Parquet), the awkward engine's task code applied to the collection unchanged (every awkward
call dispatches to dask-awkward, vector's behaviours included), and each histogram a ``hist.dask``
histogram, filled on the workers; the connected cluster computes the graph. That is how coffea
scales an analysis out, and unlike :mod:`.dask_engine` (the same task code submitted by hand,
piece by piece) it pays what dask-awkward costs: building the graph, tracing it on typetracers
for the columns it needs, and moving the partial histograms.

Why not coffea's NanoEvents in dask mode: coffea 2026.9.0 refuses a Parquet file in that mode
(``NotImplementedError``: "Dask-awkward does not yet support lazy loading of parquet files with a
schema") and fails on an RNTuple (``uproot.dask`` is asked for the fields' ``title``, which an
RNTuple field lacks), so it would answer on TTrees only; the awkward engine's code reads all three.

Parquet is read with dask-awkward's column optimisation off. With it on, dask-awkward 2026.2.1
(awkward 2.14.0) leaves the columns it projects as placeholders: ``ak.num`` fails on them
("PlaceholderArray supports only trivial slices") and ``ak.values_astype`` on an unknown-length
BitMaskedArray (dask-awkward issues 501 and 524, open). Off, ``dak.from_parquet`` still reads only
the task's columns, since they are named when the collection is made.

Binning: a ``hist.dask`` histogram bins as boost-histogram does, which puts some values one bin
away from TH1 (see :meth:`.tasks.Axis.flow_index`); so each value's TH1 bin number is computed on
the workers (:meth:`.tasks.Axis.bin_number`) and counted on an ``Integer`` axis, whose flow bins
are TH1's.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from distributed import WorkerPlugin

from hepfmt.queries import awkward_engine, cluster
from hepfmt.queries import tasks as T
from hepfmt.queries.tasks import Hists, Task

if TYPE_CHECKING:
    import dask_awkward as dak
    import hist.dask
    from distributed import Worker

#: file suffix -> whether dask-awkward's column optimisation runs (off for Parquet: see above)
OPTIMISED = {"root": True, "parquet": False}


def prepare(threads: int = 1) -> None:
    """Importing dask-awkward and hist.dask, and vector's behaviours here (the graph is traced
    on typetracers in this process); workers register theirs on joining (:func:`connect`)."""
    import dask_awkward  # noqa: F401
    import hist.dask  # noqa: F401

    awkward_engine.prepare(threads)


class _Behaviours(WorkerPlugin):
    """A worker plugin: vector's awkward behaviours on every worker, those that join later too
    (the task code adds Momentum4D records there)."""

    def setup(self, worker: Worker) -> None:
        awkward_engine.prepare()


def connect(address: str) -> None:
    """Connect to the scheduler at ``address``, outside any timing, and set its workers up."""
    cluster.connect(address).register_plugin(_Behaviours(), name="hepfmt-vector")


def collection(path: str | Path, columns: list[str]) -> dak.Array:
    """The file's ``columns`` as a dask-awkward collection, one partition per cluster (TTree,
    RNTuple) or row group (Parquet): the pieces :mod:`.dask_engine` submits by hand."""
    suffix = Path(path).suffix.lstrip(".")
    if suffix == "root":
        import uproot

        from hepfmt.formats.root.backend import TREE

        # open_files=False: the graph names the file and each partition opens it on its worker
        # (uproot 5.7.7's RNTuple object, which the graph would carry otherwise, does not
        # unpickle: KeyError '__setstate__' on the scheduler)
        steps = [list(p) for p in awkward_engine.pieces(path)]
        return uproot.dask({str(path): {"object_path": TREE, "steps": steps}},
                           filter_name=columns, open_files=False)
    if suffix == "parquet":
        import dask_awkward as dak

        return dak.from_parquet(str(path), columns=columns, split_row_groups=True)
    raise ValueError(f"{path}: the dask-awkward engine reads {sorted(OPTIMISED)}, not .{suffix}")


def _histogram(axis: T.Axis, values: dak.Array) -> hist.dask.Hist:
    import awkward as ak
    import hist
    import hist.dask

    flat = ak.values_astype(ak.flatten(values, axis=None), np.float64)  # the reference's dtype
    h = hist.dask.Hist(hist.axis.Integer(0, axis.bins, name=axis.name))
    return h.fill(ak.values_astype(axis.bin_number(flat), np.int64))  # an Integer axis's type


def graph(path: str | Path, tasks: list[Task]) -> dict[str, hist.dask.Hist]:
    """Every histogram of ``tasks`` as a lazy ``hist.dask`` histogram: nothing read yet."""
    events = collection(path, T.columns(tasks))
    out = {}
    for task in tasks:
        values = awkward_engine.values(events, task)
        out.update({axis.name: _histogram(axis, values[axis.name]) for axis in task.axes})
    return out


def run(path: str | Path, tasks: list[Task]) -> Hists:
    """Every histogram of ``tasks`` from ``path``, computed on the connected cluster."""
    import dask

    client = cluster.client()
    optimise = OPTIMISED.get(Path(path).suffix.lstrip("."), True)
    with dask.config.set({"awkward.optimization.enabled": optimise}):
        lazy = graph(path, tasks)
        done = client.compute(list(lazy.values()), sync=True)
    axes = {a.name: a for task in tasks for a in task.axes}
    return {name: axes[name].with_counts(h.values(flow=True)) for name, h in zip(lazy, done,
                                                                               strict=True)}
