"""Whether the answer's ratios hold on another CPU: each stated speed ratio set against the same
ratio of another run's tables (another reference, ``hepfmt answer --other-reference DIR``).

Issue 40 found the event-loop pairings move 1.3-2.6× between an AMD EPYC and an Intel Xeon
while the columnar ones agree; an answer of one CPU that says nothing of it reads as if its
event-loop ratios held everywhere. The comparison is :mod:`hepfmt.report.compare_runs`' own
(``hepfmt bench compare-runs``: two medians agree when they differ by no more than their
intervals allow); here only its verdict on the ratios the answer states is turned into words,
each with both runs' numbers, never typed.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from hepfmt.report import compare_runs, direction
from hepfmt.report.answer import facts as f
from hepfmt.report.answer import wording as w

#: The columns a stated ratio is matched on between the two runs.
_MATCH = ("pair", "cluster_size", "selection", "read", "quantity")


def _kind(compares: str) -> str:
    return "event-loop" if compares == "event loop vs columnar" else "columnar"


def _oriented(q: str, v: float, lo: float, hi: float) -> str:
    s, a, b = direction.speed(q, v, lo, hi)
    return f"{w.number(s)}× {w.interval(a, b)}"


def _stated(compared: pd.DataFrame, speeds: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``compared`` (:func:`compare_runs.compare`) the answer states, with what
    their pairing compares."""
    keys = speeds[[*_MATCH, "compares"]].copy()
    for k in _MATCH:
        keys[k] = keys[k].map(compare_runs.key_text)
    return compared.merge(keys, on=list(_MATCH))


def claims(ratios: pd.DataFrame, speeds: pd.DataFrame, cpu: str, other: str | Path
           ) -> list[f.Claim]:
    """Per stated speed ratio that the other run (``other``: a reference or results
    directory) measured and whose two medians disagree, a sentence with both numbers; then
    how many of the stated ratios agree. ``speeds``: the stated rows (:func:`.facts.speed_rows`
    cut to those the answer states)."""
    theirs, other_cpu = compare_runs.load_run(other)
    # named by its directory alone: the same words wherever the answer is written from
    named = Path(other).resolve().name
    both = _stated(compare_runs.compare(ratios, theirs), speeds)
    stated = both[both.measurable]
    out = []
    for x in stated[~stated.agree].itertuples():
        n = int(x.cluster_size)
        out.append(f.Claim(
            "cpu", f"The {_kind(x.compares)} ratio depends on the CPU ({x.pair}, "
                   f"{w.events(n)} clusters, selection {x.selection}, {x.read}, {x.quantity}):"
                   f" {_oriented(x.quantity, x.value_a, x.lo_a, x.hi_a)} on {cpu}, "
                   f"{_oriented(x.quantity, x.value_b, x.lo_b, x.hi_b)} on {other_cpu} "
                   f"(run `{named}`).",
            direction.speed(x.quantity, x.value_a)[0],
            f.Source("ratios.csv", {"pair": x.pair, "quantity": x.quantity,
                                    "selection": x.selection, "read": x.read,
                                    "cluster_size": n}),
            cpu=f"{cpu}; {other_cpu}"))
    if len(stated):
        agree = int(stated.agree.sum())
        out.append(f.Claim(
            "cpu", f"Of the {len(speeds)} speed ratios stated, run `{named}` ({other_cpu}) "
                   f"measured {len(stated)} with an interval; {agree} of them agree with "
                   f"{cpu}'s (medians consistent with both intervals: `hepfmt bench "
                   "compare-runs`).",
            float(agree), f.Source("ratios.csv", {}),
            cpu=f"{cpu}; {other_cpu}"))
    return out


def sibling(ref: str | Path) -> Path | None:
    """Another CPU's reference beside the reference ``ref`` (``results/reference/<cpu>``): the
    first, by name, with a ``ratios.csv``; what a reference's answer is set against (the
    Makefile's ``reference`` target and the test that regenerates the committed answers)."""
    ref = Path(ref).resolve()
    others = sorted(d for d in ref.parent.iterdir()
                    if d.is_dir() and d != ref and (d / "ratios.csv").is_file())
    return others[0] if others else None
