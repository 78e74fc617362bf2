"""One CPU model per ratio (issue 43): pair records timed on two CPU models are tabulated
apart, each row naming its model, never pooled into one ratio or interval over samples; the
documents give each model its own heading; the answer states each; a cluster can pin the timing
jobs to one model and check-config says where they run."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from paired_records import PROV, plan, record, size_records, write

from hepfmt.plan import resources
from hepfmt.report import answer
from hepfmt.report.tables import tabulate

N_EVENTS, CLUSTER = 4000, 1000
#: per CPU model, ROOT's steady rate (events/s): Parquet's is 10000 on both
ROOT_RATE = {"cpu A": 20e3, "cpu B": 5e3}


def _record(cpu: str, sample: str) -> dict:
    pair = ((0.1, 0.1, ROOT_RATE[cpu]), (0.1, 0.1, 10e3))
    prov = {**PROV, "machine": {**PROV["machine"], "cpu": cpu}}
    return record([pair] * 6, [[pair, pair]] * 6, sample=sample, cluster=CLUSTER,
                  n_events=N_EVENTS, provenance=prov)


def _tables(tmp: Path) -> Path:
    sizes = size_records(tmp, ("S1", "S2"), CLUSTER, N_EVENTS)
    # sample S1 timed on both models, S2 on model B only
    pairs = [write(tmp / "pairs" / cpu.replace(" ", "_"), _record(cpu, sample))
             for cpu, sample in (("cpu A", "S1"), ("cpu B", "S1"), ("cpu B", "S2"))]
    out = tmp / "tables"
    tabulate(plan(1_000_000), sizes, [], out, tmp / "provenance.json", pairs)
    return out


def test_two_cpu_models_are_tabulated_apart(tmp_path: Path) -> None:
    tables = _tables(tmp_path)
    ratios = pd.read_csv(tables / "ratios.csv", comment="#")
    rate = ratios[(ratios.quantity == "throughput") & (ratios.read == "repeats")]
    by_cpu = dict(zip(rate.cpu, rate.ratio_mean, strict=True))
    # each model's own ratio (ROOT / Parquet speed, as a rate ratio), none of the two mixed
    assert by_cpu == {"cpu A": pytest.approx(2.0), "cpu B": pytest.approx(0.5)}
    assert dict(zip(rate.cpu, rate.n_samples, strict=True)) == {"cpu A": 1, "cpu B": 2}
    # sizes are the same bytes on every CPU: one size row, not one per model
    assert len(ratios[ratios.quantity == "size"]) == 1
    pairs = pd.read_csv(tables / "pairs.csv", comment="#")
    assert set(pairs.cpu) == {"cpu A", "cpu B"}
    assert all(";" not in c for c in pairs.cpu)
    doc = (tables / "ratios.md").read_text()
    assert "Measured on cpu A:" in doc and "Measured on cpu B:" in doc


def test_the_answer_states_each_cpu_model(tmp_path: Path) -> None:
    tables = _tables(tmp_path)
    built = answer.build(tables)
    speed = [c for c in built.facts.claims if c.topic.startswith("speed")]
    assert {c.cpu for c in speed} == {"cpu A", "cpu B"}


def test_timing_jobs_can_be_pinned_to_one_partition_or_feature() -> None:
    config = {"batch": {"timing_partition": "epyc", "timing_constraint": "zen3"}}
    for rule in resources.TIMING_RULES:
        assert resources.timing_placement(rule, config) == {"slurm_partition": "epyc",
                                                            "constraint": "zen3"}
    assert resources.timing_placement("convert", config) == {}
    assert resources.timing_placement("pair", {}) == {}
    assert "'epyc'" in resources.placement_words(config)
    assert "batch.timing_partition" in resources.placement_words({})
