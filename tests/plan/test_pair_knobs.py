"""The pairing keys of issue 40: ``threads`` (a pairing at two threads is a job of its own, and
its spec reads at two threads) and ``samples`` (a costly knob on one sample, the headline on
several); the shipped configs pair the headline at 100000 on two samples."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from hepfmt.errors import ConfigError
from hepfmt.plan import commands, record, study
from hepfmt.plan import config as cfg

ROOT = Path(__file__).resolve().parents[2]


def _config(*pairs: dict) -> dict:
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["compare"].update({"samples": ["DYJetsToLL", "TTJets"], "cluster_sizes": [500]})
    c["compare"]["pairs"] = [{"ttree": "zstd-5", "parquet": "zstd-3", "label": "zstd"},
                             *pairs]
    return c


def test_a_pairing_at_two_threads_is_a_job_of_its_own_read_at_two_threads() -> None:
    c = cfg.validate(_config({"ttree": "zstd-5", "parquet": "zstd-3", "threads": 2,
                              "label": "zstd, 2 threads"}))
    one, two = study.compare_pairs(c)
    assert study.pair_slug(two) == study.pair_slug(one) + ".2threads"
    assert re.fullmatch(study.PAIR_SLUG_PATTERN, study.pair_slug(two))
    jobs = [j for j in study.pair_plan(c) if j.pair == two]
    assert jobs and all(study.pair_job_of(c, j.wildcards) == j for j in jobs)
    assert {commands.pair_spec(c, j).threads for j in jobs} == {2}
    assert "--threads 2" in commands.pair_arguments(commands.pair_spec(c, jobs[0]))
    one_jobs = [j for j in study.pair_plan(c) if j.pair == one]
    assert {commands.pair_spec(c, j).threads for j in one_jobs} == {1}
    assert [p["threads"] for p in record.record(c)["pairs"]] == [1, 2]


def test_a_pairing_names_the_samples_it_is_read_on() -> None:
    c = cfg.validate(_config({"ttree": "zstd-5", "ttree_reader": "columnar", "parquet": "zstd-3",
                              "label": "columnar on TT", "samples": ["TTJets"]}))
    on = {(j.pair.label, j.sample) for j in study.pair_plan(c)}
    assert ("columnar on TT", "TTJets") in on and ("columnar on TT", "DYJetsToLL") not in on
    assert {("zstd", "DYJetsToLL"), ("zstd", "TTJets")} <= on


def test_a_pairing_on_a_sample_the_pairings_are_not_read_on_is_refused() -> None:
    with pytest.raises(ConfigError) as err:
        cfg.validate(_config({"ttree": "zstd-5", "parquet": "zstd-3", "label": "x",
                              "ttree_reader": "columnar", "samples": ["Nosuch"]}))
    assert err.value.key == "compare.pairs[1].samples" and "Nosuch" in str(err.value)


def test_readers_of_a_pool_or_a_mode_pair_by_name_and_the_record_says_so() -> None:
    """Reader names with a hyphen fit the pair rule's pattern; the plan record gives each
    side's mode and memory pool, so every ratio row can name them."""
    c = cfg.validate(_config({"ttree": "zstd-5", "ttree_reader": "columnar-handover",
                              "parquet": "zstd-3", "parquet_reader": "pyarrow-stream-system",
                              "label": "knobs"}))
    slug = study.pair_slug(study.compare_pairs(c)[1])
    assert slug == "ttree-zstd-5.columnar-handover.vs.parquet-zstd-3.pyarrow-stream-system"
    assert re.fullmatch(study.PAIR_SLUG_PATTERN, slug)
    knobs = record.record(c)["pairs"][1]
    assert (knobs["ttree"]["mode"], knobs["parquet"]["mode"]) == ("hand-over", "stream")
    assert knobs["parquet"]["knobs"] == {"memory_pool": "system"}
    headline = record.record(c)["pairs"][0]
    # RDataFrame's event loop visits every value and keeps none; pyarrow hands a Table over
    assert (headline["ttree"]["mode"], headline["parquet"]["mode"]) == ("stream", "hand-over")


@pytest.mark.parametrize("name", ["default.yaml", "paper.yaml"])
def test_the_headline_at_100000_is_paired_on_two_samples(name: str) -> None:
    """Every 100000 pairing runs on at least two processes' samples where the config says
    nothing narrower, and the headline (ROOT's columnar reader vs pyarrow) on two at least;
    the knobs of issue 40 (system pool, hand-over, two threads) are paired."""
    c = cfg.validate(yaml.safe_load((ROOT / "config" / name).read_text()))
    jobs = [j for j in study.pair_plan(c) if j.cluster_size == 100000]
    processes = {c["samples"][j.sample]["process"] for j in jobs
                 if j.pair.label == "zstd, columnar"}
    assert len(processes) >= 2
    pairs = {(p.ttree.reader, p.parquet.reader, study.pair_threads(c, p))
             for p in study.compare_pairs(c) if 100000 in p.cluster_sizes}
    assert ("columnar-handover", "pyarrow-system", 1) in pairs
    assert ("columnar", "pyarrow", 2) in pairs
    labels = [p.label for p in study.compare_pairs(c)]
    assert len(labels) == len(set(labels))


def test_a_fastest_side_is_chosen_from_the_measure_records_of_its_formats() -> None:
    """A "fastest" side's pair job takes the read-measured files of its formats as inputs (their
    measure records say which reader is quickest), proves nothing of its own, and its
    arguments name every candidate; a selection list narrows its jobs."""
    c = cfg.validate(_config({"ttree": "zstd-5", "ttree_reader": "fastest", "parquet": "zstd-3",
                              "parquet_reader": "fastest", "parquet_formats": ["parquet_bss"],
                              "label": "fastest", "selections": ["ten"]}))
    jobs = [j for j in study.pair_plan(c) if j.pair.label == "fastest"]
    assert {j.selection for j in jobs} == {"ten"}
    job = jobs[0]
    assert {f.format for f in job.candidates_of("parquet")} == {"parquet", "parquet_bss"}
    assert [f.format for f in job.candidates_of("ttree")] == ["ttree"]
    assert study.pair_job_of(c, job.wildcards) == job
    args = commands.pair_arguments(commands.pair_spec(c, job))
    assert args.count("--parquet-candidate ") == 2 and "--ttree-reader fastest" in args
    assert "fastest" not in {r for rs in study.proof_plan(c).values() for r in rs}


def test_a_fastest_side_without_measured_files_is_refused() -> None:
    base = _config()
    base["measure"]["samples"] = ["DYJetsToLL"]
    base["compare"]["pairs"].append({"ttree": "zstd-5", "ttree_reader": "fastest",
                                     "parquet": "zstd-3", "label": "fastest"})
    with pytest.raises(ConfigError, match="no such file is read-measured") as err:
        cfg.validate(base)
    assert "TTJets" in str(err.value)
    base["compare"]["pairs"][-1].update(samples=["DYJetsToLL"], ttree_formats=["parquet"])
    with pytest.raises(ConfigError, match="the ttree side of a pairing"):
        cfg.validate(base)
