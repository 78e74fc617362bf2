"""The parser class of every command, option types and option groups shared by several
commands, and the checks of option values that need more than the value (a format's variants
and readers, a source's events).

One set of rules for the command line and the config: an option that sets what a config key
sets is held to that key's rule in the config schema, in the words ``hepfmt check-config``
uses (:func:`hepfmt.plan.checks.schema_problem`); a refused value is one line naming the
option (``option --cluster-size: 0 is less than the minimum of 1``) and exit status 2."""

from __future__ import annotations

import argparse
import ast
import difflib
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import NoReturn

import yaml

from hepfmt.defaults import default
from hepfmt.errors import ConfigError, UsageError

# --- the parser ---------------------------------------------------------------------------------

#: Where a leaf parser (a command without subcommands) leaves itself in the namespace when
#: arguments are left over: the parser whose options the user missed names them.
_LEAF = "_hepfmt_leaf_parser"
#: argparse's words for one argument's value it refused (a type's, a choice's, a count's).
_ONE_ARGUMENT = re.compile(r"argument (?P<name>\S+): (?P<problem>.*)", re.DOTALL)
_INVALID_CHOICE = re.compile(r"invalid choice: (?P<value>.+?) \(choose from ")


def did_you_mean(word: str, known: Iterable[object]) -> str:
    """`` (did you mean 'x'?)`` for the known name closest to ``word``, or nothing."""
    close = difflib.get_close_matches(str(word), [str(k) for k in known], n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's, but an epilog of examples keeps its lines: a command to copy is not
    wrapped."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Parser(argparse.ArgumentParser):
    """Every parser of ``hepfmt`` (``add_subparsers`` makes a parser's subcommands of its own
    class). A mistyped command, subcommand or option gets the closest known one
    (``did you mean 'measure'?``, from :mod:`difflib`: argparse's own suggestions are Python
    3.14's); an option's refused value is one line, as a :class:`UsageError` is."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def _is_leaf(self) -> bool:
        return not any(isinstance(a, argparse._SubParsersAction) for a in self._actions)

    def parse_known_args(self, args: Sequence[str] | None = None,
                         namespace: argparse.Namespace | None = None,
                         ) -> tuple[argparse.Namespace, list[str]]:
        self._given = list(sys.argv[1:] if args is None else args)  # for error()'s hints
        ns, extras = super().parse_known_args(args, namespace)
        if extras and self._is_leaf():
            vars(ns).setdefault(_LEAF, self)
        return ns, extras

    def parse_args(self, args: Sequence[str] | None = None,
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        ns, extras = self.parse_known_args(args, namespace)
        leaf = vars(ns).pop(_LEAF, self)
        if extras:
            leaf.error(f"unrecognized arguments: {' '.join(extras)}")
        return ns

    def error(self, message: str) -> NoReturn:
        one = _ONE_ARGUMENT.fullmatch(message)
        if one and one["name"].startswith("-"):  # an option's value: the line a UsageError is
            self.exit(2, f"{self.prog}: error: {UsageError(one['name'], one['problem'])}\n")
        super().error(self._hinted(message))

    def _hinted(self, message: str) -> str:
        """argparse's ``message`` with the closest known choice to a mistyped one, or the
        closest known option to each unknown one (also when a required option is missing: it
        is often the one mistyped)."""
        choice = _INVALID_CHOICE.search(message)
        if choice:
            try:
                value = ast.literal_eval(choice["value"])
            except (ValueError, SyntaxError):
                value = choice["value"]
            hint = did_you_mean(value, [c for a in self._actions if a.choices for c in a.choices])
            at = choice.end("value")  # right after the value, before the list of choices
            return message[:at] + (f", {hint.strip()[1:-1]}" if hint else "") + message[at:]
        unrecognized = message.startswith("unrecognized arguments: ")
        if unrecognized:  # the unknown options are the message's
            hints = self._closest_options(message.split(": ", 1)[1].split())
        elif message.startswith("the following arguments are required: "):
            hints = self._closest_options(getattr(self, "_given", []))  # maybe one mistyped
        else:
            return message
        if not hints:
            return message
        if unrecognized and len(hints) == 1:
            return f"{message} (did you mean {hints[0][1]!r}?)"
        return message + " (did you mean " + ", ".join(
            f"{known!r} for {given!r}" for given, known in hints) + "?)"

    def _closest_options(self, words: Iterable[str]) -> list[tuple[str, str]]:
        """(unknown option, the closest known) for each word naming an option this parser
        neither has nor takes as an abbreviation of one."""
        known = [s for a in self._actions for s in a.option_strings if s.startswith("--")]
        bare = {o.removeprefix("--"): o for o in known}
        out = []
        for word in words:
            name = word.split("=", 1)[0]
            if (not name.startswith("--") or name in known or name == "--"
                    or (self.allow_abbrev and sum(o.startswith(name) for o in known) == 1)):
                continue
            close = difflib.get_close_matches(name.removeprefix("--"), bare, n=1)
            if close:
                out.append((name, bare[close[0]]))
        return out


def command(sub: argparse._SubParsersAction, name: str, help: str, example: str,
            **kwargs: object) -> argparse.ArgumentParser:
    """A (sub)command's parser: its ``help`` is also the description its ``--help`` starts
    with, and ``example`` (one command line, without the leading ``hepfmt``) its epilog."""
    return sub.add_parser(name, help=help, description=help,
                          epilog=f"example: hepfmt {example}", **kwargs)


# --- option types -------------------------------------------------------------------------------

def _typed(kind: type, problem: Callable[[object], str | None]) -> Callable[[str], object]:
    """An option type: ``kind`` of the text (argparse's ``invalid int value`` else), refused
    with ``problem``'s words when it has one."""
    def parse(text: str) -> object:
        value = kind(text)
        why = problem(value)
        if why:
            raise argparse.ArgumentTypeError(why)
        return value

    parse.__name__ = kind.__name__  # argparse names the type by it: "invalid int value: 'x'"
    return parse


def config_value(key: str, kind: type = int) -> Callable[[str], object]:
    """An option setting what the config key ``key`` sets (``samples.*.n_events``), held to
    that key's rule in the config schema and refused in check-config's words."""
    def problem(value: object) -> str | None:
        from hepfmt.plan.checks import schema_problem  # when an option is given, not always

        return schema_problem(key, value)

    return _typed(kind, problem)


def at_least(least: float, kind: type = int) -> Callable[[str], object]:
    """A count or amount of no config key: at least ``least``, in the schema's words."""
    return _typed(kind, lambda v: _rule_problem(v, {"minimum": least}))


def above(least: float, kind: type = float) -> Callable[[str], object]:
    """An amount of no config key (seconds): more than ``least``, in the schema's words."""
    return _typed(kind, lambda v: _rule_problem(v, {"exclusiveMinimum": least}))


def _rule_problem(value: object, rule: dict) -> str | None:
    from hepfmt.plan.checks import rule_problem

    return rule_problem(value, rule)


def _cluster_size_problem(n: int) -> str | None:
    from hepfmt.plan.checks import cluster_size_problem

    return cluster_size_problem(n)


#: ``--cluster-size``: the config's rule of a cluster size; that it fits the source's events
#: is :func:`fits_source`'s, once the source is known to be there.
cluster_size = _typed(int, _cluster_size_problem)


def thread_counts(text: str) -> list[int]:
    """``--threads`` of measure: a count or a sweep (``1,2,4``), each as ``measure.threads``."""
    from hepfmt.plan.checks import schema_problem

    try:
        counts = [int(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not N or N,M,...") from None
    for n in counts:
        if why := schema_problem("measure.threads", n):
            raise argparse.ArgumentTypeError(why)
    return counts


def option(text: str) -> tuple[str, object]:
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    key, value = text.split("=", 1)
    return key, yaml.safe_load(value)


def listed(key: str) -> str:
    """The schema's default of a list-valued config key as a comma-separated option value
    (``measure.modes`` -> ``cold,warm``): an option's default is the config's."""
    return ",".join(str(v) for v in default(key))


def memory_cap(text: str) -> str:
    from hepfmt.measure import memcap

    try:
        memcap.parse(text, "--memory-cap")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(exc.problem) from None
    return text


def time_limit(text: str) -> float:
    from hepfmt.measure import timelimit

    try:
        return timelimit.parse(text, "--time-limit")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(exc.problem) from None


def time_limit_argument(p: argparse.ArgumentParser) -> None:
    """``--time-limit``, on every command that reads a file it did not write: how long one of
    its reading processes may run (:mod:`hepfmt.measure.timelimit`)."""
    p.add_argument("--time-limit", type=time_limit, metavar="SECONDS",
                   help="the most seconds a process reading the file may run (default: from "
                        "the data the file holds, at least 120; also HEPFMT_TIME_LIMIT); a "
                        "damaged file that takes longer is refused")


def names(text: str) -> list[str]:
    return [x for x in text.split(",") if x]


def selection(text: str) -> tuple[str, object]:
    from hepfmt.plan.selections import from_cli

    if "=" not in text:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=BRANCH,BRANCH,... or NAME=*")
    name, branches = text.split("=", 1)
    return name, from_cli(branches)


def resolved_selections(a: argparse.Namespace) -> dict[str, list[str] | str]:
    """``--selection``s resolved against the source's branches, as the plan resolves a config's
    (patterns, alternatives, counters: :mod:`hepfmt.plan.selections`)."""
    from hepfmt.plan.selections import Unresolved, resolve
    from hepfmt.samples.source import read_source_meta, schema_of

    schema = schema_of(read_source_meta(a.source))
    out = {}
    for name, sel in a.selection:
        try:
            out[name] = resolve(sel, schema)
        except Unresolved as exc:
            raise UsageError(f"--selection {name}", f"{exc} of {a.source}") from None
    return out


def stopping_arguments(p: argparse.ArgumentParser, what: str, section: str,
                        budget_per: str) -> None:
    """When a timing stops repeating (hepfmt.measure.timing.Stopping), for ``measure``,
    ``storage`` and ``pair`` alike, with the defaults of the config schema's ``section``."""
    p.add_argument("--repetitions", type=config_value(f"{section}.repetitions"),
                   default=default(f"{section}.repetitions"),
                   help=f"the most {what} (default: %(default)s)")
    p.add_argument("--min-repetitions", type=config_value(f"{section}.min_repetitions"),
                   default=default(f"{section}.min_repetitions"),
                   help=f"the fewest {what} (at least 3; 6 give a 95%% interval; "
                        "default: %(default)s)")
    p.add_argument("--precision", type=config_value(f"{section}.precision", float),
                   default=default(f"{section}.precision"),
                   help="stop repeating once the median's 95%% interval is within this "
                        "fraction of it (default: %(default)s)")
    p.add_argument("--budget-s", type=config_value(f"{section}.budget_s", float),
                   default=default(f"{section}.budget_s"), metavar="SECONDS",
                   help=f"stop repeating once this many seconds were spent on {budget_per} "
                        "(default: %(default)s)")


def timeout_argument(p: argparse.ArgumentParser, key: str = "measure.timeout_s") -> None:
    """``--timeout``: the seconds one timed process may run, as the config's ``key``."""
    p.add_argument("--timeout", type=config_value(key, float), default=default(key),
                   metavar="SECONDS", help="the most seconds one timed process may run before "
                                           "it is stopped (default: %(default)s)")


def source_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", required=True, metavar="ARROW",
                   help="the source sample (Arrow IPC, its sidecar JSON beside it) the file was "
                        "written from")


def format_argument(p: argparse.ArgumentParser, flag: str = "--format",
                    help: str = "the format adapter") -> None:
    from hepfmt import formats  # the registry: no adapter imported

    p.add_argument(flag, required=True, help=f"{help}: " + ", ".join(formats.names()))


def cluster_size_argument(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--cluster-size", type=cluster_size, required=True, metavar="EVENTS",
                   help=help)


def written_file_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments naming one written file of the study, as measure, query and storage take
    them."""
    p.add_argument("file", help="the written file (or dataset directory), from convert")
    source_argument(p)
    format_argument(p)
    p.add_argument("--name", help="the config's name of this format (default: --format)")
    p.add_argument("--variant", required=True,
                   help="the variant it was written with, e.g. zstd-5, none+dict")
    cluster_size_argument(p, "the events per cluster (row group) it was written with")


def adapter(text: str, flag: str = "--format") -> str:
    """``text`` if the format registry knows it; else the registry's problem, naming ``flag``
    (the registry names the config key ``formats``, which a flag is not)."""
    from hepfmt import formats

    try:
        formats.entry(text)
    except ConfigError as exc:
        raise UsageError(flag, exc.problem + did_you_mean(text, formats.names())) from None
    return text


def known_variant(fmt: str, text: str, flag: str = "--variant") -> str:
    """``text`` if the adapter ``fmt`` can write that variant: the check check-config makes
    of ``formats.<name>.variants`` (:meth:`hepfmt.formats.Format.variant`), naming ``flag``
    (still as the format's check names a key, ``config key '--variant'``, the words the
    commands' tests expect), with the closest algorithm the format has."""
    from hepfmt import formats

    f = formats.get(fmt)
    try:
        f.variant(text, flag)
    except ConfigError as exc:
        algorithm = re.split(r"[-+]", text, maxsplit=1)[0]
        hint = "" if algorithm in f.algorithms else did_you_mean(algorithm, sorted(f.algorithms))
        raise ConfigError(flag, exc.problem + hint) from None
    return text


def known_readers(fmt: str, names: Iterable[str], flag: str = "--readers",
                  also: tuple[str, ...] = ()) -> list[str]:
    """``names`` if the adapter ``fmt`` has each of these readers (or it is one of ``also``);
    else the first it lacks, with the known ones, naming ``flag``."""
    from hepfmt import formats
    from hepfmt.plan.checks import reader_problem

    out = list(names)
    for name in out:
        if name not in also and (why := reader_problem(fmt, name)):
            raise UsageError(flag, why + did_you_mean(name, formats.get(fmt).readers))
    return out


def known_process(name: str) -> str:
    """``--process``: a physics process of the generator, as check-config takes
    ``samples.<name>.process``."""
    from hepfmt.plan.checks import process_problem
    from hepfmt.samples.processes import PROCESSES

    if why := process_problem(name):
        raise UsageError("--process", why + did_you_mean(name, PROCESSES))
    return name


def input_file(path: str, what: str = "data file") -> str:
    """``path``, a file or directory to read, named as given when it is missing or no file
    (a FIFO, a device), before anything beside it (a sidecar, a record) is looked at."""
    from hepfmt.records import data_file

    data_file(path, what)
    return path


def source_meta(path: str) -> dict:
    """The sidecar of the source sample ``path``: the source itself named as given when it is
    missing or no regular file, before its sidecar is looked at."""
    from hepfmt.records import regular
    from hepfmt.samples.source import read_source_meta

    regular(path, "source sample")
    return read_source_meta(path)


def fits_source(n: int, meta: dict, flag: str = "--cluster-size") -> int:
    """A cluster size no larger than the source's events: the rule check-config applies to a
    sample's cluster sizes (:func:`hepfmt.plan.checks.cluster_size_problem`)."""
    from hepfmt.plan.checks import cluster_size_problem

    if why := cluster_size_problem(n, meta["n_events"], meta["sample"]):
        raise UsageError(flag, why)
    return n


def written_file_checks(a: argparse.Namespace, reader_names: Iterable[str] = ()) -> str:
    """Everything measure, query and storage are given about one written file, checked before
    it is read: its format, variant and ``reader_names`` (of ``--readers``), the file itself,
    the source, and the cluster size against the source's events. The format's adapter."""
    fmt = adapter(a.format)
    known_variant(fmt, a.variant)
    known_readers(fmt, reader_names)
    input_file(a.file)
    fits_source(a.cluster_size, source_meta(a.source))
    return fmt


def storage_profiles(text: str) -> list[str]:
    """``--profiles``: ``page-cache`` and known storage profiles, comma-separated; else the
    profiles' problem, naming the flag (they name the config key ``storage.profile``)."""
    from hepfmt.measure.onstorage import check_profiles

    out = text.split(",")
    try:
        check_profiles(out)
    except ConfigError as exc:
        from hepfmt.measure.onstorage import PAGE_CACHE
        from hepfmt.measure.storage.profiles import PROFILES

        known = [PAGE_CACHE, *PROFILES]
        bad = next((n for n in out if n not in known), "")
        raise UsageError("--profiles", exc.problem + did_you_mean(bad, known)) from None
    return out


def task_numbers(text: str) -> list[int]:
    from hepfmt.queries.tasks import TASKS

    try:
        numbers = [int(t) for t in text.split(",") if t]
    except ValueError:
        raise UsageError("--tasks", f"{text!r} is not N,M,... (task numbers)") from None
    unknown = sorted(set(numbers) - set(TASKS))
    if unknown:
        raise UsageError("--tasks", f"no task {unknown[0]}; tasks are {sorted(TASKS)}")
    return numbers

