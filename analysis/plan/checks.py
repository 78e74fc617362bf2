"""The config checks the JSON schema cannot express: names that must exist (processes, format
adapters, readers, options), variants each format can write (codec levels included), writer
option values, input files that must be readable, sub-grids inside the grid, selections every
sample can read.

Snakemake and the CLI both run them (the Snakefile directly, the CLI through
:func:`analysis.plan.config.validate`), so a config is refused the same way by either, before
any job, and each error names the offending key. They stay cheap (no ROOT, no event read; a
local input's header is read once per process, for its branch names): the Snakefile runs them at
every parse.
"""

from __future__ import annotations

from pathlib import Path

from analysis import formats
from analysis.errors import ConfigError, HepfmtError, InputError
from analysis.plan import metagrid, options, selections
from analysis.plan.study import (
    SIDES,
    adapter,
    all_cluster_sizes,
    compare_pairs,
    pairs_only,
    sample_cluster_sizes,
)
from analysis.samples.processes import PROCESSES


def check(config: dict) -> None:
    events = _samples(config)
    _model(config)
    _cluster_sizes_fit(config, events)
    _formats(config)
    _measure(config)
    _compare(config)
    selections.per_sample(config)
    metagrid.check(config)
    options.check_parquet(config["metadata"].get("parquet_options", {}),
                          "metadata.parquet_options", {"statistics": "metadata.stats_levels"})


def _samples(config: dict) -> dict[str, int | None]:
    """Sample -> its events where known before any job (generated: the config's; a local
    Parquet file: its footer's; a ROOT file or a URL: None, found by the import job)."""
    events: dict[str, int | None] = {}
    for name, s in config["samples"].items():
        if "file" in s:
            events[name] = input_events(f"samples.{name}.file", s["file"])
            continue
        if s["process"] not in PROCESSES:
            raise ConfigError(f"samples.{name}.process",
                              f"unknown process {s['process']!r}; known: {sorted(PROCESSES)}")
        events[name] = s["n_events"]
    return events


def input_events(key: str, path: str) -> int | None:
    """Refuse a sample file that is missing, empty or neither ROOT nor Parquet (by its first
    bytes); its event count when its metadata tells it cheaply (a Parquet footer), else None.

    Only that much: whether the tree inside can be imported is the import job's business
    (:mod:`analysis.samples.inputs`), which reads far more than a parse-time check should.
    """
    from analysis.samples.inputs import detect

    if "://" in path:  # remote: opening it here would make every parse wait on the network
        return None
    p = Path(path)
    if not p.exists():
        raise ConfigError(key, f"no such file {path!r}")
    if p.is_file() and p.stat().st_size == 0:
        raise ConfigError(key, f"{path!r} is empty")
    try:
        kind = detect(path)
    except InputError as exc:
        raise ConfigError(key, f"{path!r}: {exc.problem}") from None
    if kind != "parquet" or not p.is_file():
        return None
    import pyarrow.parquet as pq

    try:
        return pq.read_metadata(path).num_rows
    except Exception:  # a damaged footer: the import job reports it, with pyarrow's words
        return None


def _model(config: dict) -> None:
    path = config.get("model")
    if not path:
        return
    if not Path(path).is_file():
        raise ConfigError("model", f"no such file {path!r}")
    from analysis.samples.model import load_model

    try:
        load_model(path)
    except HepfmtError as exc:
        raise ConfigError("model", str(exc)) from None


def _cluster_sizes_fit(config: dict, events: dict[str, int | None]) -> None:
    """A cluster larger than a sample makes a file identical to the one-cluster file, labelled
    with a cluster size it does not have."""
    for sample, count in events.items():
        own = "cluster_sizes" in config["samples"][sample]
        for i, n in enumerate(sample_cluster_sizes(config, sample)):
            if count is not None and n > count:
                key = f"samples.{sample}.cluster_sizes[{i}]" if own else f"cluster_sizes[{i}]"
                raise ConfigError(key, f"{n} is above the {count} events of sample {sample!r} "
                                       f"(its files would hold one cluster of {count}, not {n})")
        if pairs_only(config, sample) and not compare_pairs(config):
            raise ConfigError(f"samples.{sample}.files",
                              "'pairs' needs compare.pairs (or ttree and parquet formats)")


def _sample_names(config: dict, key: str, names: list[str] | None) -> None:
    for i, name in enumerate(names or []):
        if name not in config["samples"]:
            raise ConfigError(f"{key}[{i}]", f"{name!r} is not among samples")


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
        options.check(name, f, fcfg.get("options", {}), f"formats.{fmt}.options")


def _cluster_sizes(config: dict, key: str, sizes: list[int] | None) -> None:
    written = all_cluster_sizes(config)
    for i, n in enumerate(sizes or []):
        if n not in written:
            raise ConfigError(f"{key}[{i}]", f"{n} is not among the cluster sizes written "
                                             f"({written})")


def _measure(config: dict) -> None:
    m = config.get("measure", {})
    _cluster_sizes(config, "measure.cluster_sizes", m.get("cluster_sizes"))
    _sample_names(config, "measure.samples", m.get("samples"))
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
    """Every ``compare.readers`` entry names a format (or a side) and a reader it has, and
    every pair's reader exists, whether or not ``compare.cluster_sizes`` reads it: the ratio
    tables look its measurements up either way."""
    cmp = config.get("compare", {})
    _cluster_sizes(config, "compare.cluster_sizes", cmp.get("cluster_sizes"))
    _sample_names(config, "compare.samples", cmp.get("samples"))
    for fmt, reader in cmp.get("readers", {}).items():
        key = f"compare.readers.{fmt}"
        if fmt in config["formats"]:
            _reader_exists(key, adapter(config, fmt), reader)
        elif fmt in formats.names():  # a side's default for formats of that adapter
            _reader_exists(key, fmt, reader)
        elif fmt not in SIDES:
            raise ConfigError(key, f"{fmt!r} is neither a format of formats nor a side "
                                   f"{list(SIDES)}")
    for i, pair in enumerate(cmp.get("pairs", [])):
        for side in SIDES:
            fmt = pair.get(f"{side}_format", side)
            if pair[side] not in config["formats"].get(fmt, {}).get("variants", []):
                raise ConfigError(f"compare.pairs[{i}].{side}",
                                  f"{pair[side]!r} is not among formats.{fmt}.variants")
    for p in compare_pairs(config):
        for s in p.sides:
            if s.format in config["formats"]:
                _reader_exists("compare.readers", adapter(config, s.format), s.reader,
                               f" (the {p.label!r} pair's {s.format})")


def _reader_exists(key: str, adapter_name: str, reader: str, where: str = "") -> None:
    known = formats.get(adapter_name).readers
    if reader not in known:
        raise ConfigError(key, f"no reader {reader!r} for {adapter_name}{where}; known: "
                               f"{sorted(known)}")
