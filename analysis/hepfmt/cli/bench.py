"""Benchmarks of hepfmt's own measuring: hepfmt bench ..."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hepfmt.cli.arguments import (
    above,
    adapter,
    at_least,
    command,
    config_value,
    format_argument,
    input_file,
    known_readers,
    listed,
    resolved_selections,
    selection,
    source_argument,
    source_meta,
    task_numbers,
    timeout_argument,
)
from hepfmt.errors import InputError, UsageError


def cmd_bench_overhead(a: argparse.Namespace) -> None:
    from hepfmt.measure.overhead import bench, report

    fmt = adapter(a.format)
    known_readers(fmt, a.readers.split(","))
    input_file(a.file)
    source_meta(a.source)
    rows = bench(a.file, a.source, fmt, a.readers.split(","),
                 resolved_selections(a), a.runs, a.threads, a.timeout)
    print(report(rows, a.format))


def cmd_bench_layers(a: argparse.Namespace) -> None:
    from hepfmt.atomic import atomic_path
    from hepfmt.measure.layers import bench, profiled_readers, report
    from hepfmt.samples.source import read_source_meta, schema_of

    fmt = adapter(a.format)
    if a.readers:
        known_readers(fmt, a.readers.split(","))
    input_file(a.file)
    source_meta(a.source)
    a.selection = a.selection or [selection("all=*")]
    sels = resolved_selections(a)
    if len(sels) != 1:
        raise UsageError("--selection", "bench layers profiles one selection")
    (sel,) = sels.values()
    branches = schema_of(read_source_meta(a.source)).names if isinstance(sel, str) else sel
    names = a.readers.split(",") if a.readers else profiled_readers(fmt)
    if not names:
        raise UsageError("--format", f"no reader of {a.format} is profiled by layer")
    text = report(bench(a.file, a.source, fmt, names, branches, a.seconds))
    print(text)
    if a.output:
        with atomic_path(a.output) as tmp:
            Path(tmp).write_text(text + "\n")


def cmd_bench_overhead_study(a: argparse.Namespace) -> None:
    """:func:`cmd_bench_overhead` for every reader of a finished run's measure sub-grid: the
    files of its first measure sample at the largest cluster size measured there (the files of
    the formats table), each format's readers and the config's selections."""
    from hepfmt.atomic import atomic_path
    from hepfmt.measure.overhead import bench, report
    from hepfmt.plan import config as cfg
    from hepfmt.plan import paths, selections, study

    c = cfg.load(a.config)
    sample, files = study.formats_table_files(c)
    sels = selections.for_sample(c, sample)
    blocks = []
    for f, readers in files.items():
        path = paths.written(c["results"], f)
        if not Path(path).exists():
            raise InputError(path, "not written: run the study first (make run)")
        rows = bench(path, paths.source(c["results"], sample), f.adapter, readers, sels,
                     a.runs, a.threads, a.timeout)
        blocks.append(f"{f.format} {f.variant} c{f.cluster_size} ({sample})\n"
                      + report(rows, f.adapter))
        print(blocks[-1], flush=True)
    if a.output:
        with atomic_path(a.output) as tmp:
            Path(tmp).write_text("\n\n".join(blocks) + "\n")


def cmd_bench_reproduce(a: argparse.Namespace) -> None:
    """Every pair job of a finished run measured twice here, the second pass after the first
    (:mod:`hepfmt.measure.reproduce`), and each ratio of one pass next to the other's."""
    import tempfile

    from hepfmt.atomic import atomic_path
    from hepfmt.measure.reproduce import Job, job_name, reproduce, require, select
    from hepfmt.plan import commands, paths, study
    from hepfmt.plan import config as cfg
    from hepfmt.report.compare_runs import two_passes

    c = cfg.load(a.config)
    plan = {job_name(j.sample, j.pair.label, j.cluster_size, j.selection): j
            for j in study.pair_plan(c)}
    jobs = []
    for name in select(plan, a.jobs):
        # a spec may resolve its selection against the source: missing, it is make run's
        require(paths.source_meta(c["results"], plan[name].sample), name)
        jobs.append(Job(name, commands.pair_spec(c, plan[name])))
    with tempfile.TemporaryDirectory(prefix="hepfmt-reproduce-") as tmp:
        rep = reproduce(jobs, Path(tmp), a.load, a.pause_s,
                        progress=lambda s: print(s, file=sys.stderr, flush=True))
    text = "\n".join(two_passes(rep.first, rep.second, rep.conditions())) + "\n"
    print(text, end="")
    if a.output:
        with atomic_path(a.output) as out:
            Path(out).write_text(text)


def cmd_bench_compare_runs(a: argparse.Namespace) -> None:
    from hepfmt.report.compare_runs import compare_runs

    print("\n".join(compare_runs(a.dir_a, a.dir_b)))


def cmd_bench_cost_model(a: argparse.Namespace) -> None:
    """The cost model checked against a run: a benchmark (its numbers are the machine's), so
    it prints and asserts nothing; the closing check of issue 43's calibration."""
    from hepfmt.atomic import atomic_path
    from hepfmt.plan import calibration
    from hepfmt.provenance import stamp

    checks = calibration.check(calibration.run_config(a.run), a.run)
    if not checks:
        raise InputError(a.run, f"no rule has {calibration.MIN_JOBS} benchmark records under "
                                "its benchmarks/: nothing to check the cost model against")
    text = "\n".join([
        stamp(f"hepfmt bench cost-model {a.run}"),
        f"{a.run}: each rule's jobs, summed: what they took (Snakemake's benchmark records), "
        "the shipped parts' estimate, and the estimate calibrated on the rule's other jobs "
        "(leave one out: the median of their measured / estimated ratios)",
        calibration.check_report(checks)]) + "\n"
    print(text, end="")
    if a.output:
        with atomic_path(a.output) as tmp:
            Path(tmp).write_text(text)


def cmd_bench_rounds(a: argparse.Namespace) -> None:
    from hepfmt.report.rounds import report

    text = "\n".join(report(a.pairs)) + "\n"
    print(text, end="")
    if a.output:
        from hepfmt.atomic import atomic_path

        with atomic_path(a.output) as out:
            Path(out).write_text(text)


def cmd_bench_dask_scaling(a: argparse.Namespace) -> None:
    """The distributed engines on local clusters of growing size: a benchmark of the engines
    (not of hepfmt), kept with the others because it prints and asserts nothing."""
    from hepfmt import queries
    from hepfmt.atomic import atomic_path
    from hepfmt.measure.scaling import bench, report

    engines = a.engines.split(",")
    for e in engines:
        if not queries.engine(e).distributed:
            raise UsageError("--engines", f"{e} does not run on a Dask cluster")
    try:
        workers = [int(n) for n in a.workers.split(",")]
    except ValueError:
        raise UsageError("--workers", f"{a.workers!r} is not N,M,... (worker counts)") from None
    if a.repetitions < 1 or min(workers) < 1:
        raise UsageError("--repetitions" if a.repetitions < 1 else "--workers", "must be >= 1")
    numbers = task_numbers(a.tasks)
    input_file(a.file)
    meta = source_meta(a.source)
    runs = bench(Path(a.file), Path(a.source), engines, workers, numbers, a.repetitions)
    text = (f"{a.file}: median of {a.repetitions} runs per task after one untimed, each "
            "checked against the reference; LocalCluster(n_workers=N, threads_per_worker=1)\n\n"
            + report(runs, meta["n_events"]))
    print(text)
    if a.output:
        with atomic_path(a.output) as tmp:
            Path(tmp).write_text(text + "\n")


def register(sub: argparse._SubParsersAction) -> None:
    b = command(sub, "bench", "benchmarks of hepfmt's own measuring",
                "bench overhead tt.parquet --source tt.arrow --format parquet --readers pyarrow "
                "--selection 'all=*'")
    bsub = b.add_subparsers(dest="bench_command", required=True, metavar="SUBCOMMAND")
    o = command(bsub, "overhead", "each reader's timed scan next to the bare library call on "
                "the same file: the harness's overhead",
                "bench overhead tt.parquet --source tt.arrow --format parquet "
                "--readers pyarrow,polars --selection 'all=*' --runs 15")
    o.add_argument("file", help="a file written by hepfmt convert")
    source_argument(o)
    format_argument(o)
    o.add_argument("--readers", required=True,
                   help="comma-separated names of the format's readers, e.g. pyarrow,polars")
    o.add_argument("--selection", type=selection, action="append", required=True,
                   help="NAME=BRANCH,BRANCH,... or NAME=* (repeatable); a BRANCH may be a "
                        "pattern (Muon_*) or alternatives (MET_pt|PFMET_pt)")
    _runs_threads_timeout(o)
    o.set_defaults(func=cmd_bench_overhead)
    la = command(bsub, "layers", "where a read through ROOT or Arrow's Parquet reader spends "
                 "its time: each reader profiled (perf) by layer, beside the file's codec bound",
                 "bench layers tt.root --source tt.arrow --format ttree --readers rdf "
                 "--seconds 3")
    la.add_argument("file", help="a file written by hepfmt convert")
    source_argument(la)
    format_argument(la, help="the format adapter (ttree, rntuple or parquet are profiled)")
    la.add_argument("--readers", default=None,
                    help="comma-separated reader names (default: every reader of the format "
                         "whose library has a layer table: ROOT's, pyarrow's)")
    la.add_argument("--selection", type=selection, action="append",
                    default=None, help="NAME=BRANCH,... or NAME=* (default: all=*)")
    la.add_argument("--seconds", type=above(0), default=3.0,
                    help="profiled seconds per reader (default: %(default)s)")
    la.add_argument("-o", "--output", help="also write the report here")
    la.set_defaults(func=cmd_bench_layers)
    st = command(bsub, "overhead-study", "the overhead bench on every reader of a finished "
                 "run's measure sub-grid (the formats table's files)",
                 "bench overhead-study results/config.yaml -o overhead.txt")
    st.add_argument("config", help="the study's config file (its results must exist)")
    _runs_threads_timeout(st)
    st.add_argument("-o", "--output", help="also write the tables here")
    st.set_defaults(func=cmd_bench_overhead_study)
    rp = command(bsub, "reproduce", "every pair job of a finished run measured twice here, one "
                 "pass after the other: do the ratios' intervals hold?",
                 "bench reproduce results/config.yaml --jobs DY --load 1 -o reproduce.txt")
    rp.add_argument("config", help="the study's config file (its results must exist)")
    rp.add_argument("--load", type=at_least(0), default=0,
                    help="keep this many CPU-bound processes running through both passes "
                         "(default: %(default)s)")
    rp.add_argument("--jobs", help="only the pair jobs whose sample/pair/cNNN/selection "
                                   "holds this text")
    rp.add_argument("--pause-s", type=at_least(0, float), default=0.0, metavar="SECONDS",
                    help="seconds to wait between the two passes (default: %(default)s)")
    rp.add_argument("-o", "--output", help="also write the report here")
    rp.set_defaults(func=cmd_bench_reproduce)
    cr = command(bsub, "compare-runs", "two runs' ratios (two machines) side by side: each DIR "
                 "a results/ or results/reference/<name> directory",
                 "bench compare-runs results/reference/epyc results/reference/xeon")
    cr.add_argument("dir_a", metavar="DIR_A", help="the first run's results directory")
    cr.add_argument("dir_b", metavar="DIR_B", help="the second run's results directory")
    cr.set_defaults(func=cmd_bench_compare_runs)
    cm = command(bsub, "cost-model", "the cost model (check-config's estimate) against what a "
                 "run's jobs took, per rule: shipped and calibrated",
                 "bench cost-model results/reference/amd-epyc -o cost-model.txt")
    cm.add_argument("run", metavar="RUN", help="a results directory that ran (its config.yaml "
                    "and benchmarks/), or a reference")
    cm.add_argument("-o", "--output", help="also write the report here")
    cm.set_defaults(func=cmd_bench_cost_model)
    ro = command(bsub, "rounds", "how far a pair job's rounds (fresh processes) land apart, "
                 "against what their repeat pairs alone would let them",
                 "bench rounds results/pairs -o rounds.txt")
    ro.add_argument("pairs", help="a results directory, its pairs/, or one pair record")
    ro.add_argument("-o", "--output", help="also write the report here")
    ro.set_defaults(func=cmd_bench_rounds)
    ds = command(bsub, "dask-scaling", "the distributed query engines on a local Dask cluster "
                 "of 1, then 2 workers (one thread each): events/s per task, the speed-up and "
                 "the machine's load",
                 "bench dask-scaling tt.parquet --source tt.arrow --workers 1,2 --tasks 1,5")
    ds.add_argument("file", help="a TTree, RNTuple or Parquet file written by hepfmt convert")
    source_argument(ds)
    ds.add_argument("--engines", default="dask-awkward",
                    help="comma-separated distributed engines (default: %(default)s)")
    ds.add_argument("--workers", default="1,2",
                    help="cluster sizes, in workers, comma-separated (default: %(default)s)")
    ds.add_argument("--tasks", default=listed("measure.queries"),
                    help="task numbers, comma-separated (default: %(default)s)")
    ds.add_argument("--repetitions", type=at_least(1), default=5,
                    help="timed runs per task (default: %(default)s)")
    ds.add_argument("-o", "--output", help="also write the report here")
    ds.set_defaults(func=cmd_bench_dask_scaling)


def _runs_threads_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=at_least(1), default=15,
                   help="alternating runs of each (default: %(default)s)")
    p.add_argument("--threads", type=config_value("measure.threads"), default=1,
                   help="reader threads (default: %(default)s)")
    timeout_argument(p)
