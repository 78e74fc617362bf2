"""The typed rows of a read record (hepfmt.records.ReadRow): what the measurement writes is
what a record on disk held before them, key for key, and what the report reads is checked."""

from __future__ import annotations

import json
import re
from dataclasses import fields

import pytest

from hepfmt.errors import InputError
from hepfmt.measure.reads import ReadSpec, _read_record
from hepfmt.records import ReadRow, own_peak_bytes

STOPPED = {"n_repetitions": 5, "precision_target": 0.05, "budget_s": 10.0,
           "precision_reached": True}


def _row(chunks: bool = True) -> ReadRow:
    """A row as ``hepfmt measure`` makes it, from made-up repetitions (with chunk marks: its
    set-up is separable, and ``setup_raw_s`` is written)."""
    spec = ReadSpec("f.parquet", "s.arrow", "parquet", "pyarrow", "ten", ["a", "b"], ["warm"],
                    5, 1)
    reps = [{"wall_s": 0.1 + i / 100, "cpu_s": 0.1, "disk_read_bytes": 0, "minflt": 10,
             **({"opened_s": 0.01, "chunks": [[50, 0.05], [100, 0.09]]} if chunks else {})}
            for i in range(5)]
    res = {"peak_rss_bytes": 3, "baseline_rss_bytes": 1, "read_peak_rss_bytes": 2,
           "rss_method": "vmhwm-reset", "proven_by": "convert", "stopping": {"warm": STOPPED},
           "first_read": {"selection": "ten", "wall_s": 0.2, "minflt": 7}}
    return _read_record(spec, "warm", reps, res, 1000, 2000.0, 100, True, 200,
                        {"events_per_s_new": 1e4, "events_per_s_reused": 2e4})


@pytest.mark.parametrize("chunks", [True, False])
def test_a_row_round_trips_through_its_dict_and_json(chunks: bool) -> None:
    row = _row(chunks)
    doc = json.loads(json.dumps(row.as_dict(), sort_keys=True))
    assert ReadRow.from_dict(doc) == row
    assert json.dumps(ReadRow.from_dict(doc).as_dict(), sort_keys=True) == \
        json.dumps(doc, sort_keys=True)
    # every field is written, but the one a read holds only when its marks separate a set-up
    written = {f.name for f in fields(ReadRow)} - ({"setup_raw_s"} if not chunks else set())
    assert set(doc) == written
    assert doc["first_read_s"] == 0.2 and doc["selection_values"] == 200
    steady = doc["events_per_s_steady"]
    assert doc["fraction_of_bound_new"] == (pytest.approx(steady / 1e4) if chunks else None)


def test_a_row_missing_a_required_key_is_refused_naming_it() -> None:
    doc = _row().as_dict()
    del doc["median_s"]
    with pytest.raises(InputError, match=r"read-1\.json.*no median_s"):
        ReadRow.from_dict(doc, "read-1.json")
    with pytest.raises(InputError, match="not a JSON object"):
        ReadRow.from_dict([1, 2], "read-1.json")  # type: ignore[arg-type]


def test_unknown_keys_are_ignored_and_missing_optional_ones_defaulted() -> None:
    doc = _row().as_dict()
    assert ReadRow.from_dict({**doc, "from_a_later_hepfmt": 1}) == _row()
    old = {k: v for k, v in doc.items()
           if k in ReadRow.required()}  # a record from before every optional key
    row = ReadRow.from_dict(old)
    assert row.rss_method == ReadRow.OLD_RSS_METHOD and row.library is None
    assert row.rss_over_baseline_bytes == row.peak_rss_bytes - row.baseline_rss_bytes
    # what its repetitions say: the parts, the median's interval, how many there were
    assert row.n_repetitions == 5 and row.open_s == pytest.approx(0.01)
    assert row.median_lo_s <= row.median_s <= row.median_hi_s


def test_a_measurement_cannot_leave_a_key_out_or_add_one() -> None:
    doc = _row().as_dict()
    with pytest.raises(TypeError, match="needs library"):
        ReadRow.new(**{k: v for k, v in doc.items() if k != "library"})
    with pytest.raises(TypeError, match=re.escape("extra")):
        ReadRow.new(**doc, extra=1)


def test_a_reads_own_peak_is_above_where_it_started_never_negative() -> None:
    """Each scan's high-water mark less the lower of the resident set before the first read
    and at the scan's start: memory given back after the first read (a system allocator
    returning garbage) can make the first lower than the second, never the peak negative."""
    mb = 2**20
    scans = [{"scan_peak_rss_bytes": 1900 * mb, "scan_start_rss_bytes": 150 * mb},
             {"scan_peak_rss_bytes": 1800 * mb, "scan_start_rss_bytes": 1700 * mb}]
    assert own_peak_bytes(scans, baseline=200 * mb) == 1750 * mb  # 1900 - min(200, 150)
    assert own_peak_bytes(scans, baseline=100 * mb) == 1800 * mb  # 1900 - min(100, 150)
    assert own_peak_bytes([{"scan_peak_rss_bytes": None}], 100) is None
    assert own_peak_bytes([], 100) is None
