"""The arithmetic behind every reported time: the median's interval, when repeating stops, and
what a read's marks say about its parts, on hand-made inputs."""

from __future__ import annotations

import itertools

import pytest

from hepfmt.measure.timing import Stopping, repeat
from hepfmt.stats import fit_fixed_cost, median_interval, parts, parts_of, sharp


def test_median_interval_is_the_order_statistics_of_binomial_coverage() -> None:
    # n = 10: [x(2), x(9)] covers the median with 1 - 2 * 11/1024 = 97.9%; [x(3), x(8)] only 89%
    times = [10, 1, 9, 2, 8, 3, 7, 4, 6, 5]
    ci = median_interval(times)
    assert (ci["lo_s"], ci["hi_s"]) == (2, 9)
    assert ci["coverage"] == pytest.approx(1 - 2 * 11 / 1024)
    # n = 5: no interval reaches 95%; (min, max) with its 93.75%
    ci = median_interval([3, 1, 2, 5, 4])
    assert (ci["lo_s"], ci["hi_s"], ci["coverage"]) == (1, 5, pytest.approx(0.9375))


def test_sharp_needs_95_percent_coverage_and_both_ends_within_precision() -> None:
    assert not sharp([1.0] * 5, 0.05)  # 5 repetitions cannot give a 95% interval
    assert sharp([1.0] * 6, 0.05)
    assert sharp([0.96, 1.0, 1.0, 1.0, 1.0, 1.04], 0.05)
    assert not sharp([0.9, 1.0, 1.0, 1.0, 1.0, 1.0], 0.05)


def test_repeat_stops_when_sharp_at_the_budget_or_at_the_maximum() -> None:
    steady = itertools.repeat({"wall_s": 1.0})
    reps, stop = repeat(lambda: next(steady), Stopping(0.05, 1e9, 3, 50))
    assert (len(reps), stop["precision_reached"], stop["n_repetitions"]) == (6, True, 6)

    noisy = itertools.cycle([{"wall_s": 1.0}, {"wall_s": 2.0}])
    reps, stop = repeat(lambda: next(noisy), Stopping(0.05, 1e9, 3, 9))
    assert (len(reps), stop["precision_reached"]) == (9, False)

    reps, stop = repeat(lambda: next(noisy), Stopping(0.05, 1e-9, 3, 50))  # budget spent
    assert (len(reps), stop["precision_reached"]) == (3, False)

    with pytest.raises(ValueError):
        Stopping(0.05, 1.0, 2, 5)


def test_parts_of_a_read_with_known_open_setup_and_rate() -> None:
    # open 0.1 s, set-up 0.5 s, then 1000 events/s in chunks of 250, 250, 100
    opened, setup, rate = 0.1, 0.5, 1000.0
    ends = [250, 500, 600]
    chunks = [(n, opened + setup + n / rate) for n in ends]
    got = parts(opened, chunks)
    assert got["open_s"] == pytest.approx(opened)
    assert got["setup_s"] == pytest.approx(setup)
    assert got["events_per_s_steady"] == pytest.approx(rate)
    assert got["chunks"] == 3

    one = parts(opened, chunks[:1])
    assert (one["setup_s"], one["events_per_s_steady"]) == (None, None)
    assert one["throughput_method"].startswith("not separable")

    unopened = parts(None, chunks)  # the open is then part of the set-up
    assert unopened["setup_s"] == pytest.approx(opened + setup)

    reps = [{"opened_s": opened, "chunks": chunks}, {"opened_s": 3 * opened, "chunks": chunks}]
    assert parts_of(reps)["open_s"] == pytest.approx(2 * opened)


def test_fit_of_fixed_cost_and_rate_across_file_lengths() -> None:
    fixed, rate = 1.2, 5000.0
    points = [(n, fixed + n / rate) for n in (1000, 4000, 16000)]
    got = fit_fixed_cost(points)
    assert got["fixed_s"] == pytest.approx(fixed)
    assert got["events_per_s"] == pytest.approx(rate)
    assert got["residual_s"] == pytest.approx(0, abs=1e-9)

    bent = [(1000, 1.0), (2000, 1.0), (3000, 2.0)]  # not a straight line: a residual says so
    assert fit_fixed_cost(bent)["residual_s"] > 0.1
    with pytest.raises(ValueError):
        fit_fixed_cost([(1000, 1.0), (1000, 1.1)])


def test_rounds_may_be_one_and_stop_by_a_precision_test_of_their_own() -> None:
    """A pair job's rounds: the one loop, with rounds as its repetitions (one may be the
    fewest) and its own test of precision in place of each call's median."""
    from hepfmt.measure.timing import RoundStopping, interleaved

    rounds = itertools.count()
    reps, how = interleaved({"round": lambda: {"n": next(rounds)}},
                            RoundStopping(0.05, 1e9, 1, 9), precise=lambda r: len(r["round"]) >= 2)
    assert (len(reps["round"]), how["n_repetitions"], how["precision_reached"]) == (2, 2, True)
    with pytest.raises(ValueError):
        RoundStopping(0.05, 1.0, 0, 5)
    with pytest.raises(ValueError):
        Stopping(0.05, 1.0, 1, 5)
