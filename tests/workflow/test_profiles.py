"""The execution profiles plan the study's jobs with the resources the workflow estimates.

No HTCondor pool can run on the test machine, so the HTCondor profile is tested as far as a
dry run goes: it parses, the plugin accepts its settings, and every planned job carries the
threads, memory, disk and lxplus attributes it will be submitted with. (The SLURM profile also
runs for real in test_slurm.py.)
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, run_snakemake, small_schema, write_config
from hepfmt.plan import resources as r
from hepfmt.plan import study as grid
from hepfmt.plan.config import validate

PROFILES = ROOT / "workflow" / "profiles"
pytestmark = pytest.mark.slow


def plan(text: str) -> tuple[list[dict], list[str]]:
    """Jobs of a dry run (rule, wildcards, threads, resources) and the groups they form."""
    jobs = []
    for block in re.split(r"\n\s*(?=rule \w+:)", text)[1:]:
        job: dict = {"rule": block.split(":", 1)[0].split()[1], "wildcards": {},
                     "threads": 1, "resources": {}}
        for line in block.splitlines():
            key, _, value = line.strip().partition(": ")
            if key == "wildcards":
                job["wildcards"] = dict(kv.split("=", 1) for kv in value.split(", "))
            elif key == "threads":
                job["threads"] = int(value)
            elif key == "resources":
                job["resources"] = dict(kv.split("=", 1) for kv in value.split(", "))
        jobs.append(job)
    return jobs, re.findall(r"Group job (\w+)", text)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    tmp = tmp_path_factory.mktemp("profiles")
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config.update(results=str(tmp / "results"), model=str(small_schema(tmp / "m.json")))
    path = write_config(tmp / "config.yaml", config)
    return path, validate(config)


def dry_run(profile: str, study: tuple[Path, dict]) -> tuple[list[dict], list[str]]:
    proc = run_snakemake(study[0].parent, "--profile", str(PROFILES / profile), "-n",
                         "--configfile", str(study[0]), cores=None, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return plan(proc.stdout + proc.stderr)


@pytest.mark.parametrize("profile", ["local", "slurm", "htcondor"])
def test_profile_parses_and_names_a_core_count(profile: str) -> None:
    settings = yaml.safe_load((PROFILES / profile / "config.yaml").read_text())
    assert isinstance(settings, dict)
    assert settings["cores"] == "all" if profile == "local" else settings["cores"] >= 2


def test_htcondor_plans_every_job_with_the_estimated_resources(study) -> None:
    profile = yaml.safe_load((PROFILES / "htcondor" / "config.yaml").read_text())
    jobs, groups = dry_run("htcondor", study)
    config = study[1]
    batch_jobs = [j for j in jobs if j["rule"] in ("generate", "convert", "measure")]
    assert len(batch_jobs) == len(config["samples"]) + len(grid.files(config)) + len(
        grid.measured(config))
    for job in batch_jobs:
        est = r.for_job(job["rule"], config, job["wildcards"])
        res = job["resources"]
        assert int(res["htcondor_request_mem_mb"]) == int(res["mem_mb"]) == est.mem_mb, job
        assert int(res["htcondor_request_disk_mb"]) == est.disk_mb, job
        assert int(res["runtime"]) == est.runtime, job
        flavour = "tomorrow" if job["rule"] == "measure" else "workday"
        assert res["getenv"] == "True" and res["classad_JobFlavour"] == flavour, job
        # request_cpus: 1 per conversion; a measurement takes the profile's whole width
        assert job["threads"] == (profile["cores"] if job["rule"] == "measure" else 1), job
    # one job per sample for generation + conversions; measurements four to a job
    assert groups.count("write") == len(config["samples"])
    assert groups.count("measure") == math.ceil(len(grid.measured(config)) / 4)
    # the resolved config, the tables and the figures are made by Snakemake itself
    assert {j["rule"] for j in jobs} - {j["rule"] for j in batch_jobs} == {
        "resolved_config", "plan_record", "tabulate", "answer", "all",
        *(f"figure_{f}" for f in ("size", "ratios", "tradeoff", "groups", "memory", "answer"))}


def _timing_rules() -> set[str]:
    """The rules that time something: those whose threads are ``timing_threads`` (directly,
    or per job: a pair job at its pairing's threads)."""
    rules = set()
    for smk in (PROFILES.parent / "rules").glob("*.smk"):
        rule = None
        for line in smk.read_text().splitlines():
            if line.startswith("rule "):
                rule = line.split()[1].rstrip(":")
            elif line.strip().startswith("threads:") and "timing_threads(" in line and rule:
                rules.add(rule)
    return rules


#: How each batch profile asks for a whole node: (resource, its value in the profile).
WHOLE_NODE = {"slurm": ("slurm_extra", "'--exclusive'"),
              "htcondor": ("requirements", "'TARGET.TotalCpus == MY.RequestCpus'")}


@pytest.mark.parametrize("name", sorted(WHOLE_NODE))
def test_batch_profiles_ask_a_whole_node_for_every_timing_job_only(study, name: str) -> None:
    timing = _timing_rules()
    assert {"measure", "pair", "query", "storage_read", "metadata_time"} <= timing
    key, value = WHOLE_NODE[name]
    profile = yaml.safe_load((PROFILES / name / "config.yaml").read_text())
    whole = {rule for rule, res in profile["set-resources"].items() if res.get(key) == value}
    assert whole == timing
    jobs, groups = dry_run(name, study)
    for job in jobs:
        assert (job["resources"].get(key) == value.strip("'")) == (job["rule"] in timing), job
    assert groups.count("write") == len(study[1]["samples"])


def test_local_profile_ignores_groups_and_gives_a_measurement_every_core(study) -> None:
    jobs, groups = dry_run("local", study)
    assert not groups
    measure = [j for j in jobs if j["rule"] == "measure"]
    assert measure and all(j["threads"] == os.cpu_count() for j in measure)
