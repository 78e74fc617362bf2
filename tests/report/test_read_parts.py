"""The parts of a read in the tables from hand-made records whose set-up and per-event cost are
known: what the tables say must be those numbers, every interval the one its arithmetic gives,
and a read that cannot separate its parts must say so, never take them from another file. (The
ROOT / Parquet ratios come from paired measurements: test_pair_tables.)"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from paired_records import plan

from hepfmt.report.load import load_reads
from hepfmt.report.steady import steady_throughput
from hepfmt.report.tables import tabulate
from hepfmt.stats import (
    median_interval,
    parts_of,
    ratio_interval,
    samples_interval,
    summarize,
)

#: The artificial reader: open + set-up before the first event, then a fixed cost per event.
OPEN, SETUP, COST = 0.1, 0.4, 1e-4
PROV = {"date": "2026-01-01T00:00:00+00:00", "versions": {"pyarrow": "26.0.1"},
        "machine": {"cpu": "test cpu", "cores": 2, "memory_bytes": 2**30, "kernel": "k"},
        "filesystem": {"type": "ext4", "mount": "/"}}


def _rep(n_events: int, cluster: int, setup: float = SETUP, cost: float = COST) -> dict:
    """One repetition's marks: opened at OPEN, the first event at ``setup`` later, then every
    cluster at ``cost`` per event."""
    ends = [*range(cluster, n_events, cluster), n_events]
    start = OPEN + setup
    return {"wall_s": start + n_events * cost, "cpu_s": 0.0, "disk_read_bytes": 0,
            "opened_s": OPEN, "chunks": [[e, start + e * cost] for e in ends]}


def _read(reader: str, reps: list[dict], n_events: int) -> dict:
    """A read as the measuring code records it (its figures from the same timing functions)."""
    stats = summarize([r["wall_s"] for r in reps])
    ci = median_interval([r["wall_s"] for r in reps])
    return {"reader": reader, "threads": 1, "selection": "all", "mode": "warm", **stats,
            "median_lo_s": ci["lo_s"], "median_hi_s": ci["hi_s"],
            "median_coverage": ci["coverage"], **parts_of(reps), "cpu_median_s": 0.0,
            "disk_read_bytes_median": 0.0, "cold_verified": None, "iqr_s": 0.0,
            "mb_per_s_compressed": 1.0, "mb_per_s_naive": 1.0,
            "events_per_s": n_events / stats["median_s"], "selection_zip_bytes": 1000 * n_events,
            "peak_rss_bytes": 2**20, "baseline_rss_bytes": 0, "repetitions": reps}


def _record(tmp: Path, sample: str, fmt: str, cluster: int, n_events: int,
            reads: list[dict]) -> Path:
    path = tmp / f"read-{sample}-{fmt}-{cluster}.json"
    path.write_text(json.dumps({"sample": sample, "process": "p", "format": fmt,
                                "variant": "none", "cluster_size": cluster,
                                "n_events": n_events, "provenance": PROV, "reads": reads}))
    return path


def _one_read(tmp: Path, sample: str, cluster: int, n_events: int, **kw: float) -> Path:
    reps = [_rep(n_events, cluster, **kw)] * 3
    return _record(tmp, sample, "ttree", cluster, n_events, [_read("rdf", reps, n_events)])


def _resolved(paths: list[Path]) -> pd.DataFrame:
    reads, _, _ = load_reads(paths)
    return steady_throughput(reads).set_index(["sample", "cluster_size"])


def test_fit_over_file_lengths_recovers_set_up_and_per_event_cost(tmp_path: Path) -> None:
    # one cluster per file, at three lengths: no read separates its parts by itself
    paths = [_one_read(tmp_path, f"s{n}", 100_000, n) for n in (1000, 4000, 16000)]
    got = _resolved(paths).loc[("s4000", 100_000)]
    assert got.events_per_s_steady == pytest.approx(1 / COST)
    assert got.time_to_first_event_s == pytest.approx(OPEN + SETUP)
    assert got.open_s == pytest.approx(OPEN)  # the read's own open stays
    assert got.throughput_method == "fit over 3 file lengths"
    assert got.fit_residual_s == pytest.approx(0.0, abs=1e-9) and got.fit_poor is False
    assert got.mb_per_s_steady_compressed == pytest.approx(1000 / COST / 1e6)


def test_fit_over_two_lengths_or_off_the_line_is_poor(tmp_path: Path) -> None:
    paths = [_one_read(tmp_path, f"s{n}", 100_000, n) for n in (1000, 4000)]
    got = _resolved(paths).loc[("s1000", 100_000)]
    assert got.fit_poor is True and "two lengths cannot test the line" in got.throughput_method
    assert got.events_per_s_steady == pytest.approx(1 / COST)  # two points: on the line
    # a third length twice as slow per event: the line no longer holds
    paths.append(_one_read(tmp_path, "s16000", 100_000, 16000, cost=2 * COST))
    got = _resolved(paths).loc[("s1000", 100_000)]
    assert got.throughput_method == "fit over 3 file lengths" and got.fit_poor is True


def test_one_chunk_read_never_takes_another_files_set_up(tmp_path: Path) -> None:
    paths = [_one_read(tmp_path, "S", 1000, 4000),  # four chunks: separable
             _one_read(tmp_path, "S", 4000, 4000),  # one chunk, same sample
             _one_read(tmp_path, "L", 100_000, 100_000)]  # one chunk, another sample
    t = _resolved(paths)
    assert t.loc[("S", 1000)].throughput_method == "chunks after the first"
    assert t.loc[("S", 1000)].setup_s == pytest.approx(SETUP)
    for key in (("S", 4000), ("L", 100_000)):
        got = t.loc[key]
        assert got.throughput_method == "not separable: one chunk", key
        assert pd.isna(got.events_per_s_steady) and pd.isna(got.setup_s), key
        assert pd.isna(got.time_to_first_event_s) and got.open_s == pytest.approx(OPEN), key
    assert "one_chunk_setup_s" not in t


def test_nothing_to_separate_with_is_said(tmp_path: Path) -> None:
    got = _resolved([_one_read(tmp_path, "S", 4000, 4000)]).loc[("S", 4000)]
    assert got.throughput_method == "not separable: one chunk"
    assert pd.isna(got.events_per_s_steady) and pd.isna(got.time_to_first_event_s)


def test_ratio_interval_is_the_quotient_of_the_sides_intervals() -> None:
    # 5 repetitions a side: (min, max), each of coverage 1 - 2/32 = 93.75%
    got = ratio_interval([3, 1, 2, 5, 4], [4.5, 2, 5, 2.5, 4])
    assert got["ratio"] == pytest.approx(3 / 4)
    assert (got["ratio_lo"], got["ratio_hi"]) == (pytest.approx(1 / 5), pytest.approx(5 / 2))
    assert got["coverage"] == pytest.approx(2 * 0.9375 - 1)  # Bonferroni
    # 10 repetitions: [x(2), x(9)] of 1 - 2 * 11/1024
    got = ratio_interval(list(range(1, 11)), [2.0] * 10)
    assert (got["ratio_lo"], got["ratio_hi"]) == (pytest.approx(1.0), pytest.approx(4.5))
    assert got["coverage"] == pytest.approx(1 - 4 * 11 / 1024)
    assert math.isnan(ratio_interval([1.0, np.nan], [1.0, 1.0])["ratio"])  # no throughput


def test_samples_interval_is_student_t() -> None:
    mean, lo, hi = samples_interval([1.0, 2.0, 3.0])  # std 1, t(0.975, 2) = 4.303
    assert mean == 2.0
    assert (lo, hi) == (pytest.approx(2 - 4.303 / 3**0.5), pytest.approx(2 + 4.303 / 3**0.5))


# ---- through tabulate: one ROOT and one Parquet read, one sample ---------------------------

#: Per repetition the steady rate (events/s) of each side; set-up ROOT 0.5 s, Parquet 0.2 s.
ROOT_RATES = (18e3, 19e3, 20e3, 21e3, 22e3)
PARQUET_RATES = (9e3, 9.5e3, 10e3, 10.5e3, 11e3)
N_EVENTS, CLUSTER, FILE_EVENTS = 4000, 1000, 2_000_000


def _side(rates: tuple[float, ...], setup: float) -> list[dict]:
    return [_rep(N_EVENTS, CLUSTER, setup=setup - OPEN, cost=1 / r) for r in rates]


def _plan() -> dict:
    return plan(FILE_EVENTS)


@pytest.fixture
def tables(tmp_path: Path) -> Path:
    reads, sizes = [], []
    for fmt, reader, rates, setup in (("ttree", "rdf", ROOT_RATES, 0.5),
                                      ("parquet", "pyarrow", PARQUET_RATES, 0.2)):
        reads.append(_record(tmp_path, "S", fmt, CLUSTER, N_EVENTS,
                             [_read(reader, _side(rates, setup), N_EVENTS)]))
        size = tmp_path / f"size-{fmt}.json"
        size.write_text(json.dumps({"sample": "S", "process": "p", "format": fmt,
                                    "variant": "none", "cluster_size": CLUSTER,
                                    "n_events": N_EVENTS, "provenance": PROV,
                                    "file_bytes": 1000, "naive_bytes": 1000.0,
                                    "normalized_size": 1.0}))
        sizes.append(size)
    tabulate(_plan(), sizes, reads, tmp_path / "tables")
    return tmp_path / "tables"


def test_reads_table_has_the_parts_and_the_interval(tables: Path) -> None:
    rt = pd.read_csv(tables / "reads.csv", comment="#").set_index("format")
    root = rt.loc["ttree"]
    assert root.open_s == pytest.approx(OPEN)
    assert root.time_to_first_event_s == pytest.approx(0.5)
    assert root.events_per_s_steady == pytest.approx(20e3)
    assert root.median_lo_s == pytest.approx(0.5 + N_EVENTS / 22e3)
    assert root.median_hi_s == pytest.approx(0.5 + N_EVENTS / 18e3)
    assert root.median_coverage == pytest.approx(0.9375) and root.repetitions == 5
    md = (tables / "reads.md").read_text()
    assert "Parts of a read" in md
    # 5 repetitions: (min, max) of 93.75%, said beside the interval with what it rests on
    assert f"{0.5 + N_EVENTS / 20e3:.4g} [{0.5 + N_EVENTS / 22e3:.4g}, " \
        f"{0.5 + N_EVENTS / 18e3:.4g}] (94%, 5 repetitions)" in md
    ft = pd.read_csv(tables / "formats.csv", comment="#").set_index("format")
    assert ft.loc["parquet", "all_warm_time_to_first_event_s"] == pytest.approx(0.2)
    assert ft.loc["parquet", "all_warm_events_per_s_steady"] == pytest.approx(10e3)
