"""Writing and timing one file: convert, measure, pair."""

from __future__ import annotations

import argparse

from hepfmt.cli.arguments import (
    adapter,
    cluster_size_argument,
    command,
    config_value,
    fits_source,
    format_argument,
    known_readers,
    known_variant,
    listed,
    names,
    option,
    resolved_selections,
    selection,
    source_meta,
    stopping_arguments,
    thread_counts,
    time_limit_argument,
    timeout_argument,
    written_file_arguments,
    written_file_checks,
)
from hepfmt.defaults import default
from hepfmt.errors import UsageError


def cmd_convert(a: argparse.Namespace) -> None:
    """Every option checked before the source is read (its format and variant; the source
    itself, named as given; the cluster size against its events; the writer options and the
    readers to prove are :func:`~hepfmt.measure.convert.convert`'s, before it writes), and
    nothing written before."""
    from hepfmt.measure.convert import convert

    fmt = adapter(a.format)
    known_variant(fmt, a.variant)
    fits_source(a.cluster_size, source_meta(a.source))
    convert(a.source, a.output, fmt, a.variant, a.cluster_size, dict(a.option),
            a.prove, a.name, a.size_output)


def cmd_measure(a: argparse.Namespace) -> None:
    from hepfmt.measure.reads import measure_file
    from hepfmt.measure.timing import Stopping

    try:
        stopping = Stopping(a.precision, a.budget_s, a.min_repetitions, a.repetitions)
    except ValueError as exc:
        raise UsageError("--repetitions", str(exc)) from None
    fmt = written_file_checks(a, a.readers.split(","))
    measure_file(a.file, a.source, fmt, a.variant, a.cluster_size,
                 a.readers.split(","), resolved_selections(a), a.modes.split(","), stopping,
                 a.threads, a.output, a.timeout, name=a.name, size_record=a.size_record)


def cmd_pair(a: argparse.Namespace) -> None:
    from hepfmt.formats import FASTEST
    from hepfmt.measure.fastest import Candidate
    from hepfmt.measure.pairs import PairSide, PairSpec, measure_pair

    for name in ("ttree", "parquet"):  # every option checked before anything is read
        fmt = adapter(getattr(a, f"{name}_format"), f"--{name}-format")
        known_variant(fmt, getattr(a, f"{name}_variant"), f"--{name}-variant")
        known_readers(fmt, [getattr(a, f"{name}_reader")], f"--{name}-reader", also=(FASTEST,))
    fits_source(a.cluster_size, source_meta(a.source))
    sels = resolved_selections(a)

    def side(name: str) -> PairSide:
        fmt = adapter(getattr(a, f"{name}_format"), f"--{name}-format")
        return PairSide(getattr(a, name), getattr(a, f"{name}_name") or fmt, fmt,
                        getattr(a, f"{name}_variant"), getattr(a, f"{name}_reader"),
                        getattr(a, f"{name}_size_record") or "",
                        candidates=tuple(Candidate(r, z)
                                         for r, z in getattr(a, f"{name}_candidate")),
                        measured=getattr(a, f"{name}_measured") or "")

    from hepfmt.samples.source import read_source_meta, schema_of

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
    q = command(sub, "pair", "time a ROOT / Parquet pairing: both files in one measurement, "
                "repetitions interleaved, first reads apart",
                "pair --label zstd --source dy.arrow --cluster-size 1000 --ttree dy.root "
                "--ttree-format ttree --ttree-variant zstd-5 --ttree-reader rdf "
                "--parquet dy.parquet --parquet-format parquet --parquet-variant zstd-3 "
                "--parquet-reader pyarrow --selection 'all=*' -o pair.json")
    q.add_argument("--label", required=True, help="the pairing's name in the tables")
    q.add_argument("--source", required=True, metavar="ARROW",
                   help="the sample's Arrow source (checksums)")
    cluster_size_argument(q, "the events per cluster (row group) both files were written with")
    for name in ("ttree", "parquet"):
        q.add_argument(f"--{name}", required=True, help=f"the {name} side's written file")
        q.add_argument(f"--{name}-format", required=True, help="its format adapter")
        q.add_argument(f"--{name}-name", help="the config's name of its format")
        q.add_argument(f"--{name}-variant", required=True,
                       help="the variant it was written with, e.g. zstd-5")
        q.add_argument(f"--{name}-reader", required=True,
                       help="its reader, or 'fastest': the quickest reader of the "
                            f"--{name}-candidate files' measure records")
        q.add_argument(f"--{name}-candidate", nargs=2, action="append", default=[],
                       metavar=("READS", "SIZE_RECORD"),
                       help="a measured file a 'fastest' side may be read from: its measure "
                            "record and its size record (repeatable)")
        q.add_argument(f"--{name}-size-record",
                       help="its size record from convert (bytes per branch, proofs, digest)")
        q.add_argument(f"--{name}-measured", metavar="READS",
                       help="its measure record, where the run measured it: the codec bounds "
                            "are taken from it when it is of this file, these branches and "
                            "this CPU model, else measured here")
    q.add_argument("--selection", type=selection, action="append", required=True,
                   help="NAME=BRANCH,BRANCH,... or NAME=* (repeatable)")
    q.add_argument("--rounds", type=config_value("compare.rounds"),
                   default=default("compare.rounds"),
                   help="the fewest rounds: fresh processes per side (each gives one first "
                        "read); intervals are taken over rounds (default: %(default)s)")
    stopping_arguments(q, "repeat pairs", "compare", "rounds past --rounds")
    q.add_argument("--max-load", type=config_value("compare.max_load", float),
                   default=default("compare.max_load"),
                   help="discard a pair during which other processes used more than this "
                        "share of the CPUs (0 to 1; default: %(default)s)")
    q.add_argument("--file-events", type=config_value("compare.file_events"),
                   default=default("compare.file_events"), metavar="EVENTS",
                   help="the file length, in events, whole-file time ratios are stated at "
                        "(default: %(default)s)")
    q.add_argument("--threads", type=config_value("compare.pairs[].threads"), default=1,
                   help="reader threads on both sides (default: %(default)s)")
    timeout_argument(q)
    time_limit_argument(q)
    q.add_argument("-o", "--output", required=True, help="the pair record (JSON) to write")
    q.set_defaults(func=cmd_pair)



def register(sub: argparse._SubParsersAction) -> None:
    c = command(sub, "convert", "write a source sample in one format/variant/cluster size, and "
                "prove it against the source's checksums",
                "convert results/sources/DY.arrow --format parquet --variant zstd-3 "
                "--cluster-size 4000 -o out.parquet")
    c.add_argument("source", help="the source sample (Arrow IPC, its sidecar JSON beside it)")
    format_argument(c)
    c.add_argument("--name", help="the config's name of this format (default: --format)")
    c.add_argument("--variant", required=True,
                   help="the codec the format can write, e.g. none, zlib-1, zstd-5, none+dict")
    cluster_size_argument(c, "events per cluster (ROOT) or row group (Parquet): at least 1, at "
                             "most the source's events")
    c.add_argument("--option", type=option, action="append", default=[],
                   help="writer option KEY=VALUE (repeatable), e.g. basket_size=32000 (bytes)")
    c.add_argument("-o", "--output", required=True, help="the file (or dataset directory) "
                                                         "to write")
    c.add_argument("--size-output", help="also write the file's size record (JSON) here")
    c.add_argument("--prove", type=names, default=[],
                   help="comma-separated readers to prove on every branch (recorded in the "
                        "size record, so that `measure` need not prove them again)")
    c.set_defaults(func=cmd_convert)

    m = command(sub, "measure", "measure cold/warm reads of one file",
                "measure tt.root --source tt.arrow --format ttree --variant zstd-5 "
                "--cluster-size 1000 --readers rdf,uproot --selection 'all=*' -o tt.reads.json")
    written_file_arguments(m)
    m.add_argument("--readers", required=True,
                   help="comma-separated names of the format's readers, e.g. rdf,uproot")
    m.add_argument("--selection", type=selection, action="append", required=True,
                   help="NAME=BRANCH,BRANCH,... or NAME=* (repeatable); a BRANCH may be a "
                        "pattern (Muon_*) or alternatives (MET_pt|PFMET_pt)")
    m.add_argument("--modes", default=listed("measure.modes"),
                   help="cache modes, comma-separated (default: %(default)s)")
    stopping_arguments(m, "timed repetitions per cache mode", "measure", "one read and mode")
    m.add_argument("--threads", type=thread_counts, default="1",
                   help="reader threads, or a sweep: 1,2,4 (default: %(default)s)")
    timeout_argument(m)
    time_limit_argument(m)
    m.add_argument("--size-record",
                   help="the file's size record from convert: its bytes per branch, and the "
                        "readers proven there, which are then not proven again")
    m.add_argument("-o", "--output", required=True, help="the read record (JSON) to write")
    m.set_defaults(func=cmd_measure)

    _pair_parser(sub)
