"""Variant names: one string per write configuration, used in file names, configs and tables.

Grammar: ``<algorithm>[-<level>][+dict]``, e.g. ``none``, ``zlib-1``, ``zstd-5``, ``none+dict``.
``+dict`` (Parquet dictionary encoding) is only valid for formats that have it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from analysis.errors import ConfigError

_RE = re.compile(r"^(?P<algo>[a-z0-9]+)(?:-(?P<level>\d+))?(?P<dict>\+dict)?$")


@dataclass(frozen=True)
class Variant:
    algorithm: str
    level: int | None = None
    dictionary: bool = False

    @property
    def name(self) -> str:
        s = self.algorithm if self.level is None else f"{self.algorithm}-{self.level}"
        return s + ("+dict" if self.dictionary else "")

    @classmethod
    def parse(cls, text: str, algorithms: set[str], dictionary: bool, key: str) -> Variant:
        m = _RE.match(text)
        if m is None:
            raise ConfigError(key, f"{text!r} is not <algorithm>[-<level>][+dict]")
        if m["algo"] not in algorithms:
            raise ConfigError(key, f"algorithm {m['algo']!r} not one of {sorted(algorithms)}")
        if m["dict"] and not dictionary:
            raise ConfigError(key, f"{text!r}: this format has no dictionary encoding")
        if m["algo"] == "none" and m["level"]:
            raise ConfigError(key, f"{text!r}: 'none' takes no level")
        return cls(m["algo"], int(m["level"]) if m["level"] else None, bool(m["dict"]))
