"""Every reader's ``scan`` (what gets timed) reads what its ``read`` (what gets verified)
reads: every entry, with progress marks in reading order, and no checksum."""

from __future__ import annotations

import time

import pytest

from conftest import N_EVENTS, compressed_variant
from hepfmt import formats
from hepfmt.formats.base import Marks

VARIANT = {f: compressed_variant(f) for f in formats.names()}
SCANS = [(f, r) for f in VARIANT for r in formats.get(f).readers]


@pytest.mark.parametrize(("fmt", "reader"), SCANS, ids=[f"{f}-{r}" for f, r in SCANS])
def test_scan_reads_every_entry_that_read_reads(written, source_meta, selection, fmt,
                                                reader) -> None:
    r = formats.get(fmt).readers[reader]
    r.prepare(1)
    path = str(written(fmt, VARIANT[fmt]))
    names = list(source_meta["checksums"])
    got = r.read(path, names)
    assert sum(c[0] for c in got.values()) == sum(c[0] for c in source_meta["checksums"].values())
    for branches in (names, selection):
        marks = Marks()
        start = time.perf_counter()
        entries = r.scan(path, branches, 1, marks)
        end = time.perf_counter()
        assert entries == N_EVENTS
        assert marks.chunks and marks.chunks[-1][0] == N_EVENTS
        times = ([marks.opened_at] if marks.opened_at is not None else []) + \
            [t for _, t in marks.chunks]
        assert times == sorted(times) and start <= times[0] and times[-1] <= end
        if r.marks_clusters:  # the adapter says its marks follow the clusters
            assert [n for n, _ in marks.chunks] == [250, 500, 600]


def test_the_compiled_scans_clock_is_perf_counter() -> None:
    """steady_clock in the compiled readers is CLOCK_MONOTONIC, as perf_counter is."""
    from hepfmt.formats.root.backend import READERS, root

    before = time.perf_counter()
    at = root(READERS).hepfmt.steady_now()
    assert before <= at <= time.perf_counter()
