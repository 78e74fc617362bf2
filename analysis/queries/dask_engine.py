"""The awkward engine on a Dask cluster: the same task code (:mod:`.awkward_engine`), one Dask task
per cluster / row group / record batch of the file, each reading its piece and filling the
histograms there; the client only sums the counts. That is how coffea-style analyses scale out,
and it moves histograms, not events, over the network.

Pieces are read by the awkward engine's own readers, not as dask-awkward collections
(``uproot.dask``, ``dak.from_parquet``): so the distributed answer differs from the local one
only in where it is computed, every format the awkward engine reads works here too, and the task
code need not be typetracer-safe (with dask-awkward 2026.2.1 and awkward 2.14,
``dak.from_parquet`` partitions failed in ``ak.values_astype``: an unknown-length
BitMaskedArray). The workers must see the file at the same path (a shared
filesystem, or workers on this machine).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from analysis.queries import awkward_engine
from analysis.queries import tasks as T
from analysis.queries.tasks import Hists, Task

if TYPE_CHECKING:
    from distributed import Client

_client: Client | None = None


def prepare(threads: int = 1) -> None:
    """The local half of the awkward engine's set-up (workers do theirs in :func:`_piece`)."""
    awkward_engine.prepare(threads)


def connect(address: str) -> None:
    """Connect to the scheduler at ``address`` (``tcp://host:8786``): once per process, outside
    any timing, as a user's session would."""
    global _client
    from distributed import Client

    if _client is not None:
        _client.close()
    _client = Client(address, set_as_default=False)


def _piece(path: str, columns: list[str], piece: tuple[int, int],
           numbers: list[int]) -> dict[str, np.ndarray]:
    """On a worker: one piece's histogram counts (flow bins included), per axis."""
    awkward_engine.prepare()
    tasks = T.select(numbers)
    hists = awkward_engine.histograms(awkward_engine.read(path, columns, piece), tasks)
    return {name: h.values(flow=True) for name, h in hists.items()}


def run(path: str | Path, tasks: list[Task]) -> Hists:
    """Every histogram of ``tasks`` from ``path``, computed on the connected cluster."""
    if _client is None:
        raise RuntimeError("no Dask cluster: call connect(address) first")
    columns, numbers = T.columns(tasks), [t.number for t in tasks]
    futures = [_client.submit(_piece, str(path), columns, piece, numbers, pure=False)
               for piece in awkward_engine.pieces(path)]
    counts = _client.submit(_sum, futures, pure=False).result()
    return {a.name: a.with_counts(counts[a.name]) for task in tasks for a in task.axes}


def _sum(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """On a worker: the pieces' counts added up, so that one dict reaches the client."""
    return {name: np.sum([p[name] for p in parts], axis=0) for name in parts[0]}
