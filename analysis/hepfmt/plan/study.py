"""The study grid: which files exist, which readers time each, and how they pair up.

A *format* here is an entry of the config's ``formats``: a name (``ttree_nooffsets``), the adapter
that writes and reads it (``adapter: ttree``, by default the name itself), its writer options and
its variants. One adapter can so appear several times with different knobs (TTree with and
without offset arrays, TTree written by ROOT and by uproot, Parquet with and without
BYTE_STREAM_SPLIT), each a line of its own in every table. Where each file lives is
:mod:`hepfmt.plan.paths`' business; the semantic config checks are :mod:`hepfmt.plan.checks`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from hepfmt import formats
from hepfmt.codec import Variant
from hepfmt.defaults import default
from hepfmt.errors import ConfigError
from hepfmt.paired import SIDES
from hepfmt.plan import paths

#: The reader that stands for each side in the ratios, unless ``compare.readers`` names one.
COMPARE_READERS = {"ttree": "rdf", "parquet": "pyarrow"}


@dataclass(frozen=True)
class FileSpec:
    sample: str
    format: str  # the config's name for it
    variant: str
    cluster_size: int
    adapter: str  # the module in hepfmt.formats that writes and reads it

    @property
    def extension(self) -> str:
        return formats.extension(self.adapter)

    @property
    def codec(self) -> Variant:
        return Variant.of(self.variant)

    @property
    def wildcards(self) -> dict[str, str]:
        """The rules' wildcard values naming this file (see :mod:`hepfmt.plan.paths`)."""
        return {"sample": self.sample, "format": self.format, "variant": self.variant,
                "cluster": str(self.cluster_size), "ext": self.extension}

    @property
    def stem(self) -> str:
        return paths.fill(paths.STEM, "", self.wildcards)


class Side(NamedTuple):
    """One side of a ROOT / Parquet pairing: which files, read by which reader."""

    format: str
    variant: str
    reader: str
    #: the pairing names this side's reader itself (``compare.pairs[].ttree_reader``): it
    #: is then part of the pairing's identity (:func:`pair_slug`), since the same files are
    #: paired by other readers too
    named: bool = False
    #: the other formats a "fastest" side (reader ``formats.FASTEST``) may be read from, beside
    #: ``format`` (``compare.pairs[].ttree_formats``), at ``variant``
    candidates: tuple[str, ...] = ()

    @property
    def slug(self) -> str:
        return f"{self.format}-{self.variant}" + (f".{self.reader}" if self.named else "")

    @property
    def fastest(self) -> bool:
        """Whether this side's reader is chosen by the run (hepfmt.measure.fastest)."""
        return self.reader == formats.FASTEST

    @property
    def formats(self) -> tuple[str, ...]:
        """The formats this side may be read from: its own, then its other candidates."""
        return tuple(dict.fromkeys((self.format, *self.candidates)))


@dataclass(frozen=True)
class Pair:
    label: str
    ttree: Side
    parquet: Side
    #: the cluster sizes this pairing is read at (``compare.pairs[].cluster_sizes``); empty:
    #: every one of ``compare.cluster_sizes``
    cluster_sizes: tuple[int, ...] = ()
    #: reader threads on both sides (``compare.pairs[].threads``); None: the study's first
    #: count (``measure.threads``). Named, it is part of the pairing's identity
    #: (:func:`pair_slug`): the same files and readers are paired at one thread too
    threads: int | None = None
    #: the samples this pairing is read on (``compare.pairs[].samples``); empty: every one of
    #: ``compare.samples``
    samples: tuple[str, ...] = ()
    #: the selections this pairing is read for (``compare.pairs[].selections``); empty: every
    #: one of ``measure.selections``
    selections: tuple[str, ...] = ()

    def read_at(self, config: dict, n: int) -> bool:
        """Whether this pairing is timed at cluster size ``n``."""
        return n in (config.get("compare", {}).get("cluster_sizes") or []) and \
            (not self.cluster_sizes or n in self.cluster_sizes)

    def read_on(self, sample: str) -> bool:
        """Whether this pairing is timed on ``sample`` (one of ``compare.samples``)."""
        return not self.samples or sample in self.samples

    def read_for(self, selection: str) -> bool:
        """Whether this pairing is timed for ``selection``."""
        return not self.selections or selection in self.selections

    @property
    def sides(self) -> tuple[Side, Side]:
        return self.ttree, self.parquet


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


def readers(config: dict, name: str, sample: str | None = None) -> list[str]:
    """The readers timed on format ``name`` (of ``sample``): the sample's own list, else the
    measure list, else every one its adapter has. A long sample is read by fewer readers (its
    reads cost the most)."""
    own = config["samples"].get(sample, {}).get("readers", {}) if sample else {}
    named = own.get(name) or config.get("measure", {}).get("readers", {}).get(name)
    return list(named) if named else list(formats.get(adapter(config, name)).readers)


def storage_readers(config: dict, name: str) -> list[str]:
    """The readers the ``storage`` target times on format ``name``: those its adapter marks
    ``on_storage`` (empty: the format is not read on storage profiles)."""
    return [r.name for r in formats.get(adapter(config, name)).readers.values() if r.on_storage]


def thread_counts(config: dict) -> list[int]:
    """Reader threads to time: one count, or a sweep (``measure.threads: [1, 2]``)."""
    t = config.get("measure", {}).get("threads", default("measure.threads"))
    return [t] if isinstance(t, int) else list(t)


def extensions() -> list[str]:
    return sorted({formats.extension(n) for n in formats.names()})


def spec(config: dict, sample: str, fmt: str, variant: str, cluster_size: int) -> FileSpec:
    return FileSpec(sample, fmt, variant, cluster_size, adapter(config, fmt))


def spec_of(config: dict, wildcards: Mapping[str, str]) -> FileSpec:
    """The file a job's wildcards name (the inverse of :attr:`FileSpec.wildcards`)."""
    return spec(config, wildcards["sample"], wildcards["format"], wildcards["variant"],
                int(wildcards["cluster"]))


def sample_cluster_sizes(config: dict, sample: str) -> list[int]:
    """The cluster sizes ``sample`` is written at: its own ``cluster_sizes``, else the study's."""
    return list(config["samples"][sample].get("cluster_sizes") or config["cluster_sizes"])


def all_cluster_sizes(config: dict) -> list[int]:
    """Every cluster size some sample is written at, ascending."""
    return sorted({n for s in config["samples"] for n in sample_cluster_sizes(config, s)})


def pairs_only(config: dict, sample: str) -> bool:
    """Whether only the pairings' files are written for ``sample`` (``files: pairs``)."""
    return config["samples"][sample].get("files", "all") == "pairs"


def files(config: dict) -> list[FileSpec]:
    """Every file the study writes (and whose size it tabulates): per sample, every format ×
    variant (or, for a ``files: pairs`` sample, the sides of the pairings) at its cluster
    sizes."""
    return [spec(config, sample, fmt, variant, n)
            for sample in config["samples"]
            for fmt, fcfg in config["formats"].items()
            for variant in fcfg["variants"]
            if not pairs_only(config, sample) or (fmt, variant) in _paired_sides(config, sample)
            for n in sample_cluster_sizes(config, sample)]


def _paired_sides(config: dict, sample: str) -> set[tuple[str, str]]:
    """(format, variant) of the sides of the pairings a ``files: pairs`` sample is read for:
    those timed at one of its cluster sizes (every pairing where none is timed at all)."""
    pairs = compare_pairs(config)
    mine = [p for p in pairs if p.read_on(sample) and any(
        p.read_at(config, n) for n in sample_cluster_sizes(config, sample))]
    return {(f, s.variant) for p in (mine or pairs) for s in p.sides for f in s.formats}


def compare_reader(config: dict, fmt: str, side: str) -> str:
    """The reader that stands for format ``fmt`` (the ``side`` of a pair) in the ratios."""
    named = config.get("compare", {}).get("readers") or COMPARE_READERS
    return named.get(fmt, named.get(side, ""))


def _side_reader(config: dict, side: Side) -> formats.Reader | None:
    """The reader of a pairing's side; None for a format or reader the config does not have
    (check_config names it)."""
    if side.format not in config["formats"]:
        return None
    return formats.get(adapter(config, side.format)).readers.get(side.reader)


def reader_kind(config: dict, side: Side) -> str:
    """How the reader of a pairing's side goes through its file (:attr:`Reader.kind`); empty
    where there is no such reader."""
    r = _side_reader(config, side)
    return r.kind if r else ""


def reader_mode(config: dict, side: Side) -> str:
    """What the reader of a pairing's side leaves its user with (:attr:`Reader.mode`: stream
    or hand-over): every ratio row names it; empty where there is no such reader."""
    r = _side_reader(config, side)
    return r.mode if r else ""


def reader_knobs(config: dict, side: Side) -> dict[str, object]:
    """The knobs the reader's name stands for (:attr:`Reader.knobs`: its memory pool)."""
    r = _side_reader(config, side)
    return dict(r.knobs) if r else {}


def compare_pairs(config: dict) -> list[Pair]:
    """The ROOT / Parquet pairings of the ratio tables: the config's ``compare.pairs``, else
    same-algorithm pairings of the ``ttree`` and ``parquet`` variants (ignoring levels, no
    dictionary)."""
    fm = config["formats"]
    given = config.get("compare", {}).get("pairs") or [
        {"ttree": tv, "parquet": pv}
        for tv in fm.get("ttree", {}).get("variants", [])
        for pv in fm.get("parquet", {}).get("variants", [])
        if Variant.of(tv).algorithm == Variant.of(pv).algorithm
        and not Variant.of(pv).dictionary]

    def side(p: dict, name: str) -> Side:
        fmt = p.get(f"{name}_format", name)
        named = p.get(f"{name}_reader")
        return Side(fmt, p[name], named or compare_reader(config, fmt, name), bool(named),
                    tuple(p.get(f"{name}_formats") or ()))

    return [Pair(p.get("label") or f"{p['ttree']} vs {p['parquet']}",
                 side(p, "ttree"), side(p, "parquet"), tuple(p.get("cluster_sizes") or ()),
                 p.get("threads"), tuple(p.get("samples") or ()),
                 tuple(p.get("selections") or ()))
            for p in given]


def pairs(config: dict) -> list[dict]:
    """:func:`compare_pairs` as the config spells them: ``label``, the ``ttree`` and
    ``parquet`` variants and the ``ttree_format`` and ``parquet_format`` names."""
    return [{"label": p.label, **{s: getattr(p, s).variant for s in SIDES},
             **{f"{s}_format": getattr(p, s).format for s in SIDES},
             **{f"{s}_reader": getattr(p, s).reader for s in SIDES},
             "threads": pair_threads(config, p)}
            for p in compare_pairs(config)]


def pair_threads(config: Mapping, pair: Pair) -> int:
    """The reader threads of both sides of ``pair``: its own ``threads``, else the study's
    first count."""
    return pair.threads or thread_counts(dict(config))[0]


def measure_samples(config: dict) -> list[str]:
    """The samples of the measure sub-grid: ``measure.samples``, else every ``files: all`` one."""
    named = config.get("measure", {}).get("samples")
    return list(named) if named else [s for s in config["samples"]
                                      if not pairs_only(config, s)]


def formats_table_files(config: dict) -> tuple[str, dict[FileSpec, list[str]]]:
    """The files the formats table describes, with their readers: the first measure sample's
    files at the largest cluster size read there ((sample, {file: readers})); what ``hepfmt
    bench overhead-study`` times."""
    sample = measure_samples(config)[0]
    mine = {f: r for f, r in read_plan(config).items() if f.sample == sample}
    if not mine:
        raise ConfigError("measure.samples", f"no file of sample {sample!r} is read-measured")
    largest = max(f.cluster_size for f in mine)
    return sample, {f: r for f, r in mine.items() if f.cluster_size == largest}


def compare_samples(config: dict) -> list[str]:
    """The samples the pairings are read on: ``compare.samples``, else every sample."""
    return list(config.get("compare", {}).get("samples") or config["samples"])


def _in_measure_grid(config: dict, f: FileSpec) -> bool:
    m = config["measure"]
    sizes = m.get("cluster_sizes") or all_cluster_sizes(config)
    variants = (m.get("variants") or {}).get(f.format, config["formats"][f.format]["variants"])
    return f.sample in measure_samples(config) and f.cluster_size in sizes \
        and f.variant in variants


def read_plan(config: dict) -> dict[FileSpec, list[str]]:
    """Every file of the measure sub-grid with its readers, in grid order.

    Reads cost far more than sizes, so ``measure`` narrows them (``samples``, ``cluster_sizes``
    and ``variants``; left out = all of it), each file timed by every reader of
    ``measure.readers`` (or of its sample's ``readers``). The ROOT / Parquet pairings are not
    here: both files of a pairing are read in one job (:func:`pair_plan`), since two sides
    timed in jobs minutes apart see different machines.
    """
    plan = {f: list(dict.fromkeys(readers(config, f.format, f.sample))) for f in files(config)
            if _in_measure_grid(config, f)}
    return {f: r for f, r in plan.items() if r}


def read_modes(config: dict) -> list[str]:
    """The cache modes the measure sub-grid reads in (a pair job reads warm: its first reads
    follow the digest check that loads the page cache)."""
    return list(config["measure"]["modes"])


#: A side of :func:`pair_slug` (``format-variant``, ``.reader`` when the pairing names it;
#: reader names may hold a hyphen: ``pyarrow-system``) and the whole slug with its thread count
#: where the pairing names one (``.2threads``), as a pattern: the pair rule's wildcard constraint.
_SIDE_PATTERN = r"[a-z0-9_]+-[a-z0-9+-]+(?:\.[a-z0-9_-]+)?"
PAIR_SLUG_PATTERN = rf"{_SIDE_PATTERN}\.vs\.{_SIDE_PATTERN}(?:\.[0-9]+threads)?"


def pair_slug(pair: Pair) -> str:
    """A pairing as a path component: its formats and variants, its readers where it names
    them (:attr:`Side.slug`) and its threads where it names them (its label is free text)."""
    threads = f".{pair.threads}threads" if pair.threads else ""
    return f"{pair.ttree.slug}.vs.{pair.parquet.slug}{threads}"


@dataclass(frozen=True)
class PairJob:
    """One ``hepfmt pair`` job: a pairing on one sample at one cluster size, one selection.

    One job per selection, so that the costly ones (every branch of a 2018-sized file) can be
    given fewer rounds and repetitions (``compare.overrides``) than the cheap ones."""

    pair: Pair
    sample: str
    cluster_size: int
    selection: str
    ttree: FileSpec
    parquet: FileSpec
    #: per side, the read-measured files a "fastest" side is chosen from ((side, files), ...;
    #: none for a side whose reader the pairing fixes): a tuple, so that a job stays hashable
    candidates: tuple[tuple[str, tuple[FileSpec, ...]], ...] = ()
    #: the sides (of :data:`SIDES`) whose fixed file the measure sub-grid also reads: the job
    #: takes their codec bounds from that measure record instead of measuring them again (a
    #: "fastest" side takes its chosen candidate's)
    measured_sides: tuple[str, ...] = ()

    @property
    def measured_files(self) -> list[FileSpec]:
        """The files of :attr:`measured_sides` (their measure records: the job's inputs)."""
        return [f for name, f in zip(SIDES, (self.ttree, self.parquet), strict=True)
                if name in self.measured_sides]

    def candidates_of(self, side: str) -> tuple[FileSpec, ...]:
        """The files side ``side`` (of :data:`SIDES`) is chosen from (empty: none)."""
        return dict(self.candidates).get(side, ())

    @property
    def candidate_files(self) -> list[FileSpec]:
        """Every candidate file of both sides (the pair job's extra inputs)."""
        return [f for _, files in self.candidates for f in files]

    @property
    def wildcards(self) -> dict[str, str]:
        """The rule's wildcard values naming this job (see :data:`paths.PAIR`)."""
        return {"sample": self.sample, "pair": pair_slug(self.pair),
                "cluster": str(self.cluster_size), "selection": self.selection}


def _pair_job(config: dict, pair: Pair, sample: str, n: int, selection: str,
              measured: Mapping[FileSpec, list[str]] | None = None) -> PairJob:
    measured = read_plan(config) if measured is None else measured
    files = [spec(config, sample, s.format, s.variant, n) for s in pair.sides]
    return PairJob(pair, sample, n, selection, *files,
                   tuple((name, fastest_candidates(config, side, sample, n, measured))
                         for name, side in zip(SIDES, pair.sides, strict=True) if side.fastest),
                   tuple(name for name, side, f in zip(SIDES, pair.sides, files, strict=True)
                         if not side.fastest and f in measured))


def fastest_candidates(config: dict, side: Side, sample: str, n: int,
                       measured: Mapping[FileSpec, list[str]] | None = None
                       ) -> tuple[FileSpec, ...]:
    """The files of ``sample`` at cluster size ``n`` a "fastest" ``side`` is chosen from: each
    of its formats at its variant that the measure sub-grid times (its measure record gives
    every reader's time; ``measured``: :func:`read_plan`, computed once by a caller that plans
    many jobs); a ConfigError where there is none (check_config says it first)."""
    measured = read_plan(config) if measured is None else measured
    found = tuple(f for fmt in side.formats if fmt in config["formats"]
                  if (f := spec(config, sample, fmt, side.variant, n)) in measured)
    if not found:
        raise ConfigError("compare.pairs", f"a 'fastest' side ({', '.join(side.formats)} "
                          f"{side.variant}) on sample {sample!r} at {n}: no such file is "
                          "read-measured (measure.samples, measure.cluster_sizes, "
                          "measure.variants)")
    return found


def pair_plan(config: dict) -> list[PairJob]:
    """Every paired measurement: each pairing on each of ``compare.samples`` it is read on
    (:meth:`Pair.read_on`) at each of its cluster sizes (:meth:`Pair.read_at`) the sample is
    written at, once per selection of ``measure.selections``."""
    measured = read_plan(config)  # once, not once per job
    return [_pair_job(config, pair, sample, n, selection, measured)
            for sample in compare_samples(config)
            for n in sample_cluster_sizes(config, sample)
            for pair in compare_pairs(config) if pair.read_at(config, n) and pair.read_on(sample)
            for selection in config["measure"]["selections"] if pair.read_for(selection)]


def pair_job_of(config: dict, wildcards: Mapping[str, str],
                measured: Mapping[FileSpec, list[str]] | None = None) -> PairJob:
    """The pair job a rule's wildcards name (the inverse of :attr:`PairJob.wildcards`;
    ``measured``: :func:`read_plan`, where the caller holds it)."""
    pair = next((p for p in compare_pairs(config) if pair_slug(p) == wildcards["pair"]), None)
    if pair is None:
        raise ConfigError("compare.pairs", f"no pairing {wildcards['pair']!r}")
    return _pair_job(config, pair, wildcards["sample"], int(wildcards["cluster"]),
                     wildcards["selection"], measured)


#: What ``compare.overrides`` may set for the jobs it matches.
PAIR_SETTINGS = ("rounds", "min_repetitions", "repetitions", "budget_s")


def pair_settings(config: dict, job: PairJob) -> dict:
    """A pair job's rounds, repetitions, budget, precision and load limit: ``compare``'s, then
    each entry of ``compare.overrides`` matching the job (its cluster size and selection), in
    order."""
    cmp = config["compare"]
    out = {k: cmp[k] for k in (*PAIR_SETTINGS, "precision", "max_load")}
    for o in overrides_of(config, job):
        out.update({k: o[k] for k in PAIR_SETTINGS if k in o})
    return out


def overrides_of(config: dict, job: PairJob) -> list[dict]:
    """The entries of ``compare.overrides`` that apply to ``job``, in order."""
    return [o for o in config["compare"].get("overrides") or []
            if job.cluster_size in o.get("cluster_sizes", [job.cluster_size])
            and job.selection in o.get("selections", [job.selection])]


def proof_plan(config: dict) -> dict[FileSpec, list[str]]:
    """The readers ``convert`` proves on each file: those of :func:`read_plan`, and each pair
    side's on its files (a pair worker trusts that proof and the size record's digest, so that
    its first read is a first read)."""
    plan = {f: list(r) for f, r in read_plan(config).items()}
    for job in pair_plan(config):
        for f, side in zip((job.ttree, job.parquet), job.pair.sides, strict=True):
            if side.fastest:  # its candidates are read-measured: proven by every reader
                continue
            chosen = plan.setdefault(f, [])
            if side.reader not in chosen:
                chosen.append(side.reader)
    return plan


def file_events(config: dict) -> int:
    """The file length at which whole-file read-time ratios are stated (``compare.file_events``)."""
    return int(config.get("compare", {}).get("file_events", default("compare.file_events")))


def measured(config: dict) -> list[FileSpec]:
    """The files whose reads are timed (see :func:`read_plan`)."""
    return list(read_plan(config))


def file_readers(plan: Mapping[FileSpec, list[str]], spec: FileSpec) -> list[str]:
    """The readers timed on one file of a :func:`read_plan` (computed once per workflow)."""
    if spec not in plan:
        raise ConfigError(f"formats.{spec.format}", f"{spec.variant} at cluster size "
                          f"{spec.cluster_size} is not read-measured (measure)")
    return plan[spec]


#: The ADL benchmark tasks (hepfmt.queries.tasks), by number: ``measure.queries``' default.
QUERY_TASKS = list(range(1, 9))


def query_tasks(config: dict) -> list[int]:
    """The tasks to time (``measure.queries``; [] = no queries)."""
    return list(config.get("measure", {}).get("queries", QUERY_TASKS))


def queries(config: dict) -> dict[FileSpec, list[str]]:
    """Every file the analysis queries run on, with the engines that run them, in grid order.

    Queries are timed on one file per sample of the measure sub-grid and format, not on the
    grid: what they compare is formats and engines on the same analysis, and each file costs
    every engine's set-up plus (1 + 2 × repetitions) runs of every task. By default that file
    is the format's first zstd variant (else its first variant) that the measure sub-grid
    times, at the largest cluster size it times it at: the file of the ``formats`` table.
    ``measure.queries_files`` (format -> variant) names the variants instead, at the largest
    cluster size of the study, and so also the formats (a format left out is not queried). A
    file is queried by every engine that
    reads its adapter (:data:`hepfmt.queries.ENGINES`) and, with ``measure.dask_scheduler``,
    by the distributed ones too.
    """
    from hepfmt.queries import reading

    tasks = query_tasks(config)
    if not tasks:
        return {}
    m = config.get("measure", {})
    named = m.get("queries_files") or {}
    for fmt, variant in named.items():
        if fmt not in config["formats"] or variant not in config["formats"][fmt]["variants"]:
            raise ConfigError(f"measure.queries_files.{fmt}",
                              f"the study writes no {fmt} file of variant {variant!r}")
        if not reading(adapter(config, fmt), tasks):
            raise ConfigError(f"measure.queries_files.{fmt}",
                              f"no query engine reads {adapter(config, fmt)} files")
    if named:
        chosen = {(fmt, v, max(config["cluster_sizes"])) for fmt, v in named.items()}
    else:
        measured_files = list(read_plan(config))
        chosen = set()
        for fmt in config["formats"]:
            mine = [f for f in measured_files if f.format == fmt]
            zstd = [f for f in mine if f.codec.algorithm == "zstd"] or mine
            if zstd:
                variant = zstd[0].variant
                chosen.add((fmt, variant, max(f.cluster_size for f in mine
                                              if f.variant == variant)))
    distributed = bool(m.get("dask_scheduler"))
    plan = {}
    samples = measure_samples(config)
    for f in files(config):
        engines = reading(f.adapter, tasks, distributed)
        if (f.format, f.variant, f.cluster_size) in chosen and f.sample in samples and engines:
            plan[f] = engines
    return plan
