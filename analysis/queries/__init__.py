"""Analysis queries as read workloads: the eight IRIS-HEP ADL benchmark tasks (:mod:`.tasks`),
run through the engines physicists use, each checked against one reference (:mod:`.reference`).

:data:`ENGINES` is the support table: which formats each engine reads and which tasks it
answers. Every engine module has ``prepare(threads)`` (one-time, untimed) and
``run(path, tasks) -> {axis name: hist.Hist}``; modules are imported on first use, so a
Parquet-only job never loads ROOT. A *distributed* engine also has ``connect(address)`` and runs
its tasks on the Dask cluster at that address: it runs only when one is given, which is why
:func:`supported` leaves it out by default.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import ModuleType

from analysis.errors import ConfigError


@dataclass(frozen=True)
class Engine:
    name: str
    module: str
    formats: frozenset[str]  # names of analysis.formats.REGISTRY
    tasks: frozenset[int]  # a task left out is one the engine cannot express reasonably
    distributed: bool = False  # runs on a Dask cluster (``connect(address)`` first)
    #: formats other engines read and this one cannot, each with the reason: the queries table
    #: lists them as not applicable rather than leaving a silent gap
    not_applicable: dict[str, str] = field(default_factory=dict, hash=False)

    def load(self) -> ModuleType:
        return importlib.import_module(self.module)


_ALL = frozenset(range(1, 9))
ENGINES: dict[str, Engine] = {e.name: e for e in (
    Engine("rdataframe", "analysis.queries.rdf", frozenset({"ttree", "rntuple"}), _ALL),
    Engine("awkward", "analysis.queries.awkward_engine",
           frozenset({"ttree", "rntuple", "parquet", "feather"}), _ALL),
    Engine("duckdb", "analysis.queries.duckdb_engine", frozenset({"parquet"}), _ALL),
    Engine("polars", "analysis.queries.polars_engine", frozenset({"parquet", "feather"}), _ALL),
    Engine("coffea", "analysis.queries.coffea_engine",
           frozenset({"ttree", "rntuple", "parquet"}), _ALL,
           not_applicable={"feather": "coffea reads no Arrow IPC file: NanoEventsFactory "
                           "opens ROOT and Parquet files, and from_preloaded takes arrays "
                           "already in memory (the read would be pyarrow's, which the awkward "
                           "engine times)"}),
    Engine("awkward-dask", "analysis.queries.dask_engine",
           frozenset({"ttree", "rntuple", "parquet", "feather"}), _ALL, distributed=True),
    Engine("rdataframe-dask", "analysis.queries.rdf_dask", frozenset({"ttree", "rntuple"}),
           _ALL, distributed=True),
    Engine("dask-awkward", "analysis.queries.dak_engine",
           frozenset({"ttree", "rntuple", "parquet"}), _ALL, distributed=True,
           not_applicable={"feather": "dask-awkward has no Arrow IPC reader (from_parquet, "
                           "from_json, and uproot.dask for ROOT files); awkward-dask reads it "
                           "piece by piece"}),
)}


def engine(name: str) -> Engine:
    if name not in ENGINES:
        raise ConfigError("queries.engines", f"unknown engine {name!r}; known: {list(ENGINES)}")
    return ENGINES[name]


def supported(distributed: bool = False) -> list[tuple[str, str, int]]:
    """Every (engine, format, task) that runs on this machine (and, with ``distributed``, on a
    Dask cluster too)."""
    return [(e.name, f, t) for e in ENGINES.values() if distributed or not e.distributed
            for f in sorted(e.formats) for t in sorted(e.tasks)]


def distributed_engines() -> list[str]:
    """The engines that run on a Dask cluster, in :data:`ENGINES` order."""
    return [e.name for e in ENGINES.values() if e.distributed]


def reading(adapter: str, tasks: list[int], distributed: bool = False) -> list[str]:
    """The engines that read files of ``adapter`` and answer every one of ``tasks``, in
    :data:`ENGINES` order: what a query measurement of such a file runs."""
    return [e.name for e in ENGINES.values() if adapter in e.formats
            and set(tasks) <= e.tasks and (distributed or not e.distributed)]
