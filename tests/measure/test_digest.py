"""A proof made at ``convert`` is trusted only on the bytes it proved: ``measure --size-record``
refuses a file changed since (one flipped byte keeps its size), hashes it outside every timed
region, and proves the reader itself where an old size record has no digest."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from conftest import SELECTION
from hepfmt.cli import main
from hepfmt.measure import digest, reads


def _flip_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_digest_sees_one_byte_and_a_directorys_names(tmp_path: Path) -> None:
    f = tmp_path / "f.bin"
    f.write_bytes(bytes(range(256)) * 1000)
    before = digest.of(f)
    assert before.startswith("xxh3_128:") and before == digest.of(f)
    _flip_middle(f)
    assert digest.of(f) != before

    d = tmp_path / "dataset.lance"
    (d / "data").mkdir(parents=True)
    (d / "data" / "a").write_bytes(b"12")
    (d / "b").write_bytes(b"3")
    whole = digest.of(d)
    assert whole.startswith("xxh3_128:") and whole != digest.of(d / "b")
    (d / "b").rename(d / "c")  # same bytes, another name
    assert digest.of(d) != whole
    (d / "c").rename(d / "b")
    (d / "data" / "a").write_bytes(b"1")  # bytes moved between files
    (d / "b").write_bytes(b"23")
    assert digest.of(d) != whole


@pytest.fixture
def converted(source, tmp_path: Path) -> tuple[Path, Path]:
    """A Parquet file written by ``hepfmt convert`` with pyarrow proven, and its size record."""
    out, size = tmp_path / "f.parquet", tmp_path / "f.json"
    assert main(["convert", str(source), "--format", "parquet", "--variant", "zstd-3",
                 "--cluster-size", "250", "--prove", "pyarrow", "-o", str(out),
                 "--size-output", str(size)]) == 0
    assert json.loads(size.read_text())["digest"] == digest.of(out)
    return out, size


def _measure(path: Path, source: Path, size: Path, out: Path) -> int:
    return main(["measure", str(path), "--source", str(source), "--format", "parquet",
                 "--variant", "zstd-3", "--cluster-size", "250", "--readers", "pyarrow",
                 "--selection", "ten=" + ",".join(SELECTION), "--modes", "warm",
                 "--repetitions", "3", "--size-record", str(size), "-o", str(out)])


def test_a_file_changed_after_convert_is_refused_not_timed(converted, source, tmp_path,
                                                           capsys) -> None:
    path, size = converted
    out = tmp_path / "m.json"
    assert _measure(path, source, size, out) == 0  # unchanged: the proof at convert serves
    assert [r["proven_by"] for r in json.loads(out.read_text())["reads"]] == ["convert"]
    out.unlink()
    capsys.readouterr()

    recorded = json.loads(size.read_text())["digest"]
    _flip_middle(path)
    assert _measure(path, source, size, out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"hepfmt measure: error: {path}: changed since convert: digest "
                          f"{digest.of(path)} != {recorded}")
    assert not out.exists()


def test_an_old_size_record_without_a_digest_is_proven_again(converted, source,
                                                             tmp_path) -> None:
    """A record from before digests cannot say which bytes its proof was of: the measurement
    proves the reader itself (untimed), as it does for a reader not proven at convert."""
    path, size = converted
    old = {k: v for k, v in json.loads(size.read_text()).items() if k != "digest"}
    size.write_text(json.dumps(old))
    out = tmp_path / "m.json"
    assert _measure(path, source, size, out) == 0
    assert [r["proven_by"] for r in json.loads(out.read_text())["reads"]] == ["measure"]


def test_the_digest_is_outside_every_timed_scan(written, source, tmp_path,
                                                monkeypatch) -> None:
    """The hash runs once per process, before the first timed scan (its read is what loads the
    page cache); a proof without a digest, or a changed file, never reaches a timed scan."""
    path = tmp_path / "f.parquet"
    shutil.copy(written("parquet", "zstd-3"), path)
    events: list[str] = []
    real_hashed, real_scan = digest.hashed, reads.timed_scan
    # digest.of is digest.hashed's digest: patching hashed sees either call
    monkeypatch.setattr(digest, "hashed", lambda p: events.append("digest") or real_hashed(p))
    monkeypatch.setattr(reads, "timed_scan",
                        lambda *a: events.append("timed") or real_scan(*a))
    spec = reads.ReadSpec(str(path), str(source), "parquet", "pyarrow", "ten", list(SELECTION),
                          ["warm", "cold"], 3, 1, min_repetitions=3)
    batch = reads.ReadBatch([dataclasses.asdict(spec)], proven_by="convert",
                            digest=real_hashed(path)[0])
    reads.run_batch(batch)
    # the digest, then the process's first read (the priming scan, timed apart), then 3 + 3
    assert events == ["digest"] + ["timed"] * (1 + 6)

    events.clear()
    with pytest.raises(ValueError, match="digest of the bytes it proved"):
        reads.run_batch(dataclasses.replace(batch, digest=""))
    _flip_middle(path)
    with pytest.raises(reads.VerificationError, match="changed since convert"):
        reads.run_batch(batch)
    assert "timed" not in events
