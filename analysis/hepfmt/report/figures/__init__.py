"""Figures of the size and read study, drawn from the tables that ``hepfmt tabulate`` writes.

Physicists read a format comparison as plots first. Each figure family redraws one message of
the 2018 study (or a question it could not ask) from ``results/tables/*.csv``, never from the raw
measurements: a figure can then only show what a table already says, and carries the same
provenance (a footer from ``provenance.json``). Orders, labels and selections come from the plan
record, never from re-planning the config.

Families (:data:`FAMILIES`), one module each: ``answer`` (the run's answer in one figure: every
format at its fastest reader, size against time per event, beside the ROOT / Parquet ratios),
``size`` (normalised size vs cluster size per codec family), ``ratios`` (ROOT / Parquet ratios
vs cluster size, from paired measurements), ``tradeoff`` (size vs read time of every reader with
the Pareto front), ``groups`` (compressed bytes per event by branch group) and ``memory``
(peak memory per reader); by their own targets ``queries`` (events/s per analysis task),
``query_ratios`` (per task, the fastest on ROOT files over the fastest on Parquet) and
``storage`` (reads per storage profile, the cost model beside them). Titles are short and say
what a figure shows; the footer names the CPUs its numbers were measured on and what made
them. Every speed ratio reads one way, above 1 = ROOT faster (:mod:`hepfmt.report.direction`),
stated on its axis.

This module is the registry, and imports neither matplotlib nor pandas: the Snakefile reads it
at parse time for the families' names and files; drawing modules load on first use.
A study may lack pieces (no reads measured, one cluster size, one sample): a figure then says
what is missing instead of failing, since the report must still build.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hepfmt.errors import ConfigError
from hepfmt.report import table_names as tn
from hepfmt.report.style import provenance_footer, render

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from hepfmt.report.figures.inputs import Inputs

@dataclass(frozen=True)
class Family:
    name: str  # its figures' directory, rule and caption
    stem: str  # the file name of its figure (PNG and PDF)
    tables: tuple[str, ...]  # the tables it reads
    #: the Snakemake target that draws it: ``all`` (the read study's tables) or its own
    #: (``queries``: its table comes from measurements ``all`` does not make)
    target: str = "all"
    #: the module of this package that draws it: the family's name unless said (``queries``
    #: is drawn by ``query_throughput``, not a second module named ``queries``)
    module: str = ""

    def draw(self, inputs: Inputs) -> tuple[Figure, list[str]]:
        """The family's figure and the notes for its footer (which also names the CPUs:
        :func:`footer`)."""
        return importlib.import_module(f"{__name__}.{self.module or self.name}").draw(inputs)


FAMILIES = {f.name: f for f in (
    Family("answer", "answer", (tn.READS, tn.SIZE, tn.RATIOS)),
    Family("size", "normalized_size", (tn.SIZE,)),
    Family("ratios", "rate_ratio", (tn.RATIOS, tn.READS)),
    Family("tradeoff", "size_vs_read_time", (tn.FORMATS,)),
    Family("groups", "bytes_by_group", (tn.GROUPS,)),
    Family("memory", "peak_memory", (tn.READS,)),
    Family("queries", "query_throughput", (tn.QUERIES,), target="queries",
           module="query_throughput"),
    Family("query_ratios", "query_root_parquet", (tn.QUERY_RATIOS,), target="queries"),
    Family("storage", "storage", (tn.STORAGE, tn.STORAGE_RATIOS), target="storage"),
)}


def family(name: str) -> Family:
    if name not in FAMILIES:
        raise ConfigError("figure family", f"unknown {name!r}; known: {', '.join(FAMILIES)}")
    return FAMILIES[name]


def footer(inputs: Inputs) -> str:
    """The provenance line under every family's figure: the CPUs, versions, date, config."""
    return provenance_footer(inputs.provenance, inputs.config_name)


def draw(name: str, inputs: Inputs, out_dir: str | Path) -> list[Path]:
    """One family's figure, PNG and PDF, into ``out_dir``, with its provenance footer."""
    fam = family(name)
    return render(lambda: fam.draw(inputs), footer(inputs), Path(out_dir) / fam.stem)


def make(name: str, tables_dir: str | Path, provenance: str | Path, plan: str | Path,
         out_dir: str | Path, config_name: str | None = None) -> list[Path]:
    """``hepfmt figure``: read the tables the family needs, draw it, write PNG and PDF."""
    from hepfmt.report.figures.inputs import load_inputs  # pandas: not at parse time

    return draw(name, load_inputs(name, tables_dir, provenance, plan, config_name), out_dir)
