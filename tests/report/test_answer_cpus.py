"""The answer set against another CPU's run (``answer.write(..., other=DIR)``): where the two
committed references disagree on a stated ratio, the answer says so with both numbers, taken
from both tables by compare-runs' own test, never typed. The AMD EPYC reference is given one
event-loop ratio the default no longer times (the ``amd`` fixture)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from hepfmt.errors import InputError
from hepfmt.report import answer
from hepfmt.report.answer import cpus

ROOT = Path(__file__).resolve().parents[2]
AMD, INTEL = (ROOT / "results" / "reference" / n for n in ("amd-epyc", "intel-xeon"))


@pytest.fixture(scope="module")
def amd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The AMD EPYC reference with one more stated ratio, RDataFrame's every-branch zstd pairing
    at 200 (the default no longer times it; the Intel Xeon reference did), 1.5 times the Intel
    Xeon run's with its interval: an event-loop ratio the two CPUs disagree on, in the columns
    a ratio row of this reference has (the rest from its own RNTuple row at 200)."""
    out = tmp_path_factory.mktemp("refs") / "amd-epyc"
    shutil.copytree(AMD, out)
    text = (out / "ratios.csv").read_text().splitlines(keepends=True)
    ours = pd.read_csv(out / "ratios.csv", comment="#")
    theirs = pd.read_csv(INTEL / "ratios.csv", comment="#")
    loop = theirs[(theirs.pair == "zstd") & (theirs.selection == "all")
                  & (theirs.cluster_size == 200)]
    base = ours[(ours.pair == "RNTuple zstd, columnar") & (ours.read == "repeats")]
    rows = []
    for _, r in loop.iterrows():
        like = base[base.quantity == r.quantity]
        if like.empty:
            continue
        row = like.iloc[0].copy()
        for k in ("pair", "ttree", "parquet", "ttree_reader", "parquet_reader", "cluster_size",
                  "selection", "quantity"):
            row[k] = r[k]
        row["compares"] = "event loop vs columnar"
        for k in ("ratio_mean", "ratio_lo", "ratio_hi"):
            row[k] = 1.5 * r[k]
        rows.append(row)
    assert rows
    both = pd.concat([ours, pd.DataFrame(rows)], ignore_index=True)
    (out / "ratios.csv").write_text("".join(x for x in text if x.startswith("#"))
                                    + both.to_csv(index=False))
    return out


@pytest.fixture(scope="module")
def built(amd: Path) -> answer.Answer:
    return answer.build(amd, amd / "metadata", other=INTEL)


def test_a_disagreeing_event_loop_ratio_is_said_with_both_numbers(built: answer.Answer,
                                                                  amd: Path) -> None:
    cpu = [c for c in built.facts.claims if c.topic == "cpu"]
    loop = next(c for c in cpu if c.text.startswith("The event-loop ratio depends on the CPU"))
    row = loop.source.row
    assert set(row) == {"pair", "quantity", "selection", "read", "cluster_size"}
    # both references' own rows of ratios.csv, in the words the answer writes numbers with
    for ref, cpu in ((amd, "AMD EPYC"), (INTEL, "Intel(R) Xeon(R) Processor")):
        r = pd.read_csv(ref / "ratios.csv", comment="#")
        if "read" not in r:  # a reference from before first reads and repeats were apart
            r = r.assign(read="repeats")
        x = r[(r.pair == row["pair"]) & (r.quantity == row["quantity"])
              & (r.selection == row["selection"]) & (r.cluster_size == row["cluster_size"])
              & (r.read == row["read"])].iloc[0]
        assert f"{cpus._oriented(row['quantity'], x.ratio_mean, x.ratio_lo, x.ratio_hi)} on " \
               f"{cpu}" in loop.text


def test_the_count_of_agreeing_ratios_closes_it(built: answer.Answer) -> None:
    last = [c for c in built.facts.claims if c.topic == "cpu"][-1]
    disagree = len([c for c in built.facts.claims if c.topic == "cpu"]) - 1
    assert f"; {int(last.value)} of them agree" in last.text
    measured = int(last.text.split(" measured ")[1].split()[0])
    assert measured - int(last.value) == disagree


def test_compared_the_one_cpu_gap_is_gone_and_rendered(built: answer.Answer, amd: Path,
                                                       tmp_path: Path) -> None:
    assert not any(g.text.startswith("One CPU model") for g in built.facts.gaps)
    answer.write(amd, tmp_path, amd / "metadata", other=INTEL)
    assert "**On another CPU**" in (tmp_path / "answer.md").read_text()


def test_without_another_run_nothing_is_compared() -> None:
    alone = answer.build(AMD, AMD / "metadata")
    assert not [c for c in alone.facts.claims if c.topic == "cpu"]
    assert any(g.text.startswith("One CPU model") for g in alone.facts.gaps)


def test_another_run_without_ratios_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"no ratios\.csv"):
        answer.build(AMD, other=tmp_path)
