"""The real workflow, run by the real Snakemake, on a tiny study.

The study uses a 100-branch subset of the NanoAOD schema (through the config's ``schema`` key) so
that it runs every stage, both formats (and a second Parquet instance) and four readers in about a
minute: what it checks
is the plumbing (paths, validation, atomic outputs, tables), not the numbers.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from helpers import ROOT, run_snakemake, small_schema
from hepfmt.cli import main
from hepfmt.plan import calibration, paths
from hepfmt.plan import config as cfg

pytestmark = pytest.mark.slow


def real_file(tmp: Path, model: Path) -> Path:
    """A ROOT file with NanoAOD branch names, written by ROOT: the study imports it as a real
    sample ("real files as samples"), through ``hepfmt import``."""
    src, out = tmp / "real-src.arrow", tmp / "real.root"
    # as many events as the study's largest cluster size: a real file's sample is refused at
    # cluster sizes above its entries
    assert main(["generate", "--process", "ZZ", "--events", "1500", "--seed", "9",
                 "--model", str(model), "-o", str(src)]) == 0
    assert main(["convert", str(src), "--format", "ttree", "--variant", "zlib-1",
                 "--cluster-size", "1500", "-o", str(out)]) == 0
    return out


FASTEST_PAIRING = {"ttree": "zstd-5", "ttree_reader": "fastest", "parquet": "zstd-3",
                   "parquet_reader": "fastest", "parquet_formats": ["parquet_bss"],
                   "label": "zstd, fastest", "selections": ["ten"]}


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("study")
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config["results"] = str(tmp / "results")
    config["model"] = str(small_schema(tmp / "small.model.json"))
    config["samples"]["imported"] = {"file": str(real_file(tmp, Path(config["model"])))}
    # a real and two synthetic samples, averaged together on purpose (tabulated apart else)
    config["tabulate"] = {"mix_kinds": True}
    # the pairings timed as pairs on one sample at one size (test.yaml's brief pair settings)
    config["compare"].update(samples=["DYJetsToLL"], cluster_sizes=[1500])
    # ... and each side read by the fastest reader the measure jobs found, over two Parquet
    # formats (the Snakemake plumbing of a choice made from other jobs' records)
    config["compare"]["pairs"].append(FASTEST_PAIRING)
    (tmp / "config.yaml").write_text(yaml.safe_dump(config))
    proc = run_snakemake(tmp, "--configfile", str(tmp / "config.yaml"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return tmp / "results"


def test_tables_and_provenance_are_written(study: Path) -> None:
    for name in ("size", "reads", "ratios", "formats"):
        assert (study / "tables" / f"{name}.md").stat().st_size > 0
        df = pd.read_csv(study / "tables" / f"{name}.csv", comment="#")
        assert not df.empty, name
    prov = json.loads((study / "provenance.json").read_text())
    assert prov["versions"]["ROOT"].startswith("6.")
    assert prov["config"]["model"].endswith("small.model.json")


def test_every_file_was_written_with_matched_clusters(study: Path) -> None:
    sizes = sorted((study / "sizes").rglob("*.json"))
    assert len(sizes) == 3 * 2 * 5  # samples x cluster sizes x (format, variant)
    for p in sizes:
        doc = json.loads(p.read_text())
        clusters = doc["layout"]["clusters"]
        n = doc["cluster_size"]
        assert all(c == n for c in clusters[:-1]) and 0 < clusters[-1] <= n, p
        assert sum(clusters) == doc["n_events"]


def test_real_file_sample_was_imported(study: Path) -> None:
    meta = json.loads((study / "sources" / "imported.json").read_text())
    assert meta["process"] == "real" and meta["source_file"].endswith("real.root")
    assert meta["n_events"] == 1500
    sizes = pd.read_csv(study / "tables" / "size.csv", comment="#")
    assert (sizes.n_samples == 3).all()


def test_readers_agreed_and_cold_reads_are_accounted(study: Path) -> None:
    reads = pd.read_csv(study / "tables" / "reads.csv", comment="#")
    assert set(reads.reader) == {"rdf", "uproot", "pyarrow", "polars"}
    assert set(reads[reads.format == "parquet_bss"].label) == {"Parquet BSS"}
    assert set(reads["mode"]) == {"cold", "warm"}
    assert (reads.repetitions >= 5).all()
    cold = reads[reads["mode"] == "cold"]
    assert cold.cold_verified.notna().all()


def test_the_pairings_were_timed_as_pairs(study: Path) -> None:
    """One pair record per pairing and selection, both sides proven at convert (so that each
    first read was the first in its process)."""
    records = sorted((study / "pairs").rglob("*.json"))
    assert [str(p.relative_to(study / "pairs")) for p in records] == [
        f"DYJetsToLL/{pair}/c1500/{sel}.json"
        for pair in ("ttree-none.vs.parquet-none", "ttree-zstd-5.fastest.vs.parquet-zstd-3.fastest",
                     "ttree-zstd-5.vs.parquet-zstd-3")
        for sel in ("all", "ten") if "fastest" not in pair or sel == "ten"]
    for p in records:
        doc = json.loads(p.read_text())
        assert doc["cluster_size"] == 1500 and doc["sample"] == "DYJetsToLL"
        (sel,) = doc["selections"]
        assert len(sel["rounds"]) == 1
        assert {s: r["proven_by"] for s, r in sel["rounds"][0]["ready"].items()} == {
            "ttree": "convert", "parquet": "convert"}


def test_a_fastest_side_reads_the_quickest_reader_the_measure_jobs_timed(study: Path) -> None:
    """The choice comes from the measure records of the side's files (both Parquet formats
    here), the pair record says what it was chosen from, and the ratio row names the reader and
    the file it read."""
    doc = json.loads(next((study / "pairs").rglob("*.fastest/c1500/ten.json")).read_text())
    for side, variant, formats in (("ttree", "zstd-5", {"ttree"}),
                                   ("parquet", "zstd-3", {"parquet", "parquet_bss"})):
        considered = doc["sides"][side]["chosen"]["considered"]
        assert {c["format"] for c in considered} == formats
        best = min(considered, key=lambda c: c["median_s"])
        assert (doc["sides"][side]["reader"], doc["sides"][side]["format"]) == \
            (best["reader"], best["format"])
        measured = {(f, r["reader"], r["median_s"]) for f in formats for r in json.loads(
            (study / "measurements" / "DYJetsToLL" / f / variant / "c1500.json").read_text()
        )["reads"] if r["mode"] == "warm" and r["selection"] == "ten"}
        assert measured == {(c["format"], c["reader"], c["median_s"]) for c in considered}
    ratios = pd.read_csv(study / "tables" / "ratios.csv", comment="#")
    row = ratios[(ratios.pair == "zstd, fastest") & (ratios.quantity == "rate")].iloc[0]
    assert row.parquet_reader == f"fastest: {doc['sides']['parquet']['reader']} on " \
                                 f"{doc['sides']['parquet']['format']}"


def test_every_batch_job_kept_its_benchmark_record(study: Path) -> None:
    """Snakemake's benchmark record of every generate, convert, measure and pair job, which
    the cost model is fitted to: check-config then states the fit."""
    config = cfg.load(study.parent / "config.yaml")
    for rule, jobs in calibration.planned_jobs(config).items():
        assert jobs, rule
        for wc in jobs:
            seconds = calibration.measured_seconds(paths.benchmark(config["results"], rule, wc))
            assert seconds is not None and seconds > 0, (rule, wc)
    fits = calibration.fit(config)
    assert {"generate", "convert", "measure"} <= set(fits)
    assert all(f.factor > 0 and f.jobs >= calibration.MIN_JOBS for f in fits.values())


def test_rerun_has_nothing_to_do(study: Path) -> None:
    config = study.parent / "config.yaml"
    proc = run_snakemake(study.parent, "--configfile", str(config), "-n")
    assert proc.returncode == 0
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_bad_config_is_refused_naming_the_key(tmp_path: Path) -> None:
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    config["measure"]["repetitions"] = 2
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    proc = run_snakemake(tmp_path, "--configfile", str(tmp_path / "config.yaml"), "-n")
    assert proc.returncode != 0
    assert "repetitions" in proc.stdout + proc.stderr


def test_failed_measurement_leaves_no_result(study: Path, tmp_path: Path) -> None:
    """A corrupted data file makes its measure job fail; no measurement JSON may remain."""
    results = tmp_path / "results"
    shutil.copytree(study, results)
    config = yaml.safe_load((study.parent / "config.yaml").read_text())
    config["results"] = str(results)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    victim = results / "files" / "DYJetsToLL" / "parquet" / "none" / "c500.parquet"
    measurement = results / "measurements" / "DYJetsToLL" / "parquet" / "none" / "c500.json"
    victim.write_bytes(victim.read_bytes()[:1000])
    measurement.unlink()
    proc = run_snakemake(tmp_path, "--configfile", str(tmp_path / "config.yaml"),
                         "--rerun-triggers", "mtime", "--", str(measurement))
    assert proc.returncode != 0
    assert not measurement.exists()
    log = (results / "logs" / "measure" / "DYJetsToLL" / "parquet" / "none" / "c500.log")
    assert "c500.parquet" in log.read_text()


def test_report_embeds_every_figure_and_table(study: Path) -> None:
    """``make report``'s command: a self-contained HTML file with each figure and table."""
    report = study.parent / "report.html"
    proc = run_snakemake(study.parent, "--configfile", str(study.parent / "config.yaml"),
                         "--report", str(report))
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = report.read_text()
    for name in ("normalized_size.png", "rate_ratio.png", "size_vs_read_time.png",
                 "bytes_by_group.png", "peak_memory.png", "formats.html", "size.html",
                 "ratios.csv"):
        assert name in text, name
    assert "data:image/png" in text and "data:text/html" in text  # embedded, not linked
    assert "How to read it" in text  # the workflow description for a newcomer
