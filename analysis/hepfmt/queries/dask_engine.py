"""The awkward engine on a Dask cluster: the same task code (:mod:`.awkward_engine`), one Dask task
per cluster / row group / record batch of the file, each reading its piece and filling the
histograms there; the client only sums the counts: histograms, not events, cross the
network.

Pieces are read by the awkward engine's own readers, not as dask-awkward collections: so the
distributed answer differs from the local one only in where it is computed, and every format the
awkward engine reads works here too (Arrow IPC included). :mod:`.dak_engine` runs the same task
code as dask-awkward collections, the way coffea scales out. The workers must see the file at the
same path (a shared filesystem, or workers on this machine).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from hepfmt.queries import awkward_engine, cluster
from hepfmt.queries import tasks as T
from hepfmt.queries.tasks import Hists, Task


def prepare(threads: int = 1) -> None:
    """The local half of the awkward engine's set-up (workers do theirs in :func:`_piece`)."""
    awkward_engine.prepare(threads)


def connect(address: str) -> None:
    """Connect to the scheduler at ``address`` (``tcp://host:8786``): once per process, outside
    any timing, as a user's session would."""
    cluster.connect(address)


def _piece(path: str, columns: list[str], piece: tuple[int, int],
           numbers: list[int]) -> dict[str, np.ndarray]:
    """On a worker: one piece's histogram counts (flow bins included), per axis."""
    awkward_engine.prepare()
    tasks = T.select(numbers)
    hists = awkward_engine.histograms(awkward_engine.read(path, columns, piece), tasks)
    return {name: h.values(flow=True) for name, h in hists.items()}


def run(path: str | Path, tasks: list[Task]) -> Hists:
    """Every histogram of ``tasks`` from ``path``, computed on the connected cluster."""
    client = cluster.client()
    columns, numbers = T.columns(tasks), [t.number for t in tasks]
    futures = [client.submit(_piece, str(path), columns, piece, numbers, pure=False)
               for piece in awkward_engine.pieces(path)]
    counts = client.submit(_sum, futures, pure=False).result()
    return {a.name: a.with_counts(counts[a.name]) for task in tasks for a in task.axes}


def _sum(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """On a worker: the pieces' counts added up, so that one dict reaches the client."""
    return {name: np.sum([p[name] for p in parts], axis=0) for name in parts[0]}
