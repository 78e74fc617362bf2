"""``hepfmt``: the command line the workflow's rules call, usable by hand for one step at a time.

One module per group of commands (each has ``register(sub)`` adding its parsers and the
functions they run); this one builds the parser and turns every failure into one line."""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from hepfmt.cli import adl, bench, measure, metadata, report, samples, storage
from hepfmt.cli.arguments import Parser, memory_cap
from hepfmt.errors import (
    VERBOSE,
    HepfmtError,
    brief,
    exit_with,
    note_failure,
    verbose,
)


class _Version(argparse.Action):
    """``--version``: the package metadata is asked only when the option is given, not each
    time a parser is built (every command, every job)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help=kwargs.get("help"))

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from hepfmt import __version__

        print(f"hepfmt {__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="hepfmt", description="the command line the workflow's rules call, usable "
                                          "by hand for one step at a time",
               epilog="example: hepfmt convert results/sources/DY.arrow --format parquet "
                      "--variant zstd-3 --cluster-size 4000 -o out.parquet")
    p.add_argument("--version", action=_Version, help="print hepfmt's version and exit")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="show the libraries' own messages (ROOT's) and tracebacks")
    p.add_argument("--memory-cap", type=memory_cap, metavar="SIZE",
                   help="the most memory (bytes, or with a unit: 8G, 512M) a process reading "
                        "a file may take, or off (default: from the file's size, at least 4 GB; "
                        "also HEPFMT_MEMORY_CAP); a damaged file that asks for more is refused")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    samples.register(sub)
    measure.register(sub)
    bench.register(sub)

    report.register(sub)
    metadata.register(sub)
    adl.register(sub)
    storage.register(sub)
    return p


def _subject(a: argparse.Namespace) -> str:
    """The file a command works on, to name in an error that does not name one itself."""
    for key in ("file", "source", "config", "output"):
        if getattr(a, key, None):
            return str(getattr(a, key))
    return a.command


def _time_limit(a: argparse.Namespace) -> None:
    """A command that reads files from elsewhere: its ``--time-limit`` for its reading
    processes (they inherit it), and ``HEPFMT_TIME_LIMIT`` checked before any of them starts."""
    if not hasattr(a, "time_limit"):
        return
    from hepfmt.measure import timelimit

    if a.time_limit is not None:
        os.environ[timelimit.ENV] = repr(a.time_limit)
    elif os.environ.get(timelimit.ENV):
        timelimit.parse(os.environ[timelimit.ENV])


def _release_storage_leftovers() -> None:
    """What a killed ``storage`` job left (loop device, mount, cgroup, image), released at the
    start of any command: its supervisor does it when the job dies, unless whatever killed the
    job (a scheduler ending the job's cgroup) killed the supervisor too. One directory listing
    when nothing is left."""
    from hepfmt.measure.storage import ledger

    if ledger.leftovers():
        ledger.reap()


def main(argv: list[str] | None = None) -> int:
    """Run one command. Bad input, a wrong config or a full disk end in one line naming the
    file and the problem, and exit status 2; ``--verbose`` adds the libraries' detail."""
    warnings.filterwarnings("ignore", message=r"\s*This distribution of ROOT is in alpha stage")
    args = build_parser().parse_args(argv)
    if args.verbose:
        os.environ[VERBOSE] = "1"  # child processes (measurements) inherit it
    if args.memory_cap:
        from hepfmt.measure.memcap import ENV

        os.environ[ENV] = args.memory_cap  # ... and this
    try:
        _release_storage_leftovers()
        _time_limit(args)
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
        words = brief(str(exc)) or "no message"  # the exception's name is the detail's
        print(f"hepfmt {args.command}: error: {_subject(args)}: {args.command} failed: "
              f"{words} (--verbose for the detail)", file=sys.stderr)
        return 2
    return 0


def entry() -> None:
    """The ``hepfmt`` command: :func:`main`, its status the process's."""
    exit_with(main())



if __name__ == "__main__":
    entry()
