"""Command-line fragments the rules pass to ``hepfmt``, built from the config.

Each fragment is already split into shell words: every value that comes from the config (a file
path, a model path, a YAML value) is ``shlex``-quoted here, so that a path with a space or a
quote reaches the CLI as one argument, however the rule's shell command places the fragment.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import yaml

from hepfmt.formats.base import is_url
from hepfmt.plan import paths, study
from hepfmt.plan import selections as select

if TYPE_CHECKING:
    from hepfmt.measure.pairs import PairSide, PairSpec


def _options(flag: str, items: Iterable[tuple[str, str]]) -> str:
    return " ".join(f"{flag} {shlex.quote(f'{k}={v}')}" for k, v in items)


def sample(config: Mapping, name: str) -> str:
    """The command that makes sample ``name``'s source: generate it, or import its file."""
    s = config["samples"][name]
    if "file" in s:
        return (f"hepfmt import {shlex.quote(s['file'])} "
                f"--tree {shlex.quote(s.get('tree', 'Events'))}")
    model = f"--model {shlex.quote(config['model'])}" if config["model"] else ""
    return (f"hepfmt generate --process {shlex.quote(s['process'])} --events {s['n_events']} "
            f"--seed {s.get('seed', 1)} {model}")


def sample_inputs(config: Mapping, name: str) -> list[str]:
    """Local files sample ``name`` is made from, so that a changed input remakes it."""
    s = config["samples"][name]
    path = s.get("file") or config["model"]
    return [path] if path and not is_url(path) else []


def prove(plan: Mapping, spec: object) -> str:
    """``--prove READER,...``: the readers a proof plan (``study.proof_plan``) gives the file
    ``spec``, for ``convert`` to prove; empty for a file no read times."""
    readers = plan.get(spec, [])
    return f"--prove {shlex.quote(','.join(readers))}" if readers else ""


def writer_options(config: Mapping, fmt: str) -> str:
    """Format ``fmt``'s writer options as repeated ``--option KEY=VALUE`` (YAML values: a
    YAML-quoted string such as '2.0' reaches the CLI with its quotes)."""
    opts = config["formats"][fmt].get("options", {})
    return _options("--option", (
        (k, yaml.safe_dump(v, default_flow_style=True).strip()) for k, v in opts.items()))


def selections(config: Mapping, sample: str) -> str:
    """The branch selections to time on sample ``sample``'s files, as repeated ``--selection
    NAME=BRANCH,...`` (or ``*``): resolved against its schema (:mod:`.selections`), or, for a
    remote sample, as the config writes them, for the measure job to resolve."""
    resolved = select.for_sample(config, sample)
    return _options("--selection", (
        (name, select.to_cli(sel if resolved[name] is None else resolved[name]))
        for name, sel in config["measure"]["selections"].items()))


def metadata_write(config: Mapping) -> str:
    """The metadata study's shape and Parquet options, shared by every file it writes."""
    m = config["metadata"]
    return (f"--row-groups {m['row_groups']} --rows-per-group {m['rows_per_group']} "
            f"--seed {m['seed']} " + _options("--option", m["parquet_options"].items()))


def flag(name: str, values: Iterable[str]) -> str:
    """``name`` before each quoted value: nothing for an optional input that is absent."""
    return " ".join(f"{name} {shlex.quote(v)}" for v in values)


def _branches(config: Mapping, sample: str, name: str) -> list[str]:
    """The branches selection ``name`` reads on ``sample``, ``*`` as every one of them: a
    remote sample's against its imported source, as its measure job resolves them."""
    schema = select.sample_schema(config, sample)
    if schema is None:
        from hepfmt.samples.source import read_source_meta, schema_of

        schema = schema_of(read_source_meta(paths.source(config["results"], sample)))
        resolved = select.resolve(config["measure"]["selections"][name], schema)
    else:
        resolved = select.for_sample(config, sample)[name]
    return list(schema.names) if resolved == select.ALL else list(resolved or [])


def _side(config: Mapping, f: study.FileSpec, side: study.Side,
          candidates: tuple[study.FileSpec, ...] = (), measured: bool = False) -> PairSide:
    from hepfmt.measure.fastest import Candidate
    from hepfmt.measure.pairs import PairSide

    results = config["results"]
    return PairSide(paths.written(results, f), f.format, f.adapter, f.variant, side.reader,
                    paths.size(results, f),
                    candidates=tuple(Candidate(paths.measurement(results, c),
                                               paths.size(results, c)) for c in candidates),
                    measured=paths.measurement(results, f) if measured else "")


def pair_spec(config: Mapping, job: study.PairJob) -> PairSpec:
    """What ``hepfmt pair`` measures for one job of ``study.pair_plan``: the workflow's rule
    and ``hepfmt bench reproduce`` both build it here, so they time the same thing."""
    from hepfmt.measure.pairs import PairSpec

    c = dict(config)
    s = study.pair_settings(c, job)
    return PairSpec(
        label=job.pair.label, source=paths.source(c["results"], job.sample),
        cluster_size=job.cluster_size,
        ttree=_side(c, job.ttree, job.pair.ttree, job.candidates_of("ttree"),
                    "ttree" in job.measured_sides),
        parquet=_side(c, job.parquet, job.pair.parquet, job.candidates_of("parquet"),
                      "parquet" in job.measured_sides),
        selections={job.selection: _branches(c, job.sample, job.selection)},
        threads=study.pair_threads(c, job.pair), rounds=s["rounds"], precision=s["precision"],
        budget_s=s["budget_s"], min_repetitions=s["min_repetitions"],
        max_repetitions=s["repetitions"], max_load=s["max_load"],
        timeout=c["measure"]["timeout_s"], file_events=study.file_events(c))


def pair_arguments(spec: PairSpec) -> str:
    """``spec`` as ``hepfmt pair``'s arguments (all but ``-o``), each value quoted."""
    words = [("--label", spec.label), ("--source", spec.source),
             ("--cluster-size", spec.cluster_size)]
    for name in study.SIDES:
        side: PairSide = getattr(spec, name)
        words += [(f"--{name}", side.path), (f"--{name}-format", side.adapter),
                  (f"--{name}-name", side.format), (f"--{name}-variant", side.variant),
                  (f"--{name}-reader", side.reader)]
        if side.size_record:
            words.append((f"--{name}-size-record", side.size_record))
        words += [(f"--{name}-candidate", c.reads, c.size_record) for c in side.candidates]
        if side.measured:
            words.append((f"--{name}-measured", side.measured))
    words += [("--selection", f"{n}={select.to_cli(b)}") for n, b in spec.selections.items()]
    words += [("--rounds", spec.rounds), ("--repetitions", spec.max_repetitions),
              ("--min-repetitions", spec.min_repetitions), ("--precision", spec.precision),
              ("--budget-s", spec.budget_s), ("--max-load", spec.max_load),
              ("--file-events", spec.file_events), ("--threads", spec.threads),
              ("--timeout", spec.timeout)]
    return " ".join(" ".join([flag, *(shlex.quote(str(v)) for v in values)])
                    for flag, *values in words)
