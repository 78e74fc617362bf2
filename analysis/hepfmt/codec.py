"""Codecs: one variant string per write configuration, parsed once, and what each library needs.

Grammar: ``<algorithm>[-<level>][+dict]``, e.g. ``none``, ``zlib-1``, ``zstd-5``, ``none+dict``.
``+dict`` (Parquet dictionary encoding) is only valid for formats that have it. A variant names
files, configs and table rows; every place that needs its algorithm, level, codec family or a
library's setting asks :class:`Variant`, so there is one reading of the string.

A level is checked against the range the writing library accepts (ROOT 1-9, pyarrow's own
bounds per codec): ROOT would silently turn ``zstd-99`` into another algorithm's setting.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from hepfmt.errors import ConfigError

_RE = re.compile(r"^(?P<algo>[a-z0-9]+)(?:-(?P<level>\d+))?(?P<dict>\+dict)?$")

#: Algorithms that compress the same way under two names (figures put them in one panel).
FAMILIES = {"zlib": "deflate", "gzip": "deflate"}

#: ROOT's compression algorithms (ROOT::RCompressionSetting::EAlgorithm) and the level ROOT
#: uses when a variant gives none; levels are 1-9 (setting = algorithm * 100 + level).
ROOT_ALGORITHMS = {"none": 0, "zlib": 1, "lzma": 2, "lz4": 4, "zstd": 5}
ROOT_DEFAULT_LEVEL = {"none": 0, "zlib": 1, "lzma": 9, "lz4": 4, "zstd": 5}
ROOT_LEVELS = {a: (1, 9) for a in ROOT_ALGORITHMS if a != "none"}

#: pyarrow's Parquet codec names.
PARQUET_CODECS = {"none": "NONE", "snappy": "SNAPPY", "gzip": "GZIP", "lz4": "LZ4",
                  "zstd": "ZSTD", "brotli": "BROTLI"}

#: How the codec bound (hepfmt.measure.bound) decompresses each codec's blocks, as modes of
#: ``decompress_blocks`` (formats/root/cxx/codecs.cxx): (the way the format's library does it,
#: the same with one context reused across blocks, or None where the codec keeps no context or
#: is not measured that way). ROOT's framing (TTree baskets, RNTuple pages) goes through
#: R__unzip, which makes a new zstd context per frame; raw streams are Parquet's page bodies
#: (and ORC's blocks: ``deflate`` is raw deflate, without gzip's or zlib's header, as ORC's zlib).
ROOT_DECOMPRESSION = {"none": ("memcpy", None), "zlib": ("root", None), "lzma": ("root", None),
                      "lz4": ("root", None), "zstd": ("root", "root-reused")}
RAW_DECOMPRESSION = {"none": ("memcpy", None), "zstd": ("zstd", "zstd-reused"),
                     "gzip": ("gzip", "gzip-reused"), "deflate": ("deflate", "deflate-reused"),
                     "lz4": ("lz4", None)}


def root_algorithm(settings: int) -> str:
    """The algorithm of a ROOT compression setting (``algorithm * 100 + level``; 0: none)."""
    number = settings // 100 if settings % 100 else 0
    names = {v: k for k, v in ROOT_ALGORITHMS.items()}
    return names.get(number, f"ROOT algorithm {number}")


#: Level ranges: algorithm -> (lowest, highest); an algorithm absent takes no level.
Levels = Mapping[str, tuple[int, int]]


def pyarrow_levels(algorithms: list[str]) -> dict[str, tuple[int, int]]:
    """The level range pyarrow itself accepts for each of ``algorithms`` that takes one."""
    import pyarrow as pa

    out = {}
    for a in algorithms:
        if a != "none" and pa.Codec.is_available(a) and pa.Codec.supports_compression_level(a):
            out[a] = (max(1, pa.Codec.minimum_compression_level(a)),
                      pa.Codec.maximum_compression_level(a))
    return out


@dataclass(frozen=True)
class Variant:
    algorithm: str
    level: int | None = None
    dictionary: bool = False

    @property
    def name(self) -> str:
        s = self.algorithm if self.level is None else f"{self.algorithm}-{self.level}"
        return s + ("+dict" if self.dictionary else "")

    @property
    def family(self) -> str:
        """The compression family: zlib and gzip are both DEFLATE."""
        return FAMILIES.get(self.algorithm, self.algorithm)

    @classmethod
    def of(cls, text: str) -> Variant:
        """Any well-formed variant, whatever format it belongs to (for tables and estimates)."""
        m = _RE.match(text)
        if m is None:
            raise ConfigError("variant", f"{text!r} is not <algorithm>[-<level>][+dict]")
        return cls(m["algo"], int(m["level"]) if m["level"] else None, bool(m["dict"]))

    @classmethod
    def parse(cls, text: str, algorithms: set[str], dictionary: bool, key: str,
              levels: Levels | None = None) -> Variant:
        """A variant a format can write: its algorithm, dictionary encoding and (where
        ``levels`` is given) level range are checked; each error names ``key``."""
        try:
            v = cls.of(text)
        except ConfigError:
            raise ConfigError(key, f"{text!r} is not <algorithm>[-<level>][+dict]") from None
        if v.algorithm not in algorithms:
            raise ConfigError(key, f"algorithm {v.algorithm!r} not one of {sorted(algorithms)}")
        if v.dictionary and not dictionary:
            raise ConfigError(key, f"{text!r}: this format has no dictionary encoding")
        if v.algorithm == "none" and v.level:
            raise ConfigError(key, f"{text!r}: 'none' takes no level")
        if levels is not None and v.level is not None:
            if v.algorithm not in levels:
                raise ConfigError(key, f"{text!r}: {v.algorithm} takes no level")
            lo, hi = levels[v.algorithm]
            if not lo <= v.level <= hi:
                raise ConfigError(key, f"{text!r}: {v.algorithm} levels are {lo}-{hi}")
        return v

    # -- what each library needs -----------------------------------------------------------

    def root_level(self) -> int:
        return ROOT_DEFAULT_LEVEL[self.algorithm] if self.level is None else self.level

    def root_setting(self) -> int:
        """ROOT's integer compression setting (algorithm * 100 + level; 0 = uncompressed)."""
        if self.algorithm == "none":
            return 0
        return ROOT_ALGORITHMS[self.algorithm] * 100 + self.root_level()

    def uproot_compression(self):
        """uproot's compression object, at ROOT's default level where none is given (as the
        ROOT writers use), or None for uncompressed."""
        import uproot

        if self.algorithm == "none":
            return None
        codec = {"zlib": uproot.ZLIB, "lzma": uproot.LZMA, "lz4": uproot.LZ4,
                 "zstd": uproot.ZSTD}[self.algorithm]
        return codec(self.root_level())

    def pyarrow_parquet(self) -> dict:
        """``pyarrow.parquet.ParquetWriter`` keywords for the codec and dictionary encoding."""
        opts = {"compression": PARQUET_CODECS[self.algorithm],
                "use_dictionary": self.dictionary}
        if self.level is not None:
            opts["compression_level"] = self.level
        return opts
