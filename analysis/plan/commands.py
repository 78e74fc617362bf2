"""Command-line fragments the rules pass to ``hepfmt``, built from the config.

Each fragment is already split into shell words: every value that comes from the config (a file
path, a model path, a YAML value) is ``shlex``-quoted here, so that a path with a space or a
quote reaches the CLI as one argument, however the rule's shell command places the fragment.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping

import yaml

from analysis.plan import selections as select


def _options(flag: str, items: Iterable[tuple[str, str]]) -> str:
    return " ".join(f"{flag} {shlex.quote(f'{k}={v}')}" for k, v in items)


def sample(config: Mapping, name: str) -> str:
    """The command that makes sample ``name``'s source: generate it, or import its file."""
    s = config["samples"][name]
    if "file" in s:
        return (f"hepfmt import {shlex.quote(s['file'])} "
                f"--tree {shlex.quote(s.get('tree', 'Events'))}")
    model = f"--model {shlex.quote(config['model'])}" if config["model"] else ""
    return (f"hepfmt generate --process {shlex.quote(s['process'])} --events {s['n_events']} "
            f"--seed {s.get('seed', 1)} {model}")


def sample_inputs(config: Mapping, name: str) -> list[str]:
    """Local files sample ``name`` is made from, so that a changed input remakes it."""
    s = config["samples"][name]
    path = s.get("file") or config["model"]
    return [path] if path and "://" not in path else []


def prove(plan: Mapping, spec: object) -> str:
    """``--prove READER,...``: the readers a read plan (``study.read_plan``) times on the file
    ``spec``, for ``convert`` to prove; empty for a file no read times."""
    readers = plan.get(spec, [])
    return f"--prove {shlex.quote(','.join(readers))}" if readers else ""


def writer_options(config: Mapping, fmt: str) -> str:
    """Format ``fmt``'s writer options as repeated ``--option KEY=VALUE`` (YAML values: a
    YAML-quoted string such as '2.0' reaches the CLI with its quotes)."""
    opts = config["formats"][fmt].get("options", {})
    return _options("--option", (
        (k, yaml.safe_dump(v, default_flow_style=True).strip()) for k, v in opts.items()))


def selections(config: Mapping, sample: str) -> str:
    """The branch selections to time on sample ``sample``'s files, as repeated ``--selection
    NAME=BRANCH,...`` (or ``*``): resolved against its schema (:mod:`.selections`), or, for a
    remote sample, as the config writes them, for the measure job to resolve."""
    resolved = select.for_sample(config, sample)
    return _options("--selection", (
        (name, select.to_cli(sel if resolved[name] is None else resolved[name]))
        for name, sel in config["measure"]["selections"].items()))


def metadata_write(config: Mapping) -> str:
    """The metadata study's shape and Parquet options, shared by every file it writes."""
    m = config["metadata"]
    return (f"--row-groups {m['row_groups']} --rows-per-group {m['rows_per_group']} "
            f"--seed {m['seed']} " + _options("--option", m["parquet_options"].items()))


def flag(name: str, values: Iterable[str]) -> str:
    """``name`` before each quoted value: nothing for an optional input that is absent."""
    return " ".join(f"{name} {shlex.quote(v)}" for v in values)
