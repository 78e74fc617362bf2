"""The value model judged out of sample: learned from one half of a file's events and compared
with the other half (or learned from one file and compared with another).

A model judged against the very events it was learned from is judged on its memory: every
value it saw is in its quantiles, every repeat in its chains. Out of sample, what it does not
model (correlations between branches, bit patterns, rare values) shows as the bytes it gets
wrong, which is the error a user's synthetic sample has. Halves, not random events: NanoAOD
events are independent, so the first and second half are two samples of the same process.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from analysis.errors import InputError
from analysis.measure.fidelity import compare
from analysis.samples.importer import import_tree
from analysis.samples.learn import extract
from analysis.samples.source import open_source


def halves(path: str, tree: str, work: Path) -> tuple[Path, Path]:
    """The first and the second half of the file's events, each an uncompressed Parquet file
    (any input kind gives the same halves; the file is held in memory once, as learning
    does)."""
    src = work / "whole.arrow"
    import_tree(path, tree, src)
    table = open_source(src).read_all()
    src.unlink()
    n = table.num_rows
    if n < 2:
        raise InputError(path, f"{n} entry cannot be split into a half to learn from and a "
                               "half to judge")
    out = (work / "learn.parquet", work / "judge.parquet")
    pq.write_table(table.slice(0, n // 2), out[0], compression="none")
    pq.write_table(table.slice(n // 2), out[1], compression="none")
    return out


def held_out(path: str, tree: str = "Events", seed: int = 1,
             codecs: list[tuple[str, str]] | None = None) -> tuple[dict[str, pd.DataFrame], str,
                                                                   str]:
    """:func:`.fidelity.compare` of the file's second half with a model learned from its first:
    the tables, how the report names the judged events and how it names the model's origin."""
    with tempfile.TemporaryDirectory(prefix="hepfmt-heldout-") as tmp:
        learn, judge = halves(path, tree, Path(tmp))
        n_learn = pq.read_metadata(learn).num_rows
        n = n_learn + pq.read_metadata(judge).num_rows
        model = extract(learn)
        model.origin = f"{Path(path).name} entries 0-{n_learn - 1}"
        tables = compare(str(judge), model, seed=seed, codecs=codecs)
    return tables, f"{path} entries {n_learn}-{n - 1} (held out)", model.origin
