"""The cost model fitted to past jobs' benchmark records: which records count, the median ratio,
and where the fit reaches (check-config's total, each job's batch time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis.cli import main
from analysis.plan import calibration, cost, paths, resources, resultsdir, study
from analysis.plan import config as cfg

#: Snakemake's benchmark TSV header (Snakemake 9), and a row's fields after ``s``.
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
REST = "\t0:00:01\t100.0\t200.0\t90.0\t95.0\t0.0\t1.0\t90.0\t1.0\n"


def _config(tmp_path: Path) -> dict:
    """Four files of one sample (one Parquet variant at four cluster sizes), one reader."""
    return cfg.validate({
        "results": str(tmp_path / "results"),
        "samples": {"DY": {"process": "DYJetsToLL", "n_events": 4000, "seed": 1}},
        "cluster_sizes": [500, 1000, 2000, 4000],
        "formats": {"parquet": {"variants": ["zstd-3"]}},
        "measure": {"readers": {"parquet": ["pyarrow"]}, "modes": ["warm"], "queries": []},
    })


def _record(config: dict, rule: str, wildcards: dict, seconds: float) -> Path:
    """A benchmark record an earlier run left (in a results directory it marked as hepfmt's)."""
    path = Path(paths.benchmark(config["results"], rule, wildcards))
    path.parent.mkdir(parents=True, exist_ok=True)
    resultsdir.mark(config["results"])
    path.write_text(HEADER + repr(seconds) + REST)
    return path


def test_the_fit_is_the_median_ratio_of_the_planned_jobs_with_a_record(tmp_path: Path) -> None:
    c = _config(tmp_path)
    files = study.files(c)
    assert len(files) == 4
    estimates = [cost.job_seconds("convert", c, f.wildcards) for f in files]
    for f, est, ratio in zip(files, estimates, (2.0, 3.0, 5.0, 100.0), strict=True):
        _record(c, "convert", f.wildcards, est * ratio)
    # a job of another config, a partly written record and a foreign file do not count
    _record(c, "convert", {**files[0].wildcards, "variant": "zstd-9"}, 1e6)
    Path(paths.benchmark(c["results"], "measure", files[0].wildcards)).parent.mkdir(
        parents=True, exist_ok=True)
    Path(paths.benchmark(c["results"], "measure", files[0].wildcards)).write_text(HEADER)
    Path(paths.benchmark(c["results"], "measure", files[1].wildcards)).write_text("garbage")
    fits = calibration.fit(c)
    assert set(fits) == {"convert"}  # measure: no usable record; generate: one job
    f = fits["convert"]
    assert (f.jobs, f.low, f.high) == (4, pytest.approx(2.0), pytest.approx(100.0))
    assert f.factor == pytest.approx(4.0)  # the median of 2, 3, 5, 100: an outlier is no mean
    # each convert job's batch time and the study's total follow the fit; others do not
    wc = files[0].wildcards
    assert resources.for_job("convert", c, wc, fits=fits).cpu_s == pytest.approx(
        4.0 * resources.for_job("convert", c, wc).cpu_s)
    assert resources.for_job("measure", c, wc, fits=fits) == resources.for_job("measure", c, wc)
    raw, fitted = cost.whole(c), calibration.whole(c, fits)
    assert fitted.write_s == pytest.approx(4.0 * raw.write_s)
    assert (fitted.read_s, fitted.generate_s) == (raw.read_s, raw.generate_s)


def test_too_few_records_keep_the_shipped_parts(tmp_path: Path) -> None:
    c = _config(tmp_path)
    for f in study.files(c)[: calibration.MIN_JOBS - 1]:
        _record(c, "convert", f.wildcards, 1000.0)
    assert calibration.fit(c) == {}
    assert "none" in calibration.describe({}, c["results"])


def test_check_config_states_the_calibration(tmp_path: Path, capsys) -> None:
    c = _config(tmp_path)
    for f in study.files(c):
        _record(c, "convert", f.wildcards, 2 * cost.job_seconds("convert", c, f.wildcards))
    config = tmp_path / "c.yaml"
    import yaml

    config.write_text(yaml.safe_dump({k: c[k] for k in ("results", "samples", "cluster_sizes",
                                                         "formats", "measure")}))
    assert main(["check-config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "calibration from this results directory's benchmark records" in out
    assert "convert x2.00 (4 jobs" in out
