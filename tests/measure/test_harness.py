"""The harness times only the read: the proof (checksums) runs once, untimed, and a timed
repetition runs the reader's scan and nothing of the proof."""

from __future__ import annotations

import dataclasses

import pytest

import hepfmt.formats.base as base
from conftest import N_EVENTS, SELECTION
from hepfmt.formats.root import ttree
from hepfmt.measure import reads
from hepfmt.measure.reads import ReadBatch, ReadSpec, run_batch
from hepfmt.measure.timing import Stopping

THREE = Stopping.exactly(3)  # three timed repetitions per mode


def _spec(path, source, fmt: str, reader: str) -> ReadSpec:
    return ReadSpec(str(path), str(source), fmt, reader, "ten", list(SELECTION), ["warm"], 3, 1,
                    min_repetitions=3)


def _forbid_during_timing(monkeypatch: pytest.MonkeyPatch, calls: list[str]) -> list[int]:
    """Make ``reads.timed_scan`` record how many of ``calls`` happened inside it."""
    inside: list[int] = []
    real = reads.timed_scan

    def timed(reader, spec, *args):
        before = len(calls)
        rep = real(reader, spec, *args)
        inside.append(len(calls) - before)
        return rep

    monkeypatch.setattr(reads, "timed_scan", timed)
    return inside


def _count_compiled(monkeypatch: pytest.MonkeyPatch, also: list[str] | None = None) -> list[str]:
    """Every compiled ROOT function called from now on, in order (checksum ones also into
    ``also``)."""
    calls: list[str] = []
    real = ttree._compiled

    def count(function, *a, **kw):
        calls.append(function)
        if also is not None and "checksums" in function:
            also.append(function)
        return real(function, *a, **kw)

    monkeypatch.setattr(ttree, "_compiled", count)
    return calls


def run_read(spec: ReadSpec) -> dict:
    """One selection's measurement (a batch of one), in this process."""
    return run_batch(ReadBatch([dataclasses.asdict(spec)]))["reads"][0]


def test_no_checksum_runs_in_a_timed_repetition(written, source, monkeypatch) -> None:
    calls: list[str] = []
    real = base.checksum
    monkeypatch.setattr(base, "checksum", lambda values: calls.append("checksum") or real(values))
    inside = _forbid_during_timing(monkeypatch, calls)
    res = run_read(_spec(written("parquet", "zstd-3"), source, "parquet", "pyarrow"))
    assert calls, "the selection was verified by checksums"
    assert inside == [0, 0, 0]
    assert [r["entries"] for r in res["modes"]["warm"]] == [N_EVENTS] * 3


def test_no_compiled_checksum_runs_in_a_timed_repetition(written, source, monkeypatch) -> None:
    checksums: list[str] = []
    calls = _count_compiled(monkeypatch, checksums)
    inside = _forbid_during_timing(monkeypatch, checksums)
    res = run_read(_spec(written("ttree", "zstd-5"), source, "ttree", "getentry"))
    assert checksums == ["getentry_checksums"]  # once, untimed
    assert inside == [0, 0, 0]
    assert calls.count("getentry_scan") == 3  # the timed ones: the proof's read primed them
    assert all(len(r["chunks"]) == 3 for r in res["modes"]["warm"])


def test_one_process_times_every_selection_after_one_proof(written, source, monkeypatch) -> None:
    """Selections of one reader share a process and one proof over their union."""
    calls = _count_compiled(monkeypatch)
    path = written("ttree", "zstd-5")
    ten = _spec(path, source, "ttree", "getentry")
    two = reads.ReadBatch([dataclasses.asdict(ten),
                           dataclasses.asdict(dataclasses.replace(ten, selection="two",
                                                                  branches=list(SELECTION)[:2]))])
    res = reads.run_batch(two)["reads"]
    assert calls.count("getentry_checksums") == 1
    assert [len(r["modes"]["warm"]) for r in res] == [3, 3]
    assert calls.count("getentry_scan") == 6


def test_a_batch_is_one_reader_on_one_file(written, source) -> None:
    ten = _spec(written("parquet", "zstd-3"), source, "parquet", "pyarrow")
    other = dataclasses.replace(ten, reader="awkward")
    with pytest.raises(ValueError, match="one reader on one file"):
        reads.run_batch(reads.ReadBatch([dataclasses.asdict(ten), dataclasses.asdict(other)]))


def test_a_reader_proven_at_convert_is_primed_not_proven_again(written, source,
                                                               monkeypatch) -> None:
    """A batch proven elsewhere runs no checksum at all: it loads the file and scans the
    smallest selection once, untimed, then times as before."""
    from hepfmt.measure import digest

    calls = _count_compiled(monkeypatch)
    ten = _spec(written("ttree", "zstd-5"), source, "ttree", "getentry")
    res = reads.run_batch(reads.ReadBatch([dataclasses.asdict(ten)], proven_by="convert",
                                          digest=digest.of(ten.path)))
    assert "getentry_checksums" not in calls
    assert calls.count("getentry_scan") == 1 + 3  # the priming scan, then the timed ones
    assert res["reads"][0]["proven_by"] == "convert"


def test_measure_takes_proofs_and_bytes_from_the_size_record(written, source, tmp_path) -> None:
    """The size record's proofs replace the measure's own; a failed proof is never timed, and
    a record of another file is refused."""
    import json

    from hepfmt.errors import InputError, VerificationError
    from hepfmt.measure.sizes import write_size_record

    path = written("parquet", "zstd-3")
    record = tmp_path / "size.json"
    ok = {"pyarrow": {"ok": True, "error": None}}
    write_size_record(path, "parquet", "parquet", "zstd-3", 1, source, record, proofs=ok)
    doc = reads.measure_file(path, source, "parquet", "zstd-3", 1, ["pyarrow"],
                             {"ten": list(SELECTION)}, ["warm"], THREE, 1, tmp_path / "m.json",
                             size_record=record)
    (read,) = doc["reads"]
    assert read["proven_by"] == "convert"
    sizes = json.loads(record.read_text())["zip_bytes_by_branch"]
    assert read["selection_zip_bytes"] == sum(sizes[b] for b in SELECTION)

    bad = {"pyarrow": {"ok": False, "error": "3 branches read back by pyarrow differ"}}
    write_size_record(path, "parquet", "parquet", "zstd-3", 1, source, record, proofs=bad)
    with pytest.raises(VerificationError, match="pyarrow failed its proof at convert: 3 br"):
        reads.measure_file(path, source, "parquet", "zstd-3", 1, ["pyarrow"],
                           {"ten": list(SELECTION)}, ["warm"], THREE, 1, tmp_path / "m.json",
                           size_record=record)

    other = json.loads(record.read_text()) | {"file_bytes": 1}
    record.write_text(json.dumps(other))
    with pytest.raises(InputError, match="describes a file of 1 bytes"):
        reads.measure_file(path, source, "parquet", "zstd-3", 1, ["pyarrow"],
                           {"ten": list(SELECTION)}, ["warm"], THREE, 1, tmp_path / "m.json",
                           size_record=record)
