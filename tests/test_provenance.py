"""Where a figure was made: the filesystem's kind decides whether a cold read can be trusted,
and a batch job is named so that a figure can be traced to the job (and node) that made it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hepfmt import provenance
from hepfmt.measure.reads import ReadSpec, _read_record


@pytest.mark.parametrize(("fstype", "device", "mount", "kind"), [
    ("lustre", "10.0.0.1@o2ib:/scratch", "/scratch", "lustre"),
    ("gpfs", "gpfs0", "/gpfs", "gpfs"),
    ("nfs4", "server:/home", "/home", "nfs"),
    ("nfs", "server:/data", "/data", "nfs"),
    ("fuse", "cvmfs2", "/cvmfs/cms.cern.ch", "cvmfs"),
    ("fuse.eosxd", "eosxd", "/eos", "fuse"),
    ("cifs", "//server/share", "/mnt/share", "network"),
    ("tmpfs", "tmpfs", "/tmp", "tmpfs"),
    ("ext4", "/dev/sda1", "/", "local"),
    ("xfs", "/dev/nvme0n1p1", "/data", "local"),
    ("overlay", "overlay", "/", "local"),
    ("weirdfs", "x", "/x", "unknown"),
])
def test_filesystem_kinds(fstype: str, device: str, mount: str, kind: str) -> None:
    assert provenance.fs_kind(fstype, device, mount) == kind


def test_only_a_local_disk_can_verify_a_cold_read(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    mounts = tmp_path / "mounts"
    mounts.write_text("/dev/vda / ext4 rw 0 0\nserver:/x /data nfs4 rw 0 0\n")
    real_open = open
    monkeypatch.setattr("builtins.open", lambda p, *a, **k: real_open(
        mounts if p == "/proc/mounts" else p, *a, **k))
    local = provenance.filesystem("/home/me/file.root")
    nfs = provenance.filesystem("/data/sample/file.root")
    assert (local["kind"], local["cold_verifiable"]) == ("local", True)
    assert (nfs["kind"], nfs["mount"], nfs["cold_verifiable"]) == ("nfs", "/data", False)


def test_a_cold_figure_on_such_a_filesystem_is_flagged_even_when_mincore_says_evicted() -> None:
    spec = ReadSpec("f.parquet", "s.arrow", "parquet", "pyarrow", "ten", ["a"], ["cold"], 5, 1)
    reps = [{"wall_s": 0.1, "cpu_s": 0.1, "disk_read_bytes": 0, "cold_verified": True}] * 5
    stopped = {"n_repetitions": 5, "precision_target": 0.05, "budget_s": 10.0,
               "precision_reached": True}
    res = {"peak_rss_bytes": 1, "baseline_rss_bytes": 1, "read_peak_rss_bytes": 1,
           "rss_method": "vmhwm-reset", "proven_by": "measure",
           "stopping": {"cold": stopped, "warm": stopped}}

    def verified(mode: str, fs_verifiable: bool) -> bool | None:
        return _read_record(spec, mode, reps, res, 10, 10.0, 100, fs_verifiable, 5,
                            None).cold_verified

    assert verified("cold", True) is True
    assert verified("cold", False) is False
    assert verified("warm", False) is None


def test_batch_job_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("SLURM_JOB_ID", "_CONDOR_JOB_AD", "_CONDOR_SCRATCH_DIR"):
        monkeypatch.delenv(var, raising=False)
    assert provenance.batch_job() == {"system": "none"}
    monkeypatch.setenv("SLURM_JOB_ID", "42")
    monkeypatch.setenv("SLURM_CPUS_ON_NODE", "64")
    assert provenance.batch_job()["job_id"] == "42"
    monkeypatch.delenv("SLURM_JOB_ID")
    ad = tmp_path / ".job.ad"
    ad.write_text('ClusterId = 7\nGlobalJobId = "schedd#7.0#1"\nRequestCpus = 4\n')
    monkeypatch.setenv("_CONDOR_JOB_AD", str(ad))
    job = provenance.batch_job()
    assert (job["system"], job["job_id"], job["cpus"]) == ("htcondor", "schedd#7.0#1", "4")


def test_table_provenance_names_the_filesystem_kind_and_the_batch_jobs() -> None:
    lustre = {"type": "lustre", "mount": "/scratch", "kind": "lustre", "cold_verifiable": False}
    assert provenance.describe_filesystem(lustre) == (
        "data filesystem: lustre (lustre) at /scratch; cold reads cannot be verified there: "
        "all flagged †")
    ext4 = {"type": "ext4", "mount": "/", "kind": "local", "cold_verifiable": True}
    assert provenance.describe_filesystem(ext4) == "data filesystem: local (ext4) at /"
    summary = provenance.batch_summary([{"system": "slurm", "job_id": "12"},
                                        {"system": "slurm", "job_id": "9"},
                                        {"system": "slurm", "job_id": "12"}])
    assert summary == {"systems": ["slurm"], "job_ids": ["9", "12"]}
    assert provenance.describe_batch(summary) == "ran in batch jobs: slurm 9, 12"
    local = provenance.batch_summary([{"system": "none"}])
    assert provenance.describe_batch(local) == "ran on: this machine, no batch system"


def test_the_reads_own_peak_memory_is_measured_below_an_earlier_higher_peak() -> None:
    """ROOT's start-up sets a process peak that a read may never exceed: the read's own peak
    must still show (uproot's rows once read 0 MB because of it). A real child process."""
    code = """
import json, numpy as np
from hepfmt.measure.reads import start_read_peak, read_peak_bytes
big = np.ones(400 * 2**20 // 8); del big            # the 'imports': a 400 MB peak, freed
base, method = start_read_peak()
read = np.ones(100 * 2**20 // 8); read.sum()        # the 'read': 100 MB
print(json.dumps([method, read_peak_bytes(method) - base]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).resolve().parents[1])
    method, over = json.loads(out.stdout)
    if method != "vmhwm-reset":
        pytest.skip(f"this kernel refuses to reset the peak RSS ({method})")
    assert 90 * 2**20 < over < 200 * 2**20


def test_every_library_a_reader_times_is_named_with_its_version() -> None:
    """The versions come from pyproject.toml's pins (one home): every registered reader's
    library is among them, so no timed library goes unnamed (polars, DuckDB, h5py, ...)."""
    from hepfmt import formats

    versions = provenance.library_versions()
    libraries = {r.library for n in formats.names() for r in formats.get(n).readers.values()}
    assert {"polars", "duckdb", "h5py", "pylance", "vortex-data"} <= libraries
    engines = {"coffea", "hist", "vector", "dask", "dask-awkward", "dask-histogram"}
    for lib in libraries | engines:  # and the query engines'
        assert versions.get(lib, "not installed") != "not installed", lib
