"""Sequences within events: a categorical branch whose values follow each other (a generator
record's status codes) is learned as a chain and generated in the real order; independent
values keep no chain."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hepfmt.samples.chain import learn_chain
from hepfmt.samples.generate import generate_chunk
from hepfmt.samples.model import Model, ValueModel
from hepfmt.samples.processes import PROCESSES
from hepfmt.samples.schema import Branch, Schema
from hepfmt.samples.source import to_column

OPENING = [21, 21, 22, 23]


def _record(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Events that open with the same run (the hard process) and end in 1s and 2s drawn
    independently (final-state particles), as ``GenPart_status`` does."""
    tails = rng.integers(0, 6, n)
    values = np.concatenate([np.r_[OPENING, rng.choice([1, 2], t)] for t in tails])
    return values.astype(np.int32), (tails + len(OPENING)).astype(np.int64)


def _model(values: np.ndarray, counts: np.ndarray) -> ValueModel:
    uniq, freq = np.unique(values, return_counts=True)
    starts, follows = learn_chain(values, counts)
    return ValueModel("number", masses={repr(v.item()): f / values.size
                                        for v, f in zip(uniq, freq, strict=True)},
                      starts=starts, follows=follows)


def test_a_sequenced_branch_learns_its_chain() -> None:
    values, counts = _record(np.random.default_rng(1), 200)
    starts, follows = learn_chain(values, counts)
    assert starts == {"21": 200}
    assert follows["22"] == {"23": 200}
    assert set(follows["21"]) == {"21", "22"} and set(follows["23"]) <= {"1", "2"}


def test_independent_values_keep_no_chain() -> None:
    rng = np.random.default_rng(2)
    counts = rng.integers(0, 8, 300)
    values = rng.choice(np.array([0, 2, 6], np.int32), int(counts.sum()), p=[0.1, 0.3, 0.6])
    assert learn_chain(values, counts) == ({}, {})
    assert learn_chain(np.array([5, 5, 5]), np.array([3])) == ({}, {})  # too few pairs


def test_generated_events_follow_the_chain() -> None:
    model = _model(*_record(np.random.default_rng(3), 200))
    counts = np.random.default_rng(4).integers(0, 12, 5000)
    x = model.sample_chain(np.random.default_rng(5), counts, np.dtype(np.int32))
    assert x.dtype == np.int32 and x.size == counts.sum()
    firsts = (np.cumsum(counts) - counts)[counts > 0]
    assert (x[firsts] == 21).all()
    # what follows what is the real file's: 22 only ever before 23, 1 and 2 only after 23
    after_22 = np.flatnonzero(x[:-1] == 22) + 1
    inside = np.isin(after_22, firsts, invert=True)
    assert (x[after_22[inside]] == 23).all()
    tail = np.isin(x, [1, 2])
    assert not np.isin(x[1:][tail[1:]], [21, 22]).any()
    assert not np.isin(x[:-1][tail[1:]], [21, 22]).any()
    assert x[tail].mean() == pytest.approx(1.5, abs=0.05)


def test_same_draws_give_the_same_events() -> None:
    model = _model(*_record(np.random.default_rng(3), 50))
    counts = np.array([0, 3, 9, 1, 0, 4])
    a = model.sample_chain(np.random.default_rng(7), counts, np.dtype(np.int16))
    b = model.sample_chain(np.random.default_rng(7), counts, np.dtype(np.int16))
    assert (a == b).all() and a.size == counts.sum()
    assert model.sample_chain(np.random.default_rng(7), np.zeros(3, np.int64),
                              np.dtype(np.int16)).size == 0


def test_model_file_keeps_the_chain_and_generation_walks_it(tmp_path: Path) -> None:
    chained = _model(*_record(np.random.default_rng(3), 100))
    schema = Schema((Branch("nX", "uint32"), Branch("X_status", "int32", "nX")))
    model = Model(schema, {"X_status": chained}, {"X": {"0": 0.2, "6": 0.8}})
    model.to_json(tmp_path / "m.json")
    back = Model.from_json(tmp_path / "m.json")
    assert back.values["X_status"] == chained
    batch = generate_chunk(back, PROCESSES["TTJets"], 1, 0, 2000)
    x = to_column(batch.column("X_status"))
    firsts = x.offsets[:-1][np.diff(x.offsets) > 0]
    assert firsts.size > 1000 and (x.values[firsts] == 21).all()
