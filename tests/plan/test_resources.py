"""Batch resources follow the study: events, branches, cluster size, readers and repetitions."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from hepfmt import formats
from hepfmt.formats.base import DEFAULT_WRITE_MEMORY
from hepfmt.plan import config as cfg
from hepfmt.plan import cost
from hepfmt.plan import resources as r

ROOT = Path(__file__).resolve().parents[2]


def test_ttree_memory_follows_the_cluster_size_as_measured() -> None:
    """~10 kB per entry of one cluster at 1499 branches: +935 MB measured at 100000 entries."""
    small = r.convert("ttree", "zstd-5", 200_000, 1_000, r.NANOAOD_BRANCHES)
    large = r.convert("ttree", "zstd-5", 200_000, 100_000, r.NANOAOD_BRANCHES)
    grown = (large.mem_mb - small.mem_mb) / r.MEM_SAFETY
    assert 900 < grown < 1100
    assert small.runtime == large.runtime  # time follows the events, not the clusters


@pytest.mark.parametrize("name", formats.names())
def test_a_write_asks_for_the_memory_its_format_states(name: str) -> None:
    """The registry is the one place: a format that states none (ORC, HDF5) gets the documented
    default, as does a format not registered."""
    m = formats.get(name).write_memory
    one = r.convert(name, formats.get(name).plain, 10_000, 1_000, 100)
    assert one.mem_mb == math.ceil(r.MEM_SAFETY * (m.base_mb + 1_000 * 100 * m.cluster_bytes
                                                    / 1e6))
    assert formats.get("orc").write_memory == DEFAULT_WRITE_MEMORY
    assert r.convert("no-such-format", "none", 10_000, 1_000, 100).mem_mb == math.ceil(
        r.MEM_SAFETY * (DEFAULT_WRITE_MEMORY.base_mb + 1e5 * DEFAULT_WRITE_MEMORY.cluster_bytes
                        / 1e6))


def test_a_cluster_larger_than_the_sample_costs_no_more_than_the_sample() -> None:
    assert r.convert("ttree", "zstd-5", 1_000, 100_000, 1499) == r.convert(
        "ttree", "zstd-5", 1_000, 1_000, 1499)


def test_ttree_writes_take_longer_than_parquet_and_scale_with_events_and_branches() -> None:
    tt = r.convert("ttree", "zstd-5", 1_000_000, 1_000, 1499)
    pq = r.convert("parquet", "zstd-3", 1_000_000, 1_000, 1499)
    assert tt.runtime > 2 * pq.runtime
    # the measured parts, the batch job's start-up and ×3 headroom
    w = formats.get("ttree").write_cost
    assert tt.cpu_s == pytest.approx(w.fixed_s + 1_000_000 / w.events_per_s)
    assert tt.runtime == math.ceil(r.TIME_SAFETY * (r.JOB_START_S + tt.cpu_s) / 60)
    assert r.convert("ttree", "zstd-5", 4_000_000, 1_000, 1499).runtime > 3 * tt.runtime
    assert r.convert("ttree", "zstd-5", 1_000_000, 1_000, 150).runtime < tt.runtime


def test_slow_codecs_add_their_own_time() -> None:
    """lzma-9 writes 200000 NanoAOD events at ~3.7 MB/s of naive data: minutes, not seconds."""
    fast = r.convert("ttree", "zstd-5", 200_000, 1_000, 1499)
    assert r.convert("ttree", "lzma-9", 200_000, 1_000, 1499).runtime > 2 * fast.runtime
    assert r.convert("parquet", "gzip-6+dict", 1_000_000, 1_000, 1499).runtime > r.convert(
        "parquet", "none+dict", 1_000_000, 1_000, 1499).runtime


def test_tiny_jobs_still_get_a_minimum_runtime() -> None:
    assert r.generate(100, 10).runtime == r.MIN_RUNTIME_MIN


def test_a_measurement_asks_for_its_parts_with_headroom_and_its_widest_selection() -> None:
    one = r.measure(200_000, 1499, 600.0)
    assert one.cpu_s == 600.0
    assert one.runtime == math.ceil(r.TIME_SAFETY * (r.JOB_START_S + 600) / 60)
    assert r.measure(200_000, 10, 600.0).mem_mb < one.mem_mb / 3  # memory: the widest selection


def test_measurement_threads_locally_and_on_a_cluster() -> None:
    assert r.measure_threads(8, 1) == 8  # a local run or a group job: every core
    assert r.measure_threads(None, 1) == 1  # a cluster without a core total: the readers'
    assert r.measure_threads(None, 4) == 4


def test_branch_count_comes_from_the_model(tmp_path: Path) -> None:
    model = tmp_path / "m.json"
    model.write_text(json.dumps({"branches": [{"name": f"b{i}"} for i in range(7)]}))
    assert r.branch_count({"model": str(model)}) == 7
    assert r.branch_count({"model": ""}) == r.NANOAOD_BRANCHES
    assert r.branch_count({"model": "root://eos/x.json"}) == r.NANOAOD_BRANCHES


@pytest.mark.parametrize("name", ["default.yaml", "paper.yaml", "test.yaml"])
def test_every_job_of_the_shipped_configs_fits_a_batch_node(name: str) -> None:
    """Memory within a 16 GB node with room to spare; no job beyond a day."""
    from hepfmt.plan import study

    config = cfg.load(ROOT / "config" / name)
    jobs = [("generate", {"sample": s}) for s in config["samples"]]
    jobs += [("convert", f.wildcards) for f in study.files(config)]
    plan = study.read_plan(config)
    jobs += [("measure", f.wildcards) for f in plan]
    jobs += [("pair", j.wildcards) for j in study.pair_plan(config)]
    jobs += [("tabulate", {})]
    for rule, wildcards in jobs:
        est = r.for_job(rule, config, wildcards, plan)
        assert 0 < est.mem_mb < 8_000, (rule, wildcards, est)
        assert r.MIN_RUNTIME_MIN <= est.runtime < 24 * 60, (rule, wildcards, est)
        assert est.disk_mb > 0


def test_a_measurement_is_sized_for_the_readers_the_read_plan_gives_its_file() -> None:
    from hepfmt.plan import study

    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["measure"].update(cluster_sizes=[1500], readers={"ttree": ["rdf", "uproot", "ttreereader"]})
    c["samples"]["DYJetsToLL"]["n_events"] = 200_000  # above the runtime floor
    c = cfg.validate(c)
    plan = study.read_plan(c)
    f = study.spec(c, "DYJetsToLL", "ttree", "zstd-5", 1500)
    expected = r.measure(200_000, r.NANOAOD_BRANCHES,
                         cost.measure_job(c, f, ["rdf", "uproot", "ttreereader"]).total_s)
    assert r.for_job("measure", c, f.wildcards, plan) == expected
    assert r.for_job("measure", c, f.wildcards) == expected  # plan computed


def test_a_pair_job_and_the_proofs_of_its_files_are_estimated() -> None:
    """A pair job: two live workers, its rounds and repeats; a file only a pair reads is
    written with its one pair reader's proof."""
    from hepfmt.plan import study

    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["samples"]["DYJetsToLL"]["n_events"] = 200_000
    c["measure"]["cluster_sizes"] = [1500]
    c["compare"].update(samples=["DYJetsToLL"], cluster_sizes=[500])
    c = cfg.validate(c)
    job = next(j for j in study.pair_plan(c) if j.selection == "all")
    est = r.for_job("pair", c, job.wildcards)
    assert est == r.pair(200_000, r.NANOAOD_BRANCHES, cost.pair_job(c, job).total_s)
    assert est.mem_mb > r.measure(200_000, r.NANOAOD_BRANCHES, 0).mem_mb  # two processes
    proofs = study.proof_plan(c)
    assert proofs[job.ttree] == ["rdf"]
    assert r.for_job("convert", c, job.ttree.wildcards, proof_plan=proofs) == r.for_job(
        "convert", c, job.ttree.wildcards)
    assert r.for_job("convert", c, job.ttree.wildcards).cpu_s > r.convert(
        "ttree", "zstd-5", 200_000, 500, r.NANOAOD_BRANCHES).cpu_s  # the proof read


def test_a_remote_sample_is_assumed_to_be_a_nanoaod_chunk() -> None:
    config = {"samples": {"real": {"file": "root://eos.example//x.root"}}, "model": ""}
    assert r.for_job("generate", config, {"sample": "real"}) == r.generate(
        r.IMPORTED_EVENTS, r.NANOAOD_BRANCHES)


def test_an_unknown_rule_is_an_error() -> None:
    with pytest.raises(KeyError, match="nope"):
        r.for_job("nope", {}, {})
