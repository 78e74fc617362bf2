"""The committed reference run: its tables parse and its provenance names the locked versions.

A visitor reads these numbers without running anything, so they must stay readable and must
say which library versions produced them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
#: A committed reference run (one per CPU model, results/reference/<cpu>/).
REFERENCE = next(d for d in sorted((ROOT / "results" / "reference").iterdir())
                 if (d / "ratios.csv").is_file())


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


def test_reference_has_every_figure_family_and_the_metadata_study() -> None:
    from hepfmt.report.figures import FAMILIES

    for fam in (f for f in FAMILIES.values() if f.target == "all"):  # what `make run` draws
        png = REFERENCE / "figures" / f"{fam.stem}.png"
        assert png.stat().st_size > 10_000, png
    for plot in ("decode_time", "metadata_size"):
        assert (REFERENCE / "metadata" / "plots" / f"{plot}.png").stat().st_size > 10_000
    for name in ("metadata", "slopes", "repetitions"):
        assert not pd.read_csv(REFERENCE / "metadata" / f"{name}.csv", comment="#").empty
    prov = json.loads((REFERENCE / "metadata" / "provenance.json").read_text())
    assert prov["versions"]["pyarrow"] == _lock()["pyarrow"]


def test_reference_reads_are_checked_and_memory_is_the_reads_own() -> None:
    """Every cold read verified; every peak-memory figure from the reset high-water mark. A
    10-branch read of 4000 events (tens of kB) may reuse memory the process freed before it:
    its own peak is then 0, within the page-rounding of VmHWM against VmRSS (under 1 MB)."""
    reads = pd.read_csv(REFERENCE / "reads.csv", comment="#")
    assert reads[reads["mode"] == "cold"].cold_verified.astype(bool).all()
    assert reads.rss_exact.astype(bool).all() and (reads.rss_over_baseline_mb > -1).all()
    assert (reads[reads.selection == "all"].rss_over_baseline_mb > 0).all()
