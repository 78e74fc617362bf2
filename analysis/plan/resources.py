"""What each rule's batch job must ask for (memory, time, disk, cores), estimated from the config.

On SLURM or HTCondor a job that asks for too little memory or time is killed, and one that asks
for far too much waits longer in the queue and blocks what others could use. The needs of every
stage scale with the events and branches it handles, so they are computed from the study config
rather than fixed per rule: the same workflow asks for seconds on the test study and hours on
the 2018 study.

The constants are measurements on the reference laptop (2 cores, Debian 12, ROOT 6.40, pyarrow
26) with the 1499-branch NanoAOD schema, scaled linearly by events × branches; memory gets
``MEM_SAFETY`` headroom and time ``TIME_SAFETY`` (batch nodes are often slower per core and
busier than a laptop, and a killed job costs more than a generous request).
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from analysis.codec import Variant
from analysis.plan import selections, study

#: Branches of the built-in CMS NanoAOD model (and of a real NanoAOD file).
NANOAOD_BRANCHES = 1499
#: A sample imported from a real file has no event count in the config: assume a NanoAOD chunk.
IMPORTED_EVENTS = 200_000

# Throughputs in branch values (events × branches) per second, single core.
GENERATE_RATE = 10_000 * NANOAOD_BRANCHES  # ~10,000 events/s
WRITE_RATE = {"ttree": 2_000 * NANOAOD_BRANCHES,  # TTree::Fill ≈ 280 µs/event, not the codec
              "parquet": 10_000 * NANOAOD_BRANCHES,
              "rntuple": 2_500 * NANOAOD_BRANCHES}  # RNTupleWriter: 2,700-4,200 events/s
#: Slow codecs add their own time, in MB of naive data per second (level-independent upper
#: bounds: lzma-9 3.7 MB/s, gzip-6 15, zlib-1 60, brotli-5 46); lz4, zstd and snappy are lost in
#: the writers' own time.
CODEC_MB_PER_S = {"lzma": 3, "gzip": 12, "zlib": 30, "brotli": 30}
NAIVE_BYTES = 3.1  # per branch value, as the study counts them (~4.6 kB/event at 1499 branches)
READ_RATE = 2_000 * NANOAOD_BRANCHES  # RDataFrame reading every branch: the slowest reader
READ_EVENT_S = 1 / 10_000  # per-event floor of narrow reads (uproot, 10 branches: 12,000/s)
PROCESS_START_S = 15  # a fresh interpreter importing ROOT / pyarrow
JOB_START_S = 60  # Snakemake starting inside a batch job (~12 s on a local SLURM) and staging

# Memory in MB: a process's base, plus bytes per branch value held at once.
BASE_MB = {"generate": 300, "ttree": 700, "rntuple": 700, "parquet": 300, "measure": 900,
           "tabulate": 1000}
GENERATE_BYTES = 8  # the whole sample is built in memory: ~11 kB/event at 1499 branches
TTREE_CLUSTER_BYTES = 7  # TTree::Fill holds one cluster of baskets: ~10 kB/entry (+935 MB at
PARQUET_ROW_GROUP_BYTES = 8  # 100000); pyarrow holds a row group of arrays and pages
#: The RNTuple writer holds one cluster as an Arrow block (~5 B/value) and RNTupleWriter's
#: buffered pages of that cluster (estimated from the sizes, not measured like the two above).
HELD_BYTES = {"ttree": TTREE_CLUSTER_BYTES, "parquet": PARQUET_ROW_GROUP_BYTES, "rntuple": 9}
READ_BYTES = 9  # a reader holding every branch of the file (arrays + decompression buffers)
FILE_BYTES = 7  # on disk: an uncompressed TTree is 1.8 × the naive ~3.1 B per value
SOURCE_BYTES = 5  # the uncompressed Arrow IPC source, offsets included

MEM_SAFETY = 1.5
TIME_SAFETY = 3
MIN_RUNTIME_MIN = 10


@dataclass(frozen=True)
class Estimate:
    """One job's request: ``runtime`` in minutes, memory and scratch disk in MB.

    ``cpu_s`` (single-core seconds) and ``output_mb`` (what the job leaves on disk) are the
    same estimate without headroom, floor or scratch space: what a whole study adds up
    (:func:`whole_study`), where summing the padded requests would overstate it tenfold."""

    mem_mb: int
    runtime: int
    disk_mb: int
    cpu_s: float = 0.0
    output_mb: float = 0.0


#: Scratch space every job asks for beyond its outputs (logs, temporary files).
SCRATCH_MB = 100


def _estimate(base_mb: float, held_values: float, held_bytes: float, seconds: float,
              disk_values: float = 0, disk_bytes: float = 0) -> Estimate:
    output_mb = disk_values * disk_bytes / 1e6
    return Estimate(
        mem_mb=math.ceil(MEM_SAFETY * (base_mb + held_values * held_bytes / 1e6)),
        runtime=max(MIN_RUNTIME_MIN, math.ceil(TIME_SAFETY * (JOB_START_S + seconds) / 60)),
        disk_mb=math.ceil(SCRATCH_MB + output_mb),
        cpu_s=seconds,
        output_mb=output_mb,
    )


def generate(n_events: int, n_branches: int) -> Estimate:
    values = n_events * n_branches
    return _estimate(BASE_MB["generate"], values, GENERATE_BYTES,
                     PROCESS_START_S + values / GENERATE_RATE, values, SOURCE_BYTES)


def convert(fmt: str, variant: str, n_events: int, cluster_size: int,
            n_branches: int) -> Estimate:
    """A TTree or RNTuple holds one cluster of pages, Parquet one row group: memory follows the
    cluster size; time follows the events, and the codec when it is a slow one."""
    held = HELD_BYTES.get(fmt, PARQUET_ROW_GROUP_BYTES)
    values = n_events * n_branches
    codec = Variant.of(variant).algorithm
    seconds = (PROCESS_START_S + values / WRITE_RATE.get(fmt, WRITE_RATE["ttree"])
               + values * NAIVE_BYTES / 1e6 / CODEC_MB_PER_S.get(codec, math.inf))
    return _estimate(BASE_MB.get(fmt, BASE_MB["ttree"]), min(cluster_size, n_events) * n_branches,
                     held, seconds, values, FILE_BYTES)


def measure(n_events: int, n_branches: int, n_readers: int, selection_branches: list[int],
            reads_per_selection: int) -> Estimate:
    """Every (reader, selection) is a fresh process that reads the file ``reads_per_selection``
    times (one untimed priming read, then the repetitions of each cache mode)."""
    seconds = n_readers * sum(
        PROCESS_START_S + reads_per_selection * n_events * (b / READ_RATE + READ_EVENT_S)
        for b in selection_branches)
    widest = max(selection_branches, default=n_branches)
    return _estimate(BASE_MB["measure"], n_events * widest, READ_BYTES, seconds)


def tabulate(n_records: int) -> Estimate:
    return _estimate(BASE_MB["tabulate"], n_records, 100_000, PROCESS_START_S + n_records / 50)


def measure_threads(cores: int | None, reader_threads: int) -> int:
    """Cores for one measurement job: all of Snakemake's cores when it runs jobs on this machine
    (no other job may disturb a timing), the readers' own threads on a cluster (``cores`` is
    None there), where the profile asks the batch system for an exclusive node instead."""
    return max(cores or reader_threads, 1)


@lru_cache(maxsize=8)
def _branches_in(path: str) -> int:
    try:
        return len(json.loads(Path(path).read_text())["branches"])
    except (OSError, ValueError, KeyError, TypeError):
        return NANOAOD_BRANCHES  # an unreadable model is reported by the job that uses it


def branch_count(config: Mapping) -> int:
    """Branches per event: those of the config's value model, else the built-in NanoAOD's."""
    path = config.get("model") or config.get("schema")
    return _branches_in(str(path)) if path and "://" not in str(path) else NANOAOD_BRANCHES


def sample_events(config: Mapping, sample: str) -> int:
    return int(config["samples"][sample].get("n_events", IMPORTED_EVENTS))


def for_job(rule: str, config: Mapping, wildcards: Mapping[str, str],
            read_plan: Mapping[study.FileSpec, list[str]] | None = None) -> Estimate:
    """The estimate for one job of ``rule``, from the config and the job's wildcards.

    A measurement runs the readers the read plan gives its file, often only the one reader
    standing for a side of the ROOT / Parquet ratios: pass the plan the workflow computed once
    (``READ_PLAN``), else it is computed here.
    """
    branches = branch_count(config)
    if rule == "generate":
        return generate(sample_events(config, wildcards["sample"]), branches)
    if rule == "convert":
        return convert(study.adapter(config, wildcards["format"]), wildcards["variant"],
                       sample_events(config, wildcards["sample"]), int(wildcards["cluster"]),
                       branches)
    if rule == "measure":
        m = config["measure"]
        plan = study.read_plan(config) if read_plan is None else read_plan
        readers = study.file_readers(plan, study.spec_of(config, wildcards))
        resolved = selections.for_sample(config, wildcards["sample"])
        return measure(sample_events(config, wildcards["sample"]), branches,
                       len(readers) * len(study.thread_counts(config)),
                       [branches if sel == "*" else len(resolved[name] or sel)
                        for name, sel in m["selections"].items()],
                       1 + m["repetitions"] * len(m["modes"]))
    if rule == "tabulate":
        n_files = len(config["samples"]) * len(config["cluster_sizes"]) * sum(
            len(f["variants"]) for f in config["formats"].values())
        return tabulate(2 * n_files)
    raise KeyError(f"no resource estimate for rule {rule!r}")


@dataclass(frozen=True)
class StudyEstimate:
    """What a whole study (target ``all``) needs, from its jobs' estimates: disk is an upper
    bound (every file as large as an uncompressed TTree), memory the largest job's request,
    CPU the single-core time of every job without headroom."""

    events: int  # over all samples (an imported one counted as IMPORTED_EVENTS)
    files: int  # written
    measurements: int  # files read-measured
    disk_gb: float
    mem_peak_mb: int
    cpu_hours: float

    def describe(self) -> str:
        return (f"estimate: {self.events:,} events, {self.files} files to write "
                f"({self.measurements} read-measured), disk up to {self.disk_gb:,.1f} GB, "
                f"memory peak {self.mem_peak_mb / 1000:,.1f} GB (largest job), "
                f"CPU {self.cpu_hours:,.1f} core-hours")


def whole_study(config: Mapping) -> StudyEstimate:
    """The sum over every job of the study's main target (the metadata study is not in it)."""
    plan = study.read_plan(config)
    files = study.files(config)
    jobs = [("generate", {"sample": s}) for s in config["samples"]]
    jobs += [("convert", f.wildcards) for f in files]
    jobs += [("measure", f.wildcards) for f in plan]
    jobs += [("tabulate", {})]
    estimates = [for_job(rule, config, wc, plan) for rule, wc in jobs]
    return StudyEstimate(
        events=sum(sample_events(config, s) for s in config["samples"]),
        files=len(files), measurements=len(plan),
        disk_gb=sum(e.output_mb for e in estimates) / 1e3,
        mem_peak_mb=max(e.mem_mb for e in estimates),
        cpu_hours=sum(e.cpu_s for e in estimates) / 3600)


#: Past this many hours of wall time on this machine's cores, a study deserves a second look.
LONG_RUN_HOURS = 24


def machine_warnings(est: StudyEstimate, config: Mapping) -> list[str]:
    """Where ``est`` exceeds this machine: free disk under ``results``, RAM, cores (a run on
    a batch cluster can ignore them)."""
    from analysis.provenance import machine

    out = []
    where = Path(config.get("results", "results")).absolute()
    while not where.exists():
        where = where.parent
    free_gb = shutil.disk_usage(where).free / 1e9
    if est.disk_gb > free_gb:
        out.append(f"disk: up to {est.disk_gb:,.1f} GB needed, {free_gb:,.1f} GB free under "
                   f"{where}")
    m = machine()
    ram_mb = int(m["memory_bytes"]) / 1e6
    if ram_mb and est.mem_peak_mb > ram_mb:
        out.append(f"memory: the largest job asks {est.mem_peak_mb / 1000:,.1f} GB, this "
                   f"machine has {ram_mb / 1000:,.1f} GB")
    cores = int(m["cores"] or 1)
    if est.cpu_hours / cores > LONG_RUN_HOURS:
        out.append(f"CPU: {est.cpu_hours:,.0f} core-hours is at least "
                   f"{est.cpu_hours / cores / 24:,.1f} days on this machine's {cores} cores")
    threads = max(study.thread_counts(dict(config)))
    if threads > cores:
        out.append(f"measure.threads: {threads} reader threads on {cores} cores time "
                   "oversubscribed reads")
    return out
