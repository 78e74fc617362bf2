"""The ROOT / Parquet ratio in CPU time (user + system) and in user time beside the wall-time
ratio (hepfmt.paired.cpu_columns), tabulated into ``ratios.csv`` and ``pairs.csv``, and the
answer's sentence on what a ratio is made of: from paired measurements made by hand whose split
is known, and from ones made before the split (empty columns, the answer's gap kept)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from paired_records import PROV, plan, record, write

from hepfmt import paired
from hepfmt.report import answer
from hepfmt.report.tables import tabulate

N_EVENTS, CLUSTER, FILE_EVENTS = 4000, 1000, 2_000_000
#: Each side's user, system share of its wall time (the rest waiting).
SPLIT = {"ttree": (0.90, 0.05), "parquet": (0.50, 0.45)}
#: ROOT's steady rate in each round's first pair and in its repeat pairs: six rounds, whose
#: widest interval covers 96.9% (three would give 75%: too little for a claim)
FIRST_RATES = (18e3, 20e3, 22e3, 19e3, 21e3, 20e3)
REPEAT_RATES = ((19e3, 20e3), (21e3, 20e3), (19.5e3, 20.5e3)) * 2


def _pair(root_rate: float) -> tuple:
    return ((0.1, 0.4, root_rate), (0.1, 0.1, 10e3))


def _record(split: bool, rounds: int = 6) -> dict:
    doc = record([_pair(r) for r in FIRST_RATES[:rounds]],
                 [[_pair(r) for r in rates] for rates in REPEAT_RATES[:rounds]],
                 cluster=CLUSTER, n_events=N_EVENTS)
    if not split:  # a record from before the CPU split
        return doc
    doc = {k: v for k, v in doc.items() if k != "summary"}
    for sel in doc["selections"]:
        for rnd in sel["rounds"]:
            for p in [rnd["first"], *rnd["repeats"]]:
                for side, (user, system) in SPLIT.items():
                    wall = p[side]["wall_s"]
                    p[side] = {**p[side], "user_s": user * wall, "sys_s": system * wall,
                               "wait_s": (1 - user - system) * wall, "majflt": 0}
    return {**doc, "summary": paired.summarize_pair(doc)}


def _sizes(tmp: Path) -> list[Path]:
    out = []
    for fmt, nbytes in (("ttree", 1200), ("parquet", 1000)):
        p = tmp / f"size-{fmt}.json"
        p.write_text(json.dumps({"sample": "S", "process": "p", "format": fmt,
                                 "variant": "none", "cluster_size": CLUSTER,
                                 "n_events": N_EVENTS, "provenance": PROV, "file_bytes": nbytes,
                                 "naive_bytes": 1000.0, "normalized_size": nbytes / 1000}))
        out.append(p)
    return out


def _tables(tmp: Path, split: bool, rounds: int = 6) -> Path:
    out = tmp / "tables"
    tabulate(plan(FILE_EVENTS, ("TTree", "Parquet")), _sizes(tmp), [], out,
             tmp / "provenance.json", [write(tmp / "pairs", _record(split, rounds))])
    return out


def _csv(tables: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(tables / f"{name}.csv", comment="#")


@pytest.mark.parametrize("read", paired.READS)
def test_cpu_and_user_ratios_beside_the_wall_ratio(tmp_path: Path, read: str) -> None:
    t = _csv(_tables(tmp_path, True), "ratios")
    (_, rate), = t[(t.quantity == "rate") & (t.read == read)].iterrows()
    # both sides spend 95% of their wall time on the CPU: the CPU ratio is the wall ratio;
    # ROOT's user time is 0.9 of its wall, Parquet's 0.5: the user ratio is 5/9 of it
    for part in ("ratio", "lo", "hi"):
        wall = rate[f"ratio_{'mean' if part == 'ratio' else part}"]
        assert rate[f"cpu_{part}"] == pytest.approx(wall)
        assert rate[f"user_{part}"] == pytest.approx(wall * 0.5 / 0.9)
    assert rate.sys_share_ttree == pytest.approx(0.05 / 0.95)
    assert rate.sys_share_parquet == pytest.approx(0.45 / 0.95)
    # the split is of the whole read: only rate rows carry it
    assert t[t.quantity != "rate"].cpu_ratio.isna().all()


def test_pairs_table_has_each_sides_split(tmp_path: Path) -> None:
    p = _csv(_tables(tmp_path, True), "pairs")
    side = p[(p.side == "parquet") & (p.read == "first")].iloc[0]
    assert side.user_s == pytest.approx(0.5 * side.median_s)
    assert side.sys_s == pytest.approx(0.45 * side.median_s)
    assert side.wait_s == pytest.approx(0.05 * side.median_s)
    assert side.majflt == 0


def test_records_from_before_the_split_tabulate_without_it(tmp_path: Path) -> None:
    tables = _tables(tmp_path, False)
    assert "cpu_ratio" not in _csv(tables, "ratios").columns  # the table it always had
    p = _csv(tables, "pairs")
    assert p[["user_s", "sys_s", "wait_s"]].isna().all(axis=None)
    text = answer.build(tables).facts
    assert any("user CPU time" in g.text for g in text.gaps)


def test_the_answer_says_what_the_ratio_is_made_of(tmp_path: Path) -> None:
    tables = _tables(tmp_path, True)
    built = answer.build(tables)
    assert not any("user CPU time" in g.text for g in built.facts.gaps)
    first = next(c for c in built.facts.claims if c.source.row.get("read") == "first")
    assert "in wall time" in first.text and "in CPU time (user + system)" in first.text
    assert "in user time" in first.text
    # wall [0.83, 0.88] against user 5/9 of it: apart, so the difference is named, on the
    # side that loses by wall more than by user time, with its seconds (Parquet: 0.6 s wall)
    assert "the difference is kernel time on the Parquet side (0.270 s of 0.600 s)" \
        in first.text


def test_no_difference_is_named_below_the_claim_coverage(tmp_path: Path) -> None:
    built = answer.build(_tables(tmp_path, True, rounds=3))  # 75% intervals
    first = next(c for c in built.facts.claims if c.source.row.get("read") == "first")
    assert "in user time" in first.text and "the difference is" not in first.text
    assert "no claim on the difference at 75% coverage" in first.text


def test_without_the_split_the_answer_is_unchanged(tmp_path: Path) -> None:
    tables = _tables(tmp_path, False)
    built = answer.build(tables)
    assert not any("CPU time" in c.text for c in built.facts.claims)
