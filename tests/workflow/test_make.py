"""The README's two commands: their jobs must find the venv's ``hepfmt`` first on PATH.

Snakemake's shell jobs run ``hepfmt`` from PATH; without the venv on it they would reach the
conda-route shim (workflow/bin/hepfmt) under the system Python, which has no dependencies.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(("target", "command"), [("run", "snakemake"), ("test", "pytest")])
def test_make_targets_put_the_venv_first_on_path(target: str, command: str) -> None:
    out = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    line = next(x for x in out.splitlines() if command in x)
    assert line.startswith(f'PATH="{ROOT / ".venv" / "bin"}:'), line


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("target", ["dryrun", "report"])
def test_make_targets_reach_snakemake_as_targets(target: str, tmp_path: Path) -> None:
    """Snakemake 9's --configfile takes every word after it: targets placed after it were read
    as config files ('No such file or directory: all'). A real dry run of the default study,
    and of the report command's argument parsing, through make itself.

    The dry run plans the default study into a results directory of its own, so that it has
    every job to plan whatever the checkout's results/ holds (after `make run`, nothing is
    left to do there). make is told the venv is set up (-o): this checks the command line that
    reaches Snakemake, and must not reinstall the venv if pyproject.toml is newer than it."""
    if target == "report":  # parse only: the report needs a finished run
        out = subprocess.run(["make", "-n", "report"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout
        cmd = next(x for x in out.splitlines() if "snakemake" in x)
        assert cmd.index(" all metadata ") < cmd.index("--configfile"), cmd
        return
    config = yaml.safe_load((ROOT / "config" / "default.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    study = tmp_path / "default.yaml"
    study.write_text(yaml.safe_dump(config))
    venv_ready = [f"--assume-old=.venv/{stamp}"
                  for stamp in (".hepfmt-installed", ".hepfmt-quiet-condor")]
    proc = subprocess.run(["make", *venv_ready, "dryrun", "CORES=2", f"CONFIG={study}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
    assert "metadata_time" in proc.stdout and "measure" in proc.stdout
    assert str(tmp_path / "results") in proc.stdout  # the jobs' outputs are the study's
    assert not (tmp_path / "results").exists()  # a dry run
