"""Paired measurements (hepfmt.measure.pairs): both sides in one job, interleaved, first reads
apart, load recorded and enforced, one-line errors; and the invariants every timed scan meets."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from conftest import N_EVENTS, SELECTION
from hepfmt.errors import HepfmtError, InputError, VerificationError
from hepfmt.measure import invariants, load
from hepfmt.measure.pairs import PairSide, PairSpec, measure_pair
from hepfmt.paired import ratio_rows, side_rows


@pytest.fixture(scope="module")
def sides(written, source, tmp_path_factory) -> tuple[PairSide, PairSide]:
    """A TTree and a Parquet file with size records holding passed proofs and their digests."""
    from hepfmt.measure.sizes import write_size_record

    root = tmp_path_factory.mktemp("pairs")
    out = []
    for fmt, variant, reader in (("ttree", "zstd-5", "rdf"), ("parquet", "zstd-3", "pyarrow")):
        path = written(fmt, variant)
        record = root / f"{fmt}.json"
        write_size_record(path, fmt, fmt, variant, 250, source, record,
                          proofs={reader: {"ok": True, "error": None}})
        out.append(PairSide(str(path), fmt, fmt, variant, reader, str(record)))
    return out[0], out[1]


def _spec(sides, source, **kw) -> PairSpec:
    base = {"rounds": 2, "min_repetitions": 3, "max_repetitions": 4, "budget_s": 5.0,
            "max_load": 1.0, "timeout": 600.0}
    return PairSpec("zstd", str(source), 250, sides[0], sides[1], {"ten": list(SELECTION)},
                    **(base | kw))


def test_a_pair_interleaves_both_sides_and_gives_first_reads_apart(sides, source,
                                                                   tmp_path) -> None:
    doc = measure_pair(_spec(sides, source), tmp_path / "p.json")
    assert json.loads((tmp_path / "p.json").read_text())["pair"] == "zstd"
    (sel,) = doc["selections"]
    assert len(sel["rounds"]) == 2  # one first read per round of fresh processes
    orders = [r["first"]["order"] for r in sel["rounds"]]
    assert orders[0] != orders[1]  # who goes first alternates between rounds ...
    reps = sel["rounds"][-1]["repeats"]
    assert all(a["order"] != b["order"] for a, b in itertools.pairwise(reps))  # ... and pairs
    for rnd in sel["rounds"]:
        assert {s: rnd["ready"][s]["proven_by"] for s in ("ttree", "parquet")} == \
            {"ttree": "convert", "parquet": "convert"}
        for p in [rnd["first"], *rnd["repeats"]]:
            for s in ("ttree", "parquet"):
                assert p[s]["entries"] == N_EVENTS
                assert 0.0 <= p[s]["other_cpu_share"] <= 1.0
                assert p[s]["minflt"] >= 0 and p[s]["read_peak_rss_bytes"] >= 0
                # the CPU split of every scan (its sum is the wall time, single-threaded)
                assert min(p[s]["user_s"], p[s]["sys_s"], p[s]["wait_s"], p[s]["majflt"]) >= 0
                assert p[s]["user_s"] + p[s]["sys_s"] + p[s]["wait_s"] >= p[s]["wall_s"] - 0.02
    kept = sum(p["kept"] for r in sel["rounds"] for p in r["repeats"])
    assert 3 <= kept <= 4
    rows = {(r["read"], r["quantity"]): r for r in ratio_rows(doc)}
    assert rows["first", "rate"]["n_pairs"] == 2 and rows["repeats", "rate"]["n_pairs"] == kept
    assert rows["first", "rate"]["coverage"] < 0.95  # two first reads: honest, not "95%"
    for r in rows.values():
        if r["quantity"] != "file_time" or r["ratio"] == r["ratio"]:
            assert r["ratio_lo"] <= r["ratio"] <= r["ratio_hi"]
    rate = rows["repeats", "rate"]  # the whole read's CPU and user-time ratios beside it
    assert rate["cpu_lo"] <= rate["cpu_ratio"] <= rate["cpu_hi"]
    assert rate["user_lo"] <= rate["user_ratio"] <= rate["user_hi"]
    assert 0 <= rate["sys_share_ttree"] <= 1 and 0 <= rate["sys_share_parquet"] <= 1
    assert {(r["side"], r["read"]) for r in side_rows(doc)} == {
        (s, k) for s in ("ttree", "parquet") for k in ("first", "repeats")}


def test_a_machine_too_busy_is_an_error_naming_the_share(sides, source, tmp_path,
                                                          monkeypatch) -> None:
    """Every scan seen at 90% other load: every pair discarded, one error, no record."""
    monkeypatch.setattr(load, "windowed", lambda samples: (0.9, 1.0))
    with pytest.raises(VerificationError, match=r"too busy to time pair 'zstd'.*90%.*limit 25%"):
        measure_pair(_spec(sides, source, max_load=0.25), tmp_path / "p.json")
    assert not (tmp_path / "p.json").exists()


def test_a_side_that_cannot_be_read_fails_the_pair(sides, source, tmp_path) -> None:
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(Path(sides[1].path).read_bytes()[:5000])
    bad = PairSide(str(broken), "parquet", "parquet", "zstd-3", "pyarrow")  # no record: proof
    with pytest.raises(HepfmtError, match=r"broken\.parquet"):
        measure_pair(_spec((sides[0], bad), source), tmp_path / "p.json")
    assert not (tmp_path / "p.json").exists()
    missing = PairSide(str(tmp_path / "nope.root"), "ttree", "ttree", "zstd-5", "rdf")
    with pytest.raises(InputError, match=r"nope\.root: the ttree side of pair .zstd. does not"):
        measure_pair(_spec((missing, sides[1]), source), tmp_path / "p.json")


def test_a_changed_file_is_refused_before_any_timing(sides, source, tmp_path) -> None:
    record = json.loads(Path(sides[1].size_record).read_text())
    record["digest"] = "xxh3_128:0"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(record))
    side = PairSide(sides[1].path, "parquet", "parquet", "zstd-3", "pyarrow", str(changed))
    with pytest.raises(VerificationError, match="changed since convert"):
        measure_pair(_spec((sides[0], side), source), tmp_path / "p.json")


# ---- the load share ---------------------------------------------------------------------------


def test_the_load_share_is_other_processes_busy_ticks_over_the_machines() -> None:
    a = load.CpuSample(0.0, busy=1000, total=4000, own=100)
    b = load.CpuSample(1.0, busy=1150, total=4200, own=150)  # 150 busy, 50 of them ours
    assert load.other_share(a, b) == pytest.approx(100 / 200)
    assert load.other_share(a, a) == 0.0


def test_a_short_scan_takes_its_share_over_a_window_of_earlier_scans() -> None:
    s = [load.CpuSample(t, busy=int(t * 100), total=int(t * 200), own=0)
         for t in (0.0, 0.1, 0.2, 0.3)]
    share, window = load.windowed(s)
    assert window == pytest.approx(0.3) and share == pytest.approx(0.5)
    share, window = load.windowed([s[0], load.CpuSample(2.0, 200, 400, 200)])
    assert window == pytest.approx(2.0) and share == 0.0  # all of it ours


def test_a_timing_waits_for_the_machine_to_be_quiet(monkeypatch) -> None:
    """Busy, busy, quiet: it returns after the third window, with the quiet window's start."""
    shares = iter([0.9, 0.5, 0.1, 0.9])
    monkeypatch.setattr(load, "other_share", lambda a, b: next(shares))
    monkeypatch.setattr(load, "MIN_WINDOW_S", 0.001)
    share, waited, start = load.wait_quiet(["self"], 0.25, 60.0)
    assert share == 0.1 and waited < 60.0 and isinstance(start, load.CpuSample)
    monkeypatch.setattr(load, "other_share", lambda a, b: 0.9)
    share, waited, _ = load.wait_quiet(["self"], 0.25, 0.01)  # never quiet: it stops waiting
    assert share == 0.9 and waited >= 0.01


def test_this_process_ticks_are_counted() -> None:
    assert load.process_ticks() >= 0
    assert load.process_ticks(2**22 + 12345) == 0  # gone: nothing


# ---- invariants -------------------------------------------------------------------------------


def _rep(**kw) -> dict:
    base = {"wall_s": 1.0, "entries": 300, "opened_s": 0.1,
            "chunks": [[100, 0.4], [200, 0.7], [300, 1.0]]}
    return base | kw


def test_a_consistent_scan_passes() -> None:
    assert invariants.violations(_rep(), 300) == []


@pytest.mark.parametrize(("rep", "says"), [
    (_rep(entries=299), "read 299 entries of 300"),
    (_rep(opened_s=1.5), "outside the read"),
    (_rep(chunks=[[100, 0.7], [200, 0.4], [300, 1.0]]), "out of time order"),
    (_rep(chunks=[[100, 0.4], [100, 0.7], [300, 1.0]]), "without progress"),
    (_rep(chunks=[[100, 0.4], [200, 0.7], [300, 1.5]]), "outside the read"),
    (_rep(opened_s=0.5), "before the file was open"),
    (_rep(chunks=[[100, 0.4], [200, 0.7], [250, 1.0]]), "the file has 300"),
])
def test_each_broken_invariant_is_named(rep: dict, says: str) -> None:
    assert any(says in v for v in invariants.violations(rep, 300))


def test_a_broken_invariant_is_an_error_naming_file_and_reader() -> None:
    with pytest.raises(VerificationError, match=r"f.root: rdf's timed scan broke an invariant"):
        invariants.check(_rep(opened_s=0.5), "f.root", "rdf", 300)


def test_time_to_first_event_is_never_before_the_open() -> None:
    """A first chunk faster than the steady rate (chunk times vary) resolves no set-up: 0, said
    so, never a time to the first event before the open."""
    from hepfmt.stats import parts

    p = parts(0.1, [(100, 0.2), (200, 0.5), (300, 0.8)])
    assert p["setup_raw_s"] < 0 and p["setup_s"] == 0.0
    assert "below resolution" in p["throughput_method"]
    assert invariants.violations(_rep(chunks=[[100, 0.2], [200, 0.5], [300, 0.8]]), 300) == []


# -- when a pair job's rounds stop (fake rounds: no worker, no file) ----------------------


class _FakeWorker:
    def hang_up(self) -> None:
        pass

    def close(self) -> None:
        pass


def _fake_rounds(monkeypatch, ratios, first_kept=None, clock=None) -> list[int]:
    """Rounds whose kept repeats have the Parquet / ROOT ratios ``ratios(index)``; the first
    read of try ``i`` is kept unless ``first_kept(i)`` says not; ``clock`` replaces the
    timer. Returns the indices each round was started with."""
    from hepfmt.measure import pairs

    started: list[int] = []
    tries = itertools.count()
    monkeypatch.setattr(pairs, "_start", lambda *a: {"ttree": _FakeWorker()})

    def fake_round(state, workers, index, repeats):
        started.append(index)
        if first_kept is not None and not first_kept(next(tries)):
            return {"first": {"kept": False}, "repeats": []}
        return {"first": {"kept": True}, "repeats": [
            {"kept": True, "ttree": {"wall_s": 1.0}, "parquet": {"wall_s": r}}
            for r in ratios(index)[:repeats]]}

    monkeypatch.setattr(pairs, "_round", fake_round)
    if clock is not None:
        monkeypatch.setattr(pairs.time, "perf_counter", clock)
    return started


#: Sides no fake round opens.
_NO_FILES = (PairSide("a.root", "ttree", "ttree", "none", "rdf"),
             PairSide("a.parquet", "parquet", "parquet", "none", "pyarrow"))


def _selection(**kw) -> dict:
    from hepfmt.measure.pairs import measure_selection

    return measure_selection(_spec(_NO_FILES, "source.arrow", precision=0.05, **kw), "ten",
                             N_EVENTS, 1.0, Path("."))


@pytest.mark.parametrize(("kw", "rounds"), [
    # noisy: rounds until another would pass the most repeats (2 per round, at most 10)
    ({"rounds": 2, "min_repetitions": 3, "max_repetitions": 10}, 5),
    ({"rounds": 2, "min_repetitions": 3, "max_repetitions": 11}, 5),
    # the fewest rounds are taken even past the most repeats (2 per round, 3 rounds, 4 most)
    ({"rounds": 3, "min_repetitions": 4, "max_repetitions": 4}, 3),
    ({"rounds": 1, "min_repetitions": 3, "max_repetitions": 9}, 3),
])
def test_noisy_rounds_stop_at_the_most_repeats(monkeypatch, kw, rounds) -> None:
    _fake_rounds(monkeypatch, lambda i: [1.0, 2.0, 1.5, 3.0] if i % 2 else [2.0, 1.0, 3.0, 1.5])
    sel = _selection(**kw)
    assert len(sel["rounds"]) == rounds and sel["discarded"] == 0


def test_sharp_rounds_stop_at_the_fewest(monkeypatch) -> None:
    _fake_rounds(monkeypatch, lambda i: [1.0] * 10)
    # one round of six equal pairs is sharp (its pairs are the interval's values) ...
    assert len(_selection(rounds=1, min_repetitions=6,
                          max_repetitions=60)["rounds"]) == 1
    # ... two rounds are not (two round medians give no 95% interval): six are
    assert len(_selection(rounds=2, min_repetitions=3,
                          max_repetitions=60)["rounds"]) == 6


def test_rounds_stop_once_the_budget_is_spent(monkeypatch) -> None:
    ticks = itertools.count()
    _fake_rounds(monkeypatch, lambda i: [1.0, 2.0], clock=lambda: float(next(ticks)))
    # the clock moves 1 s per reading: read at the start, then once per round past the fewest
    sel = _selection(rounds=2, min_repetitions=3, max_repetitions=100,
                     budget_s=3.5)
    assert len(sel["rounds"]) == 5


def test_a_round_whose_first_read_is_discarded_is_taken_again(monkeypatch) -> None:
    started = _fake_rounds(monkeypatch, lambda i: [1.0, 2.0], first_kept=lambda i: i != 1)
    sel = _selection(rounds=2, min_repetitions=3, max_repetitions=4)
    assert (len(sel["rounds"]), sel["discarded"], started) == (2, 1, [0, 1, 1])

    _fake_rounds(monkeypatch, lambda i: [1.0, 2.0], first_kept=lambda i: i == 0)
    with pytest.raises(VerificationError, match="during first reads"):
        _selection(rounds=2, min_repetitions=3, max_repetitions=4)
