"""The SLURM profile against a real SLURM: a one-node cluster on localhost runs a tiny study.

The cluster is started by the test (tests/workflow/local_slurm.py) and stopped by PID in a finalizer
whatever happens. The study goes through ``workflow/profiles/slurm`` as a user would run it,
with one override: ``--cores`` set to this machine's CPUs (the profile's default is a larger
node). It then has to be a real SLURM run (job ids in Snakemake's log, one log file per job, the
ids recorded in the results' provenance, the grouping the profile asks for) and its
deterministic results (sizes, file layouts, what was read) must equal those of a local run of
the same study; timings are not deterministic and are not compared.

Where SLURM cannot be installed or started the tests skip with the reason, unless
``HEPFMT_REQUIRE_SLURM`` is set (``.ci/run`` sets it once it has installed SLURM): then a
cluster that does not start is a failure.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import yaml
from local_slurm import NODE_MEMORY_MB, LocalSlurm, SlurmUnavailable

from helpers import ROOT, run_snakemake, small_schema, write_config

pytestmark = [pytest.mark.slurm, pytest.mark.slow]

SUBMITTED = re.compile(r"submitted with SLURM jobid (\d+) \(log: (.+?)\)\.")
TIMEOUT_S = 480  # the whole SLURM run; it takes about a minute here


@pytest.fixture(scope="module")
def slurm(tmp_path_factory: pytest.TempPathFactory,
          request: pytest.FixtureRequest) -> Iterator[LocalSlurm]:
    cluster = LocalSlurm(tmp_path_factory.mktemp("slurm-state"))
    request.addfinalizer(cluster.stop)  # before start: a half-started cluster is stopped too
    try:
        cluster.start()
    except SlurmUnavailable as exc:
        if os.environ.get("HEPFMT_REQUIRE_SLURM"):
            pytest.fail(f"HEPFMT_REQUIRE_SLURM is set but SLURM did not start: {exc}")
        pytest.skip(f"no local SLURM cluster: {exc}")
    yield cluster


def tiny_study(tmp: Path, results: Path) -> Path:
    """One sample, one cluster size, one codec per format, one reader per format."""
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config.update(
        results=str(results),
        model=str(small_schema(tmp / "small.model.json")),
        samples={"DYJetsToLL": {"process": "DYJetsToLL", "n_events": 600, "seed": 1}},
        cluster_sizes=[300],
        formats={"ttree": {"variants": ["zstd-5"]}, "parquet": {"variants": ["zstd-3"]}},
        measure={"readers": {"ttree": ["uproot"], "parquet": ["pyarrow"]}, "repetitions": 5},
        compare={"pairs": [{"ttree": "zstd-5", "parquet": "zstd-3", "label": "zstd"}],
                 "readers": {"ttree": "uproot", "parquet": "pyarrow"}},
    )
    return write_config(results.parent / "config.yaml", config)


@pytest.fixture(scope="module")
def runs(slurm: LocalSlurm, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The same study run locally (local profile) and on SLURM (slurm profile).

    The two results directories have names of equal length: a ROOT file records its own path,
    so only then can the files be byte-for-byte the same size.
    """
    tmp = tmp_path_factory.mktemp("runs")
    out: dict = {}
    for name in ("local", "slurm"):
        (tmp / name).mkdir()
        config = tiny_study(tmp, tmp / name / "results")
        args = ["--profile", str(ROOT / "workflow" / "profiles" / name), "--configfile",
                str(config)]
        cores = None
        if name == "slurm":
            args += ["--cores", str(slurm.cpus), "--slurm-logdir", str(tmp / "slurm_logs")]
        start = time.monotonic()
        proc = run_snakemake(tmp / name, *args, cores=cores, timeout=TIMEOUT_S)
        out[name] = {"results": tmp / name / "results", "log": proc.stdout + proc.stderr,
                     "wall_s": time.monotonic() - start}
        assert proc.returncode == 0, (f"{name} run failed:\n{proc.stderr[-4000:]}\n"
                                      f"SLURM daemons:\n{slurm.logs()}")
    out["job_ids"] = dict(SUBMITTED.findall(out["slurm"]["log"]))
    out["jobs"] = {job_id: slurm.job(job_id) for job_id in out["job_ids"]}
    print(f"\nSLURM run: {out['slurm']['wall_s']:.0f} s wall, SLURM job ids "
          f"{', '.join(out['job_ids'])}; local run {out['local']['wall_s']:.0f} s")
    return out


def _records(results: Path, kind: str) -> dict[str, dict]:
    return {str(p.relative_to(results / kind)): json.loads(p.read_text())
            for p in sorted((results / kind).rglob("*.json"))}


def test_jobs_ran_as_slurm_jobs(runs: dict) -> None:
    job_ids = runs["job_ids"]
    assert job_ids, "no job was submitted to SLURM:\n" + runs["slurm"]["log"][-3000:]
    for job_id, log in job_ids.items():
        assert Path(log).name == f"{job_id}.log"
        assert Path(log).exists(), f"SLURM log of job {job_id} missing"
    # every size record and measurement was made inside one of those SLURM jobs
    results = runs["slurm"]["results"]
    for kind in ("sizes", "measurements"):
        for name, doc in _records(results, kind).items():
            batch = doc["provenance"]["batch"]
            assert batch["system"] == "slurm" and batch["job_id"] in job_ids, (kind, name, batch)
    # and the tables say so
    assert "ran in batch jobs: slurm" in (results / "tables" / "size.md").read_text()
    local = runs["local"]["results"] / "tables" / "size.md"
    assert "ran on: this machine, no batch system" in local.read_text()


def test_jobs_were_grouped_as_the_profile_asks(runs: dict) -> None:
    """One job for the sample's generation and conversions, one for its two measurements; the
    tables and the resolved config are made by Snakemake itself (local rules)."""
    assert len(runs["job_ids"]) == 2
    results = runs["slurm"]["results"]
    sizes = _records(results, "sizes").values()
    measurements = _records(results, "measurements").values()
    assert len({d["provenance"]["batch"]["job_id"] for d in sizes}) == 1
    assert len({d["provenance"]["batch"]["job_id"] for d in measurements}) == 1


def test_measurements_had_an_exclusive_node_and_no_job_asked_too_much(runs: dict) -> None:
    """The profile's ``--exclusive`` reached SLURM for the measurement job only; memory stayed
    within the node (a larger request would pend for ever) and the time limit came from the
    workflow's estimate (at least its 10-minute floor)."""
    results = runs["slurm"]["results"]
    measure_job = next(iter(_records(results, "measurements").values()))["provenance"]["batch"]
    for job_id, job in runs["jobs"].items():
        assert job["JobState"] == "COMPLETED", job
        assert int(job["MinMemoryNode"].rstrip("M")) < NODE_MEMORY_MB, job
        hours, minutes, _ = (int(x) for x in job["TimeLimit"].split(":"))
        assert 60 * hours + minutes >= 10, job
        exclusive = job_id == measure_job["job_id"]
        assert job["OverSubscribe"] == ("NO" if exclusive else "OK"), (job_id, job)


def test_results_equal_a_local_run(runs: dict) -> None:
    local, remote = runs["local"]["results"], runs["slurm"]["results"]
    local_sizes, remote_sizes = _records(local, "sizes"), _records(remote, "sizes")
    assert sorted(local_sizes) == sorted(remote_sizes) and len(local_sizes) == 2
    for name, doc in local_sizes.items():
        other = remote_sizes[name]
        for key in ("file_bytes", "naive_bytes", "normalized_size", "layout",
                    "zip_bytes_by_group", "n_events"):
            assert doc[key] == other[key], (name, key)
    pd.testing.assert_frame_equal(pd.read_csv(local / "tables" / "size.csv", comment="#"),
                                  pd.read_csv(remote / "tables" / "size.csv", comment="#"))

    def reads(results: Path) -> dict:
        keys = ("reader", "selection", "mode", "n_branches", "selection_zip_bytes",
                "selection_naive_bytes", "n")
        return {name: sorted(tuple(r[k] for k in keys) for r in doc["reads"])
                for name, doc in _records(results, "measurements").items()}

    assert reads(local) == reads(remote)  # same reads, all checked against the source
