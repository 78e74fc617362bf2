"""The workflow's JSON schema, read once per process: the config loader validates against it and
the option checks take the per-adapter value rules from its ``$defs``."""

from __future__ import annotations

import copy
from collections.abc import Iterable
from functools import cache

import jsonschema
import yaml

from hepfmt.defaults import SCHEMA_PATH, schema_text

__all__ = ["SCHEMA_PATH", "key", "load", "validator_class"]


@cache
def _parsed() -> dict:
    """Parsed once: every option check of a command asks for it (0.15 s a parse in pure
    Python, a second of each job's start-up before it was kept)."""
    return yaml.load(schema_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def load() -> dict:
    """A fresh copy (validation fills defaults from it, which must not leak between configs)."""
    return copy.deepcopy(_parsed())


def _integer(checker, instance: object) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def validator_class(schema: dict) -> type:
    """The schema's validator, with ``integer`` meaning an integer written as one.

    JSON Schema counts 1500.0 as an integer; YAML reads ``n_events: 1500.0`` as a float, which
    then fails in the job that is handed it (``--events 1500.0``), long after the check."""
    base = jsonschema.validators.validator_for(schema)
    return jsonschema.validators.extend(
        base, type_checker=base.TYPE_CHECKER.redefine("integer", _integer))


def key(path: Iterable[str | int], prefix: str = "") -> str:
    """A schema error's path as the config checks spell keys: ``measure.threads[1]``."""
    out = prefix
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}" if out else str(p)
    return out
