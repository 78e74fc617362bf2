"""The contract every query engine meets (as :mod:`hepfmt.formats.base` is the formats'): an
engine module has ``prepare`` and ``run`` (:class:`EngineModule`), a distributed one also
``connect`` (:class:`DistributedModule`); what planning assumes a run costs is
:class:`QueryParts`, on the engine's registry entry in :mod:`hepfmt.queries`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from hepfmt.queries.tasks import Hists, Task


@runtime_checkable
class EngineModule(Protocol):
    """What an engine module defines (a module meets a protocol by its functions)."""

    def prepare(self, threads: int = 1) -> None:
        """Imports, JIT declarations and thread settings: once per process, never timed."""

    def run(self, path: str | Path, tasks: list[Task]) -> Hists:
        """Every histogram of ``tasks`` from the file at ``path`` (axis name -> hist.Hist)."""


@runtime_checkable
class DistributedModule(EngineModule, Protocol):
    """A distributed engine's module: it runs its tasks on the Dask cluster it connects to."""

    def connect(self, address: str) -> None:
        """Use the Dask scheduler at ``address`` for every later ``run``."""


@dataclass(frozen=True)
class QueryParts:
    """One engine's process on one file: start-up (imports, ROOT's JIT of the tasks, the
    reference), then each ADL task at a rate of events per second (what planning assumes,
    :mod:`hepfmt.plan.cost`)."""

    start_s: float
    events_per_s: float  # per task, the mean over tasks 1-8
