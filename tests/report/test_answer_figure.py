"""The summary figure and the figure conventions of issue 39, on the committed reference tables.

What is checked: the answer figure draws from the reference tables and marks each format's
fastest reader (TTree's columnar reader, not its first-listed RDataFrame); a reader who sees
only it reads the reference's answer (ROOT's columnar reader faster than pyarrow on all
branches, RDataFrame's whole read slower); every speed-ratio axis of every figure carries the
one direction (``direction.SPEED_AXIS``), a time ratio inverted with its interval; no two
format × codec series share a colour and marker, and a size panel has no empty cluster size.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from hepfmt.plan import config as cfg
from hepfmt.plan.record import record
from hepfmt.report import direction, figures, plan_record
from hepfmt.report.figures import answer, inputs, query_ratios, ratios
from hepfmt.report.figures.order import series_styles

REFERENCE = Path(__file__).resolve().parents[2] / "results" / "reference" / "amd-epyc"


@pytest.fixture(scope="module")
def plan() -> Path:
    """The reference's plan record, committed beside its tables (``make reference``)."""
    return REFERENCE / "plan.json"


def test_the_committed_plan_is_the_reference_configs() -> None:
    """plan.json is what ``hepfmt plan-record`` makes of the committed config.yaml, in all the
    report reads of it (its copy of the config gains each default added since)."""
    made = json.loads(json.dumps(record(cfg.load(REFERENCE / "config.yaml"))))
    committed = json.loads((REFERENCE / "plan.json").read_text())
    assert {k: v for k, v in committed.items() if k != "config"} == \
        {k: v for k, v in made.items() if k != "config"}


def _inputs(name: str, plan: Path, provenance: str = "provenance.json") -> inputs.Inputs:
    return inputs.load_inputs(name, REFERENCE, REFERENCE / provenance, plan, "default.yaml")


@pytest.fixture(scope="module")
def drawn(plan: Path):
    return figures.FAMILIES["answer"].draw(_inputs("answer", plan))


def _axes_titled(fig, start: str) -> list:
    return [ax for ax in fig.axes if ax.get_title().startswith(start)]


def test_answer_figure_draws_from_the_reference_tables(plan: Path, tmp_path: Path) -> None:
    written = figures.make("answer", REFERENCE, REFERENCE / "provenance.json", plan, tmp_path,
                           "default.yaml")
    assert [p.name for p in written] == ["answer.png", "answer.pdf"]
    assert written[0].read_bytes()[:4] == b"\x89PNG" and written[0].stat().st_size > 10_000


def test_answer_figure_marks_each_formats_fastest_reader(drawn) -> None:
    fig, notes = drawn
    # one panel per cluster size the whole-file selection was read at
    assert [ax.get_title().split(":")[0] for ax in _axes_titled(fig, "cluster size")] == \
        ["cluster size 4,000", "cluster size 100,000"]
    (ax,) = _axes_titled(fig, "cluster size 4,000")
    points = {ln.get_label(): ln for ln in ax.lines if ln.get_marker() not in (None, "None")}
    # TTree by its columnar reader (0.166 s), its first-listed RDataFrame (1.58 s) drawn small
    assert "TTree zstd-5 [columnar]" in points and "_TTree zstd-5 [rdf]" in points
    assert points["TTree zstd-5 [columnar]"].get_markersize() > \
        points["_TTree zstd-5 [rdf]"].get_markersize()
    named = {t.get_text() for t in ax.texts}
    assert {"TTree zstd-5 [columnar]", "RNTuple zstd-5 [columnar]", "rdf"} <= named
    # every reader of the run at 4000 is drawn: 18 in reads.csv's all-branch warm rows
    assert len([ln for ln in points if "[" in ln]) == 18
    assert any("fastest reader" in n for n in notes)


def test_answer_figure_tells_the_references_answer(plan: Path, drawn) -> None:
    fig, _ = drawn
    inp = _inputs("answer", plan)
    r = answer.ratio_rows(inp.tables["ratios"], inp.plan)
    fair = r[(r.compares == "columnar vs columnar") & (r.selection == "all")
             & (r.quantity == "throughput")]
    ttree = {p["label"] for p in inp.plan["pairs"] if p["ttree"]["format"] == "ttree"}
    # the default times RDataFrame on ten branches (every branch: config/paper.yaml)
    loop = r[(r.compares == "event loop vs columnar") & (r.quantity == "rate")
             & r.pair.isin(ttree)]
    assert not fair.empty and (fair.ratio_lo > 1).any()  # ROOT's columnar reader faster
    assert not loop.empty
    (steady,) = _axes_titled(fig, "steady throughput")
    (whole,) = _axes_titled(fig, "whole read")
    for ax, rows in ((steady, fair), (whole, loop)):
        xs = [x for ln in ax.lines for x in ln.get_xdata()]
        for v in rows.ratio_mean:
            assert any(np.isclose(x, v) for x in xs), v
        assert ax.get_xlabel() == direction.SPEED_AXIS


def test_a_time_ratio_is_inverted_with_its_interval() -> None:
    r = pd.DataFrame({"quantity": ["file_time", "throughput"], "ratio_mean": [0.5, 2.0],
                      "ratio_lo": [0.4, 1.5], "ratio_hi": [0.625, 2.5],
                      "ratio_std": [0.1, 0.2]})
    o = ratios.oriented(r)
    assert o.ratio_mean.tolist() == [2.0, 2.0]
    assert o.ratio_lo.tolist() == [1.6, 1.5] and o.ratio_hi.tolist() == [2.5, 2.5]


def _speed_axes(fig) -> list[str]:
    """Every axis label that speaks of ROOT and Parquet."""
    return [label for ax in fig.axes for label in (ax.get_xlabel(), ax.get_ylabel())
            if "Parquet" in label]


def _query_ratios() -> pd.DataFrame:
    return pd.DataFrame({"task": [1, 1], "mode": ["warm", "cold"], "question": ["MET"] * 2,
                         "root": ["rdf on TTree zstd-5"] * 2,
                         "parquet": ["polars on Parquet zstd-3"] * 2,
                         "ratio_mean": [2.0, 0.5], "ratio_lo": [1.5, 0.4],
                         "ratio_hi": [2.5, 0.6], "coverage": [0.88, 0.88], "n_over": [5, 5],
                         "n_samples": [1, 1], "interval_method": ["order statistics"] * 2,
                         "cold_verified": ["", "True"]})


def test_every_speed_ratio_axis_reads_one_way(plan: Path, drawn) -> None:
    plan_doc = plan_record.load(plan)
    figs = {"answer": drawn[0],
            "ratios": figures.FAMILIES["ratios"].draw(_inputs("ratios", plan))[0],
            "storage": figures.FAMILIES["storage"].draw(
                _inputs("storage", plan, "storage-provenance.json"))[0],
            "query_ratios": query_ratios.draw(inputs.Inputs(
                {"queries-ratios": _query_ratios()}, {}, plan_doc))[0]}
    for name, fig in figs.items():
        labels = _speed_axes(fig)
        assert labels and set(labels) == {direction.SPEED_AXIS}, (name, labels)


def test_no_two_format_codec_series_share_colour_and_marker(plan: Path) -> None:
    doc = plan_record.load(plan)
    keys = [(f, v) for f in plan_record.format_names(doc) for v in plan_record.variants(doc, f)]
    styles = series_styles(doc, keys)
    assert len(set(styles.values())) == len(keys)
    fig, _ = figures.FAMILIES["size"].draw(_inputs("size", plan))
    seen: dict[str, tuple] = {}
    for ax in fig.axes:
        here = {ln.get_label(): (ln.get_color(), ln.get_marker()) for ln in ax.lines
                if not ln.get_label().startswith("_")}
        assert len(set(here.values())) == len(here), ax.get_title()
        # "<format label> <variant>": one panel's formats apart by colour alone
        colours = {label.rsplit(" ", 1)[0]: c for label, (c, _) in here.items()}
        assert len(set(colours.values())) == len(colours), ax.get_title()
        for label, style in here.items():
            assert seen.setdefault(label, style) == style  # the same series, the same style
    assert len(set(seen.values())) == len(seen)  # the whole figure: colour + marker apart


def test_size_panels_have_no_empty_cluster_size(plan: Path) -> None:
    fig, _ = figures.FAMILIES["size"].draw(_inputs("size", plan))
    for ax in (ax for ax in fig.axes if ax.get_visible()):
        xs = {round(x) for bars in ax.containers for x in bars.lines[0].get_xdata()}
        assert {round(t) for t in ax.get_xticks()} == xs, ax.get_title()


def test_titles_are_short_and_the_cpu_is_in_the_footer(plan: Path, drawn) -> None:
    inp = _inputs("answer", plan)
    assert figures.footer(inp).startswith("measured on AMD EPYC")
    for name in ("answer", "size", "ratios", "tradeoff", "groups", "memory"):
        fig, _ = drawn if name == "answer" else figures.FAMILIES[name].draw(_inputs(name, plan))
        assert "AMD EPYC" not in fig.get_suptitle(), name
        assert len(fig.get_suptitle()) < 250, name
