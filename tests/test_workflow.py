"""The real workflow, run by the real Snakemake, on a tiny study.

The study uses a 100-branch subset of the NanoAOD schema (through the config's ``schema`` key) so
that it runs every stage, both formats and all three readers in about a minute: what it checks
is the plumbing (paths, validation, atomic outputs, tables), not the numbers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from analysis.schema import Schema, default_schema

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
pytestmark = pytest.mark.slow


def small_schema(path: Path) -> Path:
    """Event scalars, MET, the first 40 trigger bits and the Muon and Jet collections."""
    full = default_schema()
    keep_collections = {"nMuon", "nJet"}
    triggers = [b.name for b in full.branches if b.group == "triggers"][:40]
    branches = [b for b in full.branches
                if b.name in keep_collections or b.counter in keep_collections
                or b.name in triggers or b.name.startswith("MET_")
                or b.name in ("run", "luminosityBlock", "event")]
    Schema(tuple(branches), origin="test subset of " + full.origin).to_json(path)
    return path


def run_snakemake(workdir: Path, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    return subprocess.run([*SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "--directory", str(ROOT),
                           "--cores", "2", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=workdir)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("study")
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config["results"] = str(tmp / "results")
    config["schema"] = str(small_schema(tmp / "small.schema.json"))
    (tmp / "config.yaml").write_text(yaml.safe_dump(config))
    proc = run_snakemake(tmp, "--configfile", str(tmp / "config.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / "results"


def test_tables_and_provenance_are_written(study: Path) -> None:
    for name in ("size", "reads", "ratios"):
        assert (study / "tables" / f"{name}.md").stat().st_size > 0
        df = pd.read_csv(study / "tables" / f"{name}.csv", comment="#")
        assert not df.empty, name
    prov = json.loads((study / "provenance.json").read_text())
    assert prov["versions"]["ROOT"].startswith("6.")
    assert prov["config"]["schema"].endswith("small.schema.json")


def test_every_file_was_written_with_matched_clusters(study: Path) -> None:
    sizes = sorted((study / "sizes").rglob("*.json"))
    assert len(sizes) == 2 * 2 * 4  # samples x cluster sizes x variants
    for p in sizes:
        doc = json.loads(p.read_text())
        clusters = doc["layout"]["clusters"]
        n = doc["cluster_size"]
        assert all(c == n for c in clusters[:-1]) and 0 < clusters[-1] <= n, p
        assert sum(clusters) == doc["n_events"]


def test_readers_agreed_and_cold_reads_are_accounted(study: Path) -> None:
    reads = pd.read_csv(study / "tables" / "reads.csv", comment="#")
    assert set(reads.reader) == {"rdf", "uproot", "pyarrow"}
    assert set(reads["mode"]) == {"cold", "warm"}
    assert (reads.repetitions >= 5).all()
    cold = reads[reads["mode"] == "cold"]
    assert cold.cold_verified.notna().all()


def test_rerun_has_nothing_to_do(study: Path) -> None:
    config = study.parent / "config.yaml"
    proc = run_snakemake(study.parent, "--configfile", str(config), "-n")
    assert proc.returncode == 0
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_bad_config_is_refused_naming_the_key(tmp_path: Path) -> None:
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    config["measure"]["repetitions"] = 2
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    proc = run_snakemake(tmp_path, "--configfile", str(tmp_path / "config.yaml"), "-n")
    assert proc.returncode != 0
    assert "repetitions" in proc.stdout + proc.stderr


def test_failed_measurement_leaves_no_result(study: Path, tmp_path: Path) -> None:
    """A corrupted data file makes its measure job fail; no measurement JSON may remain."""
    results = tmp_path / "results"
    shutil.copytree(study, results)
    config = yaml.safe_load((study.parent / "config.yaml").read_text())
    config["results"] = str(results)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    victim = results / "files" / "DYJetsToLL" / "parquet" / "none" / "c500.parquet"
    measurement = results / "measurements" / "DYJetsToLL" / "parquet" / "none" / "c500.json"
    victim.write_bytes(victim.read_bytes()[:1000])
    measurement.unlink()
    proc = run_snakemake(tmp_path, "--configfile", str(tmp_path / "config.yaml"),
                         "--rerun-triggers", "mtime", "--", str(measurement))
    assert proc.returncode != 0
    assert not measurement.exists()
    log = (results / "logs" / "measure" / "DYJetsToLL" / "parquet" / "none" / "c500.log")
    assert "c500.parquet" in log.read_text()
