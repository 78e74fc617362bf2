"""The cost model fitted to past jobs' benchmark records: which records count, the median ratio,
and where the fit reaches (check-config's total, each job's batch time)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hepfmt.cli import main
from hepfmt.plan import calibration, cost, paths, resources, resultsdir, study
from hepfmt.plan import config as cfg

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


def _run(tmp_path: Path, ratios: tuple[float, ...]) -> tuple[dict, Path]:
    """A run's results directory as `make run` leaves it (its resolved config.yaml and its
    benchmark records, convert jobs measured at ``ratios`` times their estimates), moved away
    from where its config says it was (as a reference is)."""
    import shutil

    import yaml

    c = _config(tmp_path)
    for f, ratio in zip(study.files(c), ratios, strict=True):
        _record(c, "convert", f.wildcards, ratio * cost.job_seconds("convert", c, f.wildcards))
    run = tmp_path / "reference"
    shutil.copytree(c["results"], run)
    shutil.rmtree(c["results"])
    (run / "config.yaml").write_text(yaml.safe_dump(c))
    return c, run


def test_the_check_predicts_each_job_from_the_others(tmp_path: Path) -> None:
    c, run = _run(tmp_path, (1.0, 2.0, 3.0, 4.0))
    (check,) = calibration.check(calibration.run_config(run), run)
    est = [cost.job_seconds("convert", c, f.wildcards) for f in study.files(c)]
    assert (check.rule, check.jobs) == ("convert", 4)
    assert check.shipped_s == pytest.approx(sum(est))
    measured = sum(r * e for r, e in zip((1, 2, 3, 4), est, strict=True))
    assert check.measured_s == pytest.approx(measured)
    # each job scaled by the median of the other three ratios: 3, 3, 2, 2
    calibrated = sum(m * e for m, e in zip((3, 3, 2, 2), est, strict=True))
    assert check.calibrated_s == pytest.approx(calibrated)
    report = calibration.check_report([check])
    assert report.splitlines()[0].split()[:2] == ["rule", "jobs"]
    assert report.splitlines()[1].split()[:2] == ["convert", "4"]


def test_check_config_calibrates_on_another_run(tmp_path: Path, capsys) -> None:
    import yaml

    _, run = _run(tmp_path, (2.0, 2.0, 2.0, 2.0))
    other = _config(tmp_path / "other")
    config = tmp_path / "other.yaml"
    config.write_text(yaml.safe_dump({k: other[k] for k in ("results", "samples",
                                                             "cluster_sizes", "formats",
                                                             "measure")}))
    assert main(["check-config", str(config)]) == 0
    assert "calibration: none" in capsys.readouterr().out
    assert main(["check-config", str(config), "--calibrate", str(run)]) == 0
    out = capsys.readouterr().out
    assert f"calibration from run {run}'s benchmark records" in out
    assert "convert x2.00 (4 jobs" in out
    assert main(["check-config", str(config), "--calibrate", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(tmp_path) in err and "no config.yaml" in err


def test_bench_cost_model_reports_a_run(tmp_path: Path, capsys) -> None:
    _, run = _run(tmp_path, (1.0, 1.5, 2.0, 2.5))
    out = tmp_path / "cost-model.txt"
    assert main(["bench", "cost-model", str(run), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert out.read_text() == printed
    lines = printed.splitlines()
    assert lines[0].startswith(f"# $ hepfmt bench cost-model {run}; ") and "; commit " in lines[0]
    assert lines[-1].split()[:2] == ["convert", "4"]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.yaml").write_text((run / "config.yaml").read_text())
    assert main(["bench", "cost-model", str(empty)]) == 2
    assert "no rule has 3 benchmark records" in capsys.readouterr().err
