"""Which rows a figure draws in which order and under which name: the plan record's.

Legends, bars and panels read like the config (formats, variants, readers, selections and
pairings in the order it lists them), whatever order the tables happen to be in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import pandas as pd

from hepfmt.codec import Variant
from hepfmt.report import plan_record
from hepfmt.report.frames import KINDS
from hepfmt.report.style import LINESTYLES, MARKERS, PALETTE


def sample_kinds(df: pd.DataFrame) -> list[str]:
    """The sample kinds a table keeps apart (its ``kind`` column, when ``tabulate.mix_kinds`` is
    off), in :data:`KINDS` order; empty when it keeps none apart. Every figure draws each kind
    in :func:`kind_linestyle`, so that a real sample is never read as a synthetic one."""
    return ordered(df["kind"], KINDS) if "kind" in df else []


def kind_linestyle(kinds: list[str], kind: str) -> str:
    """The line style of sample kind ``kind`` among ``kinds`` (:func:`sample_kinds`)."""
    return LINESTYLES[kinds.index(kind) % len(LINESTYLES)]


def ordered(values: Iterable, order: Iterable) -> list:
    """``values`` in the order of ``order`` (the config's), unknown ones after, sorted."""
    rank = {str(v): i for i, v in enumerate(order)}
    return sorted({str(v) for v in values if not pd.isna(v)},
                  key=lambda v: (rank.get(v, len(rank)), v))


def _codec_families(plan: dict, fmt: str, variants: Iterable[str] = ()) -> set[str]:
    return {Variant.of(v).family for v in (*plan_record.variants(plan, fmt), *variants)}


def format_colors(plan: dict, formats: Iterable[str]) -> dict[str, str]:
    """One colour per format, the same in every figure of a run (it is chosen over all the
    plan's formats, not those one figure draws). Two formats that share a codec family (a panel
    of the size figure) never share a colour while the palette lasts; past it, a format takes
    the colour used least among those its codec families allow, and :func:`series_styles` gives
    its series a marker of their own."""
    formats = [str(f) for f in formats if not pd.isna(f)]
    names = ordered([*plan_record.format_names(plan), *formats], plan_record.format_names(plan))
    fams = {f: _codec_families(plan, f) for f in names}
    colors: dict[str, str] = {}
    use: Counter[str] = Counter()
    for f in names:
        taken = {colors[g] for g in colors if fams[f] & fams[g]}
        free = [c for c in PALETTE if c not in taken] or list(PALETTE)
        colors[f] = min(free, key=lambda c: (use[c], PALETTE.index(c)))
        use[colors[f]] += 1
    return colors


def series_styles(plan: dict, keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str],
                                                                       tuple[str, str]]:
    """(colour, marker) per format × variant, no two alike: the format's colour
    (:func:`format_colors`), the marker of the variant's rank in its format (a format's
    variants apart), or the next free one where another format of the same colour has it."""
    keys = list(dict.fromkeys((str(f), str(v)) for f, v in keys))
    every = [(f, v) for f in plan_record.format_names(plan) for v in plan_record.variants(plan, f)]
    every += [k for k in keys if k not in every]
    colors = format_colors(plan, [f for f, _ in every])
    used: set[tuple[str, str]] = set()
    out = {}
    for f, v in every:
        variants = list(dict.fromkeys([*plan_record.variants(plan, f),
                                       *(w for g, w in every if g == f)]))
        rank = variants.index(v)
        marker = next((MARKERS[(rank + i) % len(MARKERS)] for i in range(len(MARKERS))
                       if (colors[f], MARKERS[(rank + i) % len(MARKERS)]) not in used),
                      MARKERS[rank % len(MARKERS)])
        used.add((colors[f], marker))
        out[(f, v)] = (colors[f], marker)
    return {k: out[k] for k in keys}


def names(df: pd.DataFrame) -> pd.Series:
    """``<label> <variant>`` per row, the label falling back to the format name."""
    labels = df["label"] if "label" in df else df["format"]
    return labels.fillna(df["format"]) + " " + df["variant"]


def _rank(items: list, item: object) -> int:
    return items.index(item) if item in items else len(items)


def sorted_rows(df: pd.DataFrame, plan: dict) -> pd.DataFrame:
    """Rows in config order of format, variant and reader (the format's default reader
    first), then by threads."""
    formats = plan_record.format_names(plan)
    has_reader = "reader" in df

    def key(r) -> tuple:
        readers = plan_record.readers(plan, r.format) if has_reader else []
        threads = getattr(r, "threads", 0)
        return (_rank(formats, r.format), r.format,
                _rank(plan_record.variants(plan, r.format), r.variant), r.variant,
                _rank(readers, r.reader) if has_reader else 0, str(r.reader) if has_reader
                else "", 0 if pd.isna(threads) else threads)

    keys = [key(r) for r in df.itertuples()]
    return df.iloc[sorted(range(len(df)), key=keys.__getitem__)]


def threads_label(n: float) -> str:
    return f"{n:g} thread" + ("" if n == 1 else "s")


def selection_title(plan: dict, sel: str) -> str:
    branches = plan_record.selections(plan).get(sel)
    if branches == "*":
        return f"'{sel}': all branches"
    return f"'{sel}': {len(branches)} branches" if branches else f"selection '{sel}'"
