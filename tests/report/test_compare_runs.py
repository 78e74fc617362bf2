"""Two runs' ratios side by side (hepfmt.report.compare_runs): agreement, overlap and factor on
hand-made rows, tables with and without a ``read`` column, and two runs' directories (the
committed reference against a changed copy of it)."""

from __future__ import annotations

import json
import math
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from hepfmt.cli import main
from hepfmt.errors import InputError
from hepfmt.report.compare_runs import (
    agreement,
    compare,
    compare_runs,
    consistent,
    expected,
    factor_summary,
    lines,
    normalize,
    two_passes,
)

#: A committed reference run (one per CPU model, results/reference/<cpu>/).
REFERENCE = next(d for d in sorted((Path(__file__).resolve().parents[2] / "results"
                                    / "reference").iterdir()) if (d / "ratios.csv").is_file())
NAN = math.nan


def _row(quantity: str, value: float, lo: float, hi: float, read: str = "repeats",
         cluster: int = 1000, selection: str = "ten") -> dict:
    return {"pair": "zstd", "sample": "dy", "cluster_size": cluster, "threads": 1,
            "selection": selection, "read": read, "quantity": quantity, "ratio": value,
            "ratio_lo": lo, "ratio_hi": hi, "coverage": 0.9}


def test_each_inside_and_consistent() -> None:
    a = pd.DataFrame([_row("rate", 1.00, 0.95, 1.05),         # both inside
                      _row("throughput", 1.00, 0.90, 1.10),   # b in a only, yet consistent
                      _row("file_time", 1.00, 0.99, 1.01)])   # apart, no overlap
    b = pd.DataFrame([_row("rate", 1.02, 0.97, 1.06),
                      _row("throughput", 1.08, 1.05, 1.20),
                      _row("file_time", 1.10, 1.05, 1.15)])
    t = compare(a, b).set_index("quantity")
    cols = ["a_in_b", "b_in_a", "each_inside", "agree", "overlap"]
    assert t.loc["rate", cols].tolist() == [True, True, True, True, True]
    assert t.loc["throughput", cols].tolist() == [False, True, False, True, True]
    assert t.loc["file_time", cols].tolist() == [False, False, False, False, False]
    assert t.loc["file_time", "factor"] == pytest.approx(1.10)
    assert agreement(t) == (2, 3) and agreement(t, "each_inside") == (1, 3)


def test_consistent_takes_the_half_widths_facing_each_other() -> None:
    # a's upper half-width (10%) and b's lower one (10%) face each other: sqrt(2) x 10% apart
    assert consistent(1.0, 0.5, 1.1, 1.14, 1.026, 3.0)
    assert not consistent(1.0, 0.5, 1.1, 1.16, 1.044, 3.0)
    # the other side: b below a
    assert consistent(1.14, 1.026, 3.0, 1.0, 0.5, 1.1)
    assert not consistent(1.0, 0.99, 1.01, 0.0, 0.0, 0.0)  # not a positive ratio


def test_expected_rates_when_nothing_changed() -> None:
    """Identical runs: each-inside fails often with exact 95% intervals (the second median is
    noisy too), the consistency test rarely; eight rounds' 99% interval passes each-inside
    more often than six rounds' 97%."""
    six, eight = expected([(6, 6)], trials=1500), expected([(8, 8)], trials=1500)
    assert 0.75 < six["each_inside"] < 0.9 and six["consistent"] > 0.95
    assert eight["each_inside"] > six["each_inside"]
    assert math.isnan(expected([])["consistent"])


def test_a_nan_interval_is_na_and_not_counted() -> None:
    a = pd.DataFrame([_row("rate", 1.0, 0.9, 1.1), _row("throughput", NAN, NAN, NAN),
                      _row("file_time", 2.0, NAN, NAN)])
    b = pd.DataFrame([_row("rate", 1.0, 0.9, 1.1), _row("throughput", NAN, NAN, NAN),
                      _row("file_time", 2.0, 1.9, 2.1)])
    t = compare(a, b)
    assert agreement(t) == (1, 1)
    out = lines(t, ("run 1", "run 2"))
    assert out[0].split()[:5] == ["pair", "cluster", "selection", "read", "quantity"]
    (thr,) = [x for x in out if " throughput " in x]
    assert thr.split()[-3:] == ["n/a", "n/a", "n/a"] and "n/a [n/a]" in thr
    (ft,) = [x for x in out if " file_time " in x]
    assert "2.000 [n/a]" in ft and "2.000 [1.900, 2.100] 90%" in ft


def test_two_passes_prints_every_ratio_then_the_agreement() -> None:
    a = [_row("rate", 1.0, 0.9, 1.1, read=r) for r in ("first", "repeats")]
    b = [_row("rate", 1.05, 0.95, 1.2, read="first"), _row("rate", 1.3, 1.2, 1.4)]
    out = two_passes(a, b, "idle, CPU x, load: worst other-CPU share 3%")
    assert len(out) == 1 + 2 + 2  # header, one line per ratio, blank, summary
    assert out[1].split()[-1] == "yes" and out[2].split()[-1] == "no"
    assert out[-1] == ("1 of 2 ratios agree (50%: medians consistent with both intervals); "
                       "each median inside the other's interval: 1 of 2 (50%), idle, CPU x, "
                       "load: worst other-CPU share 3%")


def test_ratios_join_by_their_key_not_their_order() -> None:
    a = pd.DataFrame([_row("rate", 1.0, 0.9, 1.1, cluster=c) for c in (200, 1000)])
    b = pd.DataFrame([_row("rate", v, v - 0.1, v + 0.1, cluster=c)
                      for c, v in ((1000, 3.0), (200, 1.0))])
    t = compare(a, b).set_index("cluster_size")
    assert t.loc["200", "agree"] and not t.loc["1000", "agree"]
    assert t.loc["1000", "factor"] == pytest.approx(3.0)


def test_a_table_without_read_holds_repeated_reads() -> None:
    old = pd.DataFrame([{**_row("rate", 1.0, 0.9, 1.1), "ratio_mean": 1.0, "mode": "warm"},
                        {**_row("size", 0.5, 0.4, 0.6), "ratio_mean": 0.5, "mode": NAN,
                         "selection": NAN, "threads": 0}])
    old = old.drop(columns=["read", "ratio"])
    new = pd.DataFrame([_row("rate", 9.0, 8.0, 10.0, read="first"),
                        _row("rate", 1.05, 0.95, 1.1),
                        {**_row("size", 0.5, 0.45, 0.55, read=""), "selection": "",
                         "threads": 0.0}])
    assert normalize(old)["read"].tolist() == ["repeats", ""]
    t = compare(old, new)
    assert len(t) == 2 and t.attrs == {"only_a": 0, "only_b": 1}
    assert t.set_index("quantity")["agree"].to_dict() == {"rate": True, "size": True}


def test_not_one_runs_table_is_refused() -> None:
    dup = pd.DataFrame([_row("rate", 1.0, 0.9, 1.1)] * 2)
    with pytest.raises(InputError, match="share their"):
        compare(dup, dup.iloc[:1])
    with pytest.raises(InputError, match="not a ratios table"):
        compare(pd.DataFrame([{"pair": "x"}]), dup)


def test_factor_summary_per_quantity() -> None:
    a = pd.DataFrame([_row(q, 1.0, 0.9, 1.1, cluster=c) for q in ("rate", "throughput")
                      for c in (200, 1000, 4000)])
    b = pd.DataFrame([_row(q, f, f - 0.1, f + 0.1, cluster=c)
                      for q, fs in (("rate", (1.0, 1.2, 1.4)), ("throughput", (2, 2, 2)))
                      for c, f in zip((200, 1000, 4000), fs, strict=True)])
    rate, thr = factor_summary(compare(a, b))
    assert rate == "rate: median B/A factor 1.200 over 3 ratios; intervals overlap in 2 of 3, " \
                   "consistent in 1 of 3"
    assert thr.startswith("throughput: median B/A factor 2.000 over 3 ratios; "
                          "intervals overlap in 0 of 3")


@pytest.fixture
def other_machine(tmp_path: Path) -> Path:
    """The reference's tables as another machine might have measured them: every timed ratio
    and its interval half as high again (far enough that the reference's narrowest intervals
    part, its widest still overlap), the sizes unchanged, another CPU."""
    d = tmp_path / "other"
    d.mkdir()
    t = pd.read_csv(REFERENCE / "ratios.csv", comment="#")
    timed = t["quantity"] != "size"
    for c in ("ratio_mean", "ratio_lo", "ratio_hi"):
        t.loc[timed, c] *= 1.5
    t.to_csv(d / "ratios.csv", index=False)
    prov = json.loads((REFERENCE / "provenance.json").read_text())
    prov["machine"]["cpu"] = "Other CPU 9000"
    (d / "provenance.json").write_text(json.dumps(prov))
    return d


def test_compare_runs_of_the_reference_and_another_machine(other_machine: Path) -> None:
    out = compare_runs(REFERENCE, other_machine)
    cpu = json.loads((REFERENCE / "provenance.json").read_text())["machine"]["cpu"]
    assert out[0] == f"A: {REFERENCE} ({cpu})" and out[1].endswith("(Other CPU 9000)")
    summary = {x.split(":")[0]: x for x in out if re.match(r"\w+: median B/A factor", x)}
    assert set(summary) == {"rate", "throughput", "file_time", "size"}
    assert "factor 1.500 " in summary["rate"] and "factor 1.000 " in summary["size"]
    agree, n = (int(x) for x in re.match(r"(\d+) of (\d+) ratios agree", out[-1]).groups())
    assert 0 < agree < n and out[-1].endswith(f"between {cpu} (A) and Other CPU 9000 (B)")


def test_compare_runs_reads_a_results_directory(other_machine: Path, tmp_path: Path,
                                                capsys) -> None:
    """``results/``: the table under tables/, the provenance beside tables/."""
    results = tmp_path / "results"
    (results / "tables").mkdir(parents=True)
    shutil.copy(REFERENCE / "ratios.csv", results / "tables" / "ratios.csv")
    shutil.copy(REFERENCE / "provenance.json", results / "provenance.json")
    assert main(["bench", "compare-runs", str(results), str(REFERENCE)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    agree, n = (int(x) for x in re.match(r"(\d+) of (\d+) ratios agree", last).groups())
    assert agree == n > 0  # a run agrees with itself wherever it has an interval


def test_compare_runs_without_a_table_is_one_line(tmp_path: Path, capsys) -> None:
    assert main(["bench", "compare-runs", str(tmp_path), str(REFERENCE)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no ratios.csv" in err and "make run" in err


def test_a_table_without_provenance_names_its_rows_cpus(tmp_path: Path) -> None:
    """The paired tables' layout: the pair's variants as keys (joined on, not shown) and each
    row's CPU model, which names the run where no provenance.json lies beside it."""
    rows = [{**_row("rate", 1.0, 0.9, 1.1), "ttree": "zstd-5", "parquet": "zstd-3",
             "mode": "warm", "cpu": "CPU X"}]
    t = pd.DataFrame(rows).rename(columns={"ratio": "ratio_mean"})
    t.to_csv(tmp_path / "ratios.csv", index=False)
    out = compare_runs(tmp_path, tmp_path)
    assert out[0] == f"A: {tmp_path} (CPU X)"
    assert "ttree" not in out[3].split() and "parquet" not in out[3].split()
    assert out[-1] == ("1 of 1 ratios agree (100%: medians consistent with both intervals); "
                       "each median inside the other's interval: 1 of 1 (100%), between CPU X "
                       "(A) and CPU X (B)")
