"""Reads on storage profiles: storage, tabulate-storage."""

from __future__ import annotations

import argparse
import sys

from hepfmt.cli.arguments import (
    command,
    config_value,
    listed,
    resolved_selections,
    selection,
    stopping_arguments,
    storage_profiles,
    time_limit_argument,
    timeout_argument,
    written_file_arguments,
    written_file_checks,
)
from hepfmt.errors import UsageError


def cmd_storage(a: argparse.Namespace) -> None:
    from hepfmt.measure.onstorage import measure_storage, skipped_profiles
    from hepfmt.measure.timing import Stopping

    try:
        stopping = Stopping(a.precision, a.budget_s, a.min_repetitions, a.repetitions)
    except ValueError as exc:
        raise UsageError("--repetitions", str(exc)) from None
    names = storage_profiles(a.profiles)
    fmt = written_file_checks(a, a.readers.split(","))
    doc = measure_storage(a.file, a.source, fmt, a.variant, a.cluster_size,
                          a.readers.split(","), resolved_selections(a), names, a.output,
                          stopping, a.threads, a.timeout, name=a.name, workdir=a.workdir)
    for name, why in skipped_profiles(doc).items():
        print(f"{a.file}: storage profile {name} skipped, not measured: {why}",
              file=sys.stderr)
    for r in doc["reads"]:
        predicted = r.get("predicted_s")
        print(f"  {r['profile']:<10} {r['reader']:<12} {r['selection']:<6} "
              f"{r['median_s']:.3f} s" + ("" if predicted is None else
                                          f" (model {predicted:.3f} s)"), file=sys.stderr)


def cmd_tabulate_storage(a: argparse.Namespace) -> None:
    from hepfmt.report import plan_record
    from hepfmt.report.storage_tables import tabulate_storage

    tabulate_storage(plan_record.load(a.plan), a.storage, a.output, a.provenance)


def register(sub: argparse._SubParsersAction) -> None:
    s = command(sub, "storage", "read one file on storage profiles (page cache, emulated "
                "disks, a server over a shaped network)",
                "storage tt.parquet --source tt.arrow --format parquet --variant zstd-3 "
                "--cluster-size 1000 --readers pyarrow --selection 'all=*' --profiles "
                "page-cache,hdd -o tt.storage.json")
    written_file_arguments(s)
    s.add_argument("--readers", required=True,
                   help="comma-separated names of the format's readers, e.g. pyarrow,polars")
    s.add_argument("--selection", type=selection, action="append", required=True,
                   help="NAME=BRANCH,BRANCH,... or NAME=* (repeatable), as for measure")
    s.add_argument("--profiles", default=listed("measure.storage"),
                   help="comma-separated: page-cache and names of analysis/hepfmt/measure/storage/"
                        "profiles.py (hdd, sata-ssd, network-disk, lan, wan; default: "
                        "%(default)s)")
    stopping_arguments(s, "timed repetitions per profile, reader and selection", "measure",
                        "one read")
    s.add_argument("--threads", type=config_value("measure.threads"), default=1,
                   help="reader threads (default: %(default)s)")
    s.add_argument("--workdir", help="where emulated devices keep their images (default: "
                                     "the temporary directory)")
    timeout_argument(s)
    time_limit_argument(s)
    s.add_argument("-o", "--output", required=True, help="the storage record (JSON) to write")
    s.set_defaults(func=cmd_storage)

    t = command(sub, "tabulate-storage", "the storage table from storage measurements",
                "tabulate-storage --plan results/plan.json --storage results/storage/*.json "
                "-o results/tables")
    t.add_argument("--plan", required=True, help="the plan record (from plan-record)")
    t.add_argument("--storage", nargs="+", required=True, help="records from 'hepfmt storage'")
    t.add_argument("-o", "--output", required=True, help="output directory for tables")
    t.add_argument("--provenance", help="where to write its provenance (default: in -o, "
                                        "storage-provenance.json)")
    t.set_defaults(func=cmd_tabulate_storage)

