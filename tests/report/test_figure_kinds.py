"""Real and synthetic samples tabulated apart are drawn apart in the trade-off and memory
figures too (as in the size and ratio figures): each kind its own series, in its own line
style, named; never one point or bar for both."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_figures import study_config, synthetic_study

from hepfmt.report.figures import inputs, memory, tradeoff


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Sample A imported from a real file, B generated."""
    return synthetic_study(study_config(), tmp_path_factory.mktemp("kinds"), real={"A"})


def _inputs(name: str, study: Path) -> inputs.Inputs:
    return inputs.load_inputs(name, study / "tables", study / "provenance.json",
                              study / "plan.json")


def test_tradeoff_draws_a_point_and_a_front_per_kind(mixed: Path) -> None:
    inp = _inputs("tradeoff", mixed)
    fig, notes = tradeoff.draw(inp)
    ax = fig.axes[0]
    points = {ln.get_label(): ln for ln in ax.lines if ln.get_marker() not in (None, "None")}
    for name in ("TTree zstd-5 [rdf]", "Parquet zstd-3 [pyarrow]"):
        real, synthetic = points[f"{name}, real samples"], points[f"{name}, synthetic samples"]
        assert real.get_linestyle() != synthetic.get_linestyle()
        assert real.get_xydata().tolist() != synthetic.get_xydata().tolist()
    fronts = {ln.get_label(): ln.get_linestyle() for ln in ax.lines
              if ln.get_label().startswith("Pareto front")}
    assert len(fronts) == 2 and len(set(fronts.values())) == 2
    assert all(label.endswith(("real samples", "synthetic samples")) for label in fronts)
    assert any("apart" in n for n in notes)
    rows = tradeoff.reader_rows(inp.tables["formats"], "all_warm_s", inp.plan)
    fastest = rows[rows.fastest]
    assert len(fastest) == 2 * 6 and set(fastest.kind) == {"real", "synthetic"}


def test_memory_draws_a_row_of_bars_per_kind(mixed: Path) -> None:
    inp = _inputs("memory", mixed)
    table = memory.memory_table(inp.tables["reads"])
    assert set(table.kind) == {"real", "synthetic"}
    fig, notes = memory.draw(inp)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert "TTree · rdf · real samples" in labels and "TTree · rdf · synthetic samples" in labels
    styles = {}
    for bar in ax.patches:
        row = labels[round(bar.get_y() + bar.get_height() / 2)]
        styles.setdefault(row.rsplit(" · ", 1)[1], set()).add(bar.get_linestyle())
    assert len(styles["real samples"]) == 1 and len(styles["synthetic samples"]) == 1
    assert styles["real samples"] != styles["synthetic samples"]
    legend = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert {"real samples", "synthetic samples"} <= set(legend)
    assert any("apart" in n for n in notes)


def test_one_kind_draws_as_before(tmp_path: Path) -> None:
    study = synthetic_study(study_config(), tmp_path)
    fig, _ = tradeoff.draw(_inputs("tradeoff", study))
    assert not any("samples" in ln.get_label() for ln in fig.axes[0].lines)
    fig, _ = memory.draw(_inputs("memory", study))
    assert not any("samples" in t.get_text() for t in fig.axes[0].get_yticklabels())
