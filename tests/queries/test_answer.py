"""Per task, the best-ROOT / best-Parquet answer (hepfmt.report.query_answer) on hand-made
rows whose numbers are known: which engine wins each side, the ratio's arithmetic, the coverage
its interval has, and how it goes over samples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helpers import ROOT
from hepfmt.plan import config as cfg
from hepfmt.plan.record import record
from hepfmt.report.query_answer import answer_table, per_sample, side_of

ROOT_TIMES = [0.10, 0.11, 0.12, 0.13, 0.14]  # median 0.12
PARQUET_TIMES = [0.05, 0.06, 0.07, 0.08, 0.09]  # median 0.07


@pytest.fixture(scope="module")
def plan() -> dict:
    return record(cfg.load(ROOT / "config" / "test.yaml"))  # ttree, parquet, parquet_bss


def _row(sample: str, fmt: str, variant: str, engine: str, times: list[float],
         mode: str = "warm", task: int = 1) -> dict:
    median = float(np.median(times))
    return {"sample": sample, "task": task, "mode": mode, "format": fmt, "variant": variant,
            "cluster_size": 1000, "engine": engine, "median_s": median,
            "events_per_s": 1000 / median, "wall_times": list(times),
            "cold_verified": True if mode == "cold" else None}


def _sample(name: str, root_scale: float = 1.0) -> list[dict]:
    """The fastest ROOT engine is RDataFrame on the TTree, the fastest Parquet one polars on
    the plain Parquet file; Arrow IPC, faster than both, is on neither side."""
    return [_row(name, "ttree", "zstd-5", "rdataframe", [t * root_scale for t in ROOT_TIMES]),
            _row(name, "ttree", "zstd-5", "awkward", [1.0] * 5),
            _row(name, "parquet", "zstd-3", "polars", PARQUET_TIMES),
            _row(name, "parquet_bss", "zstd-3", "duckdb", [0.2] * 5),
            _row(name, "feather", "zstd-3", "polars", [0.01] * 5)]


def test_the_sides(plan: dict) -> None:
    assert [side_of(plan, f) for f in ("ttree", "parquet", "parquet_bss", "feather")] == [
        "root", "parquet", "parquet", None]


def test_one_sample_ratio_interval_and_coverage(plan: dict) -> None:
    """ROOT events/s over Parquet's = Parquet's median time over ROOT's = 0.07 / 0.12; the
    interval [0.05 / 0.14, 0.09 / 0.10] from each side's (min, max), the only order-statistic
    interval of 5 repetitions: 1 - 2/2^5 = 93.75% each, 87.5% together (Bonferroni)."""
    s = per_sample(plan, pd.DataFrame(_sample("A"))).iloc[0]
    assert s.root == "rdataframe on TTree zstd-5" and s.parquet == "polars on Parquet zstd-3"
    assert s.ratio == pytest.approx(0.07 / 0.12)
    assert (s.ratio_lo, s.ratio_hi) == (pytest.approx(0.05 / 0.14), pytest.approx(0.09 / 0.10))
    assert s.coverage == pytest.approx(2 * (1 - 2 / 2**5) - 1) == pytest.approx(0.875)
    assert s.n_over == 5
    t = answer_table(plan, pd.DataFrame(_sample("A"))).iloc[0]
    assert t.ratio_mean == pytest.approx(0.07 / 0.12) and t.coverage == pytest.approx(0.875)
    assert t.interval_method.endswith("(1 sample)") and t.question == "MET of every event"


def test_more_repetitions_reach_95_percent(plan: dict) -> None:
    """Nine repetitions per side: each median's interval is [x_(2), x_(8)] at 96.1%, together
    92.2%; the ratio's bounds are those order statistics'."""
    root = [0.10 + 0.01 * i for i in range(9)]
    parquet = [0.05 + 0.01 * i for i in range(9)]
    s = per_sample(plan, pd.DataFrame([_row("A", "ttree", "zstd-5", "rdataframe", root),
                                       _row("A", "parquet", "zstd-3", "polars", parquet)]))
    each = 1 - 2 * (1 + 9) / 2**9
    assert s.coverage.iloc[0] == pytest.approx(2 * each - 1)
    assert s.ratio_lo.iloc[0] == pytest.approx(parquet[1] / root[7])
    assert s.ratio_hi.iloc[0] == pytest.approx(parquet[7] / root[1])


def test_over_samples_mean_and_t_interval(plan: dict) -> None:
    """Two samples, ROOT twice as slow in B: the geometric mean of 0.07/0.12 and 0.07/0.24
    with the Student-t 95% interval of their logarithms (t = 12.706 at one degree of freedom),
    which stays above 0 however few the samples."""
    t = answer_table(plan, pd.DataFrame(_sample("A") + _sample("B", root_scale=2.0)))
    row = t.iloc[0]
    a, b = np.log(0.07 / 0.12), np.log(0.07 / 0.24)
    half = 12.706 * abs(a - b) / np.sqrt(2) / np.sqrt(2)
    assert row.ratio_mean == pytest.approx(np.exp((a + b) / 2)) and row.n_samples == 2
    assert (row.ratio_lo, row.ratio_hi) == (pytest.approx(np.exp((a + b) / 2 - half)),
                                            pytest.approx(np.exp((a + b) / 2 + half)))
    assert 0 < row.ratio_lo < row.ratio_mean < row.ratio_hi
    assert row.coverage == 0.95 and row.interval_method == "samples (t of logs, n=2)"


def test_winners_per_sample_are_named_and_modes_kept_apart(plan: dict) -> None:
    """A sample where duckdb on Parquet BSS wins names both winners; a cold row unverified
    spoils the cold answer only; a mode with one side alone gives no answer."""
    b = [r | {"median_s": 0.5} if r["engine"] == "polars" else r for r in _sample("B")]
    cold = [_row("A", "ttree", "zstd-5", "rdataframe", ROOT_TIMES, "cold"),
            _row("A", "parquet", "zstd-3", "polars", PARQUET_TIMES, "cold") | {
                "cold_verified": False},
            _row("A", "ttree", "zstd-5", "rdataframe", ROOT_TIMES, "warm", task=2)]
    t = answer_table(plan, pd.DataFrame(_sample("A") + b + cold)).set_index(["task", "mode"])
    assert list(t.index) == [(1, "cold"), (1, "warm")]
    assert t.loc[(1, "warm"), "parquet"] == ("polars on Parquet zstd-3; "
                                             "duckdb on Parquet BSS zstd-3")
    assert t.loc[(1, "cold"), "cold_verified"] == False  # noqa: E712
    assert t.loc[(1, "warm"), "cold_verified"] is None
