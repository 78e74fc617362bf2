"""Every path a study reads or writes, each template spelled once.

The rules, the CLI and the tables must agree on every name, so each template lives here and
nowhere else. Each function gives a Snakemake pattern when called with ``results`` alone (the
fields other than ``results`` stay wildcards: ``written("r")`` is
``"r/files/{sample}/{format}/{variant}/c{cluster}.{ext}"``), and a concrete path when also
given what fills them (a :class:`~hepfmt.plan.study.FileSpec`, a
:class:`~hepfmt.plan.metagrid.MetaFile`, a sample or a name). Nothing here imports a format
library: the Snakefile calls it while it parses.
"""

from __future__ import annotations

from collections.abc import Mapping
from string import Formatter
from typing import Protocol


class Wildcarded(Protocol):
    """A planned file: the wildcard values that name it."""

    @property
    def wildcards(self) -> dict[str, str]: ...


#: One written file of the study grid, under each of files/, sizes/, measurements/ and logs/.
STEM = "{sample}/{format}/{variant}/c{cluster}"
#: One file of the metadata-cost study, under each of its files/, layouts/ and timings/.
META_STEM = "{dataset}/{layout}.{ext}"

SOURCE = "{results}/sources/{sample}.arrow"
SOURCE_META = "{results}/sources/{sample}.json"  # naive bytes and reference checksums
WRITTEN = "{results}/files/" + STEM + ".{ext}"
SIZE = "{results}/sizes/" + STEM + ".{ext}.json"
MEASUREMENT = "{results}/measurements/" + STEM + ".json"
#: One paired ROOT / Parquet measurement (hepfmt.measure.pairs): a pairing (study.pair_slug)
#: on one sample at one cluster size, one selection.
PAIR_STEM = "{sample}/{pair}/c{cluster}/{selection}"
PAIR = "{results}/pairs/" + PAIR_STEM + ".json"
#: A file group's release (hepfmt.plan.scratch): its files' records are all made, so its
#: files may go; what the files of the study held on disk at that moment.
RELEASE = "{results}/releases/{sample}/c{cluster}.json"
RESOLVED_CONFIG = "{results}/config.yaml"
PROVENANCE = "{results}/provenance.json"
PLAN_RECORD = "{results}/plan.json"  # what the report needs of the plan (hepfmt.plan.record)
TABLE = "{results}/tables/{name}.{ext}"
#: The analysis queries (hepfmt.measure.workload): one record per queried file, the reference
#: answers once per sample, and the queries table's own provenance (the target runs without
#: the read study's tabulate, whose provenance.json it therefore cannot share).
QUERY = "{results}/queries/" + STEM + ".json"
QUERY_REFERENCE = "{results}/query_references/{sample}.json"
QUERY_PROVENANCE = "{results}/tables/queries-provenance.json"
FIGURE = "{results}/figures/{family}/{name}.{ext}"
#: Reads of one file on the storage profiles (hepfmt.measure.onstorage), and the storage
#: table's own provenance (the `storage` target runs without the read study's tabulate).
STORAGE = "{results}/storage/" + STEM + ".json"
STORAGE_PROVENANCE = "{results}/tables/storage-provenance.json"

META_ROOT = "{results}/metadata"
META = {
    "files": META_ROOT + "/files/" + META_STEM,  # the wide file itself
    "layouts": META_ROOT + "/layouts/" + META_STEM + ".json",  # what its metadata says
    "timings": META_ROOT + "/timings/" + META_STEM + ".json",  # its decode times
}
META_TABLE = META_ROOT + "/tables/{name}.{ext}"
META_PLOT = META_ROOT + "/plots/{name}.{ext}"
META_PROVENANCE = META_ROOT + "/provenance.json"
#: Whether the optional arrow-rs decoder could be built (hepfmt.metastudy.rusthelper).
META_HELPER = META_ROOT + "/tools/parquet-footer.json"

#: Each rule's log (under ``{results}/logs/``, without ``.log``): its output's own wildcards.
LOGS = {
    "generate": "generate/{sample}",
    "convert": "convert/" + STEM + ".{ext}",
    "measure": "measure/" + STEM,
    "pair": "pairs/" + PAIR_STEM,
    "release": "releases/{sample}/c{cluster}",
    "resolved_config": "resolved_config",
    "plan_record": "plan_record",
    "tabulate": "tabulate",
    "answer": "answer",
    "figure": "figures/{family}",
    "query": "queries/" + STEM,
    "query_reference": "query_references/{sample}",
    "tabulate_queries": "tabulate_queries",
    "metadata_write": "metadata/write/" + META_STEM,
    "metadata_helper": "metadata/build-helper",
    "metadata_time": "metadata/time/" + META_STEM,
    "metadata_tabulate": "metadata/tabulate",
    "storage": "storage/" + STEM,
    "tabulate_storage": "tabulate_storage",
}


def fill(template: str, results: str, values: Mapping[str, object] | None = None) -> str:
    """``template`` under ``results``; its other fields from ``values``, or, without values,
    left as Snakemake wildcards (``{sample}``)."""
    fields = {name for _, name, _, _ in Formatter().parse(template) if name} - {"results"}
    return template.format(results=results, **{
        name: "{" + name + "}" if values is None else values[name] for name in fields})


def _of(item: Wildcarded | None) -> dict[str, str] | None:
    return None if item is None else item.wildcards


def source(results: str, sample: str | None = None) -> str:
    """A sample's uncompressed Arrow IPC source."""
    return fill(SOURCE, results, None if sample is None else {"sample": sample})


def source_meta(results: str, sample: str | None = None) -> str:
    """The JSON sidecar of :func:`source`."""
    return fill(SOURCE_META, results, None if sample is None else {"sample": sample})


def written(results: str, spec: Wildcarded | None = None) -> str:
    """A file of the study grid as its format writes it."""
    return fill(WRITTEN, results, _of(spec))


def size(results: str, spec: Wildcarded | None = None) -> str:
    """The size and layout record of a :func:`written` file."""
    return fill(SIZE, results, _of(spec))


def measurement(results: str, spec: Wildcarded | None = None) -> str:
    """The read measurements of a :func:`written` file."""
    return fill(MEASUREMENT, results, _of(spec))


def pair(results: str, job: Wildcarded | None = None) -> str:
    """The record of a paired ROOT / Parquet measurement (a :class:`~hepfmt.plan.study.
    PairJob`)."""
    return fill(PAIR, results, _of(job))


def release(results: str, group: Wildcarded | None = None) -> str:
    """The release record of a file group (:class:`~hepfmt.plan.scratch.FileGroup`)."""
    return fill(RELEASE, results, _of(group))


def query(results: str, spec: Wildcarded | None = None) -> str:
    """The analysis-query measurements of a :func:`written` file."""
    return fill(QUERY, results, _of(spec))


def storage(results: str, spec: Wildcarded | None = None) -> str:
    """The storage-profile reads of a :func:`written` file."""
    return fill(STORAGE, results, _of(spec))


def storage_provenance(results: str) -> str:
    return fill(STORAGE_PROVENANCE, results)


def query_reference(results: str, sample: str | None = None) -> str:
    """The reference answers of the analysis queries on a sample's :func:`source`."""
    return fill(QUERY_REFERENCE, results, None if sample is None else {"sample": sample})


def query_provenance(results: str) -> str:
    return fill(QUERY_PROVENANCE, results)


def resolved_config(results: str) -> str:
    """The config as the workflow validated it: what the tables' provenance hashes."""
    return fill(RESOLVED_CONFIG, results)


def provenance(results: str) -> str:
    return fill(PROVENANCE, results)


def plan_record(results: str) -> str:
    return fill(PLAN_RECORD, results)


def table(results: str, name: str, ext: str) -> str:
    return fill(TABLE, results, {"name": name, "ext": ext})


def figure(results: str, family: str, name: str, ext: str) -> str:
    return fill(FIGURE, results, {"family": family, "name": name, "ext": ext})


#: The jobs (by their :data:`LOGS` name) that keep Snakemake's ``benchmark:`` record (wall time,
#: peak memory, CPU time; a TSV), named as their logs: every writing and timing job. The cost
#: model is fitted to the records of generate, convert, measure and pair
#: (:mod:`hepfmt.plan.calibration`).
BENCHMARKED = ("generate", "convert", "measure", "pair", "query", "storage", "metadata_time")


def benchmark(results: str, rule: str, values: Mapping[str, object] | None = None) -> str:
    """The benchmark record of a job of ``rule`` (a pattern, or filled), named as its log."""
    return fill("{results}/benchmarks/" + LOGS[rule] + ".tsv", results, values)


def log(results: str, rule: str, values: Mapping[str, object] | None = None) -> str:
    """The log of a job of ``rule`` (a pattern with its output's wildcards, or filled)."""
    return fill("{results}/logs/" + LOGS[rule] + ".log", results, values)


def meta(results: str, kind: str, f: Wildcarded | None = None) -> str:
    """``kind``: ``files`` (the wide file), ``layouts`` or ``timings`` (its JSON records)."""
    return fill(META[kind], results, _of(f))


def meta_table(results: str, name: str, ext: str) -> str:
    return fill(META_TABLE, results, {"name": name, "ext": ext})


def meta_plot(results: str, name: str, ext: str) -> str:
    return fill(META_PLOT, results, {"name": name, "ext": ext})


def meta_provenance(results: str) -> str:
    return fill(META_PROVENANCE, results)


def meta_helper(results: str) -> str:
    return fill(META_HELPER, results)
