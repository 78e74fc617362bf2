"""The cost model fitted to what past jobs took: Snakemake's own ``benchmark:`` records.

The parts in :mod:`.cost` were measured once, on one machine; a cluster node, another CPU or
another config's files run at other speeds. Every generate, convert, measure and pair job keeps
Snakemake's benchmark record (:data:`hepfmt.plan.paths.BENCHMARKED`: wall seconds, peak
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

from hepfmt.errors import ConfigError, InputError
from hepfmt.plan import cost, paths, study

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


def _timed_jobs(config: Mapping, results: str | Path | None = None
                ) -> dict[str, list[tuple[float, float]]]:
    """Per rule, (measured, estimated) seconds of every job of ``config``'s plan that has a
    record under ``results`` (default: the config's own results directory)."""
    c = dict(config)
    root = str(results) if results is not None else config["results"]
    plans = {"read_plan": study.read_plan(c), "proof_plan": study.proof_plan(c)}
    out: dict[str, list[tuple[float, float]]] = {}
    for rule, jobs in planned_jobs(config).items():
        pairs = []
        for wc in jobs:
            seconds = measured_seconds(paths.benchmark(root, rule, wc))
            if seconds is None:
                continue
            try:
                estimate = cost.job_seconds(rule, config, wc, **plans)
            except (ConfigError, KeyError):
                continue
            if estimate > 0:
                pairs.append((seconds, estimate))
        out[rule] = pairs
    return out


def fit(config: Mapping, results: str | Path | None = None) -> dict[str, Fit]:
    """Per rule, the fit of the cost model to the records under ``results`` (default: the
    config's own results directory; only rules with :data:`MIN_JOBS` records or more)."""
    out = {}
    for rule, jobs in _timed_jobs(config, results).items():
        ratios = [m / e for m, e in jobs]
        if len(ratios) >= MIN_JOBS:
            out[rule] = Fit(rule, len(ratios), statistics.median(ratios), min(ratios),
                            max(ratios))
    return out


def run_config(run: str | Path) -> dict:
    """The resolved config a run left in its results directory (``RUN/config.yaml``: a
    results directory or a committed reference), to plan its jobs and find their records."""
    from hepfmt.plan import config as cfg

    path = Path(run) / "config.yaml"
    if not path.is_file():
        raise InputError(run, "no config.yaml in it: not the results directory of a run "
                              "(give the directory `make run` wrote, or a reference)")
    return cfg.load(path)


@dataclass(frozen=True)
class RuleCheck:
    """The cost model against what one rule's jobs of a run took, summed over its jobs."""

    rule: str
    jobs: int
    measured_s: float
    shipped_s: float  # the shipped parts' estimate of the same jobs
    #: each job's estimate scaled by the median ratio of the rule's *other* jobs: the
    #: calibrated model predicting a job it was not fitted to
    calibrated_s: float

    @property
    def error(self) -> float:
        """The calibrated estimate's relative error on the rule's total."""
        return self.calibrated_s / self.measured_s - 1


def check(config: Mapping, results: str | Path | None = None) -> list[RuleCheck]:
    """Each rule with :data:`MIN_JOBS` records: its jobs' measured total beside the shipped
    and the calibrated (leave-one-out) estimates of the same jobs."""
    out = []
    for rule, jobs in _timed_jobs(config, results).items():
        if len(jobs) < MIN_JOBS:
            continue
        ratios = [m / e for m, e in jobs]
        calibrated = sum(e * statistics.median(ratios[:i] + ratios[i + 1:])
                         for i, (_, e) in enumerate(jobs))
        out.append(RuleCheck(rule, len(jobs), sum(m for m, _ in jobs),
                             sum(e for _, e in jobs), calibrated))
    return out


def check_report(checks: list[RuleCheck], tolerance: float = 0.3) -> str:
    """The check as a table: per rule, what its jobs took, what the shipped parts said and
    what the calibration says, and whether it is within ``tolerance``."""
    head = (f"{'rule':<10}{'jobs':>6}{'took s':>10}{'shipped s':>11}{'shipped/took':>14}"
            f"{'calibrated s':>14}{'calibrated/took':>17}  within {tolerance:.0%}")
    lines = [head]
    for c in checks:
        lines.append(f"{c.rule:<10}{c.jobs:>6}{c.measured_s:>10.1f}{c.shipped_s:>11.1f}"
                     f"{c.shipped_s / c.measured_s:>14.2f}{c.calibrated_s:>14.1f}"
                     f"{c.calibrated_s / c.measured_s:>17.2f}  "
                     f"{'yes' if abs(c.error) <= tolerance else 'no'}")
    return "\n".join(lines)


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


def describe(fits: Mapping[str, Fit], results: str, run: str | Path | None = None) -> str:
    """One line: which rules the records calibrated (this results directory's, or the run
    ``run``'s), and how far the shipped parts were off."""
    where = f"{run}/benchmarks" if run is not None else f"{results}/benchmarks"
    if not fits:
        return (f"calibration: none (fewer than {MIN_JOBS} benchmark records per rule under "
                f"{where}): the shipped parts alone")
    parts = [f"{f.rule} x{f.factor:.2f} ({f.jobs} jobs, {f.low:.2f}-{f.high:.2f})"
             for f in fits.values()]
    whose = f"run {run}'s" if run is not None else "this results directory's"
    return (f"calibration from {whose} benchmark records (measured / estimated seconds, "
            f"median of the jobs): {'; '.join(parts)}")
