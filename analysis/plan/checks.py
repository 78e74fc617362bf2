"""The config checks the JSON schema cannot express: names that must exist (processes, format
adapters, readers, options), variants each format can write, sub-grids inside the grid.

Snakemake and the CLI both run them (the Snakefile directly, the CLI through
:func:`analysis.plan.config.validate`), so a config is refused the same way by either, and
each error names the offending key.
"""

from __future__ import annotations

from pathlib import Path

from analysis import formats
from analysis.errors import ConfigError
from analysis.plan.study import SIDES, adapter, compare_reader
from analysis.samples.processes import PROCESSES


def check(config: dict) -> None:
    _samples(config)
    _formats(config)
    _measure(config)
    _compare(config)


def _samples(config: dict) -> None:
    for name, s in config["samples"].items():
        if "file" in s:
            if "://" not in s["file"] and not Path(s["file"]).is_file():
                raise ConfigError(f"samples.{name}.file", f"no such file {s['file']!r}")
            continue
        if s["process"] not in PROCESSES:
            raise ConfigError(f"samples.{name}.process",
                              f"unknown process {s['process']!r}; known: {sorted(PROCESSES)}")


def _formats(config: dict) -> None:
    for fmt, fcfg in config["formats"].items():
        name = fcfg.get("adapter", fmt)
        if name not in formats.names():
            key = f"formats.{fmt}.adapter" if "adapter" in fcfg else f"formats.{fmt}"
            raise ConfigError(key, f"no format adapter {name!r}; known: {formats.names()} "
                                   "(a format of another name needs 'adapter:')")
        f = formats.get(name)
        for i, v in enumerate(fcfg["variants"]):
            f.variant(v, f"formats.{fmt}.variants[{i}]")
        unknown = sorted(set(fcfg.get("options", {})) - f.options) if f.options is not None \
            else []
        if unknown:
            raise ConfigError(f"formats.{fmt}.options", f"{name} has no option {unknown[0]!r}; "
                                                        f"known: {sorted(f.options)}")


def _cluster_sizes(config: dict, key: str, sizes: list[int] | None) -> None:
    for i, n in enumerate(sizes or []):
        if n not in config["cluster_sizes"]:
            raise ConfigError(f"{key}[{i}]", f"{n} is not among cluster_sizes")


def _measure(config: dict) -> None:
    m = config.get("measure", {})
    _cluster_sizes(config, "measure.cluster_sizes", m.get("cluster_sizes"))
    for fmt, variants in (m.get("variants") or {}).items():
        known = config["formats"].get(fmt, {}).get("variants")
        if known is None:
            raise ConfigError(f"measure.variants.{fmt}", "format is not in formats")
        for i, v in enumerate(variants):
            if v not in known:
                raise ConfigError(f"measure.variants.{fmt}[{i}]",
                                  f"{v!r} is not among formats.{fmt}.variants")
    for fmt, names in m.get("readers", {}).items():
        if fmt not in config["formats"]:
            raise ConfigError(f"measure.readers.{fmt}", "format is not in formats")
        known = formats.get(adapter(config, fmt)).readers
        for r in names:
            if r not in known:
                raise ConfigError(f"measure.readers.{fmt}", f"no reader {r!r}; known: "
                                                            f"{sorted(known)}")


def _compare(config: dict) -> None:
    cmp = config.get("compare", {})
    _cluster_sizes(config, "compare.cluster_sizes", cmp.get("cluster_sizes"))
    for i, pair in enumerate(cmp.get("pairs", [])):
        for side in SIDES:
            fmt = pair.get(f"{side}_format", side)
            if pair[side] not in config["formats"].get(fmt, {}).get("variants", []):
                raise ConfigError(f"compare.pairs[{i}].{side}",
                                  f"{pair[side]!r} is not among formats.{fmt}.variants")
            reader = compare_reader(config, fmt, side)
            known = formats.get(adapter(config, fmt)).readers
            if cmp.get("cluster_sizes") and reader not in known:
                raise ConfigError("compare.readers", f"no reader {reader!r} for format {fmt} "
                                  f"(compare.pairs[{i}].{side}); known: {sorted(known)}")
