"""The config schema's defaults (``workflow/schemas/config.schema.yaml``), the one place a default
of hepfmt is written: the workflow fills a config from it, and every command-line option and
record type with a default asks it here, so that ``hepfmt measure`` alone and the workflow's
measure job repeat a read alike.

This sits at the bottom of the layers (it reads one YAML file) so that the timing policy in
``measure`` can ask it; :mod:`hepfmt.plan.schema` validates configs against the same file.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


@cache
def schema_text() -> str:
    return SCHEMA_PATH.read_text()


@cache
def _schema() -> dict:
    return yaml.safe_load(schema_text())


def default(key: str) -> object:
    """The schema's default of a dotted config key (``measure.budget_s``); a key without one is
    a programming error (KeyError)."""
    node = _schema()
    for part in key.split("."):
        node = node["properties"][part]
    return node["default"]
