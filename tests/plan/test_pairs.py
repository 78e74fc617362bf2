"""The pair jobs of a study: which pairings are timed where, their settings (overrides
included), the spec the rule and ``hepfmt bench reproduce`` share, and the config rules."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from pathlib import Path

import pytest
import yaml

from hepfmt.cli import build_parser
from hepfmt.errors import ConfigError
from hepfmt.measure.pairs import PairSpec
from hepfmt.measure.timing import Stopping
from hepfmt.plan import commands, paths, study
from hepfmt.plan import config as cfg

ROOT = Path(__file__).resolve().parents[2]


def _config(**compare: object) -> dict:
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    c["compare"].update({"samples": ["DYJetsToLL"], "cluster_sizes": [500, 1500], **compare})
    return c


def _refused(c: dict) -> ConfigError:
    with pytest.raises(ConfigError) as err:
        cfg.validate(c)
    return err.value


def test_one_job_per_pairing_sample_size_and_selection() -> None:
    c = cfg.validate(_config())
    jobs = study.pair_plan(c)
    assert {(j.cluster_size, study.pair_slug(j.pair), j.selection) for j in jobs[:4]} == {
        (500, "ttree-none.vs.parquet-none", "ten"), (500, "ttree-none.vs.parquet-none", "all"),
        (500, "ttree-zstd-5.vs.parquet-zstd-3", "ten"),
        (500, "ttree-zstd-5.vs.parquet-zstd-3", "all")}
    assert len(jobs) == len(set(jobs)) == 2 * 2 * 2
    for j in jobs:
        assert study.pair_job_of(c, j.wildcards) == j
        assert paths.pair("r", j) == (f"r/pairs/DYJetsToLL/{study.pair_slug(j.pair)}/"
                                      f"c{j.cluster_size}/{j.selection}.json")
    assert paths.pair("r") == "r/pairs/{sample}/{pair}/c{cluster}/{selection}.json"
    assert paths.log("r", "pair", jobs[0].wildcards).startswith("r/logs/pairs/DYJetsToLL/")


def test_a_sample_is_paired_only_at_the_sizes_it_is_written_at() -> None:
    c = _config(samples=["DYJetsToLL", "Long"])
    c["samples"]["Long"] = {"process": "DYJetsToLL", "n_events": 3000, "files": "pairs",
                            "cluster_sizes": [3000]}
    c["compare"]["cluster_sizes"] = [1500, 3000]
    jobs = study.pair_plan(cfg.validate(c))
    assert {(j.sample, j.cluster_size) for j in jobs} == {("DYJetsToLL", 1500), ("Long", 3000)}


def test_a_pairing_may_be_timed_at_some_cluster_sizes_only() -> None:
    """The costly 2018 regime for some pairings: a ``files: pairs`` sample then writes only the
    sides of the pairings timed at its sizes."""
    c = _config(samples=["DYJetsToLL", "Long"])
    c["samples"]["Long"] = {"process": "DYJetsToLL", "n_events": 3000, "files": "pairs",
                            "cluster_sizes": [3000]}
    c["compare"]["cluster_sizes"] = [1500, 3000]
    c["compare"]["pairs"][0]["cluster_sizes"] = [1500]
    c = cfg.validate(c)
    only, every = study.compare_pairs(c)[:2]
    jobs = study.pair_plan(c)
    assert {(j.sample, j.pair.label) for j in jobs if j.cluster_size == 3000} == {
        ("Long", every.label)}
    assert {(j.sample, j.pair.label) for j in jobs if j.cluster_size == 1500} == {
        ("DYJetsToLL", only.label), ("DYJetsToLL", every.label)}
    long_files = {(f.format, f.variant) for f in study.files(c) if f.sample == "Long"}
    assert long_files == {(s.format, s.variant) for s in every.sides}


def test_a_pairing_size_outside_compare_cluster_sizes_is_refused() -> None:
    c = _config()
    c["compare"]["pairs"][0]["cluster_sizes"] = [777]
    assert "compare.pairs[0].cluster_sizes" in str(_refused(c))


def test_without_compare_cluster_sizes_there_are_no_pair_jobs() -> None:
    c = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    assert study.pair_plan(cfg.validate(c)) == []


def test_overrides_apply_in_order_to_the_jobs_they_match() -> None:
    c = cfg.validate(_config(rounds=2, overrides=[
        {"cluster_sizes": [1500], "rounds": 1, "min_repetitions": 3, "repetitions": 4},
        {"cluster_sizes": [1500], "selections": ["all"], "budget_s": 7, "repetitions": 3}]))
    by = {(j.cluster_size, j.selection): study.pair_settings(c, j) for j in study.pair_plan(c)}
    assert by[(500, "all")] == {"rounds": 2, "min_repetitions": 3, "repetitions": 3,
                                "budget_s": 1, "precision": 0.05, "max_load": 1}
    assert by[(1500, "ten")]["rounds"] == 1 and by[(1500, "ten")]["repetitions"] == 4
    assert by[(1500, "all")] == {**by[(1500, "ten")], "budget_s": 7, "repetitions": 3}


def test_every_timing_default_is_the_schemas() -> None:
    """One set of defaults: a config's ``compare`` and ``measure`` sections as the schema fills
    them are what ``hepfmt pair`` / ``measure`` / ``storage`` / ``query`` do alone (cache modes,
    tasks and storage profiles too), and the pair record's defaults (hepfmt.defaults)."""
    c = cfg.validate({"samples": {"A": {"process": "QCD", "n_events": 10}},
                      "cluster_sizes": [5], "formats": {"ttree": {"variants": ["none"]},
                                                        "parquet": {"variants": ["none"]}}})
    commands = next(a for a in build_parser()._actions
                    if isinstance(a, argparse._SubParsersAction)).choices
    keys = {"repetitions": "repetitions", "min_repetitions": "min_repetitions",
            "precision": "precision", "budget_s": "budget_s"}
    for command, section in (("pair", "compare"), ("measure", "measure"),
                             ("storage", "measure")):
        got = {k: commands[command].get_default(a) for k, a in keys.items()}
        assert got == {k: c[section][k] for k in keys}, command
    assert commands["pair"].get_default("rounds") == c["compare"]["rounds"]
    assert commands["query"].get_default("repetitions") == c["measure"]["repetitions"]
    for command, option, key in (("measure", "modes", "modes"), ("query", "modes", "modes"),
                                 ("query", "tasks", "queries"),
                                 ("query-reference", "tasks", "queries"),
                                 ("storage", "profiles", "storage")):
        assert commands[command].get_default(option) == ",".join(map(str, c["measure"][key]))
    spec = {f.name: f.default for f in dataclasses.fields(PairSpec)}
    assert (spec["rounds"], spec["min_repetitions"], spec["max_repetitions"], spec["budget_s"],
            spec["precision"], spec["max_load"]) == tuple(
        c["compare"][k] for k in ("rounds", "min_repetitions", "repetitions", "budget_s",
                                  "precision", "max_load"))
    assert Stopping.default("compare") == PairSpec("x", "s", 5, None, None).stopping()


def test_the_default_study_spans_six_processes_even_at_its_slowest_pairs() -> None:
    """pyarrow's all-branch read of the 200000-event file varies by process
    (docs/how-it-measures.md): its interval must come from six rounds, at one repeat pair
    each. Two processes are paired there (issue 40), so a ratio carries its spread over
    samples."""
    c = cfg.load(ROOT / "config" / "default.yaml")
    slow = [j for j in study.pair_plan(c) if j.cluster_size == 100_000]
    assert slow and {j.sample for j in slow} == {"DYJetsToLL_100k", "TTJets_100k"}
    for j in slow:
        s = study.pair_settings(c, j)
        assert (s["rounds"], s["repetitions"]) == ((6, 6) if j.selection == "all" else (6, 24))


@pytest.mark.parametrize(("compare", "key"), [
    ({"min_repetitions": 8, "repetitions": 7}, "compare.min_repetitions"),
    ({"min_repetitions": 2}, "compare.min_repetitions"),
    ({"rounds": 0}, "compare.rounds"),
    ({"max_load": 0}, "compare.max_load"),
    ({"max_load": 1.5}, "compare.max_load"),
    ({"budget_s": 0}, "compare.budget_s"),
    ({"overrides": [{"rounds": 1}]}, "compare.overrides[0]"),
    ({"overrides": [{"cluster_sizes": [777]}]}, "compare.overrides[0].cluster_sizes[0]"),
    ({"overrides": [{"selections": ["ten", "nope"]}]}, "compare.overrides[0].selections[1]"),
    ({"overrides": [{"selections": ["all"], "repetitions": 5},
                    {"cluster_sizes": [500], "min_repetitions": 6}]},
     "compare.overrides[1].min_repetitions"),
    ({"overrides": [{"selections": ["all"], "nope": 1}]}, "compare.overrides[0]"),
])
def test_pair_settings_are_refused_naming_the_key(compare: dict, key: str) -> None:
    assert _refused(_config(**compare)).key == key


def test_two_pairings_of_the_same_files_are_refused() -> None:
    c = _config()
    c["compare"]["pairs"].append({"ttree": "zstd-5", "parquet": "zstd-3", "label": "again"})
    err = _refused(c)
    assert err.key == "compare.pairs[2]" and "ttree-zstd-5.vs.parquet-zstd-3" in str(err)


def test_a_pairing_of_the_same_files_by_other_readers_is_a_pairing_of_its_own() -> None:
    """Naming a side's reader puts it in the pairing's path (and the pair rule's wildcard
    pattern, study.PAIR_SLUG_PATTERN, takes it); a reader the format lacks names the key."""
    import re

    c = _config()
    c["compare"]["pairs"].append({"ttree": "zstd-5", "parquet": "zstd-3", "label": "columnar",
                                  "ttree_reader": "columnar"})
    c = cfg.validate(c)
    slugs = [study.pair_slug(p) for p in study.compare_pairs(c)]
    assert "ttree-zstd-5.columnar.vs.parquet-zstd-3" in slugs
    assert all(re.fullmatch(study.PAIR_SLUG_PATTERN, s) for s in slugs)
    named = next(p for p in study.compare_pairs(c) if p.label == "columnar")
    assert named.ttree.reader == "columnar" and named.parquet.reader == "pyarrow"
    bad = _config()
    bad["compare"]["pairs"].append({"ttree": "zstd-5", "parquet": "zstd-3", "label": "x",
                                    "parquet_reader": "nosuch"})
    assert _refused(bad).key == "compare.pairs[2].parquet_reader"


def test_every_shipped_pairing_fits_the_pair_rule() -> None:
    import re

    for name in ("default.yaml", "paper.yaml", "test.yaml"):
        c = cfg.validate(yaml.safe_load((ROOT / "config" / name).read_text()))
        for p in study.compare_pairs(c):
            assert re.fullmatch(study.PAIR_SLUG_PATTERN, study.pair_slug(p)), (name, p)


def test_a_selection_name_that_cannot_name_a_file_is_refused_with_pair_jobs() -> None:
    c = _config()
    c["measure"]["selections"] = {"a/b": ["MET_pt"]}
    assert _refused(c).key == "measure.selections.a/b"
    c["compare"].update(cluster_sizes=[], samples=[])  # no pair record to name
    cfg.validate(c)


def test_the_spec_of_a_job_and_its_command_line() -> None:
    c = cfg.validate(_config(overrides=[{"selections": ["all"], "budget_s": 9}]))
    job = next(j for j in study.pair_plan(c) if j.selection == "all" and j.cluster_size == 500
               and j.ttree.variant == "zstd-5")
    spec = commands.pair_spec(c, job)
    assert spec.label == "zstd" and spec.cluster_size == 500
    assert spec.source == paths.source(c["results"], "DYJetsToLL")
    assert spec.ttree.path == paths.written(c["results"], job.ttree)
    assert spec.parquet.size_record == paths.size(c["results"], job.parquet)
    assert (spec.ttree.reader, spec.parquet.reader) == ("rdf", "pyarrow")
    assert (spec.rounds, spec.min_repetitions, spec.max_repetitions, spec.budget_s) == (
        1, 3, 3, 9)
    assert spec.threads == 1 and spec.file_events == 1_000_000
    assert len(spec.selections["all"]) > 100  # "*": every branch of the model's schema

    a = build_parser().parse_args(["pair", *shlex.split(commands.pair_arguments(spec)),
                                   "-o", "out.json"])
    assert (a.label, a.cluster_size, a.rounds, a.repetitions, a.min_repetitions) == (
        "zstd", 500, 1, 3, 3)
    assert (a.budget_s, a.max_load, a.precision, a.threads) == (9, 1, 0.05, 1)
    assert (a.ttree, a.ttree_format, a.ttree_name, a.ttree_variant, a.ttree_reader) == (
        spec.ttree.path, "ttree", "ttree", "zstd-5", "rdf")
    assert a.parquet_size_record == spec.parquet.size_record
    assert [(n, list(s)) for n, s in a.selection] == [("all", spec.selections["all"])]


def test_a_side_the_run_also_measures_takes_its_bound_from_that_record() -> None:
    """The codec bound is one per file and CPU: a pair side whose file the measure sub-grid
    reads gets that measure record as an input and passes it to ``hepfmt pair``."""
    c = cfg.validate(yaml.safe_load((ROOT / "config" / "default.yaml").read_text()))
    plan = study.read_plan(c)
    jobs = study.pair_plan(c)
    for j in jobs:
        fixed = dict(zip(study.SIDES, (j.ttree, j.parquet), strict=True))
        assert set(j.measured_sides) == {name for name, side in zip(study.SIDES, j.pair.sides,
                                                                    strict=True)
                                         if not side.fastest and fixed[name] in plan}
        args = commands.pair_arguments(commands.pair_spec(c, j))
        for name in study.SIDES:
            record = paths.measurement(c["results"], fixed[name])
            assert (f"--{name}-measured {shlex.quote(record)}" in args) == \
                (name in j.measured_sides)
    assert any(j.measured_sides for j in jobs) and any(not j.measured_sides for j in jobs)
