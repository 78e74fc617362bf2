"""Every path comes from one template, read both ways: as the rules' wildcard pattern and as the
concrete path of a planned file, and the two agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from hepfmt.plan import config as cfg
from hepfmt.plan import metagrid, paths, study

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def config() -> dict:
    return cfg.validate(yaml.safe_load((ROOT / "config" / "test.yaml").read_text()))


def _matches(pattern: str, path: str, wildcards: dict[str, str]) -> bool:
    """Whether ``path`` is ``pattern`` with its wildcards replaced by ``wildcards``' values."""
    regex = re.escape(pattern)
    for name in re.findall(r"\\\{(\w+)\\\}", regex):
        regex = regex.replace(rf"\{{{name}\}}", f"(?P<{name}>[^/]+?)", 1)
    m = re.fullmatch(regex, path)
    return m is not None and all(m[k] == v for k, v in m.groupdict().items()
                                 if k in wildcards) and set(m.groupdict()) <= set(wildcards)


def test_a_written_file_has_the_layout_the_rules_expect(config: dict) -> None:
    spec = study.spec(config, "DYJetsToLL", "parquet_bss", "zstd-3", 500)
    assert paths.written("r", spec) == "r/files/DYJetsToLL/parquet_bss/zstd-3/c500.parquet"
    assert paths.size("r", spec) == "r/sizes/DYJetsToLL/parquet_bss/zstd-3/c500.parquet.json"
    assert paths.measurement("r", spec) == "r/measurements/DYJetsToLL/parquet_bss/zstd-3/c500.json"
    assert paths.source("r", "QCD") == "r/sources/QCD.arrow"
    assert paths.written("r") == "r/files/{sample}/{format}/{variant}/c{cluster}.{ext}"
    assert spec.stem == "DYJetsToLL/parquet_bss/zstd-3/c500"


@pytest.mark.parametrize("kind", ["written", "size", "measurement"])
def test_each_pattern_matches_every_planned_path(config: dict, kind: str) -> None:
    make = getattr(paths, kind)
    for spec in study.files(config):
        assert _matches(make("r"), make("r", spec), spec.wildcards), spec


@pytest.mark.parametrize(("rule", "output"), [
    ("generate", paths.source), ("convert", paths.written), ("measure", paths.measurement),
    ("metadata_write", lambda r: paths.meta(r, "files")),
    ("metadata_time", lambda r: paths.meta(r, "timings")),
    ("query", paths.query), ("storage", paths.storage),
])
def test_a_log_has_exactly_its_outputs_wildcards(rule: str, output) -> None:
    """Snakemake requires it: a log cannot name a wildcard its outputs do not have."""
    def names(p: str) -> set[str]:
        return set(re.findall(r"\{(\w+)\}", p))

    assert names(paths.log("r", rule)) == names(output("r"))


def test_the_rules_keep_the_benchmark_records_listed_each_named_as_its_log() -> None:
    rules = "".join(p.read_text() for p in sorted((ROOT / "workflow" / "rules").glob("*.smk")))
    kept = re.findall(r'paths\.benchmark\(RESULTS, "(\w+)"\)', rules)
    assert sorted(kept) == sorted(paths.BENCHMARKED)
    for rule in paths.BENCHMARKED:
        log = paths.log("r", rule).removeprefix("r/logs/").removesuffix(".log")
        assert paths.benchmark("r", rule) == f"r/benchmarks/{log}.tsv"


def test_metadata_files_fill_their_patterns(config: dict) -> None:
    for f in metagrid.files(config):
        for kind in paths.META:
            assert _matches(paths.meta("r", kind), paths.meta("r", kind, f), f.wildcards)
    assert paths.meta_helper("r") == "r/metadata/tools/parquet-footer.json"


def test_a_results_path_with_a_space_or_a_brace_stays_as_given() -> None:
    assert paths.table("my results/{x}", "size", "csv") == "my results/{x}/tables/size.csv"
    assert paths.log("a b", "tabulate") == "a b/logs/tabulate.log"
