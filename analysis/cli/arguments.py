"""Option types and option groups shared by several commands."""

from __future__ import annotations

import argparse

import yaml

from analysis.defaults import default
from analysis.errors import ConfigError, UsageError


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
    from analysis.measure import memcap

    try:
        memcap.parse(text, "--memory-cap")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def time_limit(text: str) -> float:
    from analysis.measure import timelimit

    try:
        return timelimit.parse(text, "--time-limit")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(exc.problem) from None


def time_limit_argument(p: argparse.ArgumentParser) -> None:
    """``--time-limit``, on every command that reads a file it did not write: how long one of
    its reading processes may run (:mod:`analysis.measure.timelimit`)."""
    p.add_argument("--time-limit", type=time_limit, metavar="SECONDS",
                   help="the most seconds a process reading the file may run (default: from "
                        "the data the file holds, at least 120; also HEPFMT_TIME_LIMIT); a "
                        "damaged file that takes longer is refused")


def names(text: str) -> list[str]:
    return [x for x in text.split(",") if x]


def selection(text: str) -> tuple[str, object]:
    from analysis.plan.selections import from_cli

    if "=" not in text:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=BRANCH,BRANCH,... or NAME=*")
    name, branches = text.split("=", 1)
    return name, from_cli(branches)


def resolved_selections(a: argparse.Namespace) -> dict[str, list[str] | str]:
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
            raise UsageError(f"--selection {name}", f"{exc} of {a.source}") from None
    return out


def stopping_arguments(p: argparse.ArgumentParser, what: str, section: str,
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


def written_file_arguments(p: argparse.ArgumentParser) -> None:
    """The arguments naming one written file of the study, as measure, query and storage take
    them."""
    p.add_argument("file")
    p.add_argument("--source", required=True, help="the source sample the file was written from")
    p.add_argument("--format", required=True, help="the adapter: ttree, rntuple, parquet, ...")
    p.add_argument("--name", help="the config's name of this format (default: --format)")
    p.add_argument("--variant", required=True)
    p.add_argument("--cluster-size", type=int, required=True)


def adapter(text: str, flag: str = "--format") -> str:
    """``text`` if the format registry knows it; else the registry's problem, naming ``flag``
    (the registry names the config key ``formats``, which a flag is not)."""
    from analysis import formats

    try:
        formats.entry(text)
    except ConfigError as exc:
        raise UsageError(flag, exc.problem) from None
    return text


def storage_profiles(text: str) -> list[str]:
    """``--profiles``: ``page-cache`` and known storage profiles, comma-separated; else the
    profiles' problem, naming the flag (they name the config key ``storage.profile``)."""
    from analysis.measure.onstorage import check_profiles

    out = text.split(",")
    try:
        check_profiles(out)
    except ConfigError as exc:
        raise UsageError("--profiles", exc.problem) from None
    return out


def task_numbers(text: str) -> list[int]:
    from analysis.queries.tasks import TASKS

    try:
        numbers = [int(t) for t in text.split(",") if t]
    except ValueError:
        raise UsageError("--tasks", f"{text!r} is not N,M,... (task numbers)") from None
    unknown = sorted(set(numbers) - set(TASKS))
    if unknown:
        raise UsageError("--tasks", f"no task {unknown[0]}; tasks are {sorted(TASKS)}")
    return numbers

