"""A "fastest" pairing side (hepfmt.measure.fastest): its reader is the quickest the run's
measure records timed on its candidate files, chosen before the pair's own reads, recorded
with what it was chosen from; a candidate without the selection is named, never skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import SELECTION
from hepfmt.errors import InputError, UsageError
from hepfmt.measure.fastest import Candidate, choose
from hepfmt.measure.pairs import PairSide, PairSpec, measure_pair
from hepfmt.measure.timing import Stopping


@pytest.fixture(scope="module")
def measured(written, source, tmp_path_factory) -> dict[str, tuple[PairSide, Candidate]]:
    """A TTree and a Parquet file, each with its size record (proofs) and a measure record of
    two readers (the records ``fastest`` chooses from)."""
    from hepfmt.measure.reads import measure_file
    from hepfmt.measure.sizes import write_size_record

    root = tmp_path_factory.mktemp("fastest")
    out = {}
    for fmt, variant, readers in (("ttree", "zstd-5", ["columnar", "uproot"]),
                                  ("parquet", "zstd-3", ["pyarrow", "polars"])):
        path = written(fmt, variant)
        size = root / f"{fmt}.size.json"
        write_size_record(path, fmt, fmt, variant, 250, source, size,
                          proofs={r: {"ok": True, "error": None} for r in readers})
        reads = root / f"{fmt}.reads.json"
        measure_file(path, source, fmt, variant, 250, readers, {"ten": list(SELECTION)},
                     ["warm"], Stopping(0.5, 1.0, 3, 3), 1, reads, 600.0,
                     size_record=size)
        out[fmt] = (PairSide(str(path), fmt, fmt, variant, "fastest", str(size),
                             candidates=(Candidate(str(reads), str(size)),)),
                    Candidate(str(reads), str(size)))
    return out


def _quickest(reads: str) -> str:
    rows = json.loads(Path(reads).read_text())["reads"]
    return min(rows, key=lambda r: r["median_s"])["reader"]


def test_the_fastest_reader_of_the_measure_records_is_chosen(measured) -> None:
    for _, cand in measured.values():
        c = choose([cand], "ten", 1)
        assert c.reader == _quickest(cand.reads)
        assert {x["reader"] for x in c.considered} == \
            {r["reader"] for r in json.loads(Path(cand.reads).read_text())["reads"]}
        assert c.as_dict()["by"].startswith("whole warm read")


def test_a_pair_with_fastest_sides_times_the_chosen_readers(measured, source,
                                                             tmp_path) -> None:
    spec = PairSpec("fastest", str(source), 250, measured["ttree"][0], measured["parquet"][0],
                    {"ten": list(SELECTION)}, rounds=2, min_repetitions=3, max_repetitions=3,
                    budget_s=2.0, max_load=1.0, timeout=600.0)
    doc = measure_pair(spec, tmp_path / "p.json")
    for s in ("ttree", "parquet"):
        side = doc["sides"][s]
        assert side["reader"] == _quickest(measured[s][1].reads)
        assert side["chosen"]["considered"]  # what it was chosen from, in the record
        assert side["candidates"][0]["reads"] == measured[s][1].reads
        # the chosen file's codec bound is its measure record's, not measured a second time
        assert side["bounds_from"] == measured[s][1].reads
        assert side["bounds"] == json.loads(Path(side["bounds_from"]).read_text())["bounds"]
    assert doc["summary"]  # tabulated as any pair


def test_a_recorded_bound_stands_only_for_its_file_branches_and_cpu(measured, source,
                                                                     tmp_path) -> None:
    """A measure record's bound is reused for the same file, events, branches and CPU model;
    anything else gives None (the pair job then measures the bound itself)."""
    from hepfmt.measure.reads import recorded_bounds
    from hepfmt.samples.source import read_source_meta

    meta = read_source_meta(source)
    side, cand = measured["ttree"]
    ten = {"ten": list(SELECTION)}
    assert recorded_bounds(cand.reads, side.path, ten, meta) == \
        json.loads(Path(cand.reads).read_text())["bounds"]
    assert recorded_bounds(cand.reads, measured["parquet"][0].path, ten, meta) is None
    assert recorded_bounds(cand.reads, side.path, {"ten": list(SELECTION)[:-1]}, meta) is None
    assert recorded_bounds(cand.reads, side.path, {"all": list(SELECTION)}, meta) is None
    doc = json.loads(Path(cand.reads).read_text())
    doc["provenance"]["machine"]["cpu"] = "another CPU model"
    other = tmp_path / "other-cpu.json"
    other.write_text(json.dumps(doc))
    assert recorded_bounds(other, side.path, ten, meta) is None


def test_a_pair_side_with_its_measure_record_takes_its_bound(measured, source,
                                                             tmp_path) -> None:
    from dataclasses import replace

    ttree, cand = measured["ttree"]
    fixed = replace(ttree, reader="columnar", candidates=(), measured=cand.reads)
    parquet = replace(measured["parquet"][0], reader="pyarrow", candidates=())
    spec = PairSpec("bounds", str(source), 250, fixed, parquet, {"ten": list(SELECTION)},
                    rounds=1, min_repetitions=3, max_repetitions=3, budget_s=1.0,
                    max_load=1.0, timeout=600.0)
    doc = measure_pair(spec, tmp_path / "p.json")
    assert doc["sides"]["ttree"]["bounds_from"] == cand.reads
    assert doc["sides"]["parquet"]["bounds_from"] == "measured here"
    assert doc["sides"]["parquet"]["bounds"]["ten"]["blocks"] > 0


def test_a_candidate_without_the_selection_is_named(measured) -> None:
    _, cand = measured["parquet"]
    with pytest.raises(InputError, match="no warm read of selection 'all'") as e:
        choose([cand], "all", 1)
    assert cand.reads in str(e.value)
    with pytest.raises(InputError, match="at least one measured candidate"):
        choose([], "ten", 1)


def test_a_fastest_side_needs_one_selection(measured, source, tmp_path) -> None:
    spec = PairSpec("fastest", str(source), 250, measured["ttree"][0], measured["parquet"][0],
                    {"ten": list(SELECTION), "one": list(SELECTION)[:1]})
    with pytest.raises(UsageError, match="exactly one selection"):
        measure_pair(spec, tmp_path / "p.json")
    assert not (tmp_path / "p.json").exists()
