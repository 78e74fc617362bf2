"""Analysis queries as read workloads: the eight IRIS-HEP ADL benchmark tasks (:mod:`.tasks`),
run through the engines physicists use, each checked against one reference (:mod:`.reference`).

:data:`ENGINES` is the support table: which formats each engine reads and which tasks it
answers, and what planning assumes its runs cost (``cost``): adding an engine is its module
plus one line there. Every engine module meets :class:`.base.EngineModule`: ``prepare(threads)``
(one-time, untimed) and ``run(path, tasks) -> {axis name: hist.Hist}``; modules are imported on
first use, so a Parquet-only job never loads ROOT. A *distributed* engine's module is a
:class:`.base.DistributedModule`: it also has ``connect(address)`` and runs its tasks on the
Dask cluster at that address: it runs only when one is given, which is why :func:`supported`
leaves it out by default.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from hepfmt.errors import ConfigError
from hepfmt.queries.base import DistributedModule, EngineModule, QueryParts

__all__ = ["ENGINES", "DistributedModule", "Engine", "EngineModule", "QueryParts",
           "distributed_engines", "engine", "reading", "supported"]


@dataclass(frozen=True)
class Engine:
    name: str
    module: str  # meets EngineModule (DistributedModule if ``distributed``)
    formats: frozenset[str]  # names of hepfmt.formats.REGISTRY
    tasks: frozenset[int]  # a task left out is one the engine cannot express reasonably
    distributed: bool = False  # runs on a Dask cluster (``connect(address)`` first)
    #: formats other engines read and this one cannot, each with the reason: the queries table
    #: lists them as not applicable rather than leaving a silent gap
    not_applicable: dict[str, str] = field(default_factory=dict, hash=False)
    #: what planning assumes a run costs, per format measured (hepfmt.plan.cost: a format not
    #: here costs as its ``queries_cost_as`` format, else as the slowest engine)
    cost: dict[str, QueryParts] = field(default_factory=dict, hash=False)

    def load(self) -> EngineModule:
        """The engine's module, checked against its protocol."""
        module = importlib.import_module(self.module)
        want = DistributedModule if self.distributed else EngineModule
        if not isinstance(module, want):
            raise TypeError(f"{self.module} is no {want.__name__} (prepare, run"
                            f"{', connect' if self.distributed else ''})")
        return module


_ALL = frozenset(range(1, 9))
# Costs: `hepfmt query --tasks 1,...,8 --modes warm --repetitions 5` on the 20000-event
# DYJetsToLL files of hepfmt.plan.cost: start = wall - 6 runs of every task's median;
# rate = 8 × 20000 / sum of the task medians.
ENGINES: dict[str, Engine] = {e.name: e for e in (
    Engine("rdataframe", "hepfmt.queries.rdf", frozenset({"ttree", "rntuple"}), _ALL,
           cost={"ttree": QueryParts(8.3, 434_800)}),
    Engine("awkward", "hepfmt.queries.awkward_engine",
           frozenset({"ttree", "rntuple", "parquet", "feather"}), _ALL,
           cost={"parquet": QueryParts(2.3, 108_800), "ttree": QueryParts(2.8, 60_600)}),
    Engine("duckdb", "hepfmt.queries.duckdb_engine", frozenset({"parquet"}), _ALL,
           cost={"parquet": QueryParts(2.2, 115_100)}),
    Engine("polars", "hepfmt.queries.polars_engine", frozenset({"parquet", "feather"}), _ALL,
           cost={"parquet": QueryParts(2.1, 378_000)}),
    # coffea (NanoEvents, virtual mode): the same command on DYJetsToLL 20000 events, seed 1,
    # 10000-event clusters (TTree and RNTuple zstd-5, Parquet zstd-3); nearly all of a run is
    # building the events of the 1499-branch file, so RNTuple (uproot's metadata) is its own
    Engine("coffea", "hepfmt.queries.coffea_engine",
           frozenset({"ttree", "rntuple", "parquet"}), _ALL,
           not_applicable={"feather": "coffea reads no Arrow IPC file: NanoEventsFactory "
                           "opens ROOT and Parquet files, and from_preloaded takes arrays "
                           "already in memory (the read would be pyarrow's, which the awkward "
                           "engine times)"},
           cost={"parquet": QueryParts(1.4, 127_900), "ttree": QueryParts(2.3, 34_400),
                 "rntuple": QueryParts(3.7, 7_600)}),
    # The distributed engines on one worker: per-task rates of `hepfmt bench dask-scaling`
    # (results/reference/amd-epyc/dask-scaling.txt, 20000 events, Parquet zstd-3, 8 × 20000 /
    # the summed task times); start-up = the awkward engine's plus what importing them adds
    # (`prepare`, 2026-11-26: dask-awkward and hist.dask 1.5 s, distributed 0.1 s)
    Engine("awkward-dask", "hepfmt.queries.dask_engine",
           frozenset({"ttree", "rntuple", "parquet", "feather"}), _ALL, distributed=True,
           cost={"parquet": QueryParts(2.4, 13_900)}),
    # rdataframe-dask and dask-awkward on a TTree: the same bench on the TTree zstd-5 of those
    # events (results/reference/amd-epyc/dask-scaling-ttree.txt); start-up the local engine's
    Engine("rdataframe-dask", "hepfmt.queries.rdf_dask", frozenset({"ttree", "rntuple"}),
           _ALL, distributed=True, cost={"ttree": QueryParts(8.4, 16_700)}),
    Engine("dask-awkward", "hepfmt.queries.dak_engine",
           frozenset({"ttree", "rntuple", "parquet"}), _ALL, distributed=True,
           not_applicable={"feather": "dask-awkward has no Arrow IPC reader (from_parquet, "
                           "from_json, and uproot.dask for ROOT files); awkward-dask reads it "
                           "piece by piece"},
           cost={"parquet": QueryParts(3.8, 32_500), "ttree": QueryParts(4.3, 3_300)}),
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
