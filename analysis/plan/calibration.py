"""The cost model fitted to what past jobs took: Snakemake's own ``benchmark:`` records.

The parts in :mod:`.cost` were measured once, on one machine; a cluster node, another CPU or
another config's files run at other speeds. Every generate, convert, measure and pair job keeps
Snakemake's benchmark record (:data:`analysis.plan.paths.BENCHMARKED`: wall seconds, peak
memory, CPU time), so a results directory that has run holds what its jobs really took. For each
rule, the jobs of the *current* plan that have a record give the ratio of measured to estimated
seconds; the median of those ratios (:data:`MIN_JOBS` records at least) scales that rule's
estimate: in ``check-config``'s CPU total and in each job's batch time request. A rule with
fewer records keeps the shipped parts (the fallback).
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from analysis.errors import ConfigError
from analysis.plan import cost, paths, study

#: Records a rule needs before its fit replaces the shipped parts.
MIN_JOBS = 3


@dataclass(frozen=True)
class Fit:
    """One rule's measured / estimated seconds over the jobs that have a record."""

    rule: str
    jobs: int
    factor: float  # the median ratio
    low: float  # the smallest and largest ratio
    high: float


def measured_seconds(path: str | Path) -> float | None:
    """The wall seconds of a benchmark record (the median of its repeats); None where it is
    not one (a partly written or foreign file is no record, not an error: it is a hint)."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
        times = [float(r["s"]) for r in rows]
    except (OSError, KeyError, TypeError, ValueError):
        return None
    return statistics.median(times) if times else None


def planned_jobs(config: Mapping) -> dict[str, list[Mapping[str, str]]]:
    """The wildcards of every job of each benchmarked rule in ``config``'s plan."""
    c = dict(config)
    return {"generate": [{"sample": s} for s in config["samples"]],
            "convert": [f.wildcards for f in study.files(c)],
            "measure": [f.wildcards for f in study.read_plan(c)],
            "pair": [j.wildcards for j in study.pair_plan(c)]}


def fit(config: Mapping) -> dict[str, Fit]:
    """Per rule, the fit of the cost model to the records in ``config``'s results directory
    (only rules with :data:`MIN_JOBS` records or more)."""
    c = dict(config)
    plans = {"read_plan": study.read_plan(c), "proof_plan": study.proof_plan(c)}
    out = {}
    for rule, jobs in planned_jobs(config).items():
        ratios = []
        for wc in jobs:
            seconds = measured_seconds(paths.benchmark(config["results"], rule, wc))
            if seconds is None:
                continue
            try:
                estimate = cost.job_seconds(rule, config, wc, **plans)
            except (ConfigError, KeyError):
                continue
            if estimate > 0:
                ratios.append(seconds / estimate)
        if len(ratios) >= MIN_JOBS:
            out[rule] = Fit(rule, len(ratios), statistics.median(ratios), min(ratios),
                            max(ratios))
    return out


def factor(fits: Mapping[str, Fit] | None, rule: str) -> float:
    """What ``rule``'s estimate is multiplied by: its fit's, else 1 (the shipped parts)."""
    f = (fits or {}).get(rule)
    return f.factor if f else 1.0


def whole(config: Mapping, fits: Mapping[str, Fit] | None = None) -> cost.Breakdown:
    """:func:`cost.whole`, each rule's part scaled by its fit (``fits``: computed here)."""
    fits = fit(config) if fits is None else fits
    raw = cost.whole(config)
    pairs = raw.pair_s * factor(fits, "pair")
    reads = (raw.read_s - raw.pair_s) * factor(fits, "measure")
    return replace(raw, generate_s=raw.generate_s * factor(fits, "generate"),
                   write_s=raw.write_s * factor(fits, "convert"),
                   proof_s=raw.proof_s * factor(fits, "convert"), read_s=reads + pairs,
                   pair_s=pairs)


def describe(fits: Mapping[str, Fit], results: str) -> str:
    """One line: which rules the records calibrated, and how far the shipped parts were off."""
    if not fits:
        return (f"calibration: none (fewer than {MIN_JOBS} benchmark records per rule under "
                f"{results}/benchmarks): the shipped parts alone")
    parts = [f"{f.rule} x{f.factor:.2f} ({f.jobs} jobs, {f.low:.2f}-{f.high:.2f})"
             for f in fits.values()]
    return (f"calibration from this results directory's benchmark records (measured / "
            f"estimated seconds, median of the jobs): {'; '.join(parts)}")
