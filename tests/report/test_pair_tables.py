"""The ROOT / Parquet ratios and the ``pairs`` table from paired measurements made by hand
(:mod:`paired_records`), whose rates are known: every ratio, interval and coverage must be the
one the pairs give, the tables must say on which CPU they were measured, and no interval may be
called 95% when its pairs give less."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from paired_records import PROV as PAIR_PROV
from paired_records import plan, record, size_records, write

from hepfmt import paired
from hepfmt.cli import main
from hepfmt.errors import InputError
from hepfmt.report import figures
from hepfmt.report.figures import inputs, ratios
from hepfmt.report.tables import tabulate

N_EVENTS, CLUSTER, FILE_EVENTS = 4000, 1000, 2_000_000
SIZE_PROV = {**PAIR_PROV, "machine": {**PAIR_PROV["machine"], "cpu": "size cpu"}}
#: ROOT's and Parquet's open and set-up (s); their steady rates are per pair below.
ROOT_OPEN, ROOT_SETUP, PARQUET_OPEN, PARQUET_SETUP = 0.1, 0.4, 0.1, 0.1
PARQUET_RATE = 10e3
#: ROOT's steady rate in each round's first pair, and in its two repeat pairs.
FIRST_RATES = (18e3, 20e3, 22e3)
REPEAT_RATES = ((19e3, 20e3), (21e3, 20e3), (19.5e3, 20.5e3))


def _pair(root_rate: float, parquet_rate: float = PARQUET_RATE) -> tuple:
    return ((ROOT_OPEN, ROOT_SETUP, root_rate), (PARQUET_OPEN, PARQUET_SETUP, parquet_rate))


def _record(sample: str = "S", scale: float = 1.0, **kw: object) -> dict:
    """ROOT's rates times ``scale``: another sample's content."""
    return record([_pair(r * scale) for r in FIRST_RATES],
                  [[_pair(r * scale) for r in rates] for rates in REPEAT_RATES],
                  sample=sample, cluster=CLUSTER, n_events=N_EVENTS, **kw)


def _plan() -> dict:
    return plan(FILE_EVENTS, ("TTree", "Parquet"))


def _sizes(tmp: Path, samples: list[str]) -> list[Path]:
    return size_records(tmp, samples, CLUSTER, N_EVENTS, SIZE_PROV)


def _tabulate(tmp: Path, docs: list[dict]) -> Path:
    samples = sorted({d["sample"] for d in docs})
    tabulate(_plan(), _sizes(tmp, samples), [], tmp / "tables", tmp / "provenance.json",
             [write(tmp / "pairs", d) for d in docs])
    (tmp / "plan.json").write_text(json.dumps(_plan()))
    return tmp


@pytest.fixture
def one(tmp_path: Path) -> Path:
    return _tabulate(tmp_path, [_record(discarded=2)])


def _csv(study: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(study / "tables" / f"{name}.csv", comment="#")


def _ratio(t: pd.DataFrame, quantity: str, read: str) -> pd.Series:
    (_, row), = t[(t.quantity == quantity) & (t.read == read)].iterrows()
    return row


def _file_time(rate: float) -> float:
    return (ROOT_OPEN + ROOT_SETUP + FILE_EVENTS / rate) / \
        (PARQUET_OPEN + PARQUET_SETUP + FILE_EVENTS / PARQUET_RATE)


def test_one_sample_ratio_is_the_paired_median_first_and_repeats_apart(one: Path) -> None:
    t = _csv(one, "ratios")
    first = _ratio(t, "throughput", "first")  # per pair 1.8, 2.0, 2.2
    assert first.ratio_mean == pytest.approx(2.0)
    assert (first.ratio_lo, first.ratio_hi) == (pytest.approx(1.8), pytest.approx(2.2))
    assert first.coverage == pytest.approx(0.75) and first.n_pairs == 3  # 1 - 2 / 2**3
    assert first.interval_method == "first reads, one per round of fresh processes (1 sample)"
    # per pair 1.9, 2.0 | 2.1, 2.0 | 1.95, 2.05: the rounds' medians 1.95, 2.05, 2.0
    reps = _ratio(t, "throughput", "repeats")
    assert reps.ratio_mean == pytest.approx(2.0)
    assert (reps.ratio_lo, reps.ratio_hi) == (pytest.approx(1.95), pytest.approx(2.05))
    assert reps.coverage == pytest.approx(0.75) and (reps.n_pairs, reps.n_over) == (6, 3)
    assert reps.over == "rounds"
    assert reps.interval_method == f"{paired.METHODS['repeats']} (1 sample)"
    ft = _ratio(t, "file_time", "repeats")
    assert ft.file_events == FILE_EVENTS
    assert ft.ratio_mean == pytest.approx((_file_time(19.5e3) + _file_time(20.5e3)) / 2)
    assert (ft.ratio_lo, ft.ratio_hi) == (
        pytest.approx((_file_time(21e3) + _file_time(20e3)) / 2),
        pytest.approx((_file_time(19e3) + _file_time(20e3)) / 2))
    for row in (first, reps, ft):
        assert (row.ttree_reader, row.parquet_reader) == ("rdf", "pyarrow")
        assert (row.discarded, row.n_samples, row["mode"]) == (2, 1, "warm")
        assert row.worst_other_cpu_share == pytest.approx(0.05)
        assert row.throughput_method_ttree == row.throughput_method_parquet == \
            "chunks after the first"
        assert row.cpu == "pair cpu"
    assert _ratio(t, "rate", "first").ratio_mean == pytest.approx(  # Parquet's time / ROOT's
        (PARQUET_OPEN + PARQUET_SETUP + N_EVENTS / PARQUET_RATE)
        / (ROOT_OPEN + ROOT_SETUP + N_EVENTS / 20e3))
    size = t[t.quantity == "size"].iloc[0]
    assert size.ratio_mean == pytest.approx(1.2) and size.cpu == "size cpu"


def test_several_samples_are_averaged_with_a_t_interval(tmp_path: Path) -> None:
    study = _tabulate(tmp_path, [_record("A"), _record("B", scale=1.1)])
    reps = _ratio(_csv(study, "ratios"), "throughput", "repeats")
    # the geometric mean, and the t interval of the logarithms: a ratio's stays above 0
    logs = np.log([2.0, 2.2])
    assert reps.ratio_mean == pytest.approx(np.exp(logs.mean()))
    assert reps.n_samples == 2 and reps.coverage == pytest.approx(0.95)
    assert reps.interval_method == "samples (t of logs, n=2)"
    half = 12.706 * logs.std(ddof=1) / 2 ** 0.5  # t(0.975, 1) * std / sqrt(n)
    assert (reps.ratio_lo, reps.ratio_hi) == (pytest.approx(np.exp(logs.mean() - half)),
                                              pytest.approx(np.exp(logs.mean() + half)))
    assert reps.n_pairs == 6


def test_a_one_chunk_side_has_no_throughput_ratio(tmp_path: Path) -> None:
    doc = record([_pair(20e3)] * 3, [[_pair(20e3)] * 2] * 3, cluster=N_EVENTS,
                 n_events=N_EVENTS)
    t = _csv(_tabulate(tmp_path, [doc]), "ratios")
    tp = _ratio(t, "throughput", "repeats")
    assert pd.isna(tp.ratio_mean) and tp.throughput_method_ttree == "not separable: one chunk"
    assert _ratio(t, "rate", "repeats").ratio_mean == pytest.approx(
        (PARQUET_OPEN + PARQUET_SETUP + N_EVENTS / PARQUET_RATE)
        / (ROOT_OPEN + ROOT_SETUP + N_EVENTS / 20e3))


def test_pairs_table_has_each_side_of_each_read(one: Path) -> None:
    p = _csv(one, "pairs").set_index(["side", "read"])
    assert list(p.index) == [("ttree", "first"), ("parquet", "first"), ("ttree", "repeats"),
                             ("parquet", "repeats")]
    root = p.loc[("ttree", "repeats")]

    def wall(*rates: float) -> float:  # a round's median time
        return sum(ROOT_OPEN + ROOT_SETUP + N_EVENTS / r for r in rates) / len(rates)

    assert root.median_s == pytest.approx(wall(19.5e3, 20.5e3))
    assert root.lo_s == pytest.approx(wall(21e3, 20e3))
    assert root.coverage == pytest.approx(0.75) and (root.n_pairs, root.n_over) == (6, 3)
    assert root.open_s == pytest.approx(ROOT_OPEN) and root.setup_s == pytest.approx(ROOT_SETUP)
    assert root.events_per_s_steady == pytest.approx(20e3)
    assert root.read_peak_mb == pytest.approx(10) and root.minflt == 1000
    assert (root.reader, root.label, root.cpu) == ("rdf", "TTree", "pair cpu")
    first = p.loc[("parquet", "first")]
    assert first.events_per_s == pytest.approx(
        N_EVENTS / (PARQUET_OPEN + PARQUET_SETUP + N_EVENTS / PARQUET_RATE))
    assert first.coverage == pytest.approx(0.75) and first.n_pairs == 3
    md = (one / "tables" / "pairs.md").read_text()
    assert "Selection 'all'" in md and (one / "tables" / "pairs.html").is_file()


def _headings(md: str) -> list[str]:
    """The headings of the document's tables (a heading followed by a table)."""
    lines = md.splitlines()
    return [ln for i, ln in enumerate(lines) if ln.startswith("## ")
            and i + 2 < len(lines) and lines[i + 2].startswith("|")]


def test_every_table_heading_names_its_cpu(one: Path) -> None:
    tables = one / "tables"
    for name, cpu in (("size", "size cpu"), ("samples", "size cpu"), ("pairs", "pair cpu")):
        heads = _headings((tables / f"{name}.md").read_text())
        assert heads and all(f"(measured on {cpu})" in h for h in heads), name
    heads = _headings((tables / "ratios.md").read_text())
    assert heads and all("measured on 2 CPUs: size cpu; pair cpu" in h for h in heads)
    assert "measured on" in (tables / "ratios.html").read_text()
    prov = json.loads((one / "provenance.json").read_text())
    assert prov["cpus"] == ["size cpu", "pair cpu"] and prov["n_pair_measurements"] == 1


def test_intervals_below_95_percent_say_their_coverage_and_pairs(one: Path) -> None:
    md = (one / "tables" / "ratios.md").read_text()
    assert "2 [1.8, 2.2] (75%, 3 rounds)" in md  # first reads: one per round
    assert "2 [1.95, 2.05] (75%, 3 rounds)" in md  # repeats: six pairs, but three rounds
    assert "95%]" not in md and "[95%" not in md  # no header claims 95% for every cell
    pairs = (one / "tables" / "pairs.md").read_text()
    assert re.search(r"\[[\d.]+, [\d.]+\] \(75%, 3 rounds\)", pairs)


def test_one_round_gives_an_interval_over_its_pairs_and_says_so(tmp_path: Path) -> None:
    doc = record([_pair(20e3)], [[_pair(r) for r in (19e3, 20e3, 21e3)]], cluster=CLUSTER,
                 n_events=N_EVENTS)
    reps = _ratio(_csv(_tabulate(tmp_path, [doc]), "ratios"), "throughput", "repeats")
    assert (reps.ratio_lo, reps.ratio_hi) == (pytest.approx(1.9), pytest.approx(2.1))
    assert (reps.n_over, reps.over) == (3, "pairs")
    assert reps.interval_method == f"{paired.WITHIN_ROUND} (1 sample)"
    md = (tmp_path / "tables" / "ratios.md").read_text()
    assert "2 [1.9, 2.1] (75%, 3 pairs)" in md


def _ratio_figure(study: Path) -> tuple:
    inp = inputs.load_inputs("ratios", study / "tables", study / "provenance.json",
                             study / "plan.json")
    return figures.FAMILIES["ratios"].draw(inp)


def test_ratio_figure_states_the_coverage_it_has(tmp_path: Path) -> None:
    few = record([_pair(r) for r in FIRST_RATES], [[_pair(r[0])] for r in REPEAT_RATES],
                 cluster=CLUSTER, n_events=N_EVENTS)  # one repeat pair a round: 3 pairs
    fig, notes = _ratio_figure(_tabulate(tmp_path, [few]))
    title = fig.get_suptitle()
    assert "95% intervals" not in title and not any("95% intervals" in n for n in notes)
    assert "intervals: 75% coverage, see table" in title
    assert ratios.FIRST_MARK in [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    marks = [ln for ax in fig.axes for ln in ax.lines if ln.get_marker() == "x"]
    assert len(marks) == 2  # a first read's throughput and whole-file ratio


def test_ratio_figure_calls_intervals_95_percent_only_when_they_are(tmp_path: Path) -> None:
    six = record([_pair(r) for r in FIRST_RATES * 2],  # six rounds: 97%
                 [[_pair(r) for r in rates] for rates in REPEAT_RATES * 2],
                 cluster=CLUSTER, n_events=N_EVENTS)
    (tmp_path / "six").mkdir()
    fig, _ = _ratio_figure(_tabulate(tmp_path / "six", [six]))
    assert "error bars: 95% intervals" in fig.get_suptitle()
    fig, _ = _ratio_figure(_tabulate(tmp_path, [_record("A"), _record("B", scale=1.1)]))
    assert "error bars: 95% intervals" in fig.get_suptitle()  # t over samples
    rows = pd.DataFrame({"ratio_mean": [1.0, 2.0], "ratio_std": [0.0, 0.0],
                         "ratio_lo": [0.9, 1.8], "ratio_hi": [1.1, 2.2],
                         "coverage": [0.75, 0.96875]})
    assert ratios.coverage_label(rows) == "error bars: intervals: 75%–97% coverage, see table"


def test_every_figure_footer_names_the_cpu(one: Path, tmp_path: Path) -> None:
    for name in ("size", "ratios"):
        inp = inputs.load_inputs(name, one / "tables", one / "provenance.json",
                                 one / "plan.json")
        fig, _ = figures.FAMILIES[name].draw(inp)
        assert "measured on 2 CPUs: size cpu; pair cpu" in figures.footer(inp), name
        assert "measured on" not in fig.get_suptitle(), name  # titles say what is shown


def test_cli_tabulates_pair_records(tmp_path: Path) -> None:
    (tmp_path / "plan.json").write_text(json.dumps(_plan()))
    args = ["tabulate", "--plan", str(tmp_path / "plan.json"), "-o", str(tmp_path / "t"),
            "--sizes", *map(str, _sizes(tmp_path, ["S"])),
            "--pairs", str(write(tmp_path, _record()))]
    assert main(args) == 0
    t = pd.read_csv(tmp_path / "t" / "ratios.csv", comment="#")
    assert set(t.read.dropna()) == {"first", "repeats"}
    assert (tmp_path / "t" / "pairs.csv").is_file()


def test_a_sample_measured_twice_is_refused(tmp_path: Path) -> None:
    """Two measurements of one sample would be averaged as two samples."""
    with pytest.raises(InputError, match="also measured in"):
        tabulate(_plan(), _sizes(tmp_path, ["S"]), [], tmp_path / "tables", None,
                 [write(tmp_path / d, _record()) for d in ("a", "b")])
    broken = {k: v for k, v in _record().items() if k != "summary"}
    broken["selections"][0]["rounds"][0].pop("first")
    with pytest.raises(InputError, match="not a complete paired measurement"):
        tabulate(_plan(), _sizes(tmp_path, ["S"]), [], tmp_path / "tables", None,
                 [write(tmp_path, broken)])
