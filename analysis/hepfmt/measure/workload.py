"""Analysis queries as a read workload: the ADL benchmark tasks (:mod:`hepfmt.queries`) timed
on one written file through every engine that reads it, cold and warm page cache.

A query is what a physicist's read actually is: a few columns, a selection, combinatorics and a
histogram. It is timed the way :mod:`.reads` times a read, so the two tables compare:

1. each (file, engine) runs in a fresh Python process; imports and the engine's one-time set-up
   (ROOT's JIT, vector's behaviours, a Dask client) are untimed;
2. per task, one untimed run primes caches and lazy code, then warm repetitions, then cold ones,
   each preceded by eviction of the file and a ``mincore`` count (:func:`.pagecache.evict`);
   except the process's very first run (the first task's priming run), which is timed as the
   *time to the first histogram*: what an analyst waits in a fresh process, opening the file
   and building its schema, events or graph included (:func:`first_histogram`);
3. every run's histograms, the untimed one included, must equal the reference's
   (:mod:`hepfmt.queries.reference`, computed once per sample from the source by
   :func:`write_reference`) up to the task's tolerance, or the measurement fails: a fast wrong
   answer is not a result;
4. the task's own peak memory is the high-water mark of its runs over the resident set it
   started from (:func:`.reads.start_read_peak`).

A task is timed alone (its own event loop), so its events/s are its own; an analysis booking all
eight on one loop would share the reading.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np

from hepfmt import queries, records
from hepfmt.atomic import write_json
from hepfmt.errors import InputError, UsageError, exit_with
from hepfmt.measure import isolated
from hepfmt.measure.pagecache import evict, load
from hepfmt.measure.reads import (
    MODES,
    process_peak_bytes,
    read_peak_bytes,
    start_read_peak,
    zip_bytes_of,
)
from hepfmt.measure.timing import Stopping, repeat, timed
from hepfmt.provenance import collect
from hepfmt.queries import tasks as T
from hepfmt.queries.reference import compare, summary
from hepfmt.records import QueryRecord
from hepfmt.samples.source import read_source_meta
from hepfmt.stats import summarize

REFERENCE_KEYS = ("sample", "n_events", "tasks")


def write_reference(source: str | Path, numbers: list[int], out: str | Path) -> dict:
    """The reference answer of each task on the source sample (its histograms' counts, flow
    bins included) and the events it selects: computed once per sample, since the reference is
    the slow, obvious per-event loop."""
    meta = read_source_meta(source)
    doc: dict = {"sample": meta["sample"], "process": meta["process"],
                 "n_events": meta["n_events"], "source": str(source), "tasks": {}}
    for task in T.select(numbers):
        hists, selected = summary(source, task)
        doc["tasks"][str(task.number)] = {
            "selected_events": selected,
            "counts": {name: h.values(flow=True).tolist() for name, h in hists.items()}}
    write_json(out, doc)
    return doc


def load_reference(path: str | Path, numbers: list[int]) -> dict:
    """A :func:`write_reference` record holding every one of the tasks ``numbers``."""
    doc = records.load(path, REFERENCE_KEYS, "query reference (from 'hepfmt query-reference')")
    missing = [n for n in numbers if str(n) not in doc["tasks"]]
    if missing:
        raise InputError(path, f"no reference for tasks {missing}")
    return doc


def reference_hists(doc: dict, task: T.Task) -> T.Hists:
    counts = doc["tasks"][str(task.number)]["counts"]
    return {a.name: a.with_counts(np.asarray(counts[a.name])) for a in task.axes}


@dataclass(frozen=True)
class QuerySpec:
    path: str
    reference: str  # a write_reference record
    engine: str
    tasks: list[int]
    modes: list[str]
    repetitions: int
    threads: int
    scheduler: str = ""  # a distributed engine's Dask scheduler


def run_queries(spec: QuerySpec) -> dict:
    """The body of one (file, engine) measurement process (see the module docstring)."""
    # polars sizes its pool from the environment once, when imported: before the engine loads
    os.environ.setdefault("POLARS_MAX_THREADS", str(spec.threads))
    engine = queries.engine(spec.engine)
    module = engine.load()
    module.prepare(spec.threads)
    if engine.distributed:
        module.connect(spec.scheduler)
    ref = load_reference(spec.reference, spec.tasks)
    what = f"{spec.engine} on {spec.path}"
    out = {}
    first = None
    for task in T.select(spec.tasks):
        expected = reference_hists(ref, task)
        baseline_rss, rss_method = start_read_peak()
        if first is None:  # the process's first run: the time to the first histogram
            first = first_histogram(module, spec.path, task, expected, what)
        else:  # priming run, untimed
            compare(task, expected, module.run(spec.path, [task]), what)
        modes: dict[str, list[dict]] = {}
        for mode in sorted(spec.modes, key=lambda m: m != "warm"):  # as reads.py: warm first

            def one(mode: str = mode, task: T.Task = task, expected: T.Hists = expected) -> dict:
                rep: dict[str, object] = {}
                if mode == "cold":
                    ev = evict(spec.path)
                    rep.update(pages=ev.pages, resident_before=ev.resident_before,
                               resident_after=ev.resident_after, cold_verified=ev.verified)
                with timed() as clock:
                    got = module.run(spec.path, [task])
                rep.update(wall_s=clock.wall_s, cpu_s=clock.cpu_s,
                           disk_read_bytes=clock.disk_read_bytes)
                compare(task, expected, got, what)  # every repetition, outside the timing
                return rep

            modes[mode] = repeat(one, Stopping.exactly(spec.repetitions))[0]
        out[str(task.number)] = {"modes": modes, "baseline_rss_bytes": baseline_rss,
                                 "peak_rss_bytes": read_peak_bytes(rss_method),
                                 "rss_method": rss_method}
    return {"tasks": out, "first_histogram": first,
            "process_peak_rss_bytes": process_peak_bytes()}


def first_histogram(module: ModuleType, path: str, task: T.Task, expected: T.Hists,
                    what: str) -> dict:
    """The process's first run of a task, timed: imports and the engine's ``prepare`` are
    behind it (paid once per process, whatever the file), opening the file and building what
    the engine reads it through (RDataFrame and its graph's JIT, uproot's or pyarrow's
    metadata, coffea's NanoEvents) are in it, since an analyst waits for them before every
    first histogram of a file. The page cache is warm (the file read whole first, untimed), as
    for a read's first read (:mod:`.reads`): the one-off costs of the process, not the disk's,
    which the cold runs and the storage profiles measure. Its histograms are checked like any
    run's, outside the timing."""
    resident, pages = load(path)
    with timed() as clock:
        got = module.run(path, [task])
    compare(task, expected, got, what)
    return {"task": task.number, "wall_s": clock.wall_s, "cpu_s": clock.cpu_s,
            "resident_pages": resident, "pages": pages}


def _record(task: T.Task, engine: str, mode: str, reps: list[dict], res: dict, ref: dict,
            zip_by_branch: dict[str, int], n_events: int, fs_verifiable: bool) -> dict:
    """One task × engine × mode's figures: as a read's (:func:`.reads._read_record`), plus what
    the task reads and selects."""
    stats = summarize([r["wall_s"] for r in reps])
    zipped = [zip_by_branch.get(c) for c in task.columns]
    return {
        "task": task.number, "engine": engine, "mode": mode,
        "cold_verified": fs_verifiable and all(r.get("cold_verified", False) for r in reps)
        if mode == "cold" else None,
        **stats, "events_per_s": n_events / stats["median_s"],
        "cpu_median_s": float(np.median([r["cpu_s"] for r in reps])),
        "disk_read_bytes_median": float(np.median([r["disk_read_bytes"] for r in reps])),
        "columns": list(task.columns),
        # None where the format does not say what each branch takes (Vortex)
        "zip_bytes": None if None in zipped else int(sum(zipped)),
        "selected_events": ref["tasks"][str(task.number)]["selected_events"],
        "rss_over_baseline_bytes": res["peak_rss_bytes"] - res["baseline_rss_bytes"],
        "rss_method": res["rss_method"],
        "repetitions": reps,
    }


def measure_queries(path: str | Path, source: str | Path, reference: str | Path,
                    format_name: str, variant: str, cluster_size: int, engines: list[str],
                    numbers: list[int], modes: list[str], repetitions: int, threads: int,
                    out: str | Path, timeout: float = 3600.0, name: str | None = None,
                    scheduler: str = "") -> dict:
    """Time every task on one file through each of ``engines``; write one JSON, atomically, or
    nothing. ``format_name`` is the adapter, ``name`` the config's name of the format."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file to query does not exist")
    bad_modes = [m for m in modes if m not in MODES]
    if bad_modes:
        raise UsageError("--modes", f"unknown cache mode {bad_modes[0]!r}")
    for e in engines:
        engine = queries.engine(e)
        if format_name not in engine.formats:
            why = engine.not_applicable.get(format_name)
            raise UsageError("--engines", f"{e} does not read {format_name} files"
                                           + (f" ({why})" if why else "")
                                           + f"; it reads {sorted(engine.formats)}")
        if engine.distributed and not scheduler:
            raise UsageError("--engines", f"{e} runs on a Dask cluster: give "
                                           "--dask-scheduler")
    meta = read_source_meta(source)
    ref = load_reference(reference, numbers)
    if ref["n_events"] != meta["n_events"] or ref["sample"] != meta["sample"]:
        raise InputError(reference, f"is the reference of {ref['sample']} "
                                    f"({ref['n_events']} events), not of {meta['sample']}")
    zip_by_branch = zip_bytes_of(path, format_name, timeout)
    provenance = collect(data_path=path.parent)
    fs_verifiable = bool(provenance["filesystem"]["cold_verifiable"])
    rows, first = [], {}
    for e in engines:
        spec = QuerySpec(str(path), str(reference), e, list(numbers), list(modes), repetitions,
                         threads, scheduler if queries.engine(e).distributed else "")
        res = isolated.spawn("hepfmt.measure.workload", spec, path, f"{e} queries", timeout,
                             data_bytes=meta["naive_bytes"], threads=threads)
        first[e] = res["first_histogram"]
        for task in T.select(numbers):
            tres = res["tasks"][str(task.number)]
            for mode, reps in tres["modes"].items():
                rows.append(_record(task, e, mode, reps, tres, ref, zip_by_branch,
                                    meta["n_events"], fs_verifiable)
                            | {"process_peak_rss_bytes": res["process_peak_rss_bytes"]})
    return QueryRecord(
        file=str(path), sample=meta["sample"], process=meta["process"],
        format=name or format_name, adapter=format_name, variant=variant,
        cluster_size=cluster_size, n_events=meta["n_events"], threads=threads,
        scheduler=scheduler, queries=rows, first_histogram=first, provenance=provenance,
    ).write(out)


if __name__ == "__main__":  # a measurement process: python -m hepfmt.measure.workload SPEC OUT
    exit_with(isolated.child(sys.argv[1:], QuerySpec, run_queries))
