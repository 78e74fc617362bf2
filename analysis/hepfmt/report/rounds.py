"""``hepfmt bench rounds``: how far apart a pair job's rounds (fresh process pairs) land,
against what their repeat pairs alone would let them (:func:`hepfmt.paired.round_spread`).
It is the measurement behind taking every read interval over rounds, not pairs
(docs/how-it-measures.md)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from hepfmt.errors import InputError
from hepfmt.paired import round_spread
from hepfmt.records import PairRecord, read_json
from hepfmt.report.compare_runs import aligned


def records(root: str | Path) -> list[dict]:
    """Every pair record under ``root`` (a results directory, its ``pairs/``, or one file),
    each loaded and checked as a :class:`PairRecord`; a JSON document of another kind is
    passed over, one that is no JSON at all is an error naming it."""
    p = Path(root)
    files = [p] if p.is_file() else sorted(p.rglob("*.json"))
    docs = []
    for f in files:
        doc = read_json(f, "pair record")
        if isinstance(doc, dict) and "selections" in doc and "pair" in doc:
            docs.append(PairRecord.load(f).as_dict())
    if not docs:
        raise InputError(str(p), "no pair records in it (run make run first)")
    return docs


def _n(v: float) -> str:
    return "n/a" if not math.isfinite(v) else f"{v:.3f}"


def report(root: str | Path) -> list[str]:
    """One line per pair job and selection, then the median factor over those with one."""
    rows = [r for d in records(root) for r in round_spread(d)]
    head = ["pair", "cluster", "selection", "rounds", "pairs/round", "within-round sd",
            "round medians' sd", "expected from within", "factor"]
    lines = aligned([head] + [[str(r["pair"]), str(r["cluster_size"]), str(r["selection"]),
                               str(r["rounds"]), str(r["pairs_per_round"]),
                               _n(r["within_sd"]), _n(r["between_sd"]),
                               _n(r["expected_sd"]), _n(r["factor"])] for r in rows])
    factors = [r["factor"] for r in rows if math.isfinite(r["factor"])]
    lines += ["", "sd: of ln(Parquet wall time / ROOT wall time), repeat pairs; factor = round "
              "medians' sd / expected from within (1: rounds differ by nothing their pairs do "
              "not)",
              f"median factor {np.median(factors):.2f} over {len(factors)} jobs; above 1 in "
              f"{sum(f > 1 for f in factors)}" if factors else "no job with two rounds of "
              "two or more repeat pairs"]
    return lines
