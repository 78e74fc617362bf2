"""What convert proves before a file counts: its source, every branch of what it wrote; and that
a file's size depends on its data only, not on where results live or on a full disk."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CLUSTER_SIZE
from hepfmt import formats
from hepfmt.errors import VerificationError
from hepfmt.measure.verify import check_source, verify_written

HEPFMT = [sys.executable, "-m", "hepfmt.cli"]


def test_a_file_from_another_source_fails_verification(source, written, tmp_path) -> None:
    other = tmp_path / "other.arrow"
    subprocess.run([*HEPFMT, "generate", "--process", "TTJets", "--events", "600", "--seed",
                    "3", "-o", str(other)], check=True, capture_output=True)
    meta = check_source(source)
    verify_written(written("parquet", "none"), "parquet", meta)  # its own source: fine
    fmt = formats.get("parquet")
    wrong = tmp_path / "wrong.parquet"
    fmt.write(other, wrong, fmt.variant("none"), CLUSTER_SIZE, {})
    with pytest.raises(VerificationError, match=r"wrong\.parquet: .* branches read back"):
        verify_written(wrong, "parquet", meta)


@pytest.mark.parametrize(("fmt", "options"), [("ttree", {}), ("rntuple", {}),
                                               ("ttree", {"writer": "uproot"})])
def test_sizes_do_not_depend_on_the_directory(fmt, options, source, tmp_path) -> None:
    f = formats.get(fmt)
    sizes = []
    for parent in (tmp_path / "a", tmp_path / ("a-much-longer-directory-name" * 4)):
        out = parent / f"c{CLUSTER_SIZE}.root"
        f.write(source, out, f.variant("zstd-5"), CLUSTER_SIZE, dict(options))
        sizes.append(out.stat().st_size)
    assert sizes[0] == sizes[1]


def _convert(source: Path, fmt: str, variant: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*HEPFMT, "convert", str(source), "--format", fmt, "--variant",
                           variant, "--cluster-size", str(CLUSTER_SIZE), *args],
                          capture_output=True, text=True)


def test_an_unverifiable_file_is_recorded_as_such(source, tmp_path) -> None:
    size = tmp_path / "size.json"
    proc = _convert(source, "ttree", "zstd-5", "--option", "store_offsets=false",
                    "-o", str(tmp_path / "t.root"), "--size-output", str(size))
    assert proc.returncode == 0, proc.stderr
    record = json.loads(size.read_text())
    assert record["verified"] is False and "offset arrays" in record["unverifiable"]


@pytest.fixture
def small_tmpfs(tmp_path: Path):
    """A 1 MB tmpfs (root only): a disk that fills up during a write."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("a full disk is emulated with a tmpfs mount, which needs root")
    mnt = tmp_path / "full"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("this machine refuses tmpfs mounts")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


@pytest.mark.parametrize("fmt", formats.names())
def test_a_full_disk_is_one_line_and_leaves_nothing(fmt, source, small_tmpfs) -> None:
    """Every format, the plainest variant (HDF5's writer segfaulted after the error)."""
    out = small_tmpfs / f"x.{formats.extension(fmt)}"
    variant = "default" if fmt == "vortex" else "none"
    proc = subprocess.run([*HEPFMT, "convert", str(source), "--format", fmt, "--variant",
                           variant, "--cluster-size", str(CLUSTER_SIZE), "-o", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    lines = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "disk full" in lines[0] and "x." in lines[0], proc.stderr
    assert len(lines[0]) < 200, lines[0]  # the library's own account is for --verbose
    assert os.listdir(small_tmpfs) == []


def test_convert_proves_the_readers_it_is_asked_to(source, tmp_path) -> None:
    """``--prove`` reads every branch with each reader and records it; a file proven by an
    exact reader needs no second read by the verifier."""
    size = tmp_path / "size.json"
    proc = _convert(source, "parquet", "zstd-3", "--prove", "pyarrow,polars",
                    "-o", str(tmp_path / "p.parquet"), "--size-output", str(size))
    assert proc.returncode == 0, proc.stderr
    record = json.loads(size.read_text())
    assert record["proofs"] == {"pyarrow": {"ok": True, "error": None},
                                "polars": {"ok": True, "error": None}}
    assert record["verified"] is True
    proc = _convert(source, "parquet", "zstd-3", "--prove", "rdf",
                    "-o", str(tmp_path / "q.parquet"))
    assert proc.returncode != 0 and "parquet has no reader 'rdf'" in proc.stderr
    assert not (tmp_path / "q.parquet").exists()


def test_a_reader_that_reads_wrong_values_is_recorded_not_fatal(source, written,
                                                                tmp_path) -> None:
    """A reader's failed proof disqualifies its timings; the verifier still decides the file."""
    from hepfmt.measure.verify import prove_readers

    meta = check_source(source)
    other = tmp_path / "other.arrow"
    subprocess.run([*HEPFMT, "generate", "--process", "TTJets", "--events", "600", "--seed",
                    "3", "-o", str(other)], check=True, capture_output=True)
    fmt = formats.get("parquet")
    wrong = tmp_path / "wrong.parquet"
    fmt.write(other, wrong, fmt.variant("none"), CLUSTER_SIZE, {})
    proofs = prove_readers(wrong, "parquet", meta, ["pyarrow"])
    assert proofs["pyarrow"]["ok"] is False
    assert "branches read back by pyarrow differ" in proofs["pyarrow"]["error"]
    with pytest.raises(VerificationError, match="branches read back"):
        verify_written(wrong, "parquet", meta, proofs)
