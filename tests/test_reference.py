"""The committed reference run: its tables parse and its provenance names the locked versions.

A visitor reads these numbers without running anything, so they must stay readable and must
say which library versions produced them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "results" / "reference" / "default"


def _lock() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==", 1)
            pins[name.strip().lower()] = version.strip()
    return pins


@pytest.mark.parametrize("name", ["size", "reads", "ratios", "groups", "repetitions", "formats"])
def test_reference_tables_parse(name: str) -> None:
    df = pd.read_csv(REFERENCE / f"{name}.csv", comment="#")
    assert not df.empty


def test_reference_provenance_names_the_locked_versions() -> None:
    prov = json.loads((REFERENCE / "provenance.json").read_text())
    lock = _lock()
    for lib in ("pyarrow", "uproot", "awkward", "numpy", "pandas", "snakemake", "root"):
        assert prov["versions"][lib] == lock[lib], lib
    assert prov["versions"]["ROOT"] == "6.40.00"
    assert prov["mixed"] == []
