"""What the end-to-end tests share: a small model to keep studies fast, and running Snakemake.

Runs use the repository as Snakemake's working directory (so the workflow's relative paths hold)
and the test's temporary directory for every result.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def small_schema(path: Path) -> Path:
    """A model of event scalars, MET, the first 40 trigger bits and the Muon and Jet
    collections: a real subset of the built-in NanoAOD model."""
    from hepfmt.samples.model import default_model

    full = default_model()
    keep_collections = {"nMuon", "nJet"}
    triggers = [b.name for b in full.schema.branches if b.group == "triggers"][:40]
    names = [b.name for b in full.schema.branches
             if b.name in keep_collections or b.counter in keep_collections
             or b.name in triggers or b.name.startswith("MET_")
             or b.name in ("run", "luminosityBlock", "event")]
    full.subset(names).to_json(path)
    return path


def write_config(path: Path, config: dict) -> Path:
    path.write_text(yaml.safe_dump(config))
    return path


def run_snakemake(workdir: Path, *args: str, cores: int | None = 2, timeout: float = 3600,
                  env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Snakemake on the repository's Snakefile; ``cores=None`` leaves them to a profile.

    A timeout kills it (SIGKILL): a Snakemake waiting on a batch system may ignore SIGTERM.
    """
    env = {**os.environ, **(env or {})}
    # without the venv: the rules must find hepfmt whatever PATH Snakemake was started with
    own = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != own)
    cores_args = ["--cores", str(cores)] if cores is not None else []
    return subprocess.run([*SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "--directory", str(ROOT),
                           *cores_args, *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=workdir)
