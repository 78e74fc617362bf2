"""``hepfmt bench rounds`` (hepfmt.paired.round_spread, hepfmt.report.rounds): the spread of
the rounds' median ratios against what their own repeat pairs allow, on records made by hand
whose per-pair ratios are known."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from paired_records import record

from hepfmt.cli import main
from hepfmt.errors import InputError
from hepfmt.paired import round_spread

N_EVENTS, CLUSTER = 4000, 1000


def _pair(parquet_rate: float) -> tuple:
    """ROOT fixed, Parquet's rate given: the rate ratio (Parquet time / ROOT time) moves."""
    return ((0.1, 0.4, 20e3), (0.1, 0.1, parquet_rate))


def _doc(rounds: list[list[float]]) -> dict:
    return record([_pair(10e3)] * len(rounds), [[_pair(r) for r in rr] for rr in rounds],
                  cluster=CLUSTER, n_events=N_EVENTS)


def _log_ratio(parquet_rate: float) -> float:
    root = 0.1 + 0.4 + N_EVENTS / 20e3
    return math.log((0.1 + 0.1 + N_EVENTS / parquet_rate) / root)


def test_rounds_that_differ_by_more_than_their_pairs_have_a_factor_above_one() -> None:
    # each round's two pairs close together, the rounds far apart
    apart = [[10e3, 10.1e3], [5e3, 5.05e3], [20e3, 20.2e3]]
    (row,) = round_spread(_doc(apart))
    assert (row["rounds"], row["pairs_per_round"]) == (3, 2)
    within = math.sqrt(sum((_log_ratio(a) - _log_ratio(b)) ** 2 / 2 for a, b in apart) / 3)
    assert row["within_sd"] == pytest.approx(within)
    assert row["expected_sd"] == pytest.approx(within / math.sqrt(2))
    assert row["factor"] > 10


def test_one_round_has_no_spread_between_rounds() -> None:
    (row,) = round_spread(_doc([[10e3, 11e3, 12e3]]))
    assert row["rounds"] == 1 and math.isnan(row["between_sd"]) and math.isnan(row["factor"])


def test_the_command_reports_every_job_and_the_median_factor(tmp_path: Path, capsys) -> None:
    for i, rounds in enumerate(([[10e3, 10.1e3], [5e3, 5.05e3]], [[10e3, 12e3], [9e3, 11e3]])):
        (tmp_path / "pairs" / f"j{i}").mkdir(parents=True)
        (tmp_path / "pairs" / f"j{i}" / "ten.json").write_text(json.dumps(_doc(rounds)))
    out = tmp_path / "rounds.txt"
    assert main(["bench", "rounds", str(tmp_path), "-o", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["pair", "cluster", "selection"]
    assert len([ln for ln in lines if ln.startswith("uncompressed")]) == 2
    assert lines[-1].startswith("median factor ") and "over 2 jobs" in lines[-1]
    assert out.read_text().splitlines() == lines


def test_no_pair_record_is_one_line(tmp_path: Path, capsys) -> None:
    (tmp_path / "x.json").write_text("{}")
    assert main(["bench", "rounds", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no pair records" in err
    with pytest.raises(InputError, match="not a pair record"):
        (tmp_path / "y.json").write_text("{")
        from hepfmt.report.rounds import records
        records(tmp_path)
