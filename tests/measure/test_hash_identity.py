"""A read after the hash reads the bytes that were hashed, or is refused: a file renamed over
the path, rewritten in place (even with the same bytes) or swapped away and back after its
digest was taken is refused in one line naming it (issue 44, item 8)."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

import pytest

from conftest import SELECTION
from hepfmt.errors import VerificationError
from hepfmt.measure import digest, reads
from hepfmt.measure.verify import prove_readers


def _file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_an_untouched_file_keeps_its_identity_through_reads(tmp_path: Path) -> None:
    f = _file(tmp_path / "f.bin", bytes(range(256)) * 4000)
    value, ident = digest.hashed(f)
    assert value == digest.of(f) and ident == digest.identity(f)
    f.read_bytes()  # reading (atime) is no change
    os.stat(f)
    digest.unchanged(f, ident)
    assert digest.Identity.from_dict(ident.as_dict()) == ident


def test_a_file_renamed_over_the_path_is_refused_naming_it(tmp_path: Path) -> None:
    f = _file(tmp_path / "f.bin", b"a" * 100_000)
    _, ident = digest.hashed(f)
    other = _file(tmp_path / "other.bin", b"b" * 100_000)  # same size, other bytes
    other.rename(f)
    with pytest.raises(VerificationError) as err:
        digest.unchanged(f, ident)
    assert str(err.value).startswith(f"{f}: changed after it was hashed (inode ")
    assert "\n" not in str(err.value)


def test_identical_bytes_written_in_place_are_refused(tmp_path: Path) -> None:
    """Chosen: refused. Whether rewritten bytes are the hashed ones could be told only by
    hashing again, and a file written while it is measured is not measured; the change time
    that says so cannot be set back by any caller (``os.utime`` restoring ``mtime`` sets it)."""
    data = bytes(range(256)) * 400
    f = _file(tmp_path / "f.bin", data)
    _, ident = digest.hashed(f)
    before = os.stat(f)
    f.write_bytes(data)
    os.utime(f, ns=(before.st_atime_ns, before.st_mtime_ns))  # the old mtime put back
    with pytest.raises(VerificationError, match=r"changed after it was hashed \(change time "):
        digest.unchanged(f, ident)


def test_a_file_swapped_away_and_back_is_refused(tmp_path: Path) -> None:
    f = _file(tmp_path / "f.bin", b"x" * 50_000)
    _, ident = digest.hashed(f)
    f.rename(tmp_path / "aside.bin")
    _file(f, b"y" * 50_000)  # what a reader would have opened meanwhile
    f.unlink()
    (tmp_path / "aside.bin").rename(f)  # same inode, same bytes, same mtime: a rename's ctime
    with pytest.raises(VerificationError, match=r"change time"):
        digest.unchanged(f, ident)


def test_a_removed_file_is_refused_naming_it(tmp_path: Path) -> None:
    f = _file(tmp_path / "f.bin", b"z" * 10)
    _, ident = digest.hashed(f)
    f.unlink()
    with pytest.raises(VerificationError, match=rf"^{f}: changed after it was hashed \(gone"):
        digest.unchanged(f, ident)


def test_a_directorys_file_replaced_or_added_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "dataset.lance"
    (d / "data").mkdir(parents=True)
    _file(d / "data" / "a", b"12")
    _file(d / "b", b"3")
    _, ident = digest.hashed(d)
    digest.unchanged(d, ident)
    _file(d / "c", b"4")
    with pytest.raises(VerificationError, match=rf"^{d}: changed after .*added 'c'"):
        digest.unchanged(d, ident)
    (d / "c").unlink()
    _file(tmp_path / "new", b"9").rename(d / "data" / "a")
    with pytest.raises(VerificationError, match=r"data/a: inode "):
        digest.unchanged(d, ident)


def test_a_proof_at_convert_refuses_a_file_swapped_after_the_hash(written,
                                                                 source_meta: dict,
                                                                 tmp_path: Path) -> None:
    """``convert`` hashes, then proves: a file replaced in between would have proofs of other
    bytes than the recorded digest's (a proof is per file: the swap is by another parquet)."""
    path = tmp_path / "f.parquet"
    shutil.copy(written("parquet", "zstd-3"), path)
    _, ident = digest.hashed(path)
    assert prove_readers(path, "parquet", source_meta, ["pyarrow"], ident)["pyarrow"]["ok"]
    shutil.copy(written("parquet", "snappy"), tmp_path / "g.parquet")
    (tmp_path / "g.parquet").rename(path)  # values still right: only the bytes differ
    with pytest.raises(VerificationError, match=rf"^{path}: changed after it was hashed"):
        prove_readers(path, "parquet", source_meta, ["pyarrow"], ident)


def test_a_measurement_refuses_a_file_swapped_after_its_hash(written, source, tmp_path,
                                                            monkeypatch) -> None:
    """The swap happens right after the hash, before the first read: the reads that follow
    would read other bytes than the proven ones, so the measurement stops, naming the file."""
    path = tmp_path / "f.parquet"
    shutil.copy(written("parquet", "zstd-3"), path)
    recorded = digest.of(path)
    real = digest.hashed

    def hash_then_swap(p):
        out = real(p)
        shutil.copy(written("parquet", "snappy"), tmp_path / "g.parquet")
        (tmp_path / "g.parquet").rename(path)
        return out

    monkeypatch.setattr(digest, "hashed", hash_then_swap)
    spec = reads.ReadSpec(str(path), str(source), "parquet", "pyarrow", "ten", list(SELECTION),
                          ["warm"], 3, 1, min_repetitions=3)
    batch = reads.ReadBatch([dataclasses.asdict(spec)], proven_by="convert", digest=recorded)
    with pytest.raises(VerificationError, match=rf"^{path}: changed after it was hashed"):
        reads.run_batch(batch)
