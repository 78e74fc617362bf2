"""The queries as a measured read workload: ``hepfmt query`` end to end, the distributed engine
on a local Dask cluster, which files the workflow queries, the queries table on hand-made
records, and a dry run of the `queries` target."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import CLUSTER_SIZE, N_EVENTS
from helpers import ROOT, run_snakemake
from hepfmt.cli import main
from hepfmt.errors import ConfigError
from hepfmt.plan import config as cfg
from hepfmt.plan import study
from hepfmt.plan.record import record
from hepfmt.queries import ENGINES
from hepfmt.queries import tasks as T
from hepfmt.queries.reference import compare, passing, reference

TEST_CONFIG = ROOT / "config" / "test.yaml"


@pytest.fixture(scope="module")
def reference_file(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("queries") / "reference.json"
    assert main(["query-reference", str(source), "--tasks", "1,5", "-o", str(out)]) == 0
    return out


def _query(path: Path, source: Path, reference_file: Path, out: Path, *extra: str) -> int:
    return main(["query", str(path), "--source", str(source), "--reference",
                 str(reference_file), "--format", "parquet", "--variant", "zstd-3",
                 "--cluster-size", str(CLUSTER_SIZE), "--tasks", "1,5", "--repetitions", "5",
                 "-o", str(out), *extra])


def test_query_is_measured_and_checked(written, source: Path, reference_file: Path,
                                       tmp_path: Path) -> None:
    out = tmp_path / "q.json"
    assert _query(written("parquet", "zstd-3"), source, reference_file, out) == 0
    doc = json.loads(out.read_text())
    rows = doc["queries"]
    # every engine reading Parquet, both tasks, both cache modes
    assert {(r["engine"], r["task"], r["mode"]) for r in rows} == {
        (e, t, m) for e in ("awkward", "duckdb", "polars", "coffea") for t in (1, 5)
        for m in ("cold", "warm")}
    selected = {r["task"]: r["selected_events"] for r in rows}
    assert selected == {1: N_EVENTS, 5: passing(source, T.TASKS[5])}
    for r in rows:
        assert r["n"] == 5 and len(r["repetitions"]) == 5 and r["events_per_s"] > 0
        assert r["columns"] == list(T.TASKS[r["task"]].columns) and r["zip_bytes"] > 0
        assert (r["cold_verified"] is None) == (r["mode"] == "warm")
    assert doc["n_events"] == N_EVENTS and doc["format"] == "parquet"
    _check_first_histogram(doc, {"awkward", "duckdb", "polars", "coffea"})


def _check_first_histogram(doc: dict, engines: set[str]) -> None:
    """Each engine's first run in its process is timed: the first task's, on a cached file."""
    first = doc["first_histogram"]
    assert set(first) == engines
    for e, f in first.items():
        assert f["task"] == 1 and f["wall_s"] > 0 and f["cpu_s"] > 0, e
        assert f["resident_pages"] == f["pages"] > 0, e  # warm, as it says


@pytest.fixture(scope="module")
def root_and_parquet(written, source: Path, reference_file: Path,
                     tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """A real query of task 1 on each side: RDataFrame on the TTree, polars on Parquet."""
    out = tmp_path_factory.mktemp("answer")
    records = []
    for fmt, variant, engine in (("ttree", "zstd-5", "rdataframe"),
                                 ("parquet", "zstd-3", "polars")):
        records.append(out / f"{fmt}.json")
        assert main(["query", str(written(fmt, variant)), "--source", str(source),
                     "--reference", str(reference_file), "--format", fmt, "--variant", variant,
                     "--cluster-size", str(CLUSTER_SIZE), "--tasks", "1", "--engines", engine,
                     "--repetitions", "5", "-o", str(records[-1])]) == 0
    return records


def test_time_to_first_histogram_on_a_root_file(root_and_parquet: list[Path]) -> None:
    """RDataFrame's first run (the RDataFrame's construction and its graph's JIT in it) is
    timed and recorded like the columnar engines'."""
    _check_first_histogram(json.loads(root_and_parquet[0].read_text()), {"rdataframe"})


def test_answer_and_its_figure_from_a_real_run(config: dict, root_and_parquet: list[Path],
                                               tmp_path: Path) -> None:
    """Tabulated, the two records give per cache mode task 1's ROOT / Parquet ratio with the
    interval five repetitions per side give (88%), the winners named; the time to the first
    histogram per format · engine; and the figure of the ratios."""
    from hepfmt.report import figures
    from hepfmt.report.query_tables import tabulate_queries

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(record(config)))
    tables = tmp_path / "tables"
    tabulate_queries(record(config), root_and_parquet, tables)
    a = pd.read_csv(tables / "queries-ratios.csv", comment="#").set_index("mode")
    assert set(a.index) == {"warm", "cold"} and set(a.task) == {1}
    assert set(a.root) == {"rdataframe on TTree zstd-5"}
    assert set(a.parquet) == {"polars on Parquet zstd-3"}
    assert np.allclose(a.coverage, 0.875) and set(a.n_over) == {5}
    assert ((a.ratio_lo <= a.ratio_mean) & (a.ratio_mean <= a.ratio_hi)).all()
    first = pd.read_csv(tables / "queries-first.csv", comment="#").set_index("engine")
    assert set(first.index) == {"rdataframe", "polars"} and (first.first_s_mean > 0).all()
    assert "(88%, 5 repetitions per side)" in (tables / "queries.md").read_text()
    drawn = figures.make("query_ratios", tables, tables / "queries-provenance.json", plan,
                         tmp_path / "fig")
    assert [p.name for p in drawn] == ["query_root_parquet.png", "query_root_parquet.pdf"]
    assert all(p.stat().st_size > 10_000 for p in drawn)


def test_a_wrong_answer_fails_the_measurement(written, source: Path, reference_file: Path,
                                              tmp_path: Path, capsys) -> None:
    """An engine that disagrees with the reference (here: a reference off by one entry) is an
    error naming the task, and no record is written."""
    doc = json.loads(reference_file.read_text())
    doc["tasks"]["1"]["counts"]["met"][10] += 1
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps(doc))
    out = tmp_path / "q.json"
    assert _query(written("parquet", "zstd-3"), source, wrong, out, "--engines", "polars") == 2
    assert "task1/met: counts differ" in capsys.readouterr().err
    assert not out.exists()


def test_an_engine_must_read_the_format(written, source: Path, reference_file: Path,
                                        tmp_path: Path, capsys) -> None:
    assert _query(written("parquet", "zstd-3"), source, reference_file, tmp_path / "q.json",
                  "--engines", "rdataframe") == 2
    assert "rdataframe does not read parquet" in capsys.readouterr().err


def test_a_format_an_engine_cannot_read_says_why(written, source: Path, reference_file: Path,
                                                 tmp_path: Path, capsys) -> None:
    out = tmp_path / "q.json"
    assert main(["query", str(written("feather", "zstd-3")), "--source", str(source),
                 "--reference", str(reference_file), "--format", "feather", "--variant",
                 "zstd-3", "--cluster-size", str(CLUSTER_SIZE), "--tasks", "1", "--engines",
                 "coffea", "-o", str(out)]) == 2
    assert "coffea does not read feather files (coffea reads no Arrow IPC file" in \
        capsys.readouterr().err
    assert not out.exists()


# -- on a Dask cluster -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=1,
                                  protocol="tcp", host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.mark.parametrize("fmt", ["parquet", "ttree"])
def test_dask_engine_equals_the_reference(fmt: str, written, source: Path,
                                          dask_cluster: str) -> None:
    from hepfmt.queries import dask_engine

    task = T.TASKS[6]
    dask_engine.prepare()
    dask_engine.connect(dask_cluster)
    compare(task, reference(source, task), dask_engine.run(written(fmt, "zstd-3"), [task]),
            f"awkward-dask on {fmt}")


@pytest.mark.parametrize(("name", "fmt"), [(e, f) for e in ("dask-awkward", "rdataframe-dask")
                                           for f in sorted(ENGINES[e].formats)])
def test_distributed_engine_equals_the_reference(name: str, fmt: str, written, source: Path,
                                                 dask_cluster: str) -> None:
    """Every task, as one graph per file, on every format the engine reads: dask-awkward's
    collections, and ROOT's distributed RDataFrame (string expressions calling the per-event
    functions the local RDataFrame engine calls), one partition per cluster."""
    module = ENGINES[name].load()
    tasks = T.select()
    module.prepare()
    module.connect(dask_cluster)
    got = module.run(written(fmt, "zstd-3"), tasks)
    for task in tasks:
        compare(task, reference(source, task), got, f"{name} on {fmt}")


def test_dask_awkward_partitions_are_the_clusters(written) -> None:
    """One partition per cluster or row group, as awkward-dask submits them; nothing is read
    while the graph is built."""
    from hepfmt.queries import dak_engine

    for fmt in sorted(ENGINES["dask-awkward"].formats):
        graph = dak_engine.graph(written(fmt, "zstd-3"), [T.TASKS[1]])
        assert list(graph) == ["met"]
        assert dak_engine.collection(written(fmt, "zstd-3"), ["MET_pt"]).npartitions == 3, fmt


def test_pieces_are_the_clusters(written) -> None:
    from hepfmt.queries.awkward_engine import pieces

    for fmt in ("ttree", "rntuple", "parquet", "feather"):
        assert pieces(written(fmt, "zstd-3")) == [(0, 250), (250, 500), (500, 600)], fmt


def test_query_runs_on_a_dask_scheduler(written, source: Path, reference_file: Path,
                                        dask_cluster: str, tmp_path: Path) -> None:
    out = tmp_path / "q.json"
    assert _query(written("parquet", "zstd-3"), source, reference_file, out,
                  "--dask-scheduler", dask_cluster, "--modes", "warm") == 0
    doc = json.loads(out.read_text())
    assert {r["engine"] for r in doc["queries"]} == {"awkward", "duckdb", "polars", "coffea",
                                                     "awkward-dask", "dask-awkward"}
    assert doc["scheduler"] == dask_cluster


# -- which files the workflow queries ---------------------------------------------------------


@pytest.fixture
def config() -> dict:
    return cfg.load(TEST_CONFIG)


def test_each_format_is_queried_at_its_zstd_variant_and_largest_size(config: dict) -> None:
    plan = study.queries(config)
    assert {f.stem: e for f, e in plan.items()} == {
        f"{s}/{fmt}/zstd-{lvl}/c1500": engines
        for s in ("DYJetsToLL", "TTJets")
        for fmt, lvl, engines in (("ttree", 5, ["rdataframe", "awkward", "coffea"]),
                                  ("parquet", 3, ["awkward", "duckdb", "polars", "coffea"]),
                                  ("parquet_bss", 3, ["awkward", "duckdb", "polars", "coffea"]))}


def test_queries_files_and_switching_queries_off(config: dict) -> None:
    config["measure"]["queries_files"] = {"parquet": "none"}
    assert [f.stem for f in study.queries(config)] == ["DYJetsToLL/parquet/none/c1500",
                                                       "TTJets/parquet/none/c1500"]
    config["measure"]["queries_files"] = {"parquet": "lz4"}
    with pytest.raises(ConfigError, match=r"queries_files\.parquet"):
        study.queries(config)
    config["measure"]["queries"] = []
    assert study.queries(config) == {}


# -- the table ----------------------------------------------------------------------------------


def _row(task: int, engine: str, mode: str, median_s: float, verified: bool | None) -> dict:
    return {"task": task, "engine": engine, "mode": mode, "median_s": median_s,
            "q25_s": median_s, "q75_s": median_s, "iqr_s": 0.0, "std_s": 0.0,
            "min_s": median_s, "n": 5, "events_per_s": 1000 / median_s, "cpu_median_s": 0.1,
            "disk_read_bytes_median": 0.0, "columns": list(T.TASKS[task].columns),
            "zip_bytes": 4000, "selected_events": 250 if task == 4 else 1000,
            "rss_over_baseline_bytes": 2**20, "rss_method": "vmhwm-reset",
            "cold_verified": verified, "repetitions": []}


def _record(path: Path, sample: str, fmt: str, rows: list[dict], provenance: dict) -> Path:
    doc = {"file": f"{fmt}.x", "sample": sample, "process": sample, "format": fmt,
           "adapter": fmt, "variant": "zstd-5" if fmt == "ttree" else "zstd-3",
           "cluster_size": 1000, "n_events": 1000, "threads": 1, "scheduler": "",
           "queries": rows, "provenance": provenance}
    path.write_text(json.dumps(doc))
    return path


def test_table_from_hand_made_records(config: dict, tmp_path: Path) -> None:
    from hepfmt.provenance import collect
    from hepfmt.report import figures
    from hepfmt.report.query_tables import tabulate_queries

    prov = collect(data_path=tmp_path)
    files = []
    for sample, slow in (("A", 1.0), ("B", 2.0)):
        for task in (1, 4):
            files.append(_record(tmp_path / f"{sample}-ttree-{task}.json", sample, "ttree", [
                _row(task, "rdataframe", m, 0.1 * slow, m == "cold" or None)
                for m in ("cold", "warm")], prov))
            files.append(_record(tmp_path / f"{sample}-parquet-{task}.json", sample, "parquet", [
                _row(task, "polars", "warm", 0.05 * slow, None),
                _row(task, "polars", "cold", 0.025, False)], prov))
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(record(config)))
    tabulate_queries(record(config), files, tmp_path / "tables")
    t = pd.read_csv(tmp_path / "tables" / "queries.csv", comment="#")
    assert len(t) == 2 * 2 * 2  # task × (format, engine) × mode
    polars = t[(t.engine == "polars")].set_index(["task", "mode"])
    # warm: twice RDataFrame's rate in both samples; cold: 4x (A) and 8x (B), mean 6
    assert np.allclose(polars.ratio_to_baseline.xs("warm", level="mode"), 2.0)
    assert np.allclose(polars.ratio_to_baseline.xs("cold", level="mode"), 6.0)
    assert np.allclose(polars.events_per_s_mean.xs("warm", level="mode"), (20000 + 10000) / 2)
    assert polars.loc[(4, "warm"), "selected_events"] == 500  # 250 in each sample
    assert polars.loc[(4, "warm"), "selected_fraction"] == 0.25
    assert polars.loc[(1, "warm"), "zip_bytes_per_event"] == 4.0
    assert polars.loc[(1, "cold"), "cold_verified"] == False  # noqa: E712 (a CSV cell)
    assert set(t.label) == {"TTree", "Parquet"} and set(t.baseline) == {"rdataframe on TTree"}
    md = (tmp_path / "tables" / "queries.md").read_text()
    assert "250 / 1,000 (25.0%)" in md and " †" in md
    assert (tmp_path / "tables" / "queries.html").exists()
    drawn = figures.make("queries", tmp_path / "tables",
                         tmp_path / "tables" / "queries-provenance.json", plan, tmp_path / "fig")
    assert [p.name for p in drawn] == ["query_throughput.png", "query_throughput.pdf"]
    assert all(p.stat().st_size > 10_000 for p in drawn)


def test_an_engine_that_cannot_read_a_format_is_listed_not_applicable(config: dict,
                                                                     tmp_path: Path) -> None:
    """Arrow IPC queried by polars: the coffea engine, which has no Arrow IPC reader, has a row
    of "n/a" and its reason (never a silent gap); no n/a row for the TTree, which it reads."""
    from hepfmt.provenance import collect
    from hepfmt.queries import ENGINES
    from hepfmt.report.query_tables import tabulate_queries

    prov = collect(data_path=tmp_path)
    files = [_record(tmp_path / "ttree.json", "A", "ttree",
                     [_row(1, "rdataframe", "warm", 0.1, None)], prov),
             _record(tmp_path / "feather.json", "A", "feather",
                     [_row(1, "polars", "warm", 0.05, None)], prov)]
    tabulate_queries(record(config), files, tmp_path / "tables")
    md = (tmp_path / "tables" / "queries.md").read_text()
    assert re.search(r"\| feather zstd-3 · coffea +\| n/a +\|", md)  # the events/s table
    assert ENGINES["coffea"].not_applicable["feather"] in md
    assert "TTree zstd-5 · coffea" not in md
    assert "· dask-awkward" not in md  # distributed, and no record ran on a Dask cluster
    t = pd.read_csv(tmp_path / "tables" / "queries.csv", comment="#")
    assert set(t.engine) == {"rdataframe", "polars"}  # the CSV holds measurements only


# -- the workflow -------------------------------------------------------------------------------


def test_queries_target_dry_run(tmp_path: Path) -> None:
    """`snakemake queries -n` on the test study: a reference per sample and one query job per
    queried file, and none of the read study's measurements; `all` has no query job."""
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump({**yaml.safe_load(TEST_CONFIG.read_text()),
                                      "results": str(tmp_path / "results")}))
    jobs = {}
    for target in ("queries", "all"):
        proc = run_snakemake(tmp_path, target, "-n", "--quiet", "rules", "--configfile",
                             str(config), timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        jobs[target] = proc.stdout + proc.stderr
    assert "query_reference" in jobs["queries"] and "tabulate_queries" in jobs["queries"]
    assert " measure " not in jobs["queries"] and "\nmeasure " not in jobs["queries"]
    assert "query" not in jobs["all"]
