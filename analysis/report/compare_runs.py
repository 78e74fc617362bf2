"""Two runs' ROOT / Parquet ratios side by side: does a ratio measured once say what the same
ratio measured again says?

A ratio's interval claims where its true value lies. If that claim holds, a second run of the
same pairing (later on the same machine: ``hepfmt bench reproduce``; or on another machine:
``hepfmt bench compare-runs``) gives a median inside the first run's interval, and the first's
lies inside the second's: the two *agree*. Where they do not, the interval understated what
moves between runs (issue 24). Between machines the ratios may differ for real (another CPU,
another cache size); there the *factor* between them and whether the intervals overlap say how
far a ratio carries from one machine to another.

The ratios compared are those :mod:`analysis.paired` computed (a record's
``summary["ratios"]``, or the ``ratios.csv`` the tables were written with): nothing is
recomputed here. A ratio whose interval is not a number (a throughput of a file with one chunk:
no steady rate) is shown as ``n/a`` and not counted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from analysis.errors import InputError

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
        out[k] = out[k].map(_key_text)
    out = out.rename(columns={value: "value", "ratio_lo": "lo", "ratio_hi": "hi"})
    if "coverage" not in out.columns:
        out["coverage"] = math.nan
    return out[[*keys, "value", "lo", "hi", "coverage"]]


def _key_text(v: object) -> str:
    """One key cell as text, so that 1000, 1000.0 and "1000" name the same cluster size and an
    empty cell (a size ratio's mode) joins an empty cell."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _inside(x: pd.Series, lo: pd.Series, hi: pd.Series) -> pd.Series:
    return (lo <= x) & (x <= hi)


def compare(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """Ratio by ratio (the key columns both runs have): both values and intervals, whether each
    value lies inside the other's interval (``agree``: both do), whether the intervals
    overlap, and the factor ``b / a``. ``measurable`` is False where either interval is not a
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
    m["agree"] = m["a_in_b"] & m["b_in_a"]
    m["overlap"] = (m["lo_a"] <= m["hi_b"]) & (m["lo_b"] <= m["hi_a"])
    m["factor"] = m["value_b"] / m["value_a"]
    m.attrs["only_a"] = len(a) - len(m)
    m.attrs["only_b"] = len(b) - len(m)
    return m


def agreement(table: pd.DataFrame) -> tuple[int, int]:
    """(ratios that agree, ratios with both intervals)."""
    measurable = table[table["measurable"]]
    return int(measurable["agree"].sum()), len(measurable)


def agreement_text(table: pd.DataFrame) -> str:
    agree, n = agreement(table)
    share = f"{agree / n:.0%}" if n else "n/a"
    return f"{agree} of {n} ratios agree ({share})"


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


def _aligned(rows: Sequence[Sequence[str]]) -> list[str]:
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
            f"{a} in {b}", f"{b} in {a}", "agree"]
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
    return _aligned(rows)


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
                   f"intervals overlap in {overlap} of {n}, agree in {agree} of {n}")
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
        return df, str(json.loads(prov.read_text())["machine"]["cpu"])
    except (ValueError, KeyError, TypeError):
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
