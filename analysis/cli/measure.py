"""Writing and timing one file: convert, measure, pair."""

from __future__ import annotations

import argparse

from analysis.cli.arguments import (
    adapter,
    listed,
    names,
    option,
    resolved_selections,
    selection,
    stopping_arguments,
    time_limit_argument,
    written_file_arguments,
)
from analysis.defaults import default
from analysis.errors import UsageError


def cmd_convert(a: argparse.Namespace) -> None:
    from analysis.measure.convert import convert

    convert(a.source, a.output, adapter(a.format), a.variant, a.cluster_size, dict(a.option),
            a.prove, a.name, a.size_output)


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
    measure_file(a.file, a.source, adapter(a.format), a.variant, a.cluster_size,
                 a.readers.split(","), resolved_selections(a), a.modes.split(","), stopping,
                 threads, a.output, a.timeout, name=a.name, size_record=a.size_record)


def cmd_pair(a: argparse.Namespace) -> None:
    from analysis.measure.pairs import PairSide, PairSpec, measure_pair

    def side(name: str) -> PairSide:
        fmt = adapter(getattr(a, f"{name}_format"), f"--{name}-format")
        return PairSide(getattr(a, name), getattr(a, f"{name}_name") or fmt, fmt,
                        getattr(a, f"{name}_variant"), getattr(a, f"{name}_reader"),
                        getattr(a, f"{name}_size_record") or "")

    sels = resolved_selections(a)
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
    q.add_argument("--selection", type=selection, action="append", required=True,
                   help="NAME=BRANCH,BRANCH,... or NAME=* (repeatable)")
    q.add_argument("--rounds", type=int, default=default("compare.rounds"),
                   help="the fewest rounds: fresh processes per side (each gives one first "
                        "read); intervals are taken over rounds")
    stopping_arguments(q, "repeat pairs", "compare", "rounds past --rounds")
    q.add_argument("--max-load", type=float, default=default("compare.max_load"),
                   help="discard a pair during which other processes used more than this "
                        "share of the CPUs")
    q.add_argument("--file-events", type=int, default=default("compare.file_events"),
                   help="the file length whole-file time ratios are stated at")
    q.add_argument("--threads", type=int, default=1)
    q.add_argument("--timeout", type=float, default=default("measure.timeout_s"))
    time_limit_argument(q)
    q.add_argument("-o", "--output", required=True)
    q.set_defaults(func=cmd_pair)



def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("convert", help="write a source sample in one format/variant/cluster size")
    c.add_argument("source")
    c.add_argument("--format", required=True, help="the adapter: ttree, rntuple, parquet, ...")
    c.add_argument("--name", help="the config's name of this format (default: --format)")
    c.add_argument("--variant", required=True, help="e.g. none, zlib-1, zstd-5, none+dict")
    c.add_argument("--cluster-size", type=int, required=True)
    c.add_argument("--option", type=option, action="append", default=[],
                   help="writer option KEY=VALUE (repeatable), e.g. basket_size=32000")
    c.add_argument("-o", "--output", required=True)
    c.add_argument("--size-output", help="also write the file's size record (JSON) here")
    c.add_argument("--prove", type=names, default=[],
                   help="comma-separated readers to prove on every branch (recorded in the "
                        "size record, so that `measure` need not prove them again)")
    c.set_defaults(func=cmd_convert)

    m = sub.add_parser("measure", help="measure cold/warm reads of one file")
    written_file_arguments(m)
    m.add_argument("--readers", required=True, help="comma-separated reader names")
    m.add_argument("--selection", type=selection, action="append", required=True,
                   help="NAME=BRANCH,BRANCH,... or NAME=* (repeatable); a BRANCH may be a "
                        "pattern (Muon_*) or alternatives (MET_pt|PFMET_pt)")
    m.add_argument("--modes", default=listed("measure.modes"),
                   help="cache modes, comma-separated (default: %(default)s)")
    stopping_arguments(m, "timed repetitions per cache mode", "measure", "one read and mode")
    m.add_argument("--threads", default="1", help="reader threads, or a sweep: 1,2,4")
    m.add_argument("--timeout", type=float, default=default("measure.timeout_s"))
    time_limit_argument(m)
    m.add_argument("--size-record",
                   help="the file's size record from convert: its bytes per branch, and the "
                        "readers proven there, which are then not proven again")
    m.add_argument("-o", "--output", required=True)
    m.set_defaults(func=cmd_measure)

    _pair_parser(sub)
