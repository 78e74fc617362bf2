"""Two runs' ROOT / Parquet ratios side by side: does a ratio measured once say what the same
ratio measured again says?

A ratio's interval claims where its true value lies. If that claim holds, a second run of the
same pairing (later on the same machine: ``hepfmt bench reproduce``; or on another machine:
``hepfmt bench compare-runs``) gives a median close to the first's. Two tests, both printed:

* *each inside*: each run's median lies inside the other's interval (issue 24's wording). Even
  when nothing changed between the runs this fails for some ratios, since the second median is
  itself noisy: with 95% intervals of the median it holds for only ~83% of ratios (six rounds),
  79% (twelve), 92% (eight, whose narrowest 95% interval is 99%). :func:`expected` simulates the
  rate for the rounds each ratio rests on, so a shortfall can be read against it;
* *consistent* (``agree``): the two medians differ by no more than their intervals' combined
  half-widths, ``|ln a - ln b| <= sqrt(h_a^2 + h_b^2)`` with each half-width taken on the side
  facing the other median: the two-sample test a 95% interval supports, which a sound interval
  passes ~98% of the time when nothing changed (:func:`expected`). A median inside the other's
  interval is always consistent.

Where a test fails more often than :func:`expected` says, the intervals understated what moves
between runs (issue 24). Between machines the ratios may differ for real (another CPU,
another cache size); there the *factor* between them and whether the intervals overlap say how
far a ratio carries from one machine to another.

The ratios compared are those :mod:`hepfmt.paired` computed (a record's
``summary["ratios"]``, or the ``ratios.csv`` the tables were written with): nothing is
recomputed here. A ratio whose interval is not a number (a throughput of a file with one chunk:
no steady rate) is shown as ``n/a`` and not counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from hepfmt.errors import InputError
from hepfmt.records import read_json
from hepfmt.stats import median_interval

#: What names one ratio, in the order the lines show it; a table has some of these columns.
KEYS = ("sample", "pair", "ttree", "parquet", "cluster_size", "selection", "read", "quantity",
        "mode", "threads")
#: Always shown, even where every ratio has the same value.
SHOWN = ("pair", "cluster_size", "selection", "read", "quantity")
#: Joined on, never shown: the pair's variants (its label already names them).
HIDDEN = ("ttree", "parquet")
#: A ratio's value: the paired median (a record's row), else the table's headline value.
VALUE_COLUMNS = ("ratio", "ratio_mean")
#: What a table without a ``read`` column measured: repeated reads in a warm process.
READ_WHEN_ABSENT = "repeats"
_NOT_A_READ = {"size"}  # quantities measured once, without a read


def normalize(table: pd.DataFrame, where: str = "table") -> pd.DataFrame:
    """A run's ratios as key columns plus ``value``, ``lo``, ``hi``, ``coverage``: a record's
    rows and a ``ratios.csv`` alike. A table that predates the ``read`` column held repeated
    reads only, so it is given that ``read`` (size ratios: none)."""
    value = next((c for c in VALUE_COLUMNS if c in table.columns), None)
    if value is None or not {"ratio_lo", "ratio_hi", "quantity"} <= set(table.columns):
        raise InputError(where, "not a ratios table (needs quantity, ratio or ratio_mean, "
                                "ratio_lo, ratio_hi)")
    out = table.copy()
    if "read" not in out.columns:
        out["read"] = [
            "" if q in _NOT_A_READ else READ_WHEN_ABSENT for q in out["quantity"]]
    keys = [k for k in KEYS if k in out.columns]
    for k in keys:
        out[k] = out[k].map(key_text)
    out = out.rename(columns={value: "value", "ratio_lo": "lo", "ratio_hi": "hi"})
    for c in ("coverage", "n_over"):
        if c not in out.columns:
            out[c] = math.nan
    return out[[*keys, "value", "lo", "hi", "coverage", "n_over"]]


def key_text(v: object) -> str:
    """One key cell as text, so that 1000, 1000.0 and "1000" name the same cluster size and an
    empty cell (a size ratio's mode) joins an empty cell."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _inside(x: pd.Series, lo: pd.Series, hi: pd.Series) -> pd.Series:
    return (lo <= x) & (x <= hi)


def consistent(a: float, lo_a: float, hi_a: float, b: float, lo_b: float, hi_b: float
               ) -> bool:
    """Whether two positive medians differ by no more than their intervals' half-widths facing
    each other, combined in quadrature, on a log scale (ratios multiply)."""
    if min(a, lo_a, hi_a, b, lo_b, hi_b) <= 0:
        return False
    h_a, h_b = (math.log(hi_a / a), math.log(b / lo_b)) if b >= a else \
        (math.log(a / lo_a), math.log(hi_b / b))
    return abs(math.log(a / b)) <= math.hypot(h_a, h_b)


def expected(pairs: Sequence[tuple[int, int]], trials: int = 4000, seed: int = 1
             ) -> dict[str, float]:
    """The share of ratios each test passes when nothing changed between the runs: both runs'
    ``n`` values drawn from one distribution (lognormal; *each inside* is distribution-free
    for odd ``n``, since it depends on ranks only), intervals by
    :func:`hepfmt.stats.median_interval`, averaged over ``pairs`` of (``n`` in run A, in
    run B)."""
    rng = np.random.default_rng(seed)
    rates: dict[tuple[int, int], tuple[float, float]] = {}
    for na, nb in set(pairs):
        each = cons = 0
        for _ in range(trials):
            xa, xb = rng.lognormal(0, 0.1, na), rng.lognormal(0, 0.1, nb)
            ia, ib = median_interval(list(xa)), median_interval(list(xb))
            ma, mb = float(np.median(xa)), float(np.median(xb))
            each += (ib["lo_s"] <= ma <= ib["hi_s"]) and (ia["lo_s"] <= mb <= ia["hi_s"])
            cons += consistent(ma, ia["lo_s"], ia["hi_s"], mb, ib["lo_s"], ib["hi_s"])
        rates[(na, nb)] = (each / trials, cons / trials)
    if not pairs:
        return {"each_inside": math.nan, "consistent": math.nan}
    return {"each_inside": sum(rates[p][0] for p in pairs) / len(pairs),
            "consistent": sum(rates[p][1] for p in pairs) / len(pairs)}


def compare(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Ratio by ratio (the key columns both runs have): both values and intervals, whether each
    value lies inside the other's interval (``each_inside``: both do), whether the two are
    consistent (``agree``, :func:`consistent`), whether the intervals overlap, and the factor
    ``b / a``. ``measurable`` is False where either interval is not a
    number; those rows say nothing about agreement."""
    a, b = normalize(a, "run A"), normalize(b, "run B")
    keys = [k for k in KEYS if k in a.columns and k in b.columns]
    for name, t in (("run A", a), ("run B", b)):
        dup = t.duplicated(keys)
        if dup.any():
            raise InputError(name, f"{int(dup.sum())} ratios share their "
                                   f"{', '.join(keys)} with another: not one run's table")
    m = a.merge(b, on=keys, suffixes=("_a", "_b"))
    m["measurable"] = m[["lo_a", "hi_a", "lo_b", "hi_b"]].notna().all(axis=1)
    m["a_in_b"] = _inside(m["value_a"], m["lo_b"], m["hi_b"])
    m["b_in_a"] = _inside(m["value_b"], m["lo_a"], m["hi_a"])
    m["each_inside"] = m["a_in_b"] & m["b_in_a"]
    m["agree"] = [bool(ok) and consistent(*v) for ok, *v in zip(
        m["measurable"], m["value_a"], m["lo_a"], m["hi_a"], m["value_b"], m["lo_b"],
        m["hi_b"], strict=True)]
    m["overlap"] = (m["lo_a"] <= m["hi_b"]) & (m["lo_b"] <= m["hi_a"])
    m["factor"] = m["value_b"] / m["value_a"]
    m.attrs["only_a"] = len(a) - len(m)
    m.attrs["only_b"] = len(b) - len(m)
    return m


def agreement(table: pd.DataFrame, test: str = "agree") -> tuple[int, int]:
    """(ratios that pass ``test``: ``agree`` or ``each_inside``, ratios with both intervals)."""
    measurable = table[table["measurable"]]
    return int(measurable[test].sum()), len(measurable)


def _share(k: int, n: int) -> str:
    return f"{k / n:.0%}" if n else "n/a"


def agreement_text(table: pd.DataFrame) -> str:
    """Both tests' counts, each with what it would be if nothing changed between the runs
    (where the rounds each interval rests on are known)."""
    agree, n = agreement(table)
    inside, _ = agreement(table, "each_inside")
    m = table[table["measurable"]]
    known = m[m["n_over_a"].notna() & m["n_over_b"].notna()]
    exp = expected([(int(x), int(y)) for x, y in zip(known["n_over_a"], known["n_over_b"],
                                                      strict=True)]) if len(known) else None

    def null(test: str) -> str:
        return f"; {exp[test]:.0%} expected if nothing changed" if exp else ""

    return (f"{agree} of {n} ratios agree ({_share(agree, n)}: medians consistent with both "
            f"intervals{null('consistent')}); each median inside the other's interval: "
            f"{inside} of {n} ({_share(inside, n)}{null('each_inside')})")


def _number(v: float) -> str:
    return "n/a" if pd.isna(v) else f"{v:.3f}"


def _estimate(row: pd.Series, side: str) -> str:
    """``value [lo, hi] coverage``, or the value and n/a where the interval is not a number."""
    v, lo, hi, cov = (row[f"{k}_{side}"] for k in ("value", "lo", "hi", "coverage"))
    if pd.isna(lo) or pd.isna(hi):
        return f"{_number(v)} [n/a]"
    return f"{_number(v)} [{lo:.3f}, {hi:.3f}] {_coverage(cov)}"


def _coverage(c: float) -> str:
    return "?" if pd.isna(c) else f"{c:.0%}"


def _yes(flag: bool, measurable: bool) -> str:
    if not measurable:
        return "n/a"
    return "yes" if flag else "no"


def _label_columns(table: pd.DataFrame) -> list[str]:
    """The key columns worth a column: the ones that name a ratio, and any other that varies."""
    return [k for k in KEYS if k in table.columns and k not in HIDDEN
            and (k in SHOWN or table[k].nunique() > 1)]


def aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in rows]


def lines(table: pd.DataFrame, names: tuple[str, str] = ("A", "B"),
          factor: bool = False) -> list[str]:
    """One aligned line per ratio: its key, both estimates, each value in the other's
    interval, agreement (and, between machines, the factor and whether the intervals
    overlap)."""
    a, b = names
    label = _label_columns(table)
    head = [*(k.replace("cluster_size", "cluster") for k in label), a, b,
            f"{a} in {b}", f"{b} in {a}", "consistent"]
    if factor:
        head += [f"{b}/{a}", "overlap"]
    rows = [head]
    for _, r in table.iterrows():
        ok = bool(r["measurable"])
        row = [*(str(r[k]) for k in label), _estimate(r, "a"), _estimate(r, "b"),
               _yes(r["a_in_b"], ok), _yes(r["b_in_a"], ok), _yes(r["agree"], ok)]
        if factor:
            row += [_number(r["factor"]), _yes(r["overlap"], ok)]
        rows.append(row)
    return aligned(rows)


def factor_summary(table: pd.DataFrame, names: tuple[str, str] = ("A", "B")) -> list[str]:
    """Per quantity: the median factor between the runs and how many intervals overlap and
    agree, over the ratios measured in both."""
    a, b = names
    out = []
    for q, t in table.groupby("quantity", sort=False):
        f = t["factor"][t["factor"].notna() & (t["factor"] > 0)]
        agree, n = agreement(t)
        overlap = int(t[t["measurable"]]["overlap"].sum())
        med = f"{f.median():.3f}" if len(f) else "n/a"
        out.append(f"{q}: median {b}/{a} factor {med} over {len(f)} ratios; "
                   f"intervals overlap in {overlap} of {n}, consistent in {agree} of {n}")
    return out


def two_passes(first: list[dict], second: list[dict], conditions: str) -> list[str]:
    """``hepfmt bench reproduce``'s report: every ratio of both passes, then one line: how many
    agree, and the conditions they were measured in."""
    table = compare(pd.DataFrame(first), pd.DataFrame(second))
    return [*lines(table, ("run 1", "run 2")), "", f"{agreement_text(table)}, {conditions}"]


# ---- two runs' tables on disk (two machines) -------------------------------------------------


def _find(directory: Path, name: str, where: Sequence[str]) -> Path | None:
    for sub in where:
        p = directory / sub / name
        if p.is_file():
            return p
    return None


def load_run(directory: str | Path) -> tuple[pd.DataFrame, str]:
    """One run's ratios and the CPU it ran on: ``DIR/ratios.csv`` (a reference directory),
    ``DIR/tables/ratios.csv`` (a results directory) with ``provenance.json`` next to the table
    or one directory up (where ``make run`` writes it)."""
    d = Path(directory)
    table = _find(d, "ratios.csv", (".", "tables"))
    if table is None:
        raise InputError(str(d), "no ratios.csv in it or in its tables/ (run make run first)")
    try:
        df = pd.read_csv(table, comment="#")
    except (ValueError, pd.errors.ParserError) as exc:
        raise InputError(str(table), f"not a CSV table: {exc}") from None
    prov = _find(table.parent, "provenance.json", (".", ".."))
    if prov is None:  # the table's own per-row CPU models, where it has them
        cpus = sorted(df["cpu"].dropna().astype(str).unique()) if "cpu" in df.columns else []
        return df, " + ".join(cpus) or "unknown CPU"
    try:
        return df, str(read_json(prov, "provenance record")["machine"]["cpu"])
    except (KeyError, TypeError):
        raise InputError(str(prov), "not a provenance record (no machine.cpu)") from None


def compare_runs(dir_a: str | Path, dir_b: str | Path) -> list[str]:
    """``hepfmt bench compare-runs``: every ratio of both runs side by side, then per quantity
    the factor between the machines."""
    (ta, cpu_a), (tb, cpu_b) = load_run(dir_a), load_run(dir_b)
    table = compare(ta, tb)
    out = [f"A: {dir_a} ({cpu_a})", f"B: {dir_b} ({cpu_b})", ""]
    out += lines(table, factor=True)
    out.append("")
    out += factor_summary(table)
    skipped = [f"{n} only in {s}" for s, n in (("A", table.attrs["only_a"]),
                                                 ("B", table.attrs["only_b"])) if n]
    out.append(f"{agreement_text(table)}, between {cpu_a} (A) and {cpu_b} (B)"
               + (f"; ratios {', '.join(skipped)}" if skipped else ""))
    return out
