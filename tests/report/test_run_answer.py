"""``hepfmt answer``: the run's answer, regenerated from the committed tables, cannot drift.

The README's result block and each reference's ``answer.md`` are compared with what the code
writes from the committed tables today: a hand edit, a table regenerated without its answer, or
a wording change not carried to the README fails here. The wording rules (a direction only where
the interval excludes 1) and the gaps of a partial run are checked on small hand-made tables.
"""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from hepfmt.cli import main
from hepfmt.report import answer, direction
from hepfmt.report.answer import cpus, facts
from hepfmt.report.answer import wording as w

ROOT = Path(__file__).resolve().parents[2]
REFERENCES = sorted(d for d in (ROOT / "results" / "reference").iterdir()
                    if (d / "answer.md").is_file())
#: The reference whose answer the README carries.
README_REFERENCE = ROOT / "results" / "reference" / "amd-epyc"


def _regenerated(ref: Path, out: Path) -> answer.Answer:
    meta = ref / "metadata" if (ref / "metadata").is_dir() else None
    return answer.write(ref, out, meta, source=str(ref.relative_to(ROOT)),
                        other=cpus.sibling(ref))


@pytest.mark.parametrize("ref", REFERENCES, ids=lambda p: p.name)
def test_reference_answer_is_what_its_tables_say(ref: Path, tmp_path: Path) -> None:
    _regenerated(ref, tmp_path)
    for name in ("answer.md", "answer.json"):
        assert (tmp_path / name).read_text() == (ref / name).read_text(), (
            f"{ref / name} differs from what `hepfmt answer` writes from its tables: run "
            f"`hepfmt answer --tables {ref.relative_to(ROOT)} --metadata "
            f"{ref.relative_to(ROOT)}/metadata --source {ref.relative_to(ROOT)}"
            + (f" --other-reference {other.relative_to(ROOT)}`"
               if (other := cpus.sibling(ref)) else "`"))


def test_readme_carries_the_reference_answer() -> None:
    readme = (ROOT / "README.md").read_text()
    assert answer.embedded(readme) == (README_REFERENCE / "answer.md").read_text(), (
        "README.md's answer block differs from results/reference/amd-epyc/answer.md: run "
        "`hepfmt answer --tables results/reference/amd-epyc --metadata "
        "results/reference/amd-epyc/metadata --source results/reference/amd-epyc --into "
        "README.md`")


def test_every_reference_sentence_cites_a_row_that_exists() -> None:
    """Each claim's source row is in its table, with the value the claim states."""
    doc = json.loads((README_REFERENCE / "answer.json").read_text())
    assert doc["claims"], "the reference answer states nothing"
    for c in doc["claims"]:
        table = pd.read_csv(README_REFERENCE / c["source"]["table"], comment="#")
        keys = {k: v for k, v in c["source"]["row"].items() if k != "column"}
        hit = table
        for k, v in keys.items():
            hit = hit[hit[k].astype(str) == str(v)]
        assert not hit.empty, c["text"]


# --- the words follow the interval ---------------------------------------------------------

@pytest.mark.parametrize(("ratio", "lo", "hi", "start"), [
    (2.0, 1.5, 2.5, "ROOT faster"),
    (0.5, 0.4, 0.7, "Parquet faster"),
    (1.1, 0.9, 1.3, "about the same"),
    (0.95, 0.8, 1.0, "about the same"),  # an interval that reaches 1 holds it
    (12.0, 11.0, 13.0, "ROOT faster, an order of magnitude"),
    (9.9, 9.0, 10.5, "ROOT faster:"),  # below 10×: no "order of magnitude"
    (0.05, 0.04, 0.06, "Parquet faster, an order of magnitude"),
])
def test_verdict_follows_the_interval(ratio: float, lo: float, hi: float, start: str) -> None:
    assert w.verdict(ratio, lo, hi).startswith(start)


def test_no_interval_no_claim() -> None:
    assert "no claim" in w.verdict(2.0, math.nan, math.nan)
    assert not w.is_claim(math.nan, 3.0)


def test_coverage_is_never_rounded_up() -> None:
    assert w.coverage(0.96875) == "96%"
    assert w.coverage(0.75) == "75%"


def test_numbers_have_three_significant_digits() -> None:
    assert [w.number(x) for x in (2.0937, 0.0636, 2056.24, 0.5)] == ["2.09", "0.0636",
                                                                     "2,056", "0.500"]


def test_time_ratios_turn_to_speed_with_their_interval() -> None:
    assert direction.speed("file_time", 2.0, 1.6, 2.5) == (0.5, 0.4, 0.625)
    assert direction.speed("throughput", 2.0, 1.6, 2.5) == (2.0, 1.6, 2.5)
    with pytest.raises(ValueError):
        direction.speed("size", 1.0)


# --- fastest, not first-listed -----------------------------------------------------------

def test_the_fastest_reader_is_chosen_not_the_first_listed() -> None:
    df = pd.DataFrame({"format": ["ttree"] * 3 + ["parquet"], "label": ["TTree"] * 3 +
                       ["Parquet"], "variant": ["zstd-5"] * 3 + ["zstd-3"],
                       "cluster_size": [4000] * 4, "reader": ["rdf", "columnar", "uproot",
                                                               "pyarrow"],
                       "threads": [1] * 4, "all_warm_s": [1.58, 0.166, 0.70, 0.113]})
    best = facts.fastest_readers(df)
    assert dict(zip(best.label, best.reader, strict=True)) == {"TTree": "columnar",
                                                               "Parquet": "pyarrow"}
    marked = facts.all_readers(df)
    assert len(marked) == 4 and marked.fastest.sum() == 2


# --- a partial run: what it can, and the gaps named ----------------------------------------

def test_a_run_without_pairs_says_so_and_writes_the_rest(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    for name in ("size.csv", "reads.csv", "provenance.json"):
        shutil.copy(README_REFERENCE / name, tmp_path / name)
    assert main(["answer", "--tables", str(tmp_path)]) == 0
    text = (tmp_path / "answer.md").read_text()
    assert "No `ratios.csv` in this run" in text and "No `pairs.csv`" not in text
    assert "Smallest file" in text and "fastest reader" in text
    assert "No `ratios.csv` in this run" in capsys.readouterr().err


def test_a_table_of_another_shape_is_a_gap_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "ratios.csv").write_text("pair,ratio_mean\nx,1.0\n")
    (tmp_path / "size.csv").write_text("not,a,size,table\n1,2,3,4\n")
    assert main(["answer", "--tables", str(tmp_path)]) == 0
    text = (tmp_path / "answer.md").read_text()
    assert "`ratios.csv` lacks the column(s)" in text
    assert "`size.csv` lacks the column(s)" in text


def test_every_sentence_carries_its_number_and_source() -> None:
    text = (README_REFERENCE / "answer.md").read_text()
    lines = [ln for ln in text.splitlines() if ln.startswith(("- ", "    - "))
             and not ln.endswith(":")]
    cited = [ln for ln in lines if "<sub>[`" in ln]
    claims = json.loads((README_REFERENCE / "answer.json").read_text())["claims"]
    assert len(cited) == len(claims)
    for c in claims:
        assert math.isfinite(c["value"]), c["text"]
        if c["topic"].startswith("speed"):
            assert c["cpu"] and c["n_samples"] >= 1 and math.isfinite(c["coverage"])
