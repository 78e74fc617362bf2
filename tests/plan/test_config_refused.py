"""Configs a hostile-but-fair user wrote (issue 26): each used to be accepted, or refused by a bare
``ValueError`` naming no key, a traceback or a hang; now each is refused before any job, in one
line naming the key (or, for a file no config is, the file), by ``hepfmt check-config`` and, for
a representative subset, by ``snakemake -n`` with the same words.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml

from helpers import ROOT, run_snakemake
from hepfmt.cli import main
from hepfmt.errors import ConfigError
from hepfmt.plan import config as cfg
from hepfmt.plan import configfile

#: The key of a case refused for what the file is, not for a key in it: the message names the
#: file instead.
FILE = ""


class Case(NamedTuple):
    """One bad config. Under ``snakemake -n`` every case but three is refused in the same line
    (checked for the ones marked, a few seconds each): Snakemake parses a ``--configfile``
    itself before the Snakefile runs, and its own code recurses into a mapping that contains
    itself and into brackets nested past Python's recursion limit (a traceback of Snakemake's)
    and takes minutes over a 50 MB label (a 50 MB file of comments: 40 s, then hepfmt's line)."""

    make: Callable[[dict, Path], str]  # (test.yaml as a dict, a temporary directory) -> YAML
    key: str  # the key the one-line error names, or FILE
    snakemake: bool = False  # also run through `snakemake -n`


def _dump(config: dict) -> str:
    return yaml.safe_dump(config, sort_keys=False)


def edit(fn: Callable[[dict], object]) -> Callable[[dict, Path], str]:
    """A case made by changing test.yaml's values."""
    def make(c: dict, tmp: Path) -> str:
        fn(c)
        return _dump(c)
    return make


def results(where: Callable[[Path], str]) -> Callable[[dict, Path], str]:
    """A case whose ``results`` is ``where(tmp)``."""
    return edit_tmp(lambda c, tmp: c.update(results=where(tmp)))


def edit_tmp(fn: Callable[[dict, Path], object]) -> Callable[[dict, Path], str]:
    def make(c: dict, tmp: Path) -> str:
        fn(c, tmp)
        return _dump(c)
    return make


def appended(text: str, drop: str | None = None) -> Callable[[dict, Path], str]:
    """A case made by appending YAML text to test.yaml (without its key ``drop``)."""
    def make(c: dict, tmp: Path) -> str:
        c.pop(drop, None)
        return _dump(c) + text
    return make


def _a_file(tmp: Path) -> Path:
    f = tmp / "a-file"
    f.write_text("not a directory\n")
    return f


def _read_only(tmp: Path) -> str:
    if os.geteuid() == 0:  # root writes through any mode bits; sysfs refuses even root a file
        return "/sys"
    d = tmp / "read-only"
    d.mkdir()
    d.chmod(0o555)
    return str(d)


def _laughs(c: dict, tmp: Path) -> str:
    """A billion laughs: 10 ** 9 values from ten lines. lol5 is the first to expand past
    configfile.MAX_VALUES (1 + 10 * 11111 values)."""
    lines = ['lol0: &l0 "lol"'] + [
        f"lol{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 10)]
    return "\n".join(lines) + "\n" + _dump(c)


def _duplicate_sample(c: dict, tmp: Path) -> str:
    samples = c.pop("samples")
    return _dump(c) + "samples:\n" + "".join(
        f"  DYJetsToLL: {yaml.safe_dump(s, default_flow_style=True)}" for s in samples.values())


def _own_sizes(**sizes: list[int]) -> Callable[[dict], None]:
    def fn(c: dict) -> None:
        for sample, n in sizes.items():
            c["samples"][sample]["cluster_sizes"] = n
    return fn


def _both(*fns: Callable[[dict], object]) -> Callable[[dict], None]:
    def fn(c: dict) -> None:
        for f in fns:
            f(c)
    return fn


DEEP = configfile.MAX_DEPTH + 8

CASES: dict[str, Case] = {
    # integers written as integers
    "n_events: 1500.0": Case(edit(lambda c: c["samples"]["DYJetsToLL"].update(n_events=1500.0)),
                             "samples.DYJetsToLL.n_events", snakemake=True),
    "seed: 2.0": Case(edit(lambda c: c["samples"]["TTJets"].update(seed=2.0)),
                      "samples.TTJets.seed"),
    "cluster_sizes: [500.0]": Case(edit(lambda c: c.update(cluster_sizes=[500.0])),
                                   "cluster_sizes[0]"),
    "basket_size: 32000.0": Case(edit(lambda c: c["formats"]["ttree"].update(
        options={"basket_size": 32000.0})), "formats.ttree.options.basket_size"),
    # NaN and infinities, wherever they are
    "precision: .nan": Case(edit(lambda c: c["measure"].update(precision=float("nan"))),
                            "measure.precision", snakemake=True),
    "timeout_s: .nan": Case(edit(lambda c: c["measure"].update(timeout_s=float("nan"))),
                            "measure.timeout_s"),
    "timeout_s: .inf": Case(edit(lambda c: c["measure"].update(timeout_s=float("inf"))),
                            "measure.timeout_s"),
    "budget_s: .nan": Case(edit(lambda c: c["measure"].update(budget_s=float("nan"))),
                           "measure.budget_s"),
    "n_events: .inf": Case(edit(lambda c: c["samples"]["TTJets"].update(n_events=float("inf"))),
                           "samples.TTJets.n_events"),
    "metadata budget_s: -.inf": Case(edit(lambda c: c.update(
        metadata={"budget_s": float("-inf")})), "metadata.budget_s"),
    "NaN in a free-form pyarrow option": Case(edit(lambda c: c["formats"]["parquet"].update(
        options={"data_page_size": float("nan")})), "formats.parquet.options.data_page_size"),
    # codec labels: one spelling, one file
    "zstd-05 beside zstd-5": Case(edit(lambda c: c["formats"]["ttree"]["variants"].append(
        "zstd-05")), "formats.ttree.variants[2]", snakemake=True),
    "ROOT's zstd beside zstd-5": Case(edit(lambda c: c["formats"]["ttree"]["variants"].append(
        "zstd")), "formats.ttree.variants[2]"),
    # pairings
    "Parquet side a TTree format": Case(edit(lambda c: c["compare"]["pairs"][0].update(
        parquet_format="ttree")), "compare.pairs[0].parquet_format", snakemake=True),
    "ROOT side a Parquet format": Case(edit(lambda c: c["compare"]["pairs"][1].update(
        ttree_format="parquet_bss")), "compare.pairs[1].ttree_format"),
    "two pairs of one label": Case(edit(lambda c: c["compare"]["pairs"][1].update(
        label="uncompressed")), "compare.pairs[1].label"),
    # rules between keys
    "min_repetitions above repetitions": Case(edit(lambda c: c["measure"].update(
        min_repetitions=8)), "measure.min_repetitions", snakemake=True),
    "repetitions: 3 for the queries": Case(edit(lambda c: c["measure"].update(repetitions=3)),
                                           "measure.repetitions", snakemake=True),
    "metadata repetitions below its minimum": Case(edit(lambda c: c.update(
        metadata={"repetitions": 4})), "metadata.repetitions"),
    "a fixed minimum set": Case(edit(lambda c: c["measure"].update(queries_min_repetitions=3)),
                                "measure.queries_min_repetitions"),
    "budget_s: 0": Case(edit(lambda c: c["measure"].update(budget_s=0)), "measure.budget_s"),
    "selections: {}": Case(edit(lambda c: c["measure"].update(selections={})),
                           "measure.selections", snakemake=True),
    "a compare cluster size no compare sample has": Case(edit(_both(
        _own_sizes(DYJetsToLL=[500]),
        lambda c: c["compare"].update(samples=["DYJetsToLL"], cluster_sizes=[1500]))),
        "compare.cluster_sizes[0]", snakemake=True),
    "a compare sample with no compare cluster size": Case(edit(_both(
        _own_sizes(TTJets=[1500]),
        lambda c: c["compare"].update(samples=["DYJetsToLL", "TTJets"], cluster_sizes=[500]))),
        "compare.samples[1]"),
    "compare.samples without compare.cluster_sizes": Case(edit(lambda c: c["compare"].update(
        samples=["DYJetsToLL"])), "compare.samples[0]"),
    "a measure cluster size no measure sample has": Case(edit(_both(
        _own_sizes(DYJetsToLL=[500]),
        lambda c: c["measure"].update(samples=["DYJetsToLL"], cluster_sizes=[1500]))),
        "measure.cluster_sizes[0]"),
    # YAML itself
    "a sample given twice": Case(_duplicate_sample, "samples.DYJetsToLL", snakemake=True),
    "a top-level key given twice": Case(appended("cluster_sizes: [500]\n"), "cluster_sizes"),
    "billion laughs": Case(_laughs, "lol5", snakemake=True),
    "anchor loop (mapping)": Case(appended("tabulate: &t {mix_kinds: false, x: *t}\n"),
                                  "tabulate.x"),
    "anchor loop (list)": Case(appended("metadata: {columns: &c [10, *c]}\n", "metadata"),
                               "metadata.columns[1]", snakemake=True),
    "nested too deep": Case(appended(f"tabulate: {{x: {'[' * DEEP}{']' * DEEP}}}\n"),
                            "tabulate.x" + "[0]" * (configfile.MAX_DEPTH - 1)),
    "nested past Python's recursion": Case(appended(f"tabulate: {'[' * 100_000}{']' * 100_000}\n"),
                                           FILE),
    "an integer sample name": Case(edit(lambda c: c["samples"].update(
        {123: {"process": "QCD", "n_events": 1500}})), "samples.123"),
    # sizes
    "a 5000-character label": Case(edit(lambda c: c["formats"]["parquet_bss"].update(
        label="x" * 5000)), "formats.parquet_bss.label", snakemake=True),
    "a 100-character sample name": Case(edit(lambda c: c["samples"].update(
        {"S" * 100: {"process": "QCD", "n_events": 1500}})), "samples"),
    "a 5000-character model path": Case(edit(lambda c: c.update(model="m/" * 2500)), "model"),
    "a 50 MB label": Case(lambda c, tmp: _dump(c).replace(  # PyYAML would take minutes to dump
        "label: Parquet BSS", "label: " + "x" * 50_000_000), FILE),
    "a 50 MB config": Case(lambda c, tmp: _dump(c) + ("# " + "x" * 98 + "\n") * 500_000, FILE),
    # where results go
    "results: ''": Case(results(lambda tmp: ""), "results", snakemake=True),
    "results: /": Case(results(lambda tmp: "/"), "results"),
    "results: . (the project root)": Case(results(lambda tmp: "."), "results", snakemake=True),
    "results: a directory holding the project": Case(results(lambda tmp: str(ROOT.parent)),
                                                     "results"),
    "results: a file": Case(results(lambda tmp: str(_a_file(tmp))), "results", snakemake=True),
    "results: under a file": Case(results(lambda tmp: str(_a_file(tmp) / "results")),
                                  "results"),
    "results: a read-only directory": Case(results(_read_only), "results"),
    "results: a NUL byte": Case(results(lambda tmp: "res\0ults"), "results"),
}


def _write(name: str, tmp_path: Path) -> Path:
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["results"] = str(tmp_path / "results")
    path = tmp_path / "bad.yaml"
    path.write_text(CASES[name].make(c, tmp_path))
    return path


def _names(path: Path, key: str) -> str:
    return f"config key {key!r}: " if key != FILE else f"{path}: "


@pytest.mark.parametrize("name", list(CASES))
def test_check_config_refuses_naming_the_key(name: str, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture) -> None:
    path = _write(name, tmp_path)
    monkeypatch.chdir(ROOT)  # where `results: .` is the project root
    assert main(["check-config", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err[:2000]
    assert lines[0].startswith("hepfmt check-config: error: "
                               + _names(path, CASES[name].key)), lines[0][:500]
    assert len(lines[0]) < 1000


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.snakemake])
def test_snakemake_refuses_in_the_same_line(name: str, tmp_path: Path) -> None:
    """The Snakefile checks with the same code: one line, exit status 2, no traceback, soon
    (Snakemake's working directory is the project root: ``results: .`` is it)."""
    path = _write(name, tmp_path)
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(path), timeout=300)
    output = (proc.stdout + proc.stderr).strip()
    assert proc.returncode == 2, output[-2000:]
    assert "Traceback" not in output
    assert output.splitlines() == [output], output[-2000:]
    assert output.startswith("hepfmt: error: " + _names(path, CASES[name].key)), output[:500]


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "config").glob("*.yaml")))
def test_shipped_configs_pass_check_config(name: str, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture) -> None:
    monkeypatch.chdir(ROOT)  # own-nanoaod.yaml names its file relative to the project
    assert main(["check-config", str(ROOT / "config" / name)]) == 0
    assert capsys.readouterr().out.startswith(f"{ROOT / 'config' / name}: valid")


@pytest.mark.slow
def test_snakemake_accepts_a_shipped_config(tmp_path: Path) -> None:
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["results"] = str(tmp_path / "results")
    path = tmp_path / "test.yaml"
    path.write_text(_dump(c))
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(path), timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not (tmp_path / "results").exists()  # a dry run makes nothing


# -- what is accepted: one spelling of each variant, YAML's own sharing ------------------------

def test_a_variant_is_known_by_its_normal_spelling() -> None:
    """``zstd-05`` alone is ``zstd-5``: every key naming it is spelled so, and finds it."""
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["formats"]["ttree"]["variants"] = ["none", "zstd-05"]
    c["compare"]["pairs"][1]["ttree"] = "zstd-005"
    c["measure"]["variants"] = {"ttree": ["zstd-5"]}
    c = cfg.validate(c)
    assert c["formats"]["ttree"]["variants"] == ["none", "zstd-5"]
    assert c["compare"]["pairs"][1]["ttree"] == "zstd-5"


def test_anchors_and_merge_keys_are_yaml_not_duplicates(tmp_path: Path) -> None:
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["results"] = str(tmp_path / "results")
    del c["samples"]
    path = tmp_path / "anchors.yaml"
    path.write_text(_dump(c) + "samples:\n"
                    "  DYJetsToLL: &dy {process: DYJetsToLL, n_events: 1500, seed: 1}\n"
                    "  TTJets: {<<: *dy, process: TTJets, seed: 2}\n")
    loaded = cfg.load(path)
    assert loaded["samples"]["TTJets"] == {"process": "TTJets", "n_events": 1500, "seed": 2}


def test_an_in_memory_loop_is_refused_without_recursing() -> None:
    """A config handed over as Python values (Snakemake's own loader builds loops) is bounded
    too."""
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["tabulate"] = {}
    c["tabulate"]["x"] = c["tabulate"]
    with pytest.raises(ConfigError, match="nested too deeply"):
        cfg.validate(c)
