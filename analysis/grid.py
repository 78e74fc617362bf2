"""The study grid: which files exist, where they live, and how they pair up.

One place computes every path so that the Snakefile, the CLI and the tables agree on names:
``{results}/sources/{sample}.arrow``, ``{results}/files/{sample}/{format}/{variant}/c{N}.{ext}``,
``{results}/sizes/{stem}.{ext}.json`` and ``{results}/measurements/{stem}.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis import formats
from analysis.errors import ConfigError
from analysis.processes import PROCESSES


@dataclass(frozen=True)
class FileSpec:
    sample: str
    format: str
    variant: str
    cluster_size: int

    @property
    def stem(self) -> str:
        return f"{self.sample}/{self.format}/{self.variant}/c{self.cluster_size}"


def source_path(results: str, sample: str) -> str:
    return f"{results}/sources/{sample}.arrow"


def file_path(results: str, spec: FileSpec) -> str:
    return f"{results}/files/{spec.stem}.{formats.get(spec.format).extension}"


def size_path(results: str, spec: FileSpec) -> str:
    return f"{results}/sizes/{spec.stem}.{formats.get(spec.format).extension}.json"


def measurement_path(results: str, spec: FileSpec) -> str:
    return f"{results}/measurements/{spec.stem}.json"


def files(config: dict) -> list[FileSpec]:
    """Every file the study writes (and whose size it tabulates)."""
    return [FileSpec(sample, fmt, variant, n)
            for sample in config["samples"]
            for fmt, fcfg in config["formats"].items()
            for variant in fcfg["variants"]
            for n in config["cluster_sizes"]]


def measured(config: dict) -> list[FileSpec]:
    """The files whose reads are timed: a sub-grid, because reads cost far more than sizes.

    ``measure.cluster_sizes`` and ``measure.variants`` (format -> variants) narrow the grid;
    either left out means all of it.
    """
    m = config["measure"]
    sizes = m.get("cluster_sizes") or config["cluster_sizes"]
    variants = m.get("variants") or {}
    return [f for f in files(config) if f.cluster_size in sizes
            and f.variant in variants.get(f.format, config["formats"][f.format]["variants"])]


def check(config: dict) -> None:
    """Checks the JSON schema cannot express; each error names the offending key."""
    for name, s in config["samples"].items():
        if "file" in s:
            if "://" not in s["file"] and not Path(s["file"]).is_file():
                raise ConfigError(f"samples.{name}.file", f"no such file {s['file']!r}")
            continue
        if s["process"] not in PROCESSES:
            raise ConfigError(f"samples.{name}.process",
                              f"unknown process {s['process']!r}; known: {sorted(PROCESSES)}")
    for fmt, fcfg in config["formats"].items():
        f = formats.get(fmt)
        for i, v in enumerate(fcfg["variants"]):
            f.variant(v, f"formats.{fmt}.variants[{i}]")
    m = config.get("measure", {})
    for i, n in enumerate(m.get("cluster_sizes") or []):
        if n not in config["cluster_sizes"]:
            raise ConfigError(f"measure.cluster_sizes[{i}]", f"{n} is not among cluster_sizes")
    for fmt, variants in (m.get("variants") or {}).items():
        known = config["formats"].get(fmt, {}).get("variants")
        if known is None:
            raise ConfigError(f"measure.variants.{fmt}", "format is not in formats")
        for i, v in enumerate(variants):
            if v not in known:
                raise ConfigError(f"measure.variants.{fmt}[{i}]",
                                  f"{v!r} is not among formats.{fmt}.variants")
    for fmt, readers in m.get("readers", {}).items():
        if fmt not in config["formats"]:
            continue
        for r in readers:
            if r not in formats.get(fmt).readers:
                raise ConfigError(f"measure.readers.{fmt}", f"no reader {r!r}; known: "
                                                            f"{sorted(formats.get(fmt).readers)}")
    for fmt in config["formats"]:
        if fmt not in m.get("readers", {fmt: []}):
            raise ConfigError("measure.readers", f"no reader named for format {fmt!r}")
    for i, pair in enumerate(config.get("compare", {}).get("pairs", [])):
        for fmt in ("ttree", "parquet"):
            if pair[fmt] not in config["formats"].get(fmt, {}).get("variants", []):
                raise ConfigError(f"compare.pairs[{i}].{fmt}",
                                  f"{pair[fmt]!r} is not among formats.{fmt}.variants")
