"""A killed run resumes with the README's command and ends as a clean run would; a second run on
the same results directory is kept away, whatever directory it starts from."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from helpers import ROOT, SNAKEMAKE, run_snakemake, small_schema
from hepfmt import atomic
from hepfmt.plan import lock, resultsdir

#: how `make run` resumes (Makefile RESUME)
RESUME = ("--rerun-incomplete", "--nolock")


def tiny_config(tmp: Path, results: Path) -> Path:
    config = yaml.safe_load((ROOT / "config" / "test.yaml").read_text())
    config.update(results=str(results), model=str(small_schema(tmp / "small.model.json")),
                  samples={"DY": {"process": "DYJetsToLL", "n_events": 600, "seed": 1}},
                  cluster_sizes=[200, 600])
    config["formats"] = {"ttree": {"variants": ["zstd-5"]}, "parquet": {"variants": ["zstd-3"]}}
    config["measure"] = {"readers": {"ttree": ["uproot"], "parquet": ["pyarrow"]},
                         "repetitions": 5, "modes": ["warm"]}
    config["compare"] = {"pairs": [{"ttree": "zstd-5", "parquet": "zstd-3", "label": "zstd"}],
                         "readers": {"ttree": "uproot", "parquet": "pyarrow"}}
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def sizes(results: Path) -> dict[str, int]:
    return {str(p.relative_to(results)): json.loads(p.read_text())["file_bytes"]
            for p in sorted((results / "sizes").rglob("*.json"))}


def _as(entry: Path | None, pid: int) -> None:
    """Make a ledger entry another process's (as if ``pid`` had written it down)."""
    assert entry is not None
    entry.write_text(json.dumps({**json.loads(entry.read_text()), "pid": pid}))


def test_leftovers_of_killed_jobs_are_removed(tmp_path: Path) -> None:
    results = tmp_path / "results"
    (results / "files").mkdir(parents=True)
    resultsdir.mark(results)
    kept = results / "files" / "c200.root"
    kept.write_bytes(b"x")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = results / "files" / f".c200.root.tmp{dead.pid:07d}"  # (tests/plan/test_lock.py:
    _as(atomic.register(results / atomic.LEDGER, left, "temporary"), dead.pid)  # a live
    left.write_bytes(b"half")  # owner's stays, and what hepfmt did not write down)
    scratch = Path(tempfile.mkdtemp(prefix=f"hepfmt-fresh-{dead.pid}-"))
    _as(atomic.register(atomic.scratch_ledger(), scratch, "scratch", made=True), dead.pid)
    mine = Path(tempfile.mkdtemp(prefix=f"hepfmt-fresh-{os.getpid()}-"))
    try:
        assert set(lock.remove_leftovers(results)) >= {left, scratch}
        assert kept.exists() and not left.exists() and not scratch.exists() and mine.exists()
    finally:
        mine.rmdir()


def test_a_second_run_on_the_same_results_is_refused(tmp_path: Path) -> None:
    results = tmp_path / "results"
    config = tiny_config(tmp_path, results)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; "
                               "from hepfmt.plan import lock; lock.hold(sys.argv[1]); "
                               "print('held', flush=True); time.sleep(600)", str(results)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        other = tmp_path / "elsewhere"
        other.mkdir()
        proc = run_snakemake(other, *RESUME, "--configfile", str(config), timeout=600)
        assert proc.returncode != 0
        assert "another hepfmt run is using it" in proc.stdout + proc.stderr
        assert not (results / "sizes").exists()  # it wrote nothing
    finally:
        holder.kill()
        holder.wait()
    with pytest.raises(lock.Busy):  # held by this process now: the same refusal in-process
        lock.hold(results)
        lock.hold(results)
    lock.release(results)


def _start(workdir: Path, config: Path) -> subprocess.Popen:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    return subprocess.Popen([*SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "--directory",
                             str(ROOT), "--cores", "2", *RESUME, "--configfile", str(config)],
                            cwd=workdir, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, int]:
    """The sizes of the tiny study run once without interruption."""
    clean = tmp_path_factory.mktemp("clean")
    proc = run_snakemake(clean, *RESUME, "--configfile",
                         str(tiny_config(clean, clean / "results")), timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return sizes(clean / "results")


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["sources", "files", "measurements", "tables"])
def test_kill_9_then_resume_equals_a_clean_run(stage: str, clean_run, tmp_path: Path) -> None:
    """Kill the whole run (Snakemake and its jobs) with SIGKILL as soon as the stage has
    begun to write (its first file, temporary ones included), resume with the same command,
    and compare with a clean run."""
    work = tmp_path / "killed"
    work.mkdir()
    config = tiny_config(work, work / "results")
    run = _start(work, config)
    deadline = time.monotonic() + 3600
    while not list((work / "results" / stage).rglob("*")) and run.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()

    proc = run_snakemake(work, *RESUME, "--configfile", str(config), timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert sizes(work / "results") == clean_run
    assert not [p for p in (work / "results").rglob(".*") if lock.TEMPORARY.match(p.name)]
    assert (work / "results" / "tables" / "size.csv").exists()
