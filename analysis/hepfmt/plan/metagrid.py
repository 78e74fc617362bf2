"""The metadata study's grid: which wide files exist, which implementations time each and what
each job needs, computed in one place for the Snakefile, the CLI and the tables. Where its files
live is :mod:`hepfmt.plan.paths`' business (``meta_*``).
"""

from __future__ import annotations

from dataclasses import dataclass

from hepfmt.errors import ConfigError
from hepfmt.metastudy.decode import IMPLEMENTATIONS
from hepfmt.metastudy.widefiles import FORMATS, WideFileLayout
from hepfmt.plan import paths


@dataclass(frozen=True)
class MetaFile:
    dataset: str
    layout: str
    columns: int | None

    @property
    def extension(self) -> str:
        return WideFileLayout.parse(self.layout).extension

    @property
    def wildcards(self) -> dict[str, str]:
        """The rules' wildcard values naming this file (see :mod:`hepfmt.plan.paths`)."""
        return {"dataset": self.dataset, "layout": self.layout, "ext": self.extension}


def find(config: dict, dataset: str, layout: str) -> MetaFile:
    """The grid's file for a (dataset, layout) pair, e.g. from a rule's wildcards."""
    for f in files(config):
        if (f.dataset, f.layout) == (dataset, layout):
            return f
    raise ConfigError("metadata", f"{dataset}/{layout} is not in the metadata grid")


def datasets(config: dict) -> dict[str, int | None]:
    """Dataset name -> number of columns (None for the sample at NanoAOD width: known only from
    its source, and timed by every implementation whatever ``max_columns`` says)."""
    m = config["metadata"]
    out: dict[str, int | None] = {f"{t}-c{n}": n for t in m["types"] for n in m["columns"]}
    if m.get("nanoaod"):
        out[f"nanoaod-{m['nanoaod']}"] = None
    return out


def layouts(config: dict) -> list[str]:
    """Layouts some configured implementation reads (a format nobody times is not written)."""
    m = config["metadata"]
    fmts = {IMPLEMENTATIONS[i] for i in m["implementations"]}
    out = ([WideFileLayout("parquet", s).name for s in m["stats_levels"]]
           if "parquet" in fmts else [])
    return out + [f for f in FORMATS[1:] if f in fmts]


def implementations(config: dict, f: MetaFile) -> list[str]:
    """Implementations that time file ``f``: those reading its format, up to their
    ``max_columns`` (synthetic widths only)."""
    m = config["metadata"]
    fmt = WideFileLayout.parse(f.layout).format
    limits = m.get("max_columns", {})
    return [i for i in m["implementations"] if IMPLEMENTATIONS[i] == fmt
            and (f.columns is None or f.columns <= limits.get(i, f.columns))]


def implementations_of(config: dict, dataset: str, layout: str) -> list[str]:
    """:func:`implementations` of a job's file, named by its wildcards."""
    return implementations(config, find(config, dataset, layout))


def files(config: dict) -> list[MetaFile]:
    """Every file the study writes: each (dataset, layout) that at least one implementation
    times."""
    out = []
    for ds, n in datasets(config).items():
        for lay in layouts(config):
            f = MetaFile(ds, lay, n)
            if implementations(config, f):
                out.append(f)
    return out


def source_sample(dataset: str) -> str | None:
    """The sample a ``nanoaod-*`` dataset is written from (None for synthetic datasets)."""
    return dataset.removeprefix("nanoaod-") if dataset.startswith("nanoaod-") else None


def source_files(results: str, dataset: str) -> list[str]:
    """What a dataset is written from: its sample's source and sidecar (none if synthetic)."""
    sample = source_sample(dataset)
    return [] if sample is None else [paths.source(results, sample),
                                      paths.source_meta(results, sample)]


def codec(config: dict, layout: str) -> str:
    """The data compression of the files of ``layout`` (``metadata.codecs``)."""
    return config["metadata"]["codecs"][WideFileLayout.parse(layout).format]


def write_mem_mb(config: dict, dataset: str, layout: str) -> int:
    """ROOT holds a page or basket buffer per column while it fills (measured: ~1 GB peak for
    10000 string columns, TTree or RNTuple); Parquet needs less."""
    return 500 + (find(config, dataset, layout).columns or 2000) // 10


def check(config: dict) -> None:
    """Checks the JSON schema cannot express; each error names the offending key."""
    m = config["metadata"]
    sample = m.get("nanoaod")
    if sample and sample not in config["samples"]:
        raise ConfigError("metadata.nanoaod", f"{sample!r} is not among samples "
                                              f"{sorted(config['samples'])}")
    for impl in m.get("max_columns", {}):
        if impl not in IMPLEMENTATIONS:
            raise ConfigError(f"metadata.max_columns.{impl}",
                              f"no implementation {impl!r}; known: {sorted(IMPLEMENTATIONS)}")
    from hepfmt import formats

    for fmt, codec in m["codecs"].items():
        formats.get("parquet" if fmt == "parquet" else "ttree").variant(
            codec, f"metadata.codecs.{fmt}")
    if not files(config):
        raise ConfigError("metadata", "no file to write: every implementation is limited "
                                      "below every column count")
