"""The ADL benchmark tasks as read workloads: query, query-reference, tabulate-queries."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hepfmt.cli.arguments import (
    command,
    config_value,
    listed,
    source_meta,
    task_numbers,
    time_limit_argument,
    timeout_argument,
    written_file_arguments,
    written_file_checks,
)
from hepfmt.defaults import default
from hepfmt.errors import UsageError
from hepfmt.queries import distributed_engines


def cmd_query_reference(a: argparse.Namespace) -> None:
    from hepfmt.measure import memcap
    from hepfmt.measure.workload import write_reference

    with memcap.capped(a.source, source_meta(a.source)["naive_bytes"]):
        write_reference(a.source, task_numbers(a.tasks), a.output)


def cmd_query(a: argparse.Namespace) -> None:
    import tempfile

    from hepfmt.measure.timing import QUERY_MIN_REPETITIONS
    from hepfmt.measure.workload import measure_queries, write_reference
    from hepfmt.queries import reading

    if a.repetitions < QUERY_MIN_REPETITIONS:
        raise UsageError("--repetitions",
                          f"at least {QUERY_MIN_REPETITIONS} repetitions are required")
    numbers = task_numbers(a.tasks)
    fmt = written_file_checks(a)
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
    from hepfmt.report import plan_record
    from hepfmt.report.query_tables import tabulate_queries

    tabulate_queries(plan_record.load(a.plan), a.queries, a.output, a.provenance)


def register(sub: argparse._SubParsersAction) -> None:
    q = command(sub, "query", "time the ADL benchmark tasks on one file through every engine "
                "that reads it, checked against the reference",
                "query tt.parquet --source tt.arrow --format parquet --variant zstd-3 "
                "--cluster-size 1000 --reference tt.reference.json --tasks 1,5 -o tt.queries.json")
    written_file_arguments(q)
    q.add_argument("--reference", help="the sample's reference answers (from query-reference; "
                                       "default: computed here, which takes a while)")
    q.add_argument("--engines", help="comma-separated (default: every engine that reads the "
                                     "format; with --dask-scheduler, its distributed ones too)")
    q.add_argument("--tasks", default=listed("measure.queries"),
                   help="task numbers, comma-separated (default: %(default)s)")
    q.add_argument("--modes", default=listed("measure.modes"),
                   help="cache modes, comma-separated (default: %(default)s)")
    q.add_argument("--repetitions", type=config_value("measure.repetitions"),
                   default=default("measure.repetitions"),
                   help="timed repetitions per task and cache mode (default: %(default)s)")
    q.add_argument("--threads", type=config_value("measure.threads"), default=1,
                   help="engine threads (default: %(default)s)")
    q.add_argument("--dask-scheduler", help="address of a Dask scheduler (tcp://host:8786) for "
                                            "the engines that run distributed ("
                                            + ", ".join(distributed_engines()) + ")")
    timeout_argument(q)
    time_limit_argument(q)
    q.add_argument("-o", "--output", required=True, help="the query record (JSON) to write")
    q.set_defaults(func=cmd_query)

    r = command(sub, "query-reference", "the reference answers of the ADL tasks on a source "
                "sample (the slow, obvious event loop)",
                "query-reference tt.arrow --tasks 1,5 -o tt.reference.json")
    r.add_argument("source", help="the source sample (Arrow IPC, its sidecar JSON beside it)")
    r.add_argument("--tasks", default=listed("measure.queries"),
                   help="task numbers, comma-separated (default: %(default)s)")
    r.add_argument("-o", "--output", required=True, help="the reference answers (JSON) to write")
    r.set_defaults(func=cmd_query_reference)

    t = command(sub, "tabulate-queries", "the queries table from query measurements",
                "tabulate-queries --plan results/plan.json --queries results/queries/*.json "
                "-o results/tables")
    t.add_argument("--plan", required=True, help="the plan record (from plan-record)")
    t.add_argument("--queries", nargs="*", default=[], help="records from 'hepfmt query'")
    t.add_argument("-o", "--output", required=True, help="output directory for tables")
    t.add_argument("--provenance", help="where to write its provenance (default: in -o, "
                                        "queries-provenance.json)")
    t.set_defaults(func=cmd_tabulate_queries)

