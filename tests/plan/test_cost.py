"""A study's CPU estimate is the sum of its jobs' measured parts, walked over the planner's grid."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from hepfmt import formats
from hepfmt.cli import main
from hepfmt.formats.base import ReadCost, ReadParts
from hepfmt.plan import calibration, cost, resources, study
from hepfmt.plan import config as cfg

ROOT = Path(__file__).resolve().parents[2]


def _tiny() -> dict:
    """One sample, one Parquet file, one reader, warm reads only; metadata one 10-column file."""
    return cfg.validate({
        "samples": {"DY": {"process": "DYJetsToLL", "n_events": 1000, "seed": 1}},
        "cluster_sizes": [1000],
        "formats": {"parquet": {"variants": ["zstd-3"]}},
        "measure": {"readers": {"parquet": ["pyarrow"]}, "modes": ["warm"], "repetitions": 5,
                    "budget_s": 1, "queries": []},
        "metadata": {"columns": [10], "types": ["float32"], "stats_levels": ["none"],
                     "implementations": ["pyarrow"], "nanoaod": "", "row_groups": 2,
                     "rows_per_group": 100, "repetitions": 7, "budget_s": 10},
    })


def _cost(reader: str, adapter: str) -> ReadCost:
    """The cost the adapter states for its reader (the registry's own)."""
    c = formats.get(adapter).readers[reader].cost
    assert c is not None
    return c


def _pass(p: ReadParts, n: int) -> float:
    return p.open_s + p.setup_s + n / p.events_per_s


def test_a_tiny_study_costs_the_sum_of_its_parts() -> None:
    c = _tiny()
    n, width = 1000, cost.NANOAOD_BRANCHES
    pyarrow = _cost("pyarrow", "parquet")
    ten, full = _pass(pyarrow.ten, n), _pass(pyarrow.all, n)
    # both reads take well under budget_s / 5 = 0.2 s: 5 repetitions each, one mode
    assert ten < 0.2 and full < 0.2
    start = formats.get("parquet").file_overhead_s + pyarrow.start_s
    proof = full  # at convert: the reader's read of every branch
    reads = start + ten + 5 * ten + 5 * full  # the priming scan of the smallest selection
    w = formats.get("parquet").write_cost
    write = proof + w.fixed_s + n / w.events_per_s  # zstd, as measured: no codec on top
    generate = cost.GENERATE.fixed_s + n / cost.GENERATE.events_per_s
    tabulate = cost.TABULATE_START_S + 2 / cost.TABULATE_RECORDS_PER_S
    decode = 2 * 10 * cost.METADATA_US_PER_COLUMN["pyarrow"] / 1e6  # both modes
    metadata = (w.fixed_s + 200 * 10 / width / w.events_per_s + cost.FILE_OVERHEAD_DEFAULT_S
                + cost.METADATA_START_S["pyarrow"] + (1 + 7) * decode)

    got = cost.whole(c)
    assert got.read_s == pytest.approx(reads)
    assert got.proof_s == pytest.approx(proof)
    assert got.start_s == pytest.approx(start)
    assert got.write_s == pytest.approx(write)
    assert got.generate_s == pytest.approx(generate)
    assert got.tabulate_s == pytest.approx(tabulate)
    assert got.query_s == 0
    assert got.metadata_s == pytest.approx(metadata)
    assert got.all_s == pytest.approx(generate + write + reads + tabulate)
    # the batch requests sum to the same CPU time
    assert resources.whole_study(c).cpu_hours * 3600 == pytest.approx(got.all_s)


def test_repetitions_are_bounded_by_the_budget_within_min_and_max() -> None:
    m = {"min_repetitions": 3, "repetitions": 20, "budget_s": 120}
    assert cost.repetitions(0.01, m) == 20  # a fast read: the maximum
    assert cost.repetitions(10, m) == 12  # the budget: ceil(120 / 10)
    assert cost.repetitions(100, m) == 3  # a slow read: the minimum


def test_a_read_interpolates_between_ten_branches_and_all() -> None:
    p = _cost("rdf", "ttree")
    assert cost.read_seconds("rdf", "ttree", 5000, 10) == pytest.approx(_pass(p.ten, 5000))
    assert cost.read_seconds("rdf", "ttree", 5000, 1499) == pytest.approx(_pass(p.all, 5000))
    mid = cost.read_seconds("rdf", "ttree", 5000, 700)
    assert _pass(p.ten, 5000) < mid < _pass(p.all, 5000)


def test_a_reader_not_measured_costs_as_the_slowest_of_its_format() -> None:
    ttree = [r.cost for r in formats.get("ttree").readers.values() if r.cost]
    slowest = max(ttree, key=lambda c: c.all.seconds(1_000_000))
    assert cost.read_cost("nosuchreader", "ttree") == slowest
    every = [r.cost for n in formats.names() for r in formats.get(n).readers.values() if r.cost]
    assert cost.read_cost("x", "nosuchformat").all.seconds(10**6) == max(
        c.all.seconds(10**6) for c in every)


def test_slow_codecs_and_thread_sweeps_cost_more() -> None:
    fast = cost.write_seconds("ttree", "zstd-5", 200_000, 1499)
    assert cost.write_seconds("ttree", "lzma-9", 200_000, 1499) > 2 * fast
    c = _tiny()
    f = study.files(c)[0]
    one = cost.measure_job(c, f, ["pyarrow"])
    c["measure"]["threads"] = [1, 2]
    two = cost.measure_job(c, f, ["pyarrow"])
    assert two.timed_s == pytest.approx(2 * one.timed_s)


def test_a_pair_job_costs_its_rounds_start_ups_and_both_sides_reads() -> None:
    """Both sides' codec bounds + rounds x (both sides' start-ups and a round's own work) +
    rounds x (first + repeats per round) x (both sides' reads), ceil(min_repetitions / rounds)
    repeats per round."""
    c = cfg.load(ROOT / "config" / "default.yaml")
    job = next(j for j in study.pair_plan(c) if j.selection == "ten")
    s = study.pair_settings(c, job)
    n = cost.sample_events(c, job.sample)
    width = 10
    reads = (cost.read_seconds("rdf", "ttree", n, width)
             + cost.read_seconds("pyarrow", "parquet", n, width))
    got = cost.pair_job(c, job)
    assert got.start_s == pytest.approx(
        cost.FILE_OVERHEAD_DEFAULT_S + 2 * cost.PAIR_BOUND_START_S + s["rounds"] * (
            cost.PAIR_ROUND_OVERHEAD_S + _cost("rdf", "ttree").start_s
            + _cost("pyarrow", "parquet").start_s))
    per_round = math.ceil(s["min_repetitions"] / s["rounds"])
    assert got.timed_s == pytest.approx(s["rounds"] * (1 + per_round) * reads)
    c["compare"]["rounds"] += 1
    assert cost.pair_job(c, job).total_s > got.total_s


def test_the_pair_jobs_are_in_the_studys_reads() -> None:
    c = cfg.load(ROOT / "config" / "default.yaml")
    b = cost.whole(c)
    assert b.pair_s == pytest.approx(sum(cost.pair_job(c, j).total_s
                                         for j in study.pair_plan(c)))
    assert 0 < b.pair_s < b.read_s
    c["compare"]["cluster_sizes"] = []
    assert cost.whole(c).pair_s == 0


def test_check_config_prints_the_paper_studys_cpu_hours(capsys: pytest.CaptureFixture) -> None:
    assert main(["check-config", str(ROOT / "config" / "paper.yaml")]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines()
                if ln.startswith("estimated CPU: "))
    hours = float(line.split()[2].replace(",", ""))
    # the model check-config prints: the shipped parts, fitted to any benchmark records a run
    # of this config left in its results directory (none on a fresh clone)
    expected = calibration.whole(cfg.load(ROOT / "config" / "paper.yaml"))
    total = expected.all_s + expected.query_s + expected.metadata_s
    assert math.isclose(hours, total / 3600, abs_tol=0.05)
    assert "proof reads" in line and cost.WHERE in line and "measured on" in line


def test_a_real_file_sample_is_costed_at_its_own_events(tmp_path) -> None:
    """Issue 17: a local file's entries come from its metadata, not an assumed 200,000."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from hepfmt.plan import cost

    path = tmp_path / "real.parquet"
    pq.write_table(pa.table({"nMuon": pa.array(range(1234), pa.int32())}), path)
    config = {"samples": {"real": {"file": str(path)},
                          "remote": {"file": "root://example.org//store/nano.root"},
                          "made": {"process": "DYJetsToLL", "n_events": 77}}}
    assert cost.sample_events(config, "real") == 1234
    assert cost.sample_events(config, "remote") == cost.IMPORTED_EVENTS
    assert cost.sample_events(config, "made") == 77
    nano = Path(__file__).resolve().parents[3] / "shared" / "nanoaod" / "nano_dy.root"
    if nano.exists():
        import uproot

        config["samples"]["nano"] = {"file": str(nano)}
        with uproot.open(nano) as f:
            assert cost.sample_events(config, "nano") == f["Events"].num_entries


def test_every_engine_that_reads_parquet_has_its_own_measured_cost() -> None:
    """A query job is costed from its engines' measured parts; the slowest engine's stand in
    only for a pair (engine, format) not measured, never for a Parquet engine."""
    from hepfmt.queries import ENGINES

    for name, engine in ENGINES.items():
        if "parquet" in engine.formats:
            assert "parquet" in engine.cost, name


def test_a_fastest_side_costs_its_quickest_candidate_and_threads_divide_a_pass() -> None:
    """A "fastest" side is read by the quickest of its candidates (the reader the job will
    choose), not priced as an unknown reader's worst case; two threads halve a pass."""
    c = cfg.load(ROOT / "config" / "default.yaml")
    jobs = {j.pair.label: j for j in study.pair_plan(c) if j.sample == "DYJetsToLL_100k"
            and j.selection == "all"}
    fastest, headline = jobs["zstd, fastest"], jobs["zstd, columnar"]
    plan = study.read_plan(c)
    n = cost.sample_events(c, fastest.sample)
    quickest = min(cost.read_seconds(r, f.adapter, n, cost.NANOAOD_BRANCHES)
                   for f in fastest.candidates_of("parquet") for r in study.file_readers(plan, f))
    one = cost.pair_job(c, fastest, plan)
    s = study.pair_settings(c, fastest)
    per_pass = one.timed_s / (s["rounds"] * (1 + math.ceil(s["min_repetitions"] / s["rounds"])))
    assert quickest < per_pass < quickest + cost.read_seconds("columnar", "ttree", n,
                                                              cost.NANOAOD_BRANCHES) * 1.0001
    two = cost.pair_job(c, jobs["zstd, columnar, 2 threads"])
    assert two.timed_s == pytest.approx(cost.pair_job(c, headline).timed_s / 2)

