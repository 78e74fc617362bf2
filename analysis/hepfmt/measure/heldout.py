"""The value model judged out of sample: learned from one half of a file's events and compared
with the other half (or learned from one file and compared with another).

A model judged against the very events it was learned from is judged on its memory: every
value it saw is in its quantiles, every repeat in its chains. Out of sample, what it does not
model (correlations between branches, bit patterns, rare values) shows as the bytes it gets
wrong, which is the error a user's synthetic sample has. Halves, not random events: NanoAOD
events are independent, so the first and second half are two samples of the same process.

Two errors add up out of sample, and they are judged apart. A collection's bytes per event
follow its multiplicity, and the mean multiplicity of a few dozen events is uncertain by tens of
per cent (0.34 muons per event in one half of the shared 40-event file, 0.55 in the other): no
model of values can know the other half's. So the model is judged twice: at the judged events'
multiplicities (its values: the verdict), and whole, as learned, beside a table that says by how
many standard errors of the two halves' means each multiplicity differs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from hepfmt.atomic import scratch_dir
from hepfmt.measure import fidelity
from hepfmt.samples.importer import import_tree
from hepfmt.samples.learn import extract, learn_multiplicity
from hepfmt.samples.model import Model
from hepfmt.samples.relations_model import Relations, relations_of_source
from hepfmt.samples.source import open_source


@dataclass(frozen=True)
class OutOfSample:
    """One model judged against events it was not learned from."""

    values: dict[str, pd.DataFrame]  # at the judged events' multiplicities: the verdict
    whole: dict[str, pd.DataFrame]  # as learned, multiplicities included
    multiplicity: pd.DataFrame  # per collection: learned and judged means, their difference
    judged: str  # how the report names the judged events
    origin: str  # how it names the model's origin
    #: relations of the file its learned events hold too few values to establish: not judged
    unlearnable: tuple[str, ...] = ()


def halves(path: str, tree: str, work: Path) -> tuple[Path, Path, Relations]:
    """The first and the second half of the file's events, each an uncompressed Parquet file
    (any input kind gives the same halves; the file is held in memory once, as learning
    does), and the relations of the whole file: those a sample must keep. A relation that holds
    in the judged half by chance (two branches equal in its few objects) but not in the
    learned one is not the file's, and a model learned from that half rightly does not keep
    it."""
    src = work / "whole.arrow"
    schema = import_tree(path, tree, src)
    relations = relations_of_source(src, schema)
    table = open_source(src).read_all()
    src.unlink()
    n = table.num_rows
    out = (work / "learn.parquet", work / "judge.parquet")
    pq.write_table(table.slice(0, n // 2), out[0], compression="none")
    pq.write_table(table.slice(n // 2), out[1], compression="none")
    return out[0], out[1], relations


def _moments(dist: dict[str, float]) -> tuple[float, float]:
    k = np.array([float(c) for c in dist])
    p = np.array(list(dist.values()))
    mean = float(k @ p)
    return mean, float(((k - mean) ** 2) @ p)


def multiplicity_table(learned: dict[str, dict[str, float]], n_learned: int,
                       judged: dict[str, dict[str, float]], n_judged: int) -> pd.DataFrame:
    """Mean multiplicity learned and judged per collection, the difference and how many
    standard errors of the difference of two sample means it is (|z| above 2 or 3: the two
    event sets differ beyond chance)."""
    rows = []
    for c in sorted(set(learned) & set(judged)):
        (ml, vl), (mj, vj) = _moments(learned[c]), _moments(judged[c])
        se = float(np.sqrt(vl / max(n_learned, 1) + vj / max(n_judged, 1)))
        rows.append({"collection": c, "learned mean": ml, "judged mean": mj,
                     "diff %": 100 * (ml / mj - 1) if mj else np.nan,
                     "z": (ml - mj) / se if se else 0.0})
    return pd.DataFrame(rows, columns=["collection", "learned mean", "judged mean", "diff %",
                                       "z"])


def judge(real: str, model: Model, tree: str = "Events", seed: int = 1,
          codecs: list[tuple[str, str]] | None = None, judged: str = "",
          origin: str = "", relations: Relations | None = None) -> OutOfSample:
    """:func:`.fidelity.compare` twice: the model at the real events' multiplicities, and as
    learned. A collection the model saw no object of, but the real events have, is not judged
    at their multiplicities (the model has no values for it). ``relations``: those the samples
    must keep (default: the ``real`` file's own)."""
    real_mult = learn_multiplicity(real, tree)
    unseen = frozenset(c for c, dist in model.multiplicity.items()
                       if set(dist) == {"0"} and set(real_mult.get(c, {"0": 1})) != {"0"})
    at_real = replace(model, multiplicity={**model.multiplicity, **real_mult})
    both = fidelity.compare_models(real, {"values": (at_real, unseen),
                                          "whole": (model, frozenset())}, tree, seed, codecs,
                                  relations)
    values, whole = both["values"], both["whole"]
    n_real = int(values["replicas"].iloc[0]["real events"])
    mult = multiplicity_table(model.multiplicity, model.n_events, at_real.multiplicity, n_real)
    return OutOfSample(values, whole, mult, judged or real, origin or model.origin)


def held_out(path: str, tree: str = "Events", seed: int = 1,
             codecs: list[tuple[str, str]] | None = None) -> OutOfSample:
    """The file's second half judged against a model learned from its first."""
    fidelity.require_events(path, tree, 2 * fidelity.MIN_JUDGED_EVENTS,
                            "a held-out judgement (two halves of "
                            f"{fidelity.MIN_JUDGED_EVENTS} or more)")
    with scratch_dir(prefix="hepfmt-heldout-") as tmp:
        learn, judged, relations = halves(path, tree, tmp)
        n_learn = pq.read_metadata(learn).num_rows
        n = n_learn + pq.read_metadata(judged).num_rows
        model = extract(learn)
        model.origin = f"{Path(path).name} entries 0-{n_learn - 1}"
        learnable, unlearnable = relations.split_by(model.relations)
        result = judge(str(judged), model, seed=seed, codecs=codecs,
                       judged=f"{path} entries {n_learn}-{n - 1} (held out)",
                       relations=learnable)
        return replace(result, unlearnable=tuple(unlearnable.lines()))


def report(result: OutOfSample, notes: list[str] | None = None) -> str:
    """Markdown: the verdict on the values, then the whole model and the multiplicities."""
    whole = result.whole
    worst = fidelity.misses(whole).head(fidelity.WORST)
    return "\n".join([
        fidelity.report(result.values, result.judged,
                        f"{result.origin} (out of sample, at the judged events' "
                        "multiplicities)", notes),
        *([f"Relations of the file not judged ({len(result.unlearnable)}): its learned "
           "events hold too few values of them to tell them from chance, so no model learned "
           "from those events could keep them: " + "; ".join(result.unlearnable) + ".", ""]
          if result.unlearnable else []),
        "## The whole model, multiplicities as learned", "",
        fidelity.verdict_line(whole), "",
        "Bytes per event of a collection follow its multiplicity; the table below says how "
        "far the learned mean multiplicity is from the judged events', in standard errors of "
        "the difference of the two means (z): |z| below 2 is what two samples of these sizes "
        "give by chance.", "",
        *([fidelity.shown(worst), ""] if len(worst) else []),
        result.multiplicity.round(2).to_markdown(index=False), "",
    ])
