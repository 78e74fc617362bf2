"""``hepfmt``: the command line the workflow's rules call, usable by hand for one step at a time."""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import yaml

from analysis.defaults import default
from analysis.errors import (
    VERBOSE,
    ConfigError,
    HepfmtError,
    InputError,
    UsageError,
    brief,
    exit_with,
    note_failure,
    verbose,
)


def _option(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    key, value = text.split("=", 1)
    return key, yaml.safe_load(value)


def _memory_cap(text: str) -> str:
    from analysis.measure import memcap

    try:
        memcap.parse(text, "--memory-cap")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _names(text: str) -> list[str]:
    return [x for x in text.split(",") if x]


def _selection(text: str) -> tuple[str, object]:
    from analysis.plan.selections import from_cli

    if "=" not in text:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=BRANCH,BRANCH,... or NAME=*")
    name, branches = text.split("=", 1)
    return name, from_cli(branches)


def _resolved_selections(a: argparse.Namespace) -> dict[str, list[str] | str]:
    """``--selection``s resolved against the source's branches, as the plan resolves a config's
    (patterns, alternatives, counters: :mod:`analysis.plan.selections`)."""
    from analysis.plan.selections import Unresolved, resolve
    from analysis.samples.source import read_source_meta, schema_of

    schema = schema_of(read_source_meta(a.source))
    out = {}
    for name, sel in a.selection:
        try:
            out[name] = resolve(sel, schema)
        except Unresolved as exc:
            raise ConfigError(f"--selection {name}", f"{exc} of {a.source}") from None
    return out


def cmd_generate(a: argparse.Namespace) -> None:
    from analysis.samples.generate import generate
    from analysis.samples.model import load_model
    from analysis.samples.source import write_sidecar

    model = load_model(a.model)
    t0 = time.perf_counter()
    generate(model, a.process, a.seed, a.events, a.output)
    dt = time.perf_counter() - t0
    print(f"generated {a.events} events of {len(model.schema.branches)} branches in {dt:.2f} s "
          f"({a.events / dt:,.0f} events/s, one core)", file=sys.stderr)
    write_sidecar(a.output, model.schema, a.sample or Path(a.output).stem, process=a.process,
                  seed=a.seed, model_origin=model.origin)


def cmd_import(a: argparse.Namespace) -> None:
    from analysis.measure import memcap
    from analysis.samples.importer import import_tree
    from analysis.samples.source import write_sidecar

    with memcap.capped(a.file):  # a file from elsewhere, read in this process
        schema = import_tree(a.file, a.tree, a.output)
    write_sidecar(a.output, schema, a.sample or Path(a.output).stem, process="real",
                  source_file=a.file, tree=a.tree)


def cmd_schema_extract(a: argparse.Namespace) -> None:
    from analysis.atomic import atomic_path
    from analysis.measure import memcap
    from analysis.samples.learn import extract

    with memcap.capped(a.file):  # a file from elsewhere, read in this process
        model = extract(a.file, a.tree)
    with atomic_path(a.output) as tmp:
        model.to_json(tmp)
    print(f"{a.output}: {len(model.schema.branches)} branches, {len(model.multiplicity)} "
          f"collections, learned from {model.n_events} events of {model.origin}",
          file=sys.stderr)


def _judge_model(a: argparse.Namespace, notes: list[str]) -> tuple[object, str, str]:
    """validate-model's reads: (tables, the file judged, the model's origin)."""
    from analysis.measure.fidelity import compare, schema_mismatch
    from analysis.samples.inputs import extract_schema

    if a.held_out:
        from analysis.measure.heldout import held_out

        if a.model or a.learn_from:
            raise UsageError("--held-out", "learns its model from the file's first half: "
                                            "give neither MODEL nor --learn-from")
        return held_out(a.file, a.tree, a.seed)
    else:
        if a.model and a.learn_from:
            raise UsageError("--learn-from", "give MODEL or --learn-from, not both")
        if a.learn_from:
            from analysis.samples.learn import extract

            model = extract(a.learn_from, a.tree)
        else:
            from analysis.samples.model import load_model

            model = load_model(a.model)
        mismatch = schema_mismatch(model.schema, extract_schema(a.file, a.tree))
        if mismatch:
            print(f"hepfmt validate-model: warning: {a.file}: {mismatch}", file=sys.stderr)
            notes.append(mismatch)
        return compare(a.file, model, a.tree, a.seed), a.file, model.origin


def cmd_validate_model(a: argparse.Namespace) -> None:
    """Judge a model against a real file: a given one (or the built-in), one learned from
    another file (``--learn-from``), or one learned from the file's first half and judged
    against its second (``--held-out``)."""
    from analysis.errors import VerificationError
    from analysis.measure import memcap
    from analysis.measure.fidelity import GOAL, misses, report

    notes: list[str] = []
    with memcap.capped(a.file):  # files from elsewhere, read in this process
        tables, judged, origin = _judge_model(a, notes)
    text = report(tables, judged, origin, notes)
    print(text)
    if a.output:
        Path(a.output).write_text(text)
    missed = misses(tables)
    if len(missed) and not a.report_only:
        worst = ", ".join(f"{r['format']} {r['variant']} {r['group']} {r['diff %']:+.0f}%"
                          for r in missed.head(3).to_dict("records"))
        raise VerificationError(a.file, f"the synthetic sample misses the {GOAL:.0%} goal in "
                                        f"{len(missed)} checks (worst: {worst})")


def cmd_convert(a: argparse.Namespace) -> None:
    from analysis import formats
    from analysis.measure import digest, memcap
    from analysis.measure.sizes import write_size_record
    from analysis.measure.verify import check_source, prove_readers, verify_written
    from analysis.samples.source import read_source_meta

    fmt = formats.get(a.format)
    variant = fmt.variant(a.variant, "--variant")
    options = dict(a.option)
    unknown = sorted(set(options) - fmt.options) if fmt.options is not None else []
    if unknown:
        raise UsageError("--option", f"{a.format} has no writer option {unknown[0]!r}; "
                                      f"known: {sorted(fmt.options)}")
    # the source is read before it is proven: under the cap of its declared (naive) bytes
    with memcap.capped(a.source, read_source_meta(a.source)["naive_bytes"]):
        meta = check_source(a.source)
    fmt.write(Path(a.source), Path(a.output), variant, a.cluster_size, options)
    written = digest.of(a.output) if a.size_output else None  # the bytes the proofs prove
    unverifiable = fmt.unverifiable(options) if fmt.unverifiable else None
    proofs = {}
    if unverifiable is None:
        try:
            unknown = [r for r in a.prove if r not in fmt.readers]
            if unknown:
                raise UsageError("--prove", f"{a.format} has no reader {unknown[0]!r}")
            proofs = prove_readers(a.output, a.format, meta, a.prove)
            verify_written(a.output, a.format, meta, proofs)
        except HepfmtError:
            Path(a.output).unlink(missing_ok=True)  # never a result
            raise
    if a.size_output:
        write_size_record(a.output, a.name or a.format, a.format, variant.name, a.cluster_size,
                          a.source, a.size_output, options, unverifiable, proofs, written)


def cmd_measure(a: argparse.Namespace) -> None:
    from analysis.measure.reads import measure_file
    from analysis.measure.timing import Stopping

    try:
        stopping = Stopping(a.precision, a.budget_s, a.min_repetitions, a.repetitions)
    except ValueError as exc:
        raise UsageError("--repetitions", str(exc)) from None
    try:
        threads = [int(t) for t in a.threads.split(",")]
    except ValueError:
        raise UsageError("--threads", f"{a.threads!r} is not N or N,M,...") from None
    measure_file(a.file, a.source, a.format, a.variant, a.cluster_size, a.readers.split(","),
                 _resolved_selections(a), a.modes.split(","), stopping, threads, a.output,
                 a.timeout, name=a.name, size_record=a.size_record)


def cmd_pair(a: argparse.Namespace) -> None:
    from analysis.measure.pairs import PairSide, PairSpec, measure_pair

    def side(name: str) -> PairSide:
        return PairSide(getattr(a, name), getattr(a, f"{name}_name") or getattr(
            a, f"{name}_format"), getattr(a, f"{name}_format"), getattr(a, f"{name}_variant"),
            getattr(a, f"{name}_reader"), getattr(a, f"{name}_size_record") or "")

    sels = _resolved_selections(a)
    from analysis.samples.source import read_source_meta, schema_of

    names = schema_of(read_source_meta(a.source)).names
    spec = PairSpec(a.label, a.source, a.cluster_size, side("ttree"), side("parquet"),
                    {n: names if s == "*" else list(s) for n, s in sels.items()}, a.threads,
                    a.rounds, a.precision, a.budget_s, a.min_repetitions, a.repetitions,
                    a.max_load, a.timeout, a.file_events)
    try:
        spec.stopping()
    except ValueError as exc:
        raise UsageError("--min-repetitions", str(exc)) from None
    if a.rounds < 1:
        raise UsageError("--rounds", "at least one round (one first read per side)")
    if not 0 < a.max_load <= 1:
        raise UsageError("--max-load", f"{a.max_load} is not a share in (0, 1]")
    measure_pair(spec, a.output)


def _stopping_arguments(p: argparse.ArgumentParser, what: str, section: str,
                        budget_per: str) -> None:
    """When a timing stops repeating (analysis.measure.timing.Stopping), for ``measure``,
    ``storage`` and ``pair`` alike, with the defaults of the config schema's ``section``."""
    p.add_argument("--repetitions", type=int, default=default(f"{section}.repetitions"),
                   help=f"the most {what} (default: %(default)s)")
    p.add_argument("--min-repetitions", type=int, default=default(f"{section}.min_repetitions"),
                   help=f"the fewest {what} (at least 3; 6 give a 95%% interval; "
                        "default: %(default)s)")
    p.add_argument("--precision", type=float, default=default(f"{section}.precision"),
                   help="stop repeating once the median's 95%% interval is within this "
                        "fraction of it (default: %(default)s)")
    p.add_argument("--budget-s", type=float, default=default(f"{section}.budget_s"),
                   help=f"stop repeating once this many seconds were spent on {budget_per} "
                        "(default: %(default)s)")


def _pair_parser(sub) -> None:
    q = sub.add_parser("pair", help="time a ROOT / Parquet pairing: both files in one "
                                    "measurement, repetitions interleaved, first reads apart")
    q.add_argument("--label", required=True, help="the pairing's name in the tables")
    q.add_argument("--source", required=True, help="the sample's Arrow source (checksums)")
    q.add_argument("--cluster-size", type=int, required=True)
    for name in ("ttree", "parquet"):
        q.add_argument(f"--{name}", required=True, help=f"the {name} side's written file")
        q.add_argument(f"--{name}-format", required=True, help="its adapter")
        q.add_argument(f"--{name}-name", help="the config's name of its format")
        q.add_argument(f"--{name}-variant", required=True)
        q.add_argument(f"--{name}-reader", required=True)
        q.add_argument(f"--{name}-size-record",
                       help="its size record from convert (bytes per branch, proofs, digest)")
    q.add_argument("--selection", type=_selection, action="append", required=True,
                   help="NAME=BRANCH,BRANCH,... or NAME=* (repeatable)")
    q.add_argument("--rounds", type=int, default=default("compare.rounds"),
                   help="the fewest rounds: fresh processes per side (each gives one first "
                        "read); intervals are taken over rounds")
    _stopping_arguments(q, "repeat pairs", "compare", "rounds past --rounds")
    q.add_argument("--max-load", type=float, default=default("compare.max_load"),
                   help="discard a pair during which other processes used more than this "
                        "share of the CPUs")
    q.add_argument("--file-events", type=int, default=default("compare.file_events"),
                   help="the file length whole-file time ratios are stated at")
    q.add_argument("--threads", type=int, default=1)
    q.add_argument("--timeout", type=float, default=default("measure.timeout_s"))
    q.add_argument("-o", "--output", required=True)
    q.set_defaults(func=cmd_pair)


def cmd_bench_overhead(a: argparse.Namespace) -> None:
    from analysis.measure.overhead import bench, report

    rows = bench(a.file, a.source, a.format, a.readers.split(","), _resolved_selections(a),
                 a.runs, a.threads, a.timeout)
    print(report(rows, a.format))


def cmd_bench_layers(a: argparse.Namespace) -> None:
    from analysis.atomic import atomic_path
    from analysis.measure.layers import bench, report
    from analysis.samples.source import read_source_meta, schema_of

    a.selection = a.selection or [_selection("all=*")]
    sels = _resolved_selections(a)
    if len(sels) != 1:
        raise UsageError("--selection", "bench layers profiles one selection")
    (sel,) = sels.values()
    branches = schema_of(read_source_meta(a.source)).names if isinstance(sel, str) else sel
    text = report(bench(a.file, a.source, a.format, a.readers.split(","), branches, a.seconds))
    print(text)
    if a.output:
        with atomic_path(a.output) as tmp:
            Path(tmp).write_text(text + "\n")


def cmd_bench_overhead_study(a: argparse.Namespace) -> None:
    """:func:`cmd_bench_overhead` for every reader of a finished run's measure sub-grid: the
    files of its first measure sample at the largest cluster size measured there (the files of
    the formats table), each format's readers and the config's selections."""
    from analysis.atomic import atomic_path
    from analysis.measure.overhead import bench, report
    from analysis.plan import config as cfg
    from analysis.plan import paths, selections, study

    c = cfg.load(a.config)
    plan = study.read_plan(c)
    sample = study.measure_samples(c)[0]
    mine = {f: r for f, r in plan.items() if f.sample == sample}
    if not mine:
        raise ConfigError("measure.samples", f"no file of sample {sample!r} is read-measured")
    largest = max(f.cluster_size for f in mine)
    sels = selections.for_sample(c, sample)
    blocks = []
    for f, readers in mine.items():
        if f.cluster_size != largest:
            continue
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


def cmd_plan_record(a: argparse.Namespace) -> None:
    from analysis.atomic import write_json
    from analysis.plan import config as cfg
    from analysis.plan.record import record

    write_json(a.output, record(cfg.load(a.config)))


def cmd_tabulate(a: argparse.Namespace) -> None:
    from analysis.report import plan_record
    from analysis.report.tables import tabulate

    tabulate(plan_record.load(a.plan), a.sizes, a.reads, a.output, a.provenance, a.pairs)


def cmd_figure(a: argparse.Namespace) -> None:
    from analysis.report.figures import make

    for path in make(a.family, a.tables, a.provenance, a.plan, a.output, a.config_name):
        print(f"wrote {path}", file=sys.stderr)


def cmd_check_config(a: argparse.Namespace) -> None:
    """Everything a run would refuse, refused now; then what the run will cost, and where that
    exceeds this machine (warnings only: the run may go to a batch cluster)."""
    from analysis.plan import config as cfg
    from analysis.plan import cost, resources

    c = cfg.load(a.config)
    est = resources.whole_study(c)
    print(f"{a.config}: valid; {len(c['samples'])} samples")
    print(est.describe())
    print(cost.basis(c))
    print(cost.whole(c).describe())
    for w in resources.machine_warnings(est, c):
        print(f"hepfmt check-config: warning: {w}", file=sys.stderr)


def cmd_metadata_write(a: argparse.Namespace) -> None:
    from analysis import formats
    from analysis.atomic import write_json
    from analysis.metastudy import widefiles
    from analysis.provenance import collect

    layout = widefiles.Layout.parse(a.layout)
    codec = formats.get("parquet" if layout.format == "parquet" else "ttree").variant(
        a.codec, "--codec")
    ds = widefiles.dataset(a.dataset, a.row_groups, a.rows_per_group, a.seed, a.source)
    record = widefiles.write(ds, layout, a.output, codec, dict(a.option))
    write_json(a.layout_output, {**record, "provenance": collect(data_path=Path(a.output).parent)})


def cmd_metadata_time(a: argparse.Namespace) -> None:
    from analysis.metastudy.decode import load_layout, time_file
    from analysis.metastudy.rusthelper import binary_from

    time_file(a.file, load_layout(a.layout), a.implementations.split(","), a.repetitions,
              a.budget, a.output, binary_from(a.rust_helper), a.timeout)


def cmd_metadata_tabulate(a: argparse.Namespace) -> None:
    from analysis.metastudy import plots, tables
    from analysis.plan import config as cfg
    from analysis.report.documents import read_provenance

    df = tables.tabulate(cfg.load(a.config), a.timings, a.output, a.provenance)
    prov = read_provenance(a.provenance or Path(a.output) / "provenance.json")
    plots.plot(df, a.plots or a.output, prov, a.config_name)


def cmd_metadata_build_helper(a: argparse.Namespace) -> None:
    from analysis.metastudy.rusthelper import build

    doc = build(a.output)
    print(f"arrow-rs helper: {doc.get('binary') or 'not available: ' + doc['reason']}",
          file=sys.stderr)


def _metadata_parser(sub) -> None:
    md = sub.add_parser("metadata", help="metadata cost of wide tables (decode time and size "
                                         "vs number of columns)")
    msub = md.add_subparsers(dest="metadata_command", required=True, metavar="SUBCOMMAND")
    w = msub.add_parser("write", help="write one wide file and verify it from its metadata")
    w.add_argument("dataset", help="float32-c<N>, string-c<N> or nanoaod-<sample>")
    w.add_argument("--layout", required=True,
                   help="parquet-none, parquet-chunk, parquet-page, ttree or rntuple")
    w.add_argument("--row-groups", type=int, default=20)
    w.add_argument("--rows-per-group", type=int, default=1000)
    w.add_argument("--seed", type=int, default=1)
    w.add_argument("--codec", required=True, help="e.g. snappy+dict (Parquet), zstd-5 (ROOT)")
    w.add_argument("--source", help="the sample (Arrow IPC) of a nanoaod-<sample> dataset")
    w.add_argument("--option", type=_option, action="append", default=[],
                   help="pyarrow ParquetWriter option KEY=VALUE (repeatable)")
    w.add_argument("-o", "--output", required=True)
    w.add_argument("--layout-output", required=True,
                   help="where to write what the file's metadata says (JSON)")
    w.set_defaults(func=cmd_metadata_write)

    t = msub.add_parser("time", help="time metadata decoding of one file, per implementation")
    t.add_argument("file")
    t.add_argument("--layout", required=True, help="the file's record from 'metadata write'")
    t.add_argument("--implementations", required=True, help="comma-separated, e.g. "
                                                             "pyarrow,arrow-rs")
    t.add_argument("--repetitions", type=int, default=default("metadata.repetitions"))
    t.add_argument("--budget", type=float, default=default("metadata.time_budget_s"),
                   help="seconds per implementation after which 5 repetitions suffice")
    t.add_argument("--rust-helper", help="record from 'metadata build-helper' (arrow-rs)")
    t.add_argument("--timeout", type=float, default=default("measure.timeout_s"))
    t.add_argument("-o", "--output", required=True)
    t.set_defaults(func=cmd_metadata_time)

    b = msub.add_parser("build-helper", help="build the optional Rust (arrow-rs) decoder")
    b.add_argument("-o", "--output", required=True, help="where to record whether it built")
    b.set_defaults(func=cmd_metadata_build_helper)

    g = msub.add_parser("tabulate", help="tables and plots from metadata timings")
    g.add_argument("--config", required=True)
    g.add_argument("--timings", nargs="+", required=True)
    g.add_argument("-o", "--output", required=True, help="output directory for tables")
    g.add_argument("--plots", help="output directory for plots (default: -o)")
    g.add_argument("--provenance", help="where to write provenance.json (default: in -o)")
    g.add_argument("--config-name", help="how the plots' footer names the config")
    g.set_defaults(func=cmd_metadata_tabulate)


def cmd_bench_reproduce(a: argparse.Namespace) -> None:
    """Every pair job of a finished run measured twice here, the second pass after the first
    (:mod:`analysis.measure.reproduce`), and each ratio of one pass next to the other's."""
    import tempfile

    from analysis.atomic import atomic_path
    from analysis.measure.reproduce import Job, job_name, reproduce, require, select
    from analysis.plan import commands, paths, study
    from analysis.plan import config as cfg
    from analysis.report.compare_runs import two_passes

    if a.load < 0:
        raise UsageError("--load", f"{a.load} is not a number of processes")
    if a.pause_s < 0:
        raise UsageError("--pause-s", f"{a.pause_s} is not a duration")
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
    from analysis.report.compare_runs import compare_runs

    print("\n".join(compare_runs(a.dir_a, a.dir_b)))


def cmd_bench_rounds(a: argparse.Namespace) -> None:
    from analysis.report.rounds import report

    text = "\n".join(report(a.pairs)) + "\n"
    print(text, end="")
    if a.output:
        from analysis.atomic import atomic_path

        with atomic_path(a.output) as out:
            Path(out).write_text(text)


def _bench_parser(sub) -> None:
    b = sub.add_parser("bench", help="benchmarks of hepfmt's own measuring")
    bsub = b.add_subparsers(dest="bench_command", required=True, metavar="SUBCOMMAND")
    o = bsub.add_parser("overhead", help="each reader's timed scan next to the bare library "
                                         "call on the same file: the harness's overhead")
    o.add_argument("file")
    o.add_argument("--source", required=True, help="the source sample the file was written from")
    o.add_argument("--format", required=True, help="the adapter: ttree, rntuple, parquet, ...")
    o.add_argument("--readers", required=True, help="comma-separated reader names")
    o.add_argument("--selection", type=_selection, action="append", required=True,
                   help="NAME=BRANCH,BRANCH,... or NAME=* (repeatable); a BRANCH may be a "
                        "pattern (Muon_*) or alternatives (MET_pt|PFMET_pt)")
    o.add_argument("--runs", type=int, default=15, help="alternating runs of each")
    o.add_argument("--threads", type=int, default=1)
    o.add_argument("--timeout", type=float, default=default("measure.timeout_s"))
    o.set_defaults(func=cmd_bench_overhead)
    la = bsub.add_parser("layers", help="where a read through ROOT spends its time: each "
                         "reader profiled (perf) by layer, beside the file's codec bound")
    la.add_argument("file")
    la.add_argument("--source", required=True, help="the source sample the file was written from")
    la.add_argument("--format", required=True, help="the adapter: ttree or rntuple")
    la.add_argument("--readers", default="rdf,ttreereader,getentry,columnar",
                    help="comma-separated reader names")
    la.add_argument("--selection", type=_selection, action="append",
                    default=None, help="NAME=BRANCH,... or NAME=* (default: all=*)")
    la.add_argument("--seconds", type=float, default=3.0, help="profiled seconds per reader")
    la.add_argument("-o", "--output", help="also write the report here")
    la.set_defaults(func=cmd_bench_layers)
    st = bsub.add_parser("overhead-study", help="the overhead bench on every reader of a "
                         "finished run's measure sub-grid (the formats table's files)")
    st.add_argument("config", help="the study's config file (its results must exist)")
    st.add_argument("--runs", type=int, default=15, help="alternating runs of each")
    st.add_argument("--threads", type=int, default=1)
    st.add_argument("--timeout", type=float, default=default("measure.timeout_s"))
    st.add_argument("-o", "--output", help="also write the tables here")
    st.set_defaults(func=cmd_bench_overhead_study)
    rp = bsub.add_parser("reproduce", help="every pair job of a finished run measured twice "
                         "here, one pass after the other: do the ratios' intervals hold?")
    rp.add_argument("config", help="the study's config file (its results must exist)")
    rp.add_argument("--load", type=int, default=0,
                    help="keep this many CPU-bound processes running through both passes")
    rp.add_argument("--jobs", help="only the pair jobs whose sample/pair/cNNN/selection "
                                   "holds this text")
    rp.add_argument("--pause-s", type=float, default=0.0,
                    help="seconds to wait between the two passes")
    rp.add_argument("-o", "--output", help="also write the report here")
    rp.set_defaults(func=cmd_bench_reproduce)
    cr = bsub.add_parser("compare-runs", help="two runs' ratios (two machines) side by side: "
                         "each DIR a results/ or results/reference/<name> directory")
    cr.add_argument("dir_a", metavar="DIR_A")
    cr.add_argument("dir_b", metavar="DIR_B")
    cr.set_defaults(func=cmd_bench_compare_runs)
    ro = bsub.add_parser("rounds", help="how far a pair job's rounds (fresh processes) land "
                         "apart, against what their repeat pairs alone would let them")
    ro.add_argument("pairs", help="a results directory, its pairs/, or one pair record")
    ro.add_argument("-o", "--output", help="also write the report here")
    ro.set_defaults(func=cmd_bench_rounds)


def _task_numbers(text: str) -> list[int]:
    from analysis.queries.tasks import TASKS

    try:
        numbers = [int(t) for t in text.split(",") if t]
    except ValueError:
        raise UsageError("--tasks", f"{text!r} is not N,M,... (task numbers)") from None
    unknown = sorted(set(numbers) - set(TASKS))
    if unknown:
        raise UsageError("--tasks", f"no task {unknown[0]}; tasks are {sorted(TASKS)}")
    return numbers


def cmd_query_reference(a: argparse.Namespace) -> None:
    from analysis.measure import memcap
    from analysis.measure.queries import write_reference
    from analysis.samples.source import read_source_meta

    with memcap.capped(a.source, read_source_meta(a.source)["naive_bytes"]):
        write_reference(a.source, _task_numbers(a.tasks), a.output)


def cmd_query(a: argparse.Namespace) -> None:
    import tempfile

    from analysis.measure.queries import measure_queries, write_reference
    from analysis.measure.timing import QUERY_MIN_REPETITIONS
    from analysis.queries import reading

    if a.repetitions < QUERY_MIN_REPETITIONS:
        raise UsageError("--repetitions",
                          f"at least {QUERY_MIN_REPETITIONS} repetitions are required")
    numbers = _task_numbers(a.tasks)
    engines = (a.engines.split(",") if a.engines
               else reading(a.format, numbers, distributed=bool(a.dask_scheduler)))
    with tempfile.TemporaryDirectory(prefix="hepfmt-query-") as tmp:
        reference = a.reference
        if reference is None:
            reference = Path(tmp) / "reference.json"
            write_reference(a.source, numbers, reference)
        doc = measure_queries(a.file, a.source, reference, a.format, a.variant,
                              a.cluster_size, engines, numbers, a.modes.split(","),
                              a.repetitions, a.threads, a.output, a.timeout, name=a.name,
                              scheduler=a.dask_scheduler or "")
    print(f"{a.file}: {len(numbers)} tasks x {len(engines)} engines agree with the reference",
          file=sys.stderr)
    for row in doc["queries"]:
        print(f"  task {row['task']} {row['engine']:<12} {row['mode']}: "
              f"{row['events_per_s']:,.0f} events/s", file=sys.stderr)


def cmd_tabulate_queries(a: argparse.Namespace) -> None:
    from analysis.report import plan_record
    from analysis.report.queries import tabulate_queries

    tabulate_queries(plan_record.load(a.plan), a.queries, a.output, a.provenance)


def _written_file_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments naming one written file of the study, as measure, query and storage take
    them."""
    p.add_argument("file")
    p.add_argument("--source", required=True, help="the source sample the file was written from")
    p.add_argument("--format", required=True, help="the adapter: ttree, rntuple, parquet, ...")
    p.add_argument("--name", help="the config's name of this format (default: --format)")
    p.add_argument("--variant", required=True)
    p.add_argument("--cluster-size", type=int, required=True)


def _queries_parser(sub) -> None:
    q = sub.add_parser("query", help="time the ADL benchmark tasks on one file through every "
                                     "engine that reads it, checked against the reference")
    _written_file_arguments(q)
    q.add_argument("--reference", help="the sample's reference answers (from query-reference; "
                                       "default: computed here, which takes a while)")
    q.add_argument("--engines", help="comma-separated (default: every engine that reads the "
                                     "format; with --dask-scheduler, its distributed ones too)")
    q.add_argument("--tasks", default="1,2,3,4,5,6,7,8", help="task numbers, comma-separated")
    q.add_argument("--modes", default="cold,warm")
    q.add_argument("--repetitions", type=int, default=default("measure.repetitions"),
                   help="timed repetitions per task and cache mode (default: %(default)s)")
    q.add_argument("--threads", type=int, default=1, help="engine threads")
    q.add_argument("--dask-scheduler", help="address of a Dask scheduler (tcp://host:8786) for "
                                            "the engines that run distributed (awkward-dask)")
    q.add_argument("--timeout", type=float, default=default("measure.timeout_s"))
    q.add_argument("-o", "--output", required=True)
    q.set_defaults(func=cmd_query)

    r = sub.add_parser("query-reference", help="the reference answers of the ADL tasks on a "
                                               "source sample (the slow, obvious event loop)")
    r.add_argument("source")
    r.add_argument("--tasks", default="1,2,3,4,5,6,7,8", help="task numbers, comma-separated")
    r.add_argument("-o", "--output", required=True)
    r.set_defaults(func=cmd_query_reference)

    t = sub.add_parser("tabulate-queries", help="the queries table from query measurements")
    t.add_argument("--plan", required=True, help="the plan record (from plan-record)")
    t.add_argument("--queries", nargs="*", default=[], help="records from 'hepfmt query'")
    t.add_argument("-o", "--output", required=True, help="output directory for tables")
    t.add_argument("--provenance", help="where to write its provenance (default: in -o, "
                                        "queries-provenance.json)")
    t.set_defaults(func=cmd_tabulate_queries)


def cmd_storage(a: argparse.Namespace) -> None:
    from analysis.measure.onstorage import measure_storage, skipped_profiles
    from analysis.measure.timing import Stopping

    try:
        stopping = Stopping(a.precision, a.budget_s, a.min_repetitions, a.repetitions)
    except ValueError as exc:
        raise UsageError("--repetitions", str(exc)) from None
    doc = measure_storage(a.file, a.source, a.format, a.variant, a.cluster_size,
                          a.readers.split(","), _resolved_selections(a),
                          a.profiles.split(","), a.output, stopping, a.threads, a.timeout,
                          name=a.name, workdir=a.workdir)
    for name, why in skipped_profiles(doc).items():
        print(f"{a.file}: storage profile {name} skipped, not measured: {why}",
              file=sys.stderr)
    for r in doc["reads"]:
        predicted = r.get("predicted_s")
        print(f"  {r['profile']:<10} {r['reader']:<12} {r['selection']:<6} "
              f"{r['median_s']:.3f} s" + ("" if predicted is None else
                                          f" (model {predicted:.3f} s)"), file=sys.stderr)


def cmd_tabulate_storage(a: argparse.Namespace) -> None:
    from analysis.report import plan_record
    from analysis.report.tables import tabulate_storage

    tabulate_storage(plan_record.load(a.plan), a.storage, a.output, a.provenance)


def _storage_parser(sub) -> None:
    s = sub.add_parser("storage", help="read one file on storage profiles (page cache, "
                                       "emulated disks, a server over a shaped network)")
    _written_file_arguments(s)
    s.add_argument("--readers", required=True, help="comma-separated reader names")
    s.add_argument("--selection", type=_selection, action="append", required=True,
                   help="NAME=BRANCH,BRANCH,... or NAME=* (repeatable), as for measure")
    s.add_argument("--profiles", default="page-cache,hdd",
                   help="comma-separated: page-cache and names of analysis/measure/storage/"
                        "profiles.py (hdd, sata-ssd, network-disk, lan, wan)")
    _stopping_arguments(s, "timed repetitions per profile, reader and selection", "measure",
                        "one read")
    s.add_argument("--threads", type=int, default=1, help="reader threads")
    s.add_argument("--workdir", help="where emulated devices keep their images (default: "
                                     "the temporary directory)")
    s.add_argument("--timeout", type=float, default=default("measure.timeout_s"))
    s.add_argument("-o", "--output", required=True)
    s.set_defaults(func=cmd_storage)

    t = sub.add_parser("tabulate-storage", help="the storage table from storage measurements")
    t.add_argument("--plan", required=True, help="the plan record (from plan-record)")
    t.add_argument("--storage", nargs="+", required=True, help="records from 'hepfmt storage'")
    t.add_argument("-o", "--output", required=True, help="output directory for tables")
    t.add_argument("--provenance", help="where to write its provenance (default: in -o, "
                                        "storage-provenance.json)")
    t.set_defaults(func=cmd_tabulate_storage)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hepfmt", description=__doc__)
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show the libraries' own messages (ROOT's) and tracebacks")
    p.add_argument("--memory-cap", type=_memory_cap, metavar="SIZE",
                   help="the most memory a process reading a file may take, e.g. 8G, 512M or "
                        "off (default: from the file's size, at least 4 GB; also "
                        "HEPFMT_MEMORY_CAP); a damaged file that asks for more is refused")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    g = sub.add_parser("generate", help="generate a NanoAOD-like source sample (Arrow IPC)")
    g.add_argument("--process", required=True)
    g.add_argument("--events", type=int, required=True)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--sample", help="sample name recorded in the sidecar (default: file stem)")
    g.add_argument("--model", help="value model JSON from 'hepfmt schema extract' "
                                   "(default: the built-in model of CMS NanoAOD)")
    g.add_argument("-o", "--output", required=True)
    g.set_defaults(func=cmd_generate)

    i = sub.add_parser("import", help="copy a real TTree, RNTuple or Parquet file or directory "
                                      "(NanoAOD or any flat/jagged table, local or root://) "
                                      "into a source sample")
    i.add_argument("file")
    i.add_argument("--tree", default="Events", help="TTree or RNTuple name (not for Parquet)")
    i.add_argument("--sample", help="sample name recorded in the sidecar (default: file stem)")
    i.add_argument("-o", "--output", required=True)
    i.set_defaults(func=cmd_import)

    s = sub.add_parser("schema", help="branch schemas and value models")
    ssub = s.add_subparsers(dest="schema_command", required=True, metavar="SUBCOMMAND")
    se = ssub.add_parser("extract", help="learn a value model (schema, value distributions, "
                                         "multiplicities, mantissa bits) from a real file: "
                                         "TTree, RNTuple or Parquet")
    se.add_argument("file")
    se.add_argument("--tree", default="Events", help="TTree or RNTuple name (not for Parquet)")
    se.add_argument("-o", "--output", required=True)
    se.set_defaults(func=cmd_schema_extract)

    v = sub.add_parser("validate-model", help="compare a real file with a synthetic sample of "
                                              "the same size, written through the same codecs")
    v.add_argument("file", help="the real file: TTree, RNTuple or Parquet (file or directory)")
    v.add_argument("model", nargs="?", help="value model JSON (default: built-in)")
    v.add_argument("--tree", default="Events", help="TTree or RNTuple name (not for Parquet)")
    v.add_argument("--held-out", action="store_true",
                   help="out of sample: learn the model from the file's first half of entries "
                        "and judge it against the second")
    v.add_argument("--learn-from", metavar="FILE",
                   help="out of sample: learn the model from this file (same --tree) and "
                        "judge it against the first")
    v.add_argument("--seed", type=int, default=1)
    v.add_argument("-o", "--output", help="also write the report (Markdown) here")
    v.add_argument("--report-only", action="store_true",
                   help="exit 0 even when the synthetic sample misses the goal")
    v.set_defaults(func=cmd_validate_model)

    c = sub.add_parser("convert", help="write a source sample in one format/variant/cluster size")
    c.add_argument("source")
    c.add_argument("--format", required=True, help="the adapter: ttree, rntuple, parquet, ...")
    c.add_argument("--name", help="the config's name of this format (default: --format)")
    c.add_argument("--variant", required=True, help="e.g. none, zlib-1, zstd-5, none+dict")
    c.add_argument("--cluster-size", type=int, required=True)
    c.add_argument("--option", type=_option, action="append", default=[],
                   help="writer option KEY=VALUE (repeatable), e.g. basket_size=32000")
    c.add_argument("-o", "--output", required=True)
    c.add_argument("--size-output", help="also write the file's size record (JSON) here")
    c.add_argument("--prove", type=_names, default=[],
                   help="comma-separated readers to prove on every branch (recorded in the "
                        "size record, so that `measure` need not prove them again)")
    c.set_defaults(func=cmd_convert)

    m = sub.add_parser("measure", help="measure cold/warm reads of one file")
    _written_file_arguments(m)
    m.add_argument("--readers", required=True, help="comma-separated reader names")
    m.add_argument("--selection", type=_selection, action="append", required=True,
                   help="NAME=BRANCH,BRANCH,... or NAME=* (repeatable); a BRANCH may be a "
                        "pattern (Muon_*) or alternatives (MET_pt|PFMET_pt)")
    m.add_argument("--modes", default="cold,warm")
    _stopping_arguments(m, "timed repetitions per cache mode", "measure", "one read and mode")
    m.add_argument("--threads", default="1", help="reader threads, or a sweep: 1,2,4")
    m.add_argument("--timeout", type=float, default=default("measure.timeout_s"))
    m.add_argument("--size-record",
                   help="the file's size record from convert: its bytes per branch, and the "
                        "readers proven there, which are then not proven again")
    m.add_argument("-o", "--output", required=True)
    m.set_defaults(func=cmd_measure)

    _pair_parser(sub)
    _bench_parser(sub)

    r = sub.add_parser("plan-record", help="what the tables and figures need of the study "
                                           "(labels, readers, pairings, selections), as JSON")
    r.add_argument("config", help="the resolved config (results/config.yaml)")
    r.add_argument("-o", "--output", required=True, help="where to write it (results/plan.json)")
    r.set_defaults(func=cmd_plan_record)

    t = sub.add_parser("tabulate", help="size, read-time and ratio tables from measurements")
    t.add_argument("--plan", required=True, help="the plan record (from plan-record)")
    t.add_argument("--sizes", nargs="+", required=True, help="size records from convert")
    t.add_argument("--reads", nargs="*", default=[], help="read measurements from measure")
    t.add_argument("--pairs", nargs="*", default=[],
                   help="paired ROOT / Parquet measurements from pair (the ratios' reads)")
    t.add_argument("-o", "--output", required=True, help="output directory for tables")
    t.add_argument("--provenance", help="where to write provenance.json (default: in -o)")
    t.set_defaults(func=cmd_tabulate)

    from analysis.report.figures import FAMILIES  # the registry: no plotting library imported

    f = sub.add_parser("figure", help="draw one figure family (PNG + PDF) from the tables")
    f.add_argument("family", help="a figure family: " + ", ".join(FAMILIES))
    f.add_argument("--tables", required=True, help="directory of tabulate's CSV tables")
    f.add_argument("--provenance", required=True, help="tabulate's provenance.json")
    f.add_argument("--plan", required=True, help="the plan record (from plan-record)")
    f.add_argument("--config-name", help="how the footer names the config (e.g. default.yaml)")
    f.add_argument("-o", "--output", required=True, help="output directory")
    f.set_defaults(func=cmd_figure)

    k = sub.add_parser("check-config", help="validate a config file; count its files and "
                                            "estimate their disk, memory and CPU")
    k.add_argument("config")
    k.set_defaults(func=cmd_check_config)

    _metadata_parser(sub)
    _queries_parser(sub)
    _storage_parser(sub)
    return p


def _subject(a: argparse.Namespace) -> str:
    """The file a command works on, to name in an error that does not name one itself."""
    for key in ("file", "source", "config", "output"):
        if getattr(a, key, None):
            return str(getattr(a, key))
    return a.command


def main(argv: list[str] | None = None) -> int:
    """Run one command. Bad input, a wrong config or a full disk end in one line naming the
    file and the problem, and exit status 2; ``--verbose`` adds the libraries' detail."""
    warnings.filterwarnings("ignore", message=r"\s*This distribution of ROOT is in alpha stage")
    args = build_parser().parse_args(argv)
    if args.verbose:
        os.environ[VERBOSE] = "1"  # child processes (measurements) inherit it
    if args.memory_cap:
        from analysis.measure.memcap import ENV

        os.environ[ENV] = args.memory_cap  # ... and this
    try:
        args.func(args)
    except HepfmtError as exc:  # the whole text of the libraries' messages with --verbose
        note_failure(exc)
        print(f"hepfmt {args.command}: error: {exc.detail if verbose() else exc}",
              file=sys.stderr)
        return 2
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # a library's own error (a Rust panic is no Exception): one
        note_failure(exc)         # line unless asked for the detail
        if verbose():
            raise
        print(f"hepfmt {args.command}: error: {_subject(args)}: {type(exc).__name__}: "
              f"{brief(str(exc))} (--verbose for the detail)", file=sys.stderr)
        return 2
    return 0


def entry() -> None:
    """The ``hepfmt`` command: :func:`main`, its status the process's."""
    exit_with(main())


if __name__ == "__main__":
    entry()
