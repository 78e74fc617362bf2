"""What each rule's batch job must ask for (memory, time, disk, cores), estimated from the config.

On SLURM or HTCondor a job that asks for too little memory or time is killed, and one that asks
for far too much waits longer in the queue and blocks what others could use. The needs of every
stage scale with the events and branches it handles, so they are computed from the study config
rather than fixed per rule: the same workflow asks for seconds on the test study and hours on
the 2018 study.

Time comes from the parts of each job measured in :mod:`.cost` (start-ups, per-file open and
set-up, steady throughputs per reader and format), memory from measurements on the reference
laptop (2 cores, Debian 12, ROOT 6.40, pyarrow 26) with the 1499-branch NanoAOD schema, scaled
linearly by events × branches; memory gets ``MEM_SAFETY`` headroom and time ``TIME_SAFETY``
(batch nodes are often slower per core and busier than a laptop, and a killed job costs more
than a generous request).
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from hepfmt import formats
from hepfmt.formats.base import DEFAULT_WRITE_MEMORY
from hepfmt.plan import calibration, cost, scratch, study
from hepfmt.plan.cost import IMPORTED_EVENTS, NANOAOD_BRANCHES, branch_count, sample_events

__all__ = ["IMPORTED_EVENTS", "NANOAOD_BRANCHES", "branch_count", "sample_events"]  # re-exported

JOB_START_S = 60  # Snakemake starting inside a batch job (~12 s on a local SLURM) and staging

# Memory in MB: a process's base, plus bytes per branch value held at once (a convert job's:
# its format's ``write_memory`` in the registry).
BASE_MB = {"generate": 300, "measure": 900, "tabulate": 1000}
#: A pair job's live workers: one reader process per side.
PAIR_PROCESSES = 2
GENERATE_BYTES = 8  # the whole sample is built in memory: ~11 kB/event at 1499 branches
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


def generate(n_events: int, n_branches: int, seconds: float | None = None) -> Estimate:
    values = n_events * n_branches
    return _estimate(BASE_MB["generate"], values, GENERATE_BYTES,
                     cost.generate_seconds(n_events, n_branches) if seconds is None else seconds,
                     values, SOURCE_BYTES)


def convert(fmt: str, variant: str, n_events: int, cluster_size: int,
            n_branches: int, proof_s: float = 0.0, seconds: float | None = None) -> Estimate:
    """A TTree or RNTuple holds one cluster of pages, Parquet one row group: memory follows the
    cluster size; time follows the events, and the codec when it is a slow one, plus the
    proofs of the readers that will time the file (``proof_s``). Memory: the format's
    ``write_memory`` (:class:`~hepfmt.formats.base.WriteMemory`; a format not registered, the
    default's)."""
    memory = formats.get(fmt).write_memory if fmt in formats.names() else DEFAULT_WRITE_MEMORY
    values = n_events * n_branches
    return _estimate(memory.base_mb, min(cluster_size, n_events) * n_branches,
                     memory.cluster_bytes, cost.write_seconds(fmt, variant, n_events, n_branches)
                     + proof_s if seconds is None else seconds, values, FILE_BYTES)


def measure(n_events: int, widest: int, seconds: float) -> Estimate:
    """Memory: the widest selection held at once; time: the job's parts
    (:func:`cost.measure_job`)."""
    return _estimate(BASE_MB["measure"], n_events * widest, READ_BYTES, seconds)


def pair(n_events: int, width: int, seconds: float) -> Estimate:
    """Memory: both workers alive at once (a reader process's base each), the selection held by
    one at a time (the sides scan in turn); time: the job's parts (:func:`cost.pair_job`)."""
    return _estimate(PAIR_PROCESSES * BASE_MB["measure"], n_events * width, READ_BYTES, seconds)


def tabulate(n_records: int, seconds: float | None = None) -> Estimate:
    return _estimate(BASE_MB["tabulate"], n_records, 100_000,
                     cost.tabulate_seconds(n_records) if seconds is None else seconds)


#: The rules whose jobs time reads: a batch system must run them on one CPU model
#: (:func:`timing_placement`).
TIMING_RULES = ("measure", "pair")


def timing_placement(rule: str, config: Mapping) -> dict[str, str]:
    """The SLURM resources that pin a timing job to one partition or node feature
    (``batch.timing_partition``, ``batch.timing_constraint``; the SLURM plugin's
    ``slurm_partition`` and ``constraint``); none for other rules or where the config names
    none."""
    if rule not in TIMING_RULES:
        return {}
    b = config.get("batch") or {}
    return {k: b[key] for k, key in (("slurm_partition", "timing_partition"),
                                     ("constraint", "timing_constraint")) if b.get(key)}


def placement_words(config: Mapping) -> str:
    """What the plan says of where timing jobs run (check-config's ``timing:`` line)."""
    pinned = timing_placement("measure", config)
    if not pinned:
        return ("timing jobs (measure, pair): on any node the batch system picks; on a cluster "
                "of several CPU models set batch.timing_partition or batch.timing_constraint "
                "(the tables never pool two models: each is tabulated apart)")
    return "timing jobs (measure, pair) pinned to " + ", ".join(
        f"{k} {v!r}" for k, v in pinned.items())


def measure_threads(cores: int | None, reader_threads: int) -> int:
    """Cores for one measurement job: all of Snakemake's cores when it runs jobs on this machine
    (no other job may disturb a timing), the readers' own threads on a cluster (``cores`` is
    None there), where the profile asks the batch system for an exclusive node instead."""
    return max(cores or reader_threads, 1)


def for_job(rule: str, config: Mapping, wildcards: Mapping[str, str],
            read_plan: Mapping[study.FileSpec, list[str]] | None = None,
            proof_plan: Mapping[study.FileSpec, list[str]] | None = None,
            fits: Mapping[str, calibration.Fit] | None = None) -> Estimate:
    """The estimate for one job of ``rule``, from the config and the job's wildcards.

    A measurement runs the readers the read plan gives its file, and a conversion proves those
    the proof plan gives it (often only the one reader standing for a pair's side): pass the
    plans the workflow computed once (``READ_PLAN``, ``PROOF_PLAN``), else they are computed
    here. ``fits`` (:func:`calibration.fit` of past jobs' benchmark records) scale the time;
    without them the shipped parts alone give it.
    """
    c = dict(config)
    if rule not in ("generate", "tabulate", "pair", "convert", "measure"):
        raise KeyError(f"no resource estimate for rule {rule!r}")
    seconds = cost.job_seconds(rule, config, wildcards, read_plan, proof_plan) * \
        calibration.factor(fits, rule)
    if rule == "generate":
        sample = wildcards["sample"]
        return generate(sample_events(config, sample), branch_count(config, sample), seconds)
    if rule == "tabulate":
        return tabulate(2 * len(study.files(c)) + len(study.pair_plan(c)), seconds)
    if rule == "pair":
        job = study.pair_job_of(c, wildcards, read_plan)
        widths = dict(zip(config["measure"]["selections"],
                          cost.selection_widths(config, job.sample), strict=True))
        return pair(sample_events(config, job.sample), widths[job.selection], seconds)
    spec = study.spec_of(c, wildcards)
    if rule == "convert":
        return convert(spec.adapter, spec.variant, sample_events(config, spec.sample),
                       spec.cluster_size, branch_count(config), seconds=seconds)
    return measure(sample_events(config, spec.sample),
                   max(cost.selection_widths(config, spec.sample),
                       default=branch_count(config)), seconds)


@dataclass(frozen=True)
class StudyEstimate:
    """What a whole study (target ``all``) needs, from its jobs' estimates: disk is the planned
    peak (:func:`scratch.peak_gb`: every file where files are kept, else the sources and the
    file groups in flight), each file as large as an uncompressed TTree (an upper bound), memory
    the largest job's request, CPU the single-core time of every job without headroom."""

    events: int  # over all samples (an imported one counted as IMPORTED_EVENTS)
    files: int  # written
    measurements: int  # files read-measured
    disk_gb: float
    mem_peak_mb: int
    cpu_hours: float
    pair_jobs: int = 0  # paired ROOT / Parquet measurements
    keep_files: bool = True  # written files stay after their reads (scratch.keep_files)

    @property
    def disk_words(self) -> str:
        return "written files kept" if self.keep_files else "each file deleted after its reads"

    def describe(self) -> str:
        return (f"estimate: {self.events:,} events, {self.files} files to write "
                f"({self.measurements} read-measured), {self.pair_jobs} pair jobs, "
                f"disk peak up to {self.disk_gb:,.1f} GB ({self.disk_words}), "
                f"memory peak {self.mem_peak_mb / 1000:,.1f} GB (largest job), "
                f"CPU {self.cpu_hours:,.1f} core-hours")


def whole_study(config: Mapping, fits: Mapping[str, calibration.Fit] | None = None
                ) -> StudyEstimate:
    """The sum over every job of the study's main target (the metadata study is not in it),
    each job's time scaled by ``fits`` (:func:`calibration.fit`) where given."""
    c = dict(config)
    plan, proofs = study.read_plan(c), study.proof_plan(c)
    files = study.files(c)
    pairs = study.pair_plan(c)
    jobs = [("generate", {"sample": s}) for s in config["samples"]]
    jobs += [("convert", f.wildcards) for f in files]
    jobs += [("measure", f.wildcards) for f in plan]
    jobs += [("pair", j.wildcards) for j in pairs]
    jobs += [("tabulate", {})]
    estimates = [for_job(rule, config, wc, plan, proofs, fits) for rule, wc in jobs]
    n = len(config["samples"])
    return StudyEstimate(
        events=sum(sample_events(config, s) for s in config["samples"]),
        files=len(files), measurements=len(plan),
        disk_gb=scratch.peak_gb(
            config, {f: e.output_mb for f, e in zip(files, estimates[n:n + len(files)],
                                                    strict=True)},
            {s: e.output_mb for s, e in zip(config["samples"], estimates[:n], strict=True)}),
        mem_peak_mb=max(e.mem_mb for e in estimates),
        cpu_hours=sum(e.cpu_s for e in estimates) / 3600, pair_jobs=len(pairs),
        keep_files=scratch.keep_files(config))


#: Past this many hours of wall time on this machine's cores, a study deserves a second look.
LONG_RUN_HOURS = 24


def machine_warnings(est: StudyEstimate, config: Mapping) -> list[str]:
    """Where ``est`` exceeds this machine: free disk under ``results``, RAM, cores (a run on
    a batch cluster can ignore them)."""
    from hepfmt.provenance import machine

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
    paired = max((p.threads or 0 for p in study.compare_pairs(dict(config))), default=0)
    if paired > cores:
        out.append(f"compare.pairs: {paired} reader threads on {cores} cores time "
                   "oversubscribed reads")
    return out
