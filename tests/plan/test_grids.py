"""The sub-grids a config can ask for: a long sample written only for the pairings at its own
cluster sizes (2018's regime), reads on some samples only, pair jobs on others."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hepfmt.errors import ConfigError
from hepfmt.plan import config as cfg
from hepfmt.plan import study

ROOT = Path(__file__).resolve().parents[2]


def _config(**changes: object) -> dict:
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["samples"]["Long"] = {"process": "DYJetsToLL", "n_events": 20000, "files": "pairs",
                            "cluster_sizes": [10000]}
    c["measure"]["samples"] = ["DYJetsToLL"]
    c["compare"].update(samples=["DYJetsToLL", "Long"], cluster_sizes=[500, 10000])
    for key, value in changes.items():
        section, name = key.split("__")
        c[section][name] = value
    return cfg.validate(c)


def test_a_pairs_sample_has_only_the_pairings_files_at_its_own_sizes() -> None:
    c = _config()
    long = [(f.format, f.variant, f.cluster_size) for f in study.files(c) if f.sample == "Long"]
    assert sorted(long) == [("parquet", "none", 10000), ("parquet", "zstd-3", 10000),
                            ("ttree", "none", 10000), ("ttree", "zstd-5", 10000)]
    others = {f.cluster_size for f in study.files(c) if f.sample != "Long"}
    assert others == {500, 1500}


def test_reads_follow_the_sub_grids() -> None:
    c = _config()
    plan = study.read_plan(c)
    assert {f.sample for f in plan} == {"DYJetsToLL"}  # TTJets: sizes only; Long: pairs only
    assert study.read_modes(c) == ["cold", "warm"]
    jobs = study.pair_plan(c)
    assert {(j.sample, j.cluster_size) for j in jobs} == {("DYJetsToLL", 500), ("Long", 10000)}
    assert all(j.ttree.cluster_size == j.parquet.cluster_size == j.cluster_size for j in jobs)
    assert set(study.proof_plan(c)) >= {f for j in jobs for f in (j.ttree, j.parquet)}


@pytest.mark.parametrize(("changes", "key"), [
    ({"measure__samples": ["Nope"]}, "measure.samples[0]"),
    ({"compare__samples": ["Nope"]}, "compare.samples[0]"),
    ({"compare__cluster_sizes": [777]}, "compare.cluster_sizes[0]"),
])
def test_sub_grids_name_what_exists(changes: dict, key: str) -> None:
    with pytest.raises(ConfigError) as err:
        _config(**changes)
    assert err.value.key == key


def test_a_sample_cluster_above_its_events_is_refused() -> None:
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["samples"]["Long"] = {"process": "DYJetsToLL", "n_events": 2000, "cluster_sizes": [5000]}
    with pytest.raises(ConfigError) as err:
        cfg.validate(c)
    assert err.value.key == "samples.Long.cluster_sizes[0]"
