"""The README's two commands: their jobs must find the venv's ``hepfmt`` first on PATH.

Snakemake's shell jobs run ``hepfmt`` from PATH; without the venv on it they would reach the
conda-route shim (workflow/bin/hepfmt) under the system Python, which has no dependencies.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(("target", "command"), [("run", "snakemake"), ("test", "pytest")])
def test_make_targets_put_the_venv_first_on_path(target: str, command: str) -> None:
    out = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    line = next(x for x in out.splitlines() if command in x)
    assert line.startswith(f'PATH="{ROOT / ".venv" / "bin"}:'), line
