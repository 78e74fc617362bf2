"""Study configuration: load, validate against the workflow's JSON schema, fill defaults.

The CLI (``hepfmt check-config`` and every command given a config) and the Snakefile
(:func:`for_workflow`) validate with these functions and the one schema file, so they accept
exactly the same configs, fill in exactly the same defaults and refuse a config the same way:
one line naming the key, before any job.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from pathlib import Path

import jsonschema
import yaml

from hepfmt.errors import ConfigError, HepfmtError
from hepfmt.plan import configfile
from hepfmt.plan import schema as config_schema
from hepfmt.plan.names import normal, unprintable


def _with_defaults(cls):
    """A validator that fills ``default`` values while it validates (jsonschema FAQ recipe)."""
    validate_props = cls.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub and name not in instance:
                    instance[name] = _copy(sub["default"])
        yield from validate_props(validator, properties, instance, schema)

    return jsonschema.validators.extend(cls, {"properties": set_defaults})


def _copy(value):
    return yaml.safe_load(yaml.safe_dump(value))


def _plain(value: object, path: tuple = ()) -> None:
    """Rules for every value, wherever it is (free-form writer options included): numbers are
    finite, keys are strings, strings are printable one-line text and no two keys of a
    mapping are one name after Unicode normalisation.

    NaN passes every ``minimum`` and ``maximum`` (each comparison is false) and then decides
    nothing or everything: ``precision: .nan`` repeats each read to the maximum,
    ``timeout_s: .nan`` fails every job. A YAML key ``1:`` or ``yes:`` is an int or a bool,
    which the schema's name patterns do not look at. A newline, an ANSI escape or a
    right-to-left override in a label garbles every table it is in; two samples ``DY`` and
    ``ＤＹ`` are one name to a reader, two to the files."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(config_schema.key(path) or "(top level)",
                          f"{value} is not a finite number")
    if isinstance(value, str) and (why := unprintable(value)):
        raise ConfigError(config_schema.key(path) or "(top level)", why)
    if len(path) > configfile.MAX_DEPTH:
        raise ConfigError(config_schema.key(path), "nested too deeply")
    if isinstance(value, dict):
        seen: dict[str, str] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ConfigError(config_schema.key((*path, str(k))),
                                  f"YAML reads this key as {type(k).__name__} {k!r}, not as a "
                                  "name (quote it)")
            if why := unprintable(k):
                raise ConfigError(config_schema.key(path) or "(top level)", f"a key: {why}")
            if normal(k) in seen:
                raise ConfigError(config_schema.key((*path, k)),
                                  f"the same name as {seen[normal(k)]!r} after Unicode "
                                  "normalisation (NFKC): two names that read as one")
            seen[normal(k)] = k
            _plain(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _plain(v, (*path, i))


#: Keys renamed, old -> new (dotted): a config written before still runs, as if written now.
RENAMED = {"metadata.time_budget_s": "metadata.budget_s"}  # one name for a timing budget


def _renamed(config: dict) -> None:
    for old, new in RENAMED.items():
        *parents, leaf = old.split(".")
        node: object = config
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, dict) and leaf in node:
            now = new.rsplit(".", 1)[-1]
            if now in node:
                raise ConfigError(old, f"renamed to {new}, which is set too: keep one")
            node[now] = node.pop(leaf)


def validate(config: dict) -> dict:
    """Validate in place (filling defaults) and return the config; errors name the key.

    Everything a job would trip over is checked here, before any job: finite numbers, the
    schema (types, ranges, lengths), then :func:`hepfmt.plan.checks.check` (names, codec
    levels, writer options, input files, sub-grids, the rules between keys)."""
    _plain(config)
    _renamed(config)
    schema = config_schema.load()
    cls = _with_defaults(config_schema.validator_class(schema))
    errors = sorted(cls(schema).iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        # a oneOf: what is wrong in the alternative of the value's own type, if there is one
        # ("5000 is greater than the maximum of 1024", not "is not valid under any of ...")
        err = next((e for e in err.context if e.validator not in ("type", "const")), err)
        key = config_schema.key(err.absolute_path) or "(top level)"
        raise ConfigError(key, _message(err))
    from hepfmt.plan.checks import check  # they need the format registry

    check(config)
    return config


def _message(err: jsonschema.ValidationError) -> str:
    """The schema's words, without a long value repeated whole (a 50 kB label, twice)."""
    if err.validator == "maxLength":
        return (f"{err.instance[:20]!r}... is {len(err.instance):,} characters long, more than "
                f"{err.validator_value}")
    text = err.message
    return text if len(text) <= 300 else f"{text[:150]} ... {text[-100:]}"


def load(path: str | Path) -> dict:
    """The config file ``path``, read strictly (:mod:`hepfmt.plan.configfile`), validated."""
    return validate(configfile.read(path))


def for_workflow(config: dict, files: Iterable[str | Path]) -> dict:
    """The Snakefile's check of its ``config``: the files it came from read as strictly as the
    CLI reads them, then the config (``--config`` overrides applied) validated in place.

    A refusal is one line and exit status 2, as from the CLI: an exception raised in a
    Snakefile is printed by Snakemake with its stack."""
    try:
        for f in files:
            configfile.read(f)
        return validate(config)
    except HepfmtError as exc:
        print(f"hepfmt: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
