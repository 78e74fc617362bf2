"""The study grid: which files exist, where they live, and how they pair up.

One place computes every path so that the Snakefile, the CLI and the tables agree on names:
``{results}/sources/{sample}.arrow``, ``{results}/files/{sample}/{format}/{variant}/c{N}.{ext}``,
``{results}/sizes/{stem}.{ext}.json`` and ``{results}/measurements/{stem}.json``.

A *format* here is an entry of the config's ``formats``: a name (``ttree_nooffsets``), the adapter
that writes and reads it (``adapter: ttree``, by default the name itself), its writer options and
its variants. One adapter can so appear several times with different knobs (TTree with and
without offset arrays, TTree written by ROOT and by uproot, Parquet with and without
BYTE_STREAM_SPLIT), each a line of its own in every table.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis import formats
from analysis.errors import ConfigError
from analysis.samples.processes import PROCESSES


@dataclass(frozen=True)
class FileSpec:
    sample: str
    format: str  # the config's name for it
    variant: str
    cluster_size: int
    adapter: str  # the module in analysis.formats that writes and reads it

    @property
    def stem(self) -> str:
        return f"{self.sample}/{self.format}/{self.variant}/c{self.cluster_size}"


def source_path(results: str, sample: str) -> str:
    return f"{results}/sources/{sample}.arrow"


def file_path(results: str, spec: FileSpec) -> str:
    return f"{results}/files/{spec.stem}.{formats.extension(spec.adapter)}"


def size_path(results: str, spec: FileSpec) -> str:
    return f"{results}/sizes/{spec.stem}.{formats.extension(spec.adapter)}.json"


def measurement_path(results: str, spec: FileSpec) -> str:
    return f"{results}/measurements/{spec.stem}.json"


def adapter(config: dict, name: str) -> str:
    """The adapter of the config's format ``name``."""
    return config["formats"][name].get("adapter", name)


def label(config: dict, name: str) -> str:
    """How tables and figures call the format ``name``."""
    fcfg = config["formats"].get(name, {})
    if fcfg.get("label"):
        return fcfg["label"]
    adapter = fcfg.get("adapter", name)
    base = formats.label(adapter) if adapter in formats.names() else name
    return base if adapter == name else f"{base} ({name})"


def readers(config: dict, name: str) -> list[str]:
    """The readers timed on format ``name``: the config's list, else every one its adapter has."""
    named = config.get("measure", {}).get("readers", {}).get(name)
    return list(named) if named else list(formats.get(adapter(config, name)).readers)


def thread_counts(config: dict) -> list[int]:
    """Reader threads to time: one count, or a sweep (``measure.threads: [1, 2]``)."""
    t = config.get("measure", {}).get("threads", 1)
    return [t] if isinstance(t, int) else list(t)


def extensions() -> list[str]:
    return sorted({formats.extension(n) for n in formats.names()})


def spec(config: dict, sample: str, fmt: str, variant: str, cluster_size: int) -> FileSpec:
    return FileSpec(sample, fmt, variant, cluster_size, adapter(config, fmt))


def files(config: dict) -> list[FileSpec]:
    """Every file the study writes (and whose size it tabulates)."""
    return [spec(config, sample, fmt, variant, n)
            for sample in config["samples"]
            for fmt, fcfg in config["formats"].items()
            for variant in fcfg["variants"]
            for n in config["cluster_sizes"]]


def compare_reader(config: dict, fmt: str, side: str) -> str:
    """The reader that stands for format ``fmt`` (the ``side`` of a pair) in the ratios."""
    readers = config.get("compare", {}).get("readers") or {"ttree": "rdf", "parquet": "pyarrow"}
    return readers.get(fmt, readers.get(side, ""))


def pairs(config: dict) -> list[dict]:
    """The ROOT / Parquet pairings of the ratio tables, each with its ``label`` and both
    format names: the config's ``compare.pairs``, else same-algorithm pairings of the ``ttree``
    and ``parquet`` variants (ignoring levels, no dictionary)."""
    def algo(v: str) -> str:
        return v.split("+")[0].split("-")[0]

    fm = config["formats"]
    given = config.get("compare", {}).get("pairs") or [
        {"ttree": tv, "parquet": pv}
        for tv in fm.get("ttree", {}).get("variants", [])
        for pv in fm.get("parquet", {}).get("variants", [])
        if algo(tv) == algo(pv) and "+dict" not in pv]
    return [{**p, "label": p.get("label") or f"{p['ttree']} vs {p['parquet']}",
             "ttree_format": p.get("ttree_format", "ttree"),
             "parquet_format": p.get("parquet_format", "parquet")} for p in given]


def pair_sides(config: dict) -> dict[str, list[tuple[str, str, str]]]:
    """Pair label -> (format, variant, reader) of its ROOT side and of its Parquet side."""
    return {p["label"]: [(p[f"{side}_format"], p[side],
                          compare_reader(config, p[f"{side}_format"], side))
                         for side in ("ttree", "parquet")] for p in pairs(config)}


def read_plan(config: dict) -> dict[FileSpec, list[str]]:
    """Every read-measured file with its readers, in grid order.

    Two sub-grids, because reads cost far more than sizes: ``measure`` (``cluster_sizes`` and
    ``variants`` narrow it; left out = all of it) with every reader of ``measure.readers``, and
    the ROOT/Parquet pairings of ``compare.pairs`` at ``compare.cluster_sizes`` with only the
    reader standing for each side, which is what the rate-ratio-vs-cluster-size figure needs.
    A file in both is read once per reader of either.
    """
    m = config["measure"]
    sizes = m.get("cluster_sizes") or config["cluster_sizes"]
    variants = m.get("variants") or {}
    compare_sizes = config.get("compare", {}).get("cluster_sizes") or []
    sides = [s for both in pair_sides(config).values() for s in both] if compare_sizes else []
    plan: dict[FileSpec, list[str]] = {}
    for f in files(config):
        chosen = []
        if f.cluster_size in sizes and f.variant in variants.get(
                f.format, config["formats"][f.format]["variants"]):
            chosen = readers(config, f.format)
        if f.cluster_size in compare_sizes:
            chosen += [r for fmt, v, r in sides
                       if (fmt, v) == (f.format, f.variant) and r not in chosen]
        if chosen:
            plan[f] = list(dict.fromkeys(chosen))
    return plan


def measured(config: dict) -> list[FileSpec]:
    """The files whose reads are timed (see :func:`read_plan`)."""
    return list(read_plan(config))


def file_readers(plan: dict[FileSpec, list[str]], spec: FileSpec) -> list[str]:
    """The readers timed on one file of a :func:`read_plan` (computed once per workflow)."""
    if spec not in plan:
        raise ConfigError(f"formats.{spec.format}", f"{spec.variant} at cluster size "
                          f"{spec.cluster_size} is not read-measured (measure and "
                          "compare.cluster_sizes)")
    return plan[spec]


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
    for fmt, names in m.get("readers", {}).items():
        if fmt not in config["formats"]:
            raise ConfigError(f"measure.readers.{fmt}", "format is not in formats")
        known = formats.get(adapter(config, fmt)).readers
        for r in names:
            if r not in known:
                raise ConfigError(f"measure.readers.{fmt}", f"no reader {r!r}; known: "
                                                            f"{sorted(known)}")
    cmp = config.get("compare", {})
    for i, n in enumerate(cmp.get("cluster_sizes") or []):
        if n not in config["cluster_sizes"]:
            raise ConfigError(f"compare.cluster_sizes[{i}]", f"{n} is not among cluster_sizes")
    for i, pair in enumerate(cmp.get("pairs", [])):
        for side in ("ttree", "parquet"):
            fmt = pair.get(f"{side}_format", side)
            if pair[side] not in config["formats"].get(fmt, {}).get("variants", []):
                raise ConfigError(f"compare.pairs[{i}].{side}",
                                  f"{pair[side]!r} is not among formats.{fmt}.variants")
            reader = compare_reader(config, fmt, side)
            if cmp.get("cluster_sizes") and reader not in formats.get(
                    adapter(config, fmt)).readers:
                raise ConfigError("compare.readers", f"no reader {reader!r} for format {fmt} "
                                  f"(compare.pairs[{i}].{side}); known: "
                                  f"{sorted(formats.get(adapter(config, fmt)).readers)}")
