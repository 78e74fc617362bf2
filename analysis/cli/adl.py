"""The ADL benchmark tasks as read workloads: query, query-reference, tabulate-queries."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from analysis.cli.arguments import (
    adapter,
    listed,
    task_numbers,
    time_limit_argument,
    written_file_arguments,
)
from analysis.defaults import default
from analysis.errors import UsageError
from analysis.queries import distributed_engines


def cmd_query_reference(a: argparse.Namespace) -> None:
    from analysis.measure import memcap
    from analysis.measure.workload import write_reference
    from analysis.samples.source import read_source_meta

    with memcap.capped(a.source, read_source_meta(a.source)["naive_bytes"]):
        write_reference(a.source, task_numbers(a.tasks), a.output)


def cmd_query(a: argparse.Namespace) -> None:
    import tempfile

    from analysis.measure.timing import QUERY_MIN_REPETITIONS
    from analysis.measure.workload import measure_queries, write_reference
    from analysis.queries import reading

    if a.repetitions < QUERY_MIN_REPETITIONS:
        raise UsageError("--repetitions",
                          f"at least {QUERY_MIN_REPETITIONS} repetitions are required")
    fmt = adapter(a.format)
    numbers = task_numbers(a.tasks)
    engines = (a.engines.split(",") if a.engines
               else reading(fmt, numbers, distributed=bool(a.dask_scheduler)))
    with tempfile.TemporaryDirectory(prefix="hepfmt-query-") as tmp:
        reference = a.reference
        if reference is None:
            reference = Path(tmp) / "reference.json"
            write_reference(a.source, numbers, reference)
        doc = measure_queries(a.file, a.source, reference, fmt, a.variant,
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
    from analysis.report.query_tables import tabulate_queries

    tabulate_queries(plan_record.load(a.plan), a.queries, a.output, a.provenance)


def register(sub: argparse._SubParsersAction) -> None:
    q = sub.add_parser("query", help="time the ADL benchmark tasks on one file through every "
                                     "engine that reads it, checked against the reference")
    written_file_arguments(q)
    q.add_argument("--reference", help="the sample's reference answers (from query-reference; "
                                       "default: computed here, which takes a while)")
    q.add_argument("--engines", help="comma-separated (default: every engine that reads the "
                                     "format; with --dask-scheduler, its distributed ones too)")
    q.add_argument("--tasks", default=listed("measure.queries"),
                   help="task numbers, comma-separated (default: %(default)s)")
    q.add_argument("--modes", default=listed("measure.modes"),
                   help="cache modes, comma-separated (default: %(default)s)")
    q.add_argument("--repetitions", type=int, default=default("measure.repetitions"),
                   help="timed repetitions per task and cache mode (default: %(default)s)")
    q.add_argument("--threads", type=int, default=1, help="engine threads")
    q.add_argument("--dask-scheduler", help="address of a Dask scheduler (tcp://host:8786) for "
                                            "the engines that run distributed ("
                                            + ", ".join(distributed_engines()) + ")")
    q.add_argument("--timeout", type=float, default=default("measure.timeout_s"))
    time_limit_argument(q)
    q.add_argument("-o", "--output", required=True)
    q.set_defaults(func=cmd_query)

    r = sub.add_parser("query-reference", help="the reference answers of the ADL tasks on a "
                                               "source sample (the slow, obvious event loop)")
    r.add_argument("source")
    r.add_argument("--tasks", default=listed("measure.queries"),
                   help="task numbers, comma-separated (default: %(default)s)")
    r.add_argument("-o", "--output", required=True)
    r.set_defaults(func=cmd_query_reference)

    t = sub.add_parser("tabulate-queries", help="the queries table from query measurements")
    t.add_argument("--plan", required=True, help="the plan record (from plan-record)")
    t.add_argument("--queries", nargs="*", default=[], help="records from 'hepfmt query'")
    t.add_argument("-o", "--output", required=True, help="output directory for tables")
    t.add_argument("--provenance", help="where to write its provenance (default: in -o, "
                                        "queries-provenance.json)")
    t.set_defaults(func=cmd_tabulate_queries)

