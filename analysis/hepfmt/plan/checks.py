"""The config checks the JSON schema cannot express: names that must exist (processes, format
adapters, readers, options), variants each format can write (codec levels included), writer
option values, input files that must be readable, sub-grids inside the grid, selections every
sample can read, the rules between keys (repetitions, cluster sizes of the sub-grids, the
pairings' sides) and where results go.

Snakemake and the CLI both run them (through :func:`hepfmt.plan.config.validate`), so a
config is refused the same way by either, before any job, and each error names the offending
key. They stay cheap (no ROOT, no event read; a local input's header is read once per process,
for its entries and branch names; one empty file made and removed where results go): the
Snakefile runs them at every parse.
"""

from __future__ import annotations

import math
import os
import re
import tempfile
from functools import cache
from pathlib import Path

from hepfmt import formats
from hepfmt.codec import Variant
from hepfmt.errors import ConfigError, HepfmtError, InputError
from hepfmt.formats.base import is_url
from hepfmt.measure.timing import Stopping
from hepfmt.plan import metagrid, options, resultsdir, selections
from hepfmt.plan import schema as config_schema
from hepfmt.plan.names import normal
from hepfmt.plan.study import (
    SIDES,
    Pair,
    Side,
    adapter,
    compare_pairs,
    compare_samples,
    fastest_candidates,
    label,
    measure_samples,
    overrides_of,
    pair_plan,
    pair_settings,
    pair_slug,
    pairs_only,
    query_tasks,
    sample_cluster_sizes,
)
from hepfmt.records import data_file
from hepfmt.samples.processes import PROCESSES

#: Each side of a pairing: the file extension of the adapters it may name, and what they are
#: (TTree and RNTuple write ROOT files).
SIDE_KINDS = {"ttree": ("root", "ROOT"), "parquet": ("parquet", "Parquet")}
#: A selection's name as a pair record's file name (results/pairs/.../{selection}.json).
PATH_NAME = re.compile(r"[A-Za-z0-9_+-]+")


def check(config: dict) -> None:
    _results(config["results"])
    events = _samples(config)
    _model(config)
    _cluster_sizes_fit(config, events)
    _formats(config)
    _normalise_variants(config)
    _measure(config)
    _repetitions(config)
    _compare(config)
    _pair_jobs(config)
    selections.per_sample(config)
    metagrid.check(config)
    options.check_parquet(config["metadata"].get("parquet_options", {}),
                          "metadata.parquet_options", {"statistics": "metadata.stats_levels"})


def _results(text: str) -> None:
    """Every output goes under ``results`` (relative to the working directory): a directory
    of hepfmt's own (:mod:`hepfmt.plan.resultsdir`: never the filesystem root, which an
    empty value makes of every path, a system directory, the project or its own directories,
    git's files, nor a directory of someone else's), and one that can be made and written."""
    if not text.strip():
        raise ConfigError("results", "empty: every output would go under the filesystem root "
                                     "(give a directory, e.g. results)")
    try:
        problem = _results_problem(text)
    except (OSError, ValueError, RuntimeError) as exc:  # a NUL, a name too long, a link loop
        problem = f"not a usable path ({getattr(exc, 'strerror', None) or exc})"
    if problem:
        raise ConfigError("results", problem)


def _results_problem(text: str) -> str | None:
    why = resultsdir.problem(text)
    if why:
        return why
    made = where = Path(text).resolve()
    while not made.exists():
        made = made.parent
    if not made.is_dir():
        return f"{str(made)!r} is a file, not a directory" + (
            "" if made == where else f": {text!r} cannot be made under it")
    try:  # os.access answers yes to root whatever the file system says
        fd, probe = tempfile.mkstemp(prefix=".hepfmt-writable-", dir=made)
    except OSError as exc:
        return f"{str(made)!r} is not writable ({exc.strerror})"
    os.close(fd)
    os.unlink(probe)
    return None


def _samples(config: dict) -> dict[str, int | None]:
    """Sample -> its events where known before any job (generated: the config's; a local file:
    its metadata's; a URL: None, found by the import job)."""
    events: dict[str, int | None] = {}
    for name, s in config["samples"].items():
        if "file" in s:
            events[name] = input_events(f"samples.{name}.file", s["file"], s.get("tree", "Events"))
            continue
        if problem := process_problem(s["process"]):
            raise ConfigError(f"samples.{name}.process", problem)
        events[name] = s["n_events"]
    return events


def input_events(key: str, path: str, tree: str = "Events") -> int | None:
    """The entries of a local sample file, from its metadata (the TTree or RNTuple header, the
    Parquet footers: no event is read, once per file and process); a file that is missing,
    unreadable, without ``tree`` or without entries is refused. None for a remote file."""
    if is_url(path):  # remote: opening it here would make every parse wait on the network
        return None
    p = Path(path)
    if not p.exists():
        raise ConfigError(key, f"no such file {path!r}")
    try:
        data_file(p, "sample file")  # a FIFO would hang the check
    except InputError as exc:
        raise ConfigError(key, str(exc)) from None
    if p.is_file() and p.stat().st_size == 0:
        raise ConfigError(key, f"{path!r} is empty")
    st = p.stat()
    try:
        return _entries(path, tree, (st.st_mtime_ns, st.st_size))
    except InputError as exc:
        raise ConfigError(key, str(exc)) from None


@cache
def _entries(path: str, tree: str, stamp: tuple[int, int]) -> int:
    from hepfmt.samples.inputs import open_input

    del stamp  # part of the cache key only: a rewritten file is read again
    return open_input(path, tree).require_entries()


def _model(config: dict) -> None:
    path = config.get("model")
    if not path:
        return
    if not Path(path).exists():
        raise ConfigError("model", f"no such file {path!r}")
    from hepfmt.samples.model import load_model

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
            if problem := cluster_size_problem(n, count, sample):
                key = f"samples.{sample}.cluster_sizes[{i}]" if own else f"cluster_sizes[{i}]"
                raise ConfigError(key, problem)
        if pairs_only(config, sample) and not compare_pairs(config):
            raise ConfigError(f"samples.{sample}.files",
                              "'pairs' needs compare.pairs (or ttree and parquet formats)")


def _sample_names(config: dict, key: str, names: list[str] | None) -> None:
    for i, name in enumerate(names or []):
        if name not in config["samples"]:
            raise ConfigError(f"{key}[{i}]", f"{name!r} is not among samples")


def _formats(config: dict) -> None:
    labels: dict[str, str] = {}
    for fmt in config["formats"]:
        same = normal(label(config, fmt))
        if same in labels:
            raise ConfigError(f"formats.{fmt}.label",
                              f"{label(config, fmt)!r} is also format {labels[same]!r}'s label "
                              "(tables and figures name a format by its label)")
        labels[same] = fmt
    for fmt, fcfg in config["formats"].items():
        name = fcfg.get("adapter", fmt)
        if name not in formats.names():
            key = f"formats.{fmt}.adapter" if "adapter" in fcfg else f"formats.{fmt}"
            raise ConfigError(key, f"no format adapter {name!r}; known: {formats.names()} "
                                   "(a format of another name needs 'adapter:')")
        f = formats.get(name)
        _variants(fmt, f, name, fcfg["variants"])
        options.check(name, f, fcfg.get("options", {}), f"formats.{fmt}.options")


def _variants(fmt: str, f: formats.Format, name: str, variants: list[str]) -> None:
    """Each variant one the format can write, spelled one way (``zstd-05`` is ``zstd-5``: the
    normal spelling replaces it), and no two of them the same file under two labels."""
    given = list(variants)
    root = formats.extension(name) == "root"
    seen: dict[object, int] = {}
    for i, text in enumerate(given):
        v = f.variant(text, f"formats.{fmt}.variants[{i}]")
        # ROOT writes a variant without a level at its default one: zstd is zstd-5
        same = (v.root_setting(), v.dictionary) if root else v.name
        if same in seen:
            j = seen[same]
            raise ConfigError(f"formats.{fmt}.variants[{i}]",
                              f"{text!r} writes the same file as variants[{j}] "
                              f"({given[j]!r}): one file under two labels")
        seen[same] = i
        variants[i] = v.name


def _normal(text: object) -> object:
    """A variant's normal spelling (``zstd-5`` for ``zstd-05``); what is no variant stays as it
    is, for the check of its key to refuse."""
    try:
        return Variant.of(text).name if isinstance(text, str) else text
    except ConfigError:
        return text


def _normalise_variants(config: dict) -> None:
    """Every other key naming a variant spelled as ``formats.<name>.variants`` now are, so that
    ``zstd-05`` there finds ``zstd-5`` here."""
    m, cmp = config["measure"], config["compare"]
    for names in (m.get("variants") or {}).values():
        names[:] = [_normal(v) for v in names]
    for fmt, v in (m.get("queries_files") or {}).items():
        m["queries_files"][fmt] = _normal(v)
    for pair in cmp.get("pairs", []):
        for side in SIDES:
            pair[side] = _normal(pair[side])
    codecs = config["metadata"].get("codecs", {})
    for fmt, v in codecs.items():
        codecs[fmt] = _normal(v)


def _cluster_sizes(config: dict, key: str, sizes: list[int] | None, samples: list[str],
                   which: str) -> None:
    """Each size of a sub-grid is one its samples are written at: one they all lack would be
    dropped from it without a word."""
    written = sorted({n for s in samples for n in sample_cluster_sizes(config, s)})
    for i, n in enumerate(sizes or []):
        if n not in written:
            raise ConfigError(f"{key}[{i}]", f"{n} is not among the cluster sizes {which} "
                                             f"are written at ({written})")


def _measure(config: dict) -> None:
    m = config.get("measure", {})
    _sample_names(config, "measure.samples", m.get("samples"))
    _cluster_sizes(config, "measure.cluster_sizes", m.get("cluster_sizes"),
                   measure_samples(config), "the samples of the measure grid")
    for fmt, variants in (m.get("variants") or {}).items():
        known = config["formats"].get(fmt, {}).get("variants")
        if known is None:
            raise ConfigError(f"measure.variants.{fmt}", "format is not in formats")
        for i, v in enumerate(variants):
            if v not in known:
                raise ConfigError(f"measure.variants.{fmt}[{i}]",
                                  f"{v!r} is not among formats.{fmt}.variants")
    lists = [("measure.readers", m.get("readers", {}))] + [
        (f"samples.{name}.readers", s["readers"]) for name, s in config["samples"].items()
        if s.get("readers")]
    for key, readers in lists:
        for fmt, names in readers.items():
            if fmt not in config["formats"]:
                raise ConfigError(f"{key}.{fmt}", "format is not in formats")
            known = formats.get(adapter(config, fmt)).readers
            for r in names:
                if r not in known:
                    raise ConfigError(f"{key}.{fmt}", f"no reader {r!r}; known: "
                                                      f"{sorted(known)}")


def _repetitions(config: dict) -> None:
    """The rules between the repetition keys, and the timing's own (:class:`Stopping`): each
    job would refuse its config, after the samples were generated and the files written."""
    m = config["measure"]
    if m["min_repetitions"] > m["repetitions"]:
        raise ConfigError("measure.min_repetitions",
                          f"{m['min_repetitions']} is above measure.repetitions "
                          f"({m['repetitions']}), the most a read is repeated")
    least = m["queries_min_repetitions"]
    if query_tasks(config) and m["repetitions"] < least:
        raise ConfigError("measure.repetitions",
                          f"{m['repetitions']} is below the {least} repetitions each query of "
                          "the queries target needs (measure.queries: [] for none)")
    try:
        Stopping.of(m)
    except ValueError as exc:
        raise ConfigError("measure", str(exc)) from None
    meta = config["metadata"]
    if meta["repetitions"] < meta["min_repetitions"]:
        raise ConfigError("metadata.repetitions",
                          f"{meta['repetitions']} is below the {meta['min_repetitions']} timed "
                          "decodes per mode the metadata study makes at least")


def _compare(config: dict) -> None:
    """Every ``compare.readers`` entry names a format (or a side) and a reader it has, and
    every pair's reader exists, whether or not ``compare.cluster_sizes`` reads it: the ratio
    tables look its measurements up either way. The pairs are of a ROOT and a Parquet format
    and of labels of their own (the tables key them by label); a sample in
    ``compare.samples`` is written at one of ``compare.cluster_sizes`` at least, each of which
    one of those samples is written at."""
    cmp = config.get("compare", {})
    _sample_names(config, "compare.samples", cmp.get("samples"))
    paired = compare_samples(config)
    sizes = cmp.get("cluster_sizes") or []
    _cluster_sizes(config, "compare.cluster_sizes", sizes, paired, "the compare samples")
    for j, sample in enumerate(cmp.get("samples") or []):
        if not set(sample_cluster_sizes(config, sample)) & set(sizes):
            raise ConfigError(f"compare.samples[{j}]",
                              f"{sample!r} is written at none of compare.cluster_sizes "
                              f"({sizes}), the only sizes the pairings are read at on it")
    for fmt, reader in cmp.get("readers", {}).items():
        key = f"compare.readers.{fmt}"
        if fmt in config["formats"]:
            _reader_exists(key, adapter(config, fmt), reader)
        elif fmt in formats.names():  # a side's default for formats of that adapter
            _reader_exists(key, fmt, reader)
        elif fmt not in SIDES:
            raise ConfigError(key, f"{fmt!r} is neither a format of formats nor a side "
                                   f"{list(SIDES)}")
    labels: dict[str, int] = {}
    for i, pair in enumerate(cmp.get("pairs", [])):
        for side in SIDES:
            fmt = pair.get(f"{side}_format", side)
            _side_kind(config, f"compare.pairs[{i}]", pair, side)
            if pair[side] not in config["formats"].get(fmt, {}).get("variants", []):
                raise ConfigError(f"compare.pairs[{i}].{side}",
                                  f"{pair[side]!r} is not among formats.{fmt}.variants")
        outside = [n for n in pair.get("cluster_sizes") or [] if n not in sizes]
        if outside:
            raise ConfigError(f"compare.pairs[{i}].cluster_sizes",
                              f"{outside[0]} is not among compare.cluster_sizes {sizes}")
        strange = [n for n in pair.get("samples") or [] if n not in paired]
        if strange:
            raise ConfigError(f"compare.pairs[{i}].samples",
                              f"{strange[0]!r} is not among the compare samples {paired}")
    for i, p in enumerate(compare_pairs(config)):
        same = normal(p.label)  # "zstd" and "ｚｓｔｄ " are one label to a reader
        if same in labels:
            raise ConfigError(f"compare.pairs[{i}].label",
                              f"{p.label!r} is also pairs[{labels[same]}]'s label (the "
                              "ratio tables know a pairing by its label)")
        labels[same] = i
    for i, p in enumerate(compare_pairs(config)):
        for name, s in zip(SIDES, p.sides, strict=True):
            if s.fastest:
                _fastest_side(config, f"compare.pairs[{i}]", p, name, s)
            elif s.format in config["formats"]:
                key = f"compare.pairs[{i}].{name}_reader" if s.named else "compare.readers"
                _reader_exists(key, adapter(config, s.format), s.reader,
                               f" (the {p.label!r} pair's {s.format})")
        strange = [n for n in p.selections if n not in config["measure"]["selections"]]
        if strange:
            raise ConfigError(f"compare.pairs[{i}].selections",
                              f"{strange[0]!r} is not among measure.selections")
    _pair_slugs(config)


def _fastest_side(config: dict, key: str, pair: Pair, name: str, side: Side) -> None:
    """A "fastest" side's candidate formats are formats of its kind, and on every sample and
    cluster size the pairing is timed at, at least one of them is read-measured (its measure
    record is what the choice is made from: hepfmt.measure.fastest)."""
    for fmt in side.formats:
        if fmt not in config["formats"]:
            raise ConfigError(f"{key}.{name}_formats", f"no format {fmt!r} in formats")
        _side_kind(config, key, {name: side.variant, f"{name}_format": fmt}, name)
    for sample in compare_samples(config):
        if pair.read_on(sample):
            for n in sample_cluster_sizes(config, sample):
                if pair.read_at(config, n):
                    fastest_candidates(config, side, sample, n)


def _pair_slugs(config: dict) -> None:
    """Two pairings of the same files and readers would write one pair record (its path names
    the pairing by formats and variants, :func:`pair_slug`)."""
    seen: dict[str, int] = {}
    for i, p in enumerate(compare_pairs(config)):
        slug = pair_slug(p)
        if slug in seen:
            raise ConfigError(f"compare.pairs[{i}]", f"the same pairing ({slug}) as "
                                                     f"pairs[{seen[slug]}]")
        seen[slug] = i


def _pair_jobs(config: dict) -> None:
    """The pair jobs' settings, each job's after its overrides, are ones ``hepfmt pair``
    accepts (it would refuse them after the files were written); every override matches
    something; and a selection's name can name a pair record's file."""
    cmp = config["compare"]
    _pair_stopping(cmp, "compare")
    sizes = cmp.get("cluster_sizes") or []
    names = list(config["measure"]["selections"])
    for i, o in enumerate(cmp.get("overrides") or []):
        key = f"compare.overrides[{i}]"
        if "cluster_sizes" not in o and "selections" not in o:
            raise ConfigError(key, "names neither cluster_sizes nor selections (give one, "
                                   "else set compare's own keys)")
        for j, n in enumerate(o.get("cluster_sizes", [])):
            if n not in sizes:
                raise ConfigError(f"{key}.cluster_sizes[{j}]",
                                  f"{n} is not among compare.cluster_sizes ({sizes})")
        for j, name in enumerate(o.get("selections", [])):
            if name not in names:
                raise ConfigError(f"{key}.selections[{j}]",
                                  f"{name!r} is not among measure.selections ({names})")
    jobs = pair_plan(config)
    if not jobs:
        return
    for name in names:
        if not PATH_NAME.fullmatch(str(name)):
            raise ConfigError(f"measure.selections.{name}",
                              "a pair record is named by its selection: letters, digits, "
                              "_, + and - only")
    for job in jobs:
        matched = [i for i, o in enumerate(cmp.get("overrides") or []) if o in
                   overrides_of(config, job)]
        if matched:
            _pair_stopping(pair_settings(config, job), f"compare.overrides[{matched[-1]}]")


def _pair_stopping(settings: dict, key: str) -> None:
    if settings["min_repetitions"] > settings["repetitions"]:
        raise ConfigError(f"{key}.min_repetitions",
                          f"{settings['min_repetitions']} is above the {settings['repetitions']} "
                          "repeat pairs at most (repetitions)")
    try:
        Stopping.of(settings)
    except ValueError as exc:
        raise ConfigError(key, str(exc)) from None


def _side_kind(config: dict, key: str, pair: dict, side: str) -> None:
    """The format on a pairing's ``side`` exists and is of that side's kind."""
    fmt = pair.get(f"{side}_format", side)
    own = f"{key}.{side}_format" if f"{side}_format" in pair else f"{key}.{side}"
    if fmt not in config["formats"]:
        raise ConfigError(own, f"{fmt!r} is not a format of formats")
    name = adapter(config, fmt)
    extension, kind = SIDE_KINDS[side]
    if formats.extension(name) != extension:
        raise ConfigError(own, f"{fmt!r} is a {formats.label(name)} format; the {side} side of "
                               f"a pairing is a {kind} one")


def _reader_exists(key: str, adapter_name: str, reader: str, where: str = "") -> None:
    if problem := reader_problem(adapter_name, reader, where):
        raise ConfigError(key, problem)


# --- rules the command line shares with the config -----------------------------------------
# Each returns what is wrong (None: nothing), in the words the config's check uses; the config's
# check names its key with it, the CLI its option (hepfmt.cli.arguments).

def rule_problem(value: object, rule: dict) -> str | None:
    """What the JSON-schema ``rule`` (``{"minimum": 1}``, a node of the config schema) says of
    ``value``, in the schema validator's words (``0 is less than the minimum of 1``), as
    :func:`hepfmt.plan.config.validate` states them; a number that is not finite is refused
    as the config's numbers are (NaN passes every bound)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a finite number"
    validator = config_schema.validator_class(rule)(rule)
    err = next(iter(validator.iter_errors(value)), None)
    if err is None:
        return None
    # a oneOf: what is wrong in the alternative of the value's own type (as validate does)
    err = next((e for e in err.context if e.validator not in ("type", "const")), err)
    return err.message


@cache
def _schema_rule(key: str) -> dict:
    node = config_schema.load()
    for part in key.split("."):
        items = part.endswith("[]")
        part = part.removesuffix("[]")
        node = node["additionalProperties"] if part == "*" else node["properties"][part]
        if items:
            node = node["items"]
    return node


def schema_problem(key: str, value: object) -> str | None:
    """:func:`rule_problem` with the config schema's rule of ``key``, dotted (``*``: any name,
    ``[]``: a list's items: ``samples.*.n_events``, ``cluster_sizes[]``): the rule of a
    command-line option that sets what that key sets (``--timeout`` as
    ``measure.timeout_s``)."""
    return rule_problem(value, _schema_rule(key))


def cluster_size_problem(n: int, events: int | None = None, sample: str = "") -> str | None:
    """A cluster size within the schema's bounds, and none above the ``events`` of ``sample``
    (None: not known yet): a larger one makes a file identical to the one-cluster file,
    labelled with a cluster size it does not have."""
    if problem := schema_problem("cluster_sizes[]", n):
        return problem
    if events is not None and n > events:
        return (f"{n} is above the {events} events of sample {sample!r} (its files would hold "
                f"one cluster of {events}, not {n})")
    return None


def process_problem(name: str) -> str | None:
    """A generated sample's physics process is one of :data:`PROCESSES`."""
    if name not in PROCESSES:
        return f"unknown process {name!r}; known: {sorted(PROCESSES)}"
    return None


def reader_problem(adapter_name: str, reader: str, where: str = "") -> str | None:
    """A reader the format adapter ``adapter_name`` has."""
    known = formats.get(adapter_name).readers
    if reader not in known:
        return f"no reader {reader!r} for {adapter_name}{where}; known: {sorted(known)}"
    return None
