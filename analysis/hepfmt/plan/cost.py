"""CPU time of a study, summed from the parts of each job, measured once on one machine.

A read's time is not proportional to its events: a process pays its imports once, a file its
open and set-up once per pass, and only then do events stream at a steady rate. A read-measured
file is read many times: once per reader by ``convert`` (the untimed proof of every branch),
then by the measurement job (one untimed priming scan, then repetitions per cache mode, as many
as ``measure.budget_s`` allows), so a guess in events × branches is off by the fixed parts times the
passes. Every constant is one of those parts, measured by hepfmt itself (``hepfmt measure``
records open_s, setup_s and events_per_s_steady per read): a reader's and a writer's live in
its format's adapter (:attr:`Reader.cost`, :attr:`Format.write_cost`), measured as said below,
the others here. The study's estimate walks the
planner's own jobs (:func:`study.files`, :func:`study.read_plan`, :func:`study.pair_plan`,
:func:`study.queries`, :func:`metagrid.files`), so it follows every sub-grid the planner
honours. Batch requests (:mod:`.resources`) take the same per-job seconds and add their
headroom.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hepfmt import formats, queries
from hepfmt.codec import Variant
from hepfmt.errors import HepfmtError
from hepfmt.formats.base import DEFAULT_FILE_OVERHEAD_S, ReadCost, WriteParts, is_url
from hepfmt.metastudy.widefiles import WideFileLayout
from hepfmt.plan import metagrid, selections, study
from hepfmt.queries import QueryParts

#: Where and how every part below was measured (on 2026-11-24, one job at a time, while another
#: session's short benchmark sometimes ran on the second core).
MACHINE = "2-core Intel Xeon VM (23.5 GiB, ext4), ROOT 6.40, pyarrow 26.0.1, uproot 5.7.7"
WHERE = "analysis/hepfmt/plan/cost.py"

#: Branches of the built-in CMS NanoAOD model (and of a real NanoAOD file): the width the parts
#: were measured at; a sample of other width scales them (:func:`branch_count`).
NANOAOD_BRANCHES = 1499
#: A remote sample (not opened while planning) has no event count: assume a NanoAOD chunk.
IMPORTED_EVENTS = 200_000
#: Branches of the narrow selection the "ten" parts were measured with (measure.selections.ten).
TEN = 10


# How the parts in the adapters were measured (each reader's ``cost``, each format's
# ``write_cost`` and ``file_overhead_s``):
# * reads: DYJetsToLL, 20000 events, seed 1, written by `hepfmt convert --cluster-size 2000`
#   (ttree/rntuple zstd-5 with 32000-byte baskets/pages, parquet/feather zstd-3, hdf5 gzip-4,
#   lance and vortex default), timed by `hepfmt measure --modes warm --repetitions 3` per reader
#   with --selection ten=<measure.selections.ten> or all=*. Readers that mark 10 chunks (rdf,
#   ttreereader, pyarrow, RNTuple rdf, lance: 5) give the parts directly (medians over the
#   repetitions); readers that read a file in one go (uproot, awkward, polars, duckdb, h5py,
#   vortex) from a straight line through reads of 4000- and 20000-event files
#   (hepfmt.measure.timing.fit_fixed_cost), the fixed part split at their open mark;
# * a reader's start_s, per reader process (imports, ROOT's library load, prepare): one job's
#   wall time minus its timed reads, the proof read (one read) and the job's file overhead;
# * a format's file_overhead_s, per measurement job (the CLI, the zip-bytes child that opens
#   the file, provenance): 4 readers of one Parquet file in one job took 3.0 s less than in 4
#   jobs, 3 of one TTree 3.2 s less (measured when every job ran that child; in the workflow
#   it now takes the bytes from the size record, so these are upper bounds);
# * writes: wall time of `hepfmt convert --cluster-size 2000` of the 4000- and 20000-event
#   DYJetsToLL samples (a straight line through the two), with the config/default.yaml writer
#   options.
#: A job's own overhead where it reads no one file (a pair job, a metadata file).
FILE_OVERHEAD_DEFAULT_S = DEFAULT_FILE_OVERHEAD_S
#: Slow codecs add their own time, in MB of naive data per second (level-independent upper
#: bounds from earlier runs: lzma-9 3.7 MB/s, gzip-6 15, zlib-1 60, brotli-5 46); lz4, zstd and
#: snappy are lost in the writers' own time.
CODEC_MB_PER_S = {"lzma": 3, "gzip": 12, "zlib": 30, "brotli": 30}
NAIVE_BYTES = 3.1  # per branch value, as the study counts them (~4.6 kB/event at 1499 branches)
#: `hepfmt generate` of 20000 DYJetsToLL events: 0.94 s (0.66 s of it generating).
GENERATE = WriteParts(0.3, 30_000, "none")


# An engine's queries: its registry entry's ``cost`` (hepfmt.queries.ENGINES), per format.
#: `hepfmt query-reference` of the 20000 events, whole command: 3.4 s.
REFERENCE_EVENTS_PER_S = 5_950

# Metadata decodes: slopes (µs per column) of the median decode time against columns, 10 to
# 10000 columns, from results/reference/intel-xeon/metadata/metadata.csv (`make reference` on the
# same VM type, reported then as a 2-core AMD EPYC). arrow-rs decodes with and without the page
# index in one process. TTree's grows faster than linearly above 10000 columns
# (docs/metadata.md), where
# config/paper.yaml stops it.
METADATA_US_PER_COLUMN = {"pyarrow": 15.5, "arrow-rs": 23.7, "root-ttree": 37.7,
                          "root-rntuple": 21.4, "uproot-ttree": 160, "uproot-rntuple": 291}
#: The process of each implementation, as its library's reader above (arrow-rs: a Rust binary).
METADATA_START_S = {"pyarrow": 0.4, "arrow-rs": 0.1, "root-ttree": 1.15, "root-rntuple": 1.35,
                    "uproot-ttree": 0.6, "uproot-rntuple": 1.5}
#: A pair job's own work besides its reads (`python -m cProfile` of pair jobs of the default on
#: the AMD EPYC reference VM, 2026-11-29): each side's codec bound in a child process (ROOT and
#: the blocks' listing, ~1.8 s before any decompression), and per round a quiet window
#: (load.MIN_WINDOW_S) before the first read and both workers winding down (~0.2 s).
PAIR_BOUND_START_S = 1.8
PAIR_ROUND_OVERHEAD_S = 0.45
#: Not measured: a tabulation's start-up and its time per record.
TABULATE_START_S, TABULATE_RECORDS_PER_S = 15, 50


# --- the study's numbers ------------------------------------------------------------------


@lru_cache(maxsize=8)
def _branches_in(path: str) -> int:
    from hepfmt import records

    try:
        return len(records.read_json(path, "hepfmt model")["branches"])
    except (HepfmtError, KeyError, TypeError):
        return NANOAOD_BRANCHES  # an unreadable model is reported by the job that uses it


def branch_count(config: Mapping, sample: str | None = None) -> int:
    """Branches per event: ``sample``'s (its file's header; a remote file's are not read), else
    those of the config's value model, else the built-in NanoAOD's."""
    if sample is not None and "file" in config["samples"][sample]:
        schema = selections.sample_schema(config, sample)
        if schema is not None:
            return len(schema.branches)
    path = config.get("model") or config.get("schema")
    return _branches_in(str(path)) if path and not is_url(path) else NANOAOD_BRANCHES


def basis(config: Mapping) -> str:
    """The events and branches of each sample the estimate stands on, and where each comes
    from: a user sees at once whether the planner read the file meant."""
    parts = []
    for sample, s in config["samples"].items():
        if "file" not in s:
            where = f"generated from {Path(config.get('model') or 'the built-in model').name}"
        elif is_url(s["file"]):
            where = f"remote {s['file']}, not opened: {IMPORTED_EVENTS:,} events assumed"
        else:
            where = f"read from {s['file']}"
        parts.append(f"{sample} {sample_events(config, sample):,} events × "
                     f"{branch_count(config, sample):,} branches ({where})")
    return "basis: " + "; ".join(parts)


def sample_events(config: Mapping, sample: str) -> int:
    """A sample's events: a generated one's ``n_events``; a local file's entries, from its
    metadata (uproot or the Parquet footer, ~0.3 s once per process); a remote file's, which
    planning does not open, :data:`IMPORTED_EVENTS`."""
    s = config["samples"][sample]
    if "n_events" in s:
        return int(s["n_events"])
    return _file_entries(str(s["file"]), s.get("tree", "Events"))


@lru_cache(maxsize=64)
def _file_entries(path: str, tree: str) -> int:
    from hepfmt.errors import HepfmtError
    from hepfmt.samples.inputs import open_input

    if is_url(path):
        return IMPORTED_EVENTS
    try:
        return open_input(path, tree).num_entries
    except HepfmtError:  # the import job reports an unreadable file, with the library's words
        return IMPORTED_EVENTS


# --- reads --------------------------------------------------------------------------------


def _measured(adapter: str) -> list[ReadCost]:
    return [r.cost for r in formats.get(adapter).readers.values() if r.cost] \
        if adapter in formats.names() else []


def read_cost(reader: str, adapter: str) -> ReadCost:
    """The adapter's measured cost of the reader, else (a reader or format not measured here)
    that of the slowest reader of the same format, else of the slowest reader measured: an
    estimate errs long."""
    r = formats.get(adapter).readers.get(reader) if adapter in formats.names() else None
    if r is not None and r.cost is not None:
        return r.cost
    pool = _measured(adapter) or [c for n in formats.names() for c in _measured(n)]
    return max(pool, key=lambda c: c.all.seconds(1_000_000))


def _between(a: float, b: float, frac: float) -> float:
    return a + frac * (b - a)


def read_seconds(reader: str, adapter: str, n_events: int, selected: int) -> float:
    """One pass reading ``selected`` branches: the "ten" and "all" parts interpolated linearly
    in the branch count (per-event time and fixed parts alike), below ten scaled down."""
    p = read_cost(reader, adapter)
    ten, full = p.ten.seconds(n_events), p.all.seconds(n_events)
    if selected <= TEN:
        return ten * selected / TEN
    return _between(ten, full, (selected - TEN) / (NANOAOD_BRANCHES - TEN))


def repetitions(read_s: float, measure: Mapping) -> int:
    """Timed repetitions of one read in one cache mode, at most: until ``budget_s`` is spent,
    between ``min_repetitions`` and ``repetitions`` (an earlier stop, once the median is sharp,
    is not foreseeable)."""
    lo, hi = measure["min_repetitions"], measure["repetitions"]
    by_budget = math.ceil(measure["budget_s"] / read_s) if read_s > 0 else hi
    return max(lo, min(hi, by_budget))


@dataclass(frozen=True)
class MeasureCost:
    """One measurement job in seconds: process start-ups (and the job's own), the untimed
    priming scans, the timed repetitions."""

    start_s: float
    prime_s: float
    timed_s: float

    @property
    def total_s(self) -> float:
        return self.start_s + self.prime_s + self.timed_s


def selection_widths(config: Mapping, sample: str) -> list[int]:
    """Branches each of ``measure.selections`` reads on ``sample``."""
    branches = branch_count(config, sample)
    resolved = selections.for_sample(config, sample)
    return [branches if sel == selections.ALL else len(resolved[name] or sel)
            for name, sel in config["measure"]["selections"].items()]


def measure_job(config: Mapping, spec: study.FileSpec, readers: list[str]) -> MeasureCost:
    """Every reader (at every thread count) is a process that scans the smallest selection
    once, untimed (its proof ran at convert: :func:`proof_seconds`), then times each selection
    in each of the file's cache modes."""
    m = config["measure"]
    n_events = sample_events(config, spec.sample)
    widths = selection_widths(config, spec.sample)
    n_modes = len(study.read_modes(dict(config)))
    processes = len(study.thread_counts(dict(config)))
    start = formats.get(spec.adapter).file_overhead_s
    prime = timed = 0.0
    for reader in readers:
        start += processes * read_cost(reader, spec.adapter).start_s
        prime += processes * read_seconds(reader, spec.adapter, n_events, min(widths))
        for width in widths:
            t = read_seconds(reader, spec.adapter, n_events, width)
            timed += processes * n_modes * repetitions(t, m) * t
    return MeasureCost(start, prime, timed)


def _pair_side(config: Mapping, job: study.PairJob, name: str, fmt: study.FileSpec,
               reader: str, width: int,
               read_plan: Mapping[study.FileSpec, list[str]] | None) -> tuple[float, float]:
    """(start-up, one pass) of one side's reader; a "fastest" side's: the quickest of its
    candidates (the file and reader the job will choose), not an unknown reader's worst case."""
    n_events = sample_events(config, job.sample)
    options = [(fmt.adapter, reader)]
    if reader == formats.FASTEST:
        plan = study.read_plan(dict(config)) if read_plan is None else read_plan
        options = [(f.adapter, r) for f in job.candidates_of(name)
                   for r in study.file_readers(plan, f)] or options
    return min(((read_cost(r, a).start_s, read_seconds(r, a, n_events, width))
                for a, r in options), key=lambda sr: sr[1])


def pair_job(config: Mapping, job: study.PairJob,
             read_plan: Mapping[study.FileSpec, list[str]] | None = None) -> MeasureCost:
    """A ``hepfmt pair`` job: the job's own start-up, the codec bound of each side the run
    does not measure, and, per round,
    a fresh process for each side; then per round its first-read pair and
    ``ceil(min_repetitions / rounds)`` repeat pairs (each pair reads both files). A pass on
    ``threads`` threads is taken as a pass on one divided by them (an estimate that errs short
    for a reader that scales worse: the 2-thread headline pair read 0.55-0.65 of its 1-thread
    time on the reference VM). Rounds past ``rounds`` (taken while the ratio is not sharp and
    ``budget_s`` lasts) are not foreseeable: at most the budget more."""
    s = study.pair_settings(dict(config), job)
    width = dict(zip(config["measure"]["selections"], selection_widths(config, job.sample),
                     strict=True))[job.selection]
    sides = [_pair_side(config, job, name, f, side.reader, width, read_plan)
             for name, f, side in zip(study.SIDES, (job.ttree, job.parquet), job.pair.sides,
                                      strict=True)]
    # a side whose file the run also measures (or a "fastest" side, always a measured file)
    # takes its bound from that measure record
    bounded = sum(1 for name, side in zip(study.SIDES, job.pair.sides, strict=True)
                  if name not in job.measured_sides and not side.fastest)
    start = (FILE_OVERHEAD_DEFAULT_S + bounded * PAIR_BOUND_START_S
             + s["rounds"] * (PAIR_ROUND_OVERHEAD_S + sum(st for st, _ in sides)))
    pair_s = sum(p for _, p in sides) / study.pair_threads(config, job.pair)
    per_round = max(1, math.ceil(s["min_repetitions"] / s["rounds"]))
    timed = s["rounds"] * (1 + per_round) * pair_s
    return MeasureCost(start, 0.0, timed)


def proof_seconds(config: Mapping, spec: study.FileSpec, readers: list[str]) -> float:
    """What ``convert --prove`` adds to a read-measured file's write: each reader's read of
    every branch (which stands in for the format's verifier)."""
    n_events = sample_events(config, spec.sample)
    return sum(read_seconds(r, spec.adapter, n_events, branch_count(config, spec.sample))
               for r in readers)


def job_seconds(rule: str, config: Mapping, wildcards: Mapping[str, str],
                read_plan: Mapping[study.FileSpec, list[str]] | None = None,
                proof_plan: Mapping[study.FileSpec, list[str]] | None = None) -> float:
    """One job of ``rule`` (generate, convert, measure, pair, tabulate) in seconds, from the
    parts above: what its batch request (:mod:`.resources`) pads and what its benchmark record
    is compared with (:mod:`.calibration`). The plans are the workflow's, computed once (else
    here)."""
    c = dict(config)
    if rule == "generate":
        sample = wildcards["sample"]
        return generate_seconds(sample_events(config, sample), branch_count(config, sample))
    if rule == "tabulate":
        return tabulate_seconds(2 * len(study.files(c)) + len(study.pair_plan(c)))
    if rule == "pair":
        return pair_job(config, study.pair_job_of(c, wildcards, read_plan), read_plan).total_s
    if rule not in ("convert", "measure"):
        raise KeyError(f"no cost for rule {rule!r}")
    spec = study.spec_of(c, wildcards)
    if rule == "convert":
        proofs = study.proof_plan(c) if proof_plan is None else proof_plan
        return write_seconds(spec.adapter, spec.variant, sample_events(config, spec.sample),
                             branch_count(config, spec.sample)) + proof_seconds(
            config, spec, proofs.get(spec, []))
    plan = study.read_plan(c) if read_plan is None else read_plan
    return measure_job(config, spec, study.file_readers(plan, spec)).total_s


# --- writes -------------------------------------------------------------------------------


def _write_cost(adapter: str) -> WriteParts:
    """The adapter's measured write, else the slowest writer's."""
    known = [formats.get(n).write_cost for n in formats.names() if formats.get(n).write_cost]
    w = formats.get(adapter).write_cost if adapter in formats.names() else None
    return w or min(known, key=lambda p: p.events_per_s)


def write_seconds(adapter: str, variant: str, n_events: int, n_branches: int) -> float:
    """``hepfmt convert`` of one file; a format not measured costs as the slowest writer."""
    w = _write_cost(adapter)
    values = n_events * n_branches
    codec = Variant.of(variant).algorithm
    slow = 0.0 if codec == Variant.of(w.variant).algorithm else \
        values * NAIVE_BYTES / 1e6 / CODEC_MB_PER_S.get(codec, math.inf)
    return w.fixed_s + values / NANOAOD_BRANCHES / w.events_per_s + slow


def generate_seconds(n_events: int, n_branches: int) -> float:
    return GENERATE.fixed_s + n_events * n_branches / NANOAOD_BRANCHES / GENERATE.events_per_s


def tabulate_seconds(n_records: int) -> float:
    return TABULATE_START_S + n_records / TABULATE_RECORDS_PER_S


# --- queries and metadata (targets of their own) ------------------------------------------


def query_parts(engine: str, adapter: str) -> QueryParts:
    """The engine's parts on the format (its registry entry's ``cost``), else on the format
    costed alike (the format's ``queries_cost_as``), else the slowest engine's."""
    own = queries.ENGINES[engine].cost if engine in queries.ENGINES else {}
    alike = formats.get(adapter).queries_cost_as if adapter in formats.names() else None
    return (own.get(adapter) or (own.get(alike) if alike else None)
            or max((q for e in queries.ENGINES.values() for q in e.cost.values()),
                   key=lambda q: q.start_s + 1e6 / q.events_per_s))


def query_job(config: Mapping, spec: study.FileSpec, engines: list[str]) -> float:
    """Each engine's process runs every task once untimed, then ``repetitions`` per mode."""
    m = config["measure"]
    n_events = sample_events(config, spec.sample)
    runs = len(study.query_tasks(dict(config))) * (1 + len(m["modes"]) * m["repetitions"])
    return sum(query_parts(e, spec.adapter).start_s
               + runs * n_events / query_parts(e, spec.adapter).events_per_s for e in engines)


def queries_seconds(config: Mapping) -> float:
    """The ``queries`` target: a reference per sample queried, then every (file, engine)."""
    plan = study.queries(dict(config))
    samples = {f.sample for f in plan}
    return sum(sample_events(config, s) / REFERENCE_EVENTS_PER_S for s in samples) + sum(
        query_job(config, f, engines) for f, engines in plan.items())


def metadata_seconds(config: Mapping) -> float:
    """The ``metadata`` target: writing each wide file (at the study's write rates per value),
    then each implementation's process: one untimed decode and the repetitions in both modes
    (memory and disk), bounded by ``budget_s`` once past the minimum."""
    if not config.get("metadata"):
        return 0.0
    m = config["metadata"]
    total = 0.0
    for f in metagrid.files(dict(config)):
        sample = metagrid.source_sample(f.dataset)
        columns = f.columns or branch_count(config)
        rows = sample_events(config, sample) if sample else m["row_groups"] * m["rows_per_group"]
        fmt = WideFileLayout.parse(f.layout).format
        total += write_seconds(fmt, _write_cost(fmt).variant, rows, columns)
        total += FILE_OVERHEAD_DEFAULT_S
        for impl in metagrid.implementations(dict(config), f):
            decode = 2 * columns * METADATA_US_PER_COLUMN.get(impl, 300) / 1e6
            reps = max(m["min_repetitions"],
                       min(m["repetitions"], math.ceil(m["budget_s"] / decode)))
            total += METADATA_START_S.get(impl, 1.5) + (1 + reps) * decode
    return total


# --- a whole study ------------------------------------------------------------------------


@dataclass(frozen=True)
class Breakdown:
    """Single-core seconds of a study by kind of job: ``all`` is the main target (generate,
    convert, measure, tabulate), queries and metadata are targets of their own."""

    generate_s: float
    write_s: float  # convert jobs, whole: writes, verification and the readers' proofs
    proof_s: float  # of which the proofs of read-measured files' readers
    read_s: float  # measurement and pair jobs, whole: start-ups, priming scans, timed reads
    start_s: float  # of which process start-ups
    pair_s: float  # of which the pair jobs (the ROOT / Parquet ratios)
    tabulate_s: float
    query_s: float
    metadata_s: float

    @property
    def all_s(self) -> float:
        return self.generate_s + self.write_s + self.read_s + self.tabulate_s

    def describe(self) -> str:
        def h(s: float) -> str:
            return f"{s / 3600:,.1f} h"

        return (f"estimated CPU: {h(self.all_s + self.query_s + self.metadata_s)} (target all "
                f"{h(self.all_s)}: writes {h(self.generate_s + self.write_s)} [proof reads "
                f"{h(self.proof_s)}], reads {h(self.read_s)} [start-ups "
                f"{h(self.start_s)}, pairs {h(self.pair_s)}]; queries {h(self.query_s)}, metadata "
                f"{h(self.metadata_s)}) from parts measured on a {MACHINE} at "
                f"{NANOAOD_BRANCHES} NanoAOD branches, scaled to the basis ({WHERE})")


def whole(config: Mapping) -> Breakdown:
    """Every job the planner would run, costed from the parts above."""
    c = dict(config)
    files = study.files(c)
    plan = study.read_plan(c)  # once: every "fastest" pair side is costed from it
    pairs = [pair_job(config, j, plan) for j in study.pair_plan(c)]
    reads = [measure_job(config, f, readers) for f, readers in plan.items()]
    proofs = sum(proof_seconds(config, f, readers)
                 for f, readers in study.proof_plan(c).items())
    return Breakdown(
        generate_s=sum(generate_seconds(sample_events(config, s), branch_count(config, s))
                       for s in config["samples"]),
        write_s=proofs + sum(write_seconds(f.adapter, f.variant, sample_events(config, f.sample),
                                           branch_count(config, f.sample)) for f in files),
        proof_s=proofs, read_s=sum(r.total_s for r in reads + pairs),
        start_s=sum(r.start_s for r in reads + pairs), pair_s=sum(r.total_s for r in pairs),
        tabulate_s=tabulate_seconds(2 * len(files) + len(pairs)),
        query_s=queries_seconds(config), metadata_s=metadata_seconds(config))
