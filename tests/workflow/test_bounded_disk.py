"""Bounded disk (issue 43): without ``keep_files`` each written file is deleted once its size
record and reads are made, the file groups (a sample at a cluster size) are written
``file_groups_in_flight`` at a time, and each group's release records the bytes written files
held then; check-config plans the peak and refuses one above the quota."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, run_snakemake, small_schema
from hepfmt.cli import main
from hepfmt.plan import config as cfg
from hepfmt.plan import resources, scratch

pytestmark = pytest.mark.slow


def _config(tmp: Path, keep: bool) -> dict:
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config.update(results=str(tmp / "results"), keep_files=keep, file_groups_in_flight=1,
                  model=str(small_schema(tmp / "small.model.json")))
    config["compare"].update(samples=["DYJetsToLL"], cluster_sizes=[1500])
    config["measure"].update(selections={"ten": ["nMuon", "Muon_pt", "MET_pt"]})
    return config


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("bounded")
    (tmp / "config.yaml").write_text(yaml.safe_dump(_config(tmp, keep=False)))
    proc = run_snakemake(tmp, "--configfile", str(tmp / "config.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / "results"


def test_every_written_file_is_gone_and_its_records_stay(released: Path) -> None:
    assert not [p for p in (released / "files").rglob("*") if p.is_file()]
    sizes = list((released / "sizes").rglob("*.json"))
    assert len(sizes) == 2 * 2 * 5  # samples x cluster sizes x (format, variant)
    assert (released / "tables" / "ratios.csv").stat().st_size > 0


def test_one_group_at_a_time_holds_files(released: Path) -> None:
    """With one group in flight, a group's conversions wait for the previous group's release,
    and at its own release its files are already deleted: nothing is held."""
    records = [json.loads(p.read_text()) for p in (released / "releases").rglob("*.json")]
    assert len(records) == 2 * 2  # samples x cluster sizes
    assert all(r["files_bytes_held"] == 0 for r in records)


def test_the_plan_gates_each_group_on_the_one_before(tmp_path: Path) -> None:
    c = cfg.validate(_config(tmp_path, keep=False))
    order = scratch.groups(c)
    gates = scratch.gates(c)
    assert gates[order[0]] == []
    assert all(gates[g] == [str(Path(c["results"]) / "releases" / p.sample /
                                f"c{p.cluster_size}.json")]
               for p, g in itertools.pairwise(order))
    kept = cfg.validate(_config(tmp_path, keep=True))
    assert not any(scratch.gates(kept).values()) and scratch.releases(kept) == []


def test_the_planned_peak_is_the_groups_in_flight_not_every_file(tmp_path: Path) -> None:
    kept = resources.whole_study(cfg.validate(_config(tmp_path, keep=True)))
    bounded = resources.whole_study(cfg.validate(_config(tmp_path, keep=False)))
    # four groups of equal size, one in flight: the sources and a quarter of the files
    assert bounded.disk_gb < kept.disk_gb
    paper = resources.whole_study(cfg.load(ROOT / "config" / "paper.yaml"))
    assert not paper.keep_files and paper.disk_gb <= 100


def test_check_config_refuses_a_peak_above_the_quota(tmp_path: Path, capsys) -> None:
    config = _config(tmp_path, keep=True)
    config["disk_quota_gb"] = 0.001
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
    assert main(["check-config", str(tmp_path / "c.yaml")]) == 2
    err = capsys.readouterr().err
    assert "disk_quota_gb" in err and "above the quota of" in err and "GB" in err
