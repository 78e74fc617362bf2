"""The metadata study's grid: which wide files exist, which implementations time each, and
where every output lives, computed in one place for the Snakefile, the CLI and the tables.

Paths, under ``{results}/metadata/``: ``files/{dataset}/{layout}.{ext}`` (the file),
``layouts/{dataset}/{layout}.{ext}.json`` (what its metadata says, and its size),
``timings/{dataset}/{layout}.{ext}.json`` (decode times), ``tables/``, ``plots/``,
``tools/parquet-footer.json`` (whether the optional Rust helper could be built).
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.errors import ConfigError
from analysis.metastudy.decode import IMPLEMENTATIONS
from analysis.metastudy.widefiles import FORMATS, Layout

HELPER = "tools/parquet-footer.json"


@dataclass(frozen=True)
class MetaFile:
    dataset: str
    layout: str
    columns: int | None

    @property
    def stem(self) -> str:
        return f"{self.dataset}/{self.layout}"

    @property
    def extension(self) -> str:
        return Layout.parse(self.layout).extension


def root(results: str) -> str:
    return f"{results}/metadata"


def path(results: str, kind: str, f: MetaFile) -> str:
    """``kind``: ``files`` (the file itself), ``layouts`` or ``timings`` (its JSON records)."""
    suffix = "" if kind == "files" else ".json"
    return f"{root(results)}/{kind}/{f.stem}.{f.extension}{suffix}"


def helper_path(results: str) -> str:
    return f"{root(results)}/{HELPER}"


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
    out = [Layout("parquet", s).name for s in m["stats_levels"]] if "parquet" in fmts else []
    return out + [f for f in FORMATS[1:] if f in fmts]


def implementations(config: dict, f: MetaFile) -> list[str]:
    """Implementations that time file ``f``: those reading its format, up to their
    ``max_columns`` (synthetic widths only)."""
    m = config["metadata"]
    fmt = Layout.parse(f.layout).format
    limits = m.get("max_columns", {})
    return [i for i in m["implementations"] if IMPLEMENTATIONS[i] == fmt
            and (f.columns is None or f.columns <= limits.get(i, f.columns))]


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
    return dataset.split("-", 1)[1] if dataset.startswith("nanoaod-") else None


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
    from analysis import formats

    for fmt, codec in m["codecs"].items():
        formats.get("parquet" if fmt == "parquet" else "ttree").variant(
            codec, f"metadata.codecs.{fmt}")
    if not files(config):
        raise ConfigError("metadata", "no file to write: every implementation is limited "
                                      "below every column count")
