"""The harness times only the read: the proof (checksums) runs once, untimed, and a timed
repetition runs the reader's scan and nothing of the proof."""

from __future__ import annotations

import pytest
from conftest import N_EVENTS, SELECTION

import analysis.formats.base as base
from analysis.formats.root import ttree
from analysis.measure import reads
from analysis.measure.reads import ReadSpec, run_read


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
    calls: list[str] = []
    checksums: list[str] = []
    real = ttree._compiled

    def count(function, *a):
        calls.append(function)
        if "checksums" in function:
            checksums.append(function)
        return real(function, *a)

    monkeypatch.setattr(ttree, "_compiled", count)
    inside = _forbid_during_timing(monkeypatch, checksums)
    res = run_read(_spec(written("ttree", "zstd-5"), source, "ttree", "getentry"))
    assert checksums == ["getentry_checksums"]  # once, untimed
    assert inside == [0, 0, 0]
    assert calls.count("getentry_scan") == 4  # the priming scan and three timed ones
    assert all(len(r["chunks"]) == 3 for r in res["modes"]["warm"])
