"""Inputs checked before any job: a file without entries is refused by ``import``,
``validate-model`` and ``check-config``, naming it; a cluster size above a file's entries is
refused for every kind (TTree, RNTuple, Parquet), as it makes a one-cluster file labelled with a
size it does not have; ``check-config`` says which entries and branches it planned with."""

from __future__ import annotations

from pathlib import Path

import awkward as ak
import numpy as np
import pytest
import uproot
import yaml

from hepfmt.cli import main
from hepfmt.errors import ConfigError
from hepfmt.plan import config as cfg

ROOT_DIR = Path(__file__).resolve().parents[2]
KINDS = ("ttree", "rntuple", "parquet")


def _write(kind: str, path: Path, n: int) -> Path:
    """``n`` events of a tiny NanoAOD-like table (a MET and a Jet collection) as ``kind``."""
    met = np.arange(n, dtype=np.float32)
    jets = ak.values_astype(ak.Array([[1.0 * i] * (i % 3) for i in range(n)] if n else
                                     ak.Array([[1.0]])[:0]), np.float32)
    if kind == "ttree":
        with uproot.recreate(path) as f:
            f.mktree("Events", {"MET_pt": np.float32, "Jet_pt": "var * float32"})
            if n:
                f["Events"].extend({"MET_pt": met, "Jet_pt": jets})
    elif kind == "rntuple":
        with uproot.recreate(path) as f:
            f.mkrntuple("Events", ak.Array({"MET_pt": met, "Jet_pt": jets}))
    else:
        ak.to_parquet(ak.Array({"MET_pt": met, "Jet_pt": jets}), path)
    return path


def _config(path: Path, sizes: list[int]) -> dict:
    c = yaml.safe_load((ROOT_DIR / "config" / "test.yaml").read_text())
    c["samples"] = {"real": {"file": str(path), "cluster_sizes": sizes}}
    c["measure"]["selections"] = {"met": ["MET_pt"]}
    c["measure"].pop("samples", None)
    c["measure"].pop("cluster_sizes", None)
    c["compare"] = {"pairs": []}
    c.pop("metadata", None)
    return c


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_file_is_refused_at_import(kind: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture) -> None:
    path = _write(kind, tmp_path / f"empty.{kind}", 0)
    out = tmp_path / "out.arrow"
    assert main(["import", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(path) in err and "has no entries" in err, err
    assert not out.exists() and not list(tmp_path.glob("out.arrow*"))


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_file_is_refused_by_check_config(kind: str, tmp_path: Path) -> None:
    path = _write(kind, tmp_path / f"empty.{kind}", 0)
    with pytest.raises(ConfigError, match=rf"'samples.real.file': {path}: .*has no entries"):
        cfg.validate(_config(path, [10]))


def test_validate_model_names_an_empty_file(tmp_path: Path,
                                            capsys: pytest.CaptureFixture) -> None:
    path = _write("ttree", tmp_path / "empty.root", 0)
    assert main(["validate-model", str(path), "--report-only"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: TTree 'Events' has no entries" in err and "n_events" not in err


@pytest.mark.parametrize("kind", KINDS)
def test_cluster_sizes_above_the_entries_are_refused(kind: str, tmp_path: Path) -> None:
    path = _write(kind, tmp_path / f"real.{kind}", 40)
    with pytest.raises(ConfigError, match=r"'samples.real.cluster_sizes\[1\]': 100 is above "
                                          r"the 40 events of sample 'real'"):
        cfg.validate(_config(path, [20, 100]))
    cfg.validate(_config(path, [20, 40]))


def test_check_config_states_its_basis(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = _write("rntuple", tmp_path / "real.rntuple", 40)
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(_config(path, [20, 40])))
    assert main(["check-config", str(config)]) == 0
    out = capsys.readouterr().out
    basis = [line for line in out.splitlines() if line.startswith("basis:")]
    assert basis == [f"basis: real 40 events × 3 branches (read from {path})"], out
    assert "1499-branch" not in out
