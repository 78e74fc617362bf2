"""Config validation: a wrong config is refused with an error that names the key.

The CLI and Snakemake validate with the same schema file; these tests go through the CLI's
loader (the Snakemake side is exercised by test_workflow.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hepfmt.errors import ConfigError, InputError
from hepfmt.plan import config as cfg
from hepfmt.plan.study import (
    file_readers,
    files,
    measured,
    pair_plan,
    proof_plan,
    read_plan,
    spec,
)

ROOT = Path(__file__).resolve().parents[2]


def _base() -> dict:
    return yaml.safe_load((ROOT / "config" / "test.yaml").read_text())


@pytest.mark.parametrize("name", ["default.yaml", "test.yaml", "paper.yaml"])
def test_shipped_configs_are_valid(name: str) -> None:
    c = cfg.load(ROOT / "config" / name)
    assert files(c) and measured(c)


def test_defaults_are_filled() -> None:
    c = cfg.validate({"samples": {"A": {"process": "QCD", "n_events": 10}},
                      "cluster_sizes": [5], "formats": {"parquet": {"variants": ["none"]}}})
    assert c["measure"]["repetitions"] == 10  # at most: until the median is sharp
    assert c["measure"]["selections"]["all"] == "*"
    assert c["model"] == ""  # the built-in model


@pytest.mark.parametrize(("edit", "key"), [
    (lambda c: c.update(clusters=[1]), "(top level)"),
    (lambda c: c["samples"]["DYJetsToLL"].update(n_events=0), "samples.DYJetsToLL.n_events"),
    (lambda c: c["samples"]["DYJetsToLL"].update(process="Higgs"),
     "samples.DYJetsToLL.process"),
    (lambda c: c["formats"]["ttree"]["variants"].append("gzip"), "formats.ttree.variants[2]"),
    (lambda c: c["formats"]["ttree"]["variants"].append("zstd+dict"),
     "formats.ttree.variants[2]"),
    (lambda c: c["formats"]["parquet"]["variants"].append("zstd-x"),
     "formats.parquet.variants[2]"),
    (lambda c: c["measure"].update(repetitions=2), "measure.repetitions"),
    (lambda c: c["samples"]["DYJetsToLL"].update(file="x.root"), "samples.DYJetsToLL"),
    (lambda c: c["samples"].update(real={"file": "/no/such.root"}), "samples.real.file"),
    (lambda c: c["measure"].update(readers={"ttree": ["rdf"], "parquet": ["pandas"]}),
     "measure.readers.parquet"),
    (lambda c: c["samples"]["DYJetsToLL"].update(readers={"parquet": ["pandas"]}),
     "samples.DYJetsToLL.readers.parquet"),
    (lambda c: c["measure"].update(cluster_sizes=[999]), "measure.cluster_sizes[0]"),
    (lambda c: c["measure"].update(variants={"parquet": ["brotli"]}),
     "measure.variants.parquet[0]"),
    (lambda c: c["compare"]["pairs"].append({"ttree": "lzma", "parquet": "none"}),
     "compare.pairs[2].ttree"),
    (lambda c: c["compare"].update(cluster_sizes=[200]), "compare.cluster_sizes[0]"),
    (lambda c: c["compare"].update(cluster_sizes=[500], readers={"ttree": "polars"}),
     "compare.readers.ttree"),
])
def test_bad_config_names_the_key(edit, key: str) -> None:
    c = _base()
    edit(c)
    with pytest.raises(ConfigError) as err:
        cfg.validate(c)
    assert repr(key) in str(err.value)


def test_unreadable_config_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("samples: [unclosed")
    with pytest.raises(InputError, match=r"bad\.yaml"):
        cfg.load(bad)
    with pytest.raises(InputError, match=r"missing\.yaml"):
        cfg.load(tmp_path / "missing.yaml")


def test_measured_is_the_requested_subgrid() -> None:
    c = _base()
    c["measure"].update(cluster_sizes=[1500], variants={"ttree": ["zstd-5"]})
    c = cfg.validate(c)
    m = measured(c)
    assert {f.cluster_size for f in m} == {1500}
    assert {(f.format, f.variant) for f in m} == {("ttree", "zstd-5"), ("parquet", "none"),
                                                  ("parquet", "zstd-3"), ("parquet_bss", "zstd-3")}
    assert len(files(c)) == 2 * 2 * 5  # samples x cluster sizes x variants


def test_a_samples_own_readers_replace_the_measure_list_on_its_files() -> None:
    c = _base()
    c["measure"].update(cluster_sizes=[1500], variants={"ttree": ["none"]})
    c["samples"]["DYJetsToLL"]["readers"] = {"ttree": ["uproot"]}
    c = cfg.validate(c)
    rp = read_plan(c)
    assert file_readers(rp, spec(c, "DYJetsToLL", "ttree", "none", 1500)) == ["uproot"]
    # the other formats of that sample keep measure.readers'
    assert file_readers(rp, spec(c, "DYJetsToLL", "parquet", "none", 1500)) == ["pyarrow"]


def test_the_pairings_are_pair_jobs_not_reads_of_the_measure_grid() -> None:
    """Both files of each pair are read in one pair job at compare.cluster_sizes; the read
    plan stays the measure sub-grid, and convert proves both plans' readers."""
    c = _base()
    c["measure"].update(cluster_sizes=[1500], variants={"ttree": ["none"], "parquet": ["none"]})
    c["compare"]["cluster_sizes"] = [500, 1500]
    c = cfg.validate(c)
    assert {f.cluster_size for f in measured(c)} == {1500}
    rp = read_plan(c)

    def readers_of(fmt: str, variant: str, n: int) -> list[str]:
        return file_readers(rp, spec(c, "DYJetsToLL", fmt, variant, n))

    assert readers_of("ttree", "none", 1500) == ["rdf", "uproot"]
    with pytest.raises(ConfigError, match="not read-measured"):
        readers_of("ttree", "zstd-5", 500)  # a pair side only
    proofs = proof_plan(c)
    assert proofs[spec(c, "DYJetsToLL", "ttree", "zstd-5", 500)] == ["rdf"]
    assert proofs[spec(c, "DYJetsToLL", "parquet", "zstd-3", 1500)] == ["pyarrow"]
    assert proofs[spec(c, "DYJetsToLL", "ttree", "none", 1500)] == ["rdf", "uproot"]
    assert {f: r for f, r in proofs.items() if f in rp} == rp
    jobs = pair_plan(c)
    # samples x sizes x pairs x selections (ten, all)
    assert len(jobs) == 2 * 2 * 2 * 2
    assert {(j.ttree.variant, j.parquet.variant) for j in jobs} == {("none", "none"),
                                                                    ("zstd-5", "zstd-3")}


def test_real_file_samples_are_accepted(tmp_path: Path) -> None:
    import awkward as ak
    import numpy as np
    import uproot

    real = tmp_path / "nano.root"  # its branch names are what the config check reads
    jagged = ak.Array([[1.0], [], [2.0, 3.0]])
    with uproot.recreate(real) as f:
        # as uproot writes jagged branches: one counter each (nMuon_pt), which nMuon stands for
        f["Events"] = {"MET_pt": np.ones(3, np.float32),
                       **{f"Muon_{k}": jagged for k in ("pt", "eta", "phi")},
                       **{f"Jet_{k}": jagged for k in ("pt", "eta", "phi", "mass")}}
    c = _base()
    c["samples"] = {"real": {"file": str(real), "cluster_sizes": [3]},  # its 3 entries
                    "remote": {"file": "root://eos.cms/x.root", "tree": "Events"}}
    c["compare"]["pairs"] = []
    assert set(cfg.validate(c)["samples"]) == {"real", "remote"}


def test_the_full_metadata_overlay_on_the_default_is_valid() -> None:
    """config/overlays/metadata-full.yaml is merged onto default.yaml by Snakemake (key by key)."""
    from snakemake.utils import update_config

    c = yaml.safe_load((ROOT / "config" / "default.yaml").read_text())
    overlay = ROOT / "config" / "overlays" / "metadata-full.yaml"
    update_config(c, yaml.safe_load(overlay.read_text()))
    m = cfg.validate(c)["metadata"]
    assert m["stats_levels"] == ["none", "chunk", "page"]
    assert m["max_columns"]["root-rntuple"] == 10000 and m["columns"][-1] == 10000


def test_a_renamed_key_of_an_older_config_still_runs() -> None:
    """``metadata.time_budget_s`` is ``metadata.budget_s`` now (one name for a budget): a
    config or a committed run's config.yaml written before reads as written now; both set is
    refused, naming the old key."""
    base = {"samples": {"A": {"process": "QCD", "n_events": 10}}, "cluster_sizes": [5],
            "formats": {"parquet": {"variants": ["none"]}}}
    c = cfg.validate({**base, "metadata": {"time_budget_s": 4}})
    assert c["metadata"]["budget_s"] == 4 and "time_budget_s" not in c["metadata"]
    with pytest.raises(ConfigError, match=r"metadata\.time_budget_s.*renamed to "
                                          r"metadata\.budget_s"):
        cfg.validate({**base, "metadata": {"time_budget_s": 4, "budget_s": 5}})
