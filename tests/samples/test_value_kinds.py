"""Bit-field words, PDG ids and masses that take a few exact values (issue 41, item 2).

Drawn between quantiles, such a branch's synthetic values are words, particles and masses that
do not exist, and compress like random numbers (``TrigObj_filterBits`` +125%): they are learned
as a frequency table of whole values instead, so every synthetic value is one the source has.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import awkward as ak
import numpy as np
import uproot

from hepfmt.samples.chain import learn_chain
from hepfmt.samples.generate import generate
from hepfmt.samples.learn import extract
from hepfmt.samples.model import MAX_CATEGORIES, learn_values
from hepfmt.samples.source import open_source, to_column

RNG = np.random.default_rng(41)
N = 3000


def _bit_words(n: int) -> np.ndarray:
    """Trigger-object filter bits: each of 14 filters fires with its own rate, the lower ones
    more often, so a few hundred distinct words occur, a few of them often."""
    rates = 0.6 * 0.7 ** np.arange(14)
    bits = RNG.random((n, 14)) < rates
    return (bits * (1 << np.arange(14))).sum(axis=1).astype(np.int32)


def _pdg_ids(n: int) -> np.ndarray:
    """Over a hundred particle ids, signed, a few common (a generator record's)."""
    ids = np.concatenate([[21, 22, 11, 13, 211, 111, 321, 2212], 100 + 3 * np.arange(60)])
    p = 1.0 / np.arange(1, ids.size + 1)
    return (ids[RNG.choice(ids.size, n, p=p / p.sum())] * RNG.choice([-1, 1], n)).astype(np.int32)


def _masses(n: int) -> np.ndarray:
    """Masses that take 40 exact values (quarks, hadrons), and a Z line shape in 5%."""
    exact = np.round(RNG.exponential(2.0, 40), 3).astype(np.float32)
    out = exact[RNG.integers(0, exact.size, n)]
    z = RNG.random(n) < 0.05
    out[z] = RNG.normal(91.19, 2.5, int(z.sum())).astype(np.float32)
    return out


def test_integer_words_are_categorical() -> None:
    words = _bit_words(N)
    assert 64 < np.unique(words).size <= MAX_CATEGORIES  # was a quantile table
    model = learn_values(words, words.dtype)
    assert not model.quantiles and len(model.masses) == np.unique(words).size
    drawn = model.sample(np.random.default_rng(1), N, words.dtype)
    assert np.isin(drawn, words).all()


def test_wider_words_keep_the_most_frequent_whole() -> None:
    """Twenty filter bits make more distinct words than a table holds: the most frequent
    words are kept whole, the quantiles stand for the rarest only, and the words compress
    as the real ones do (drawn between quantiles: +11%)."""
    rates = 0.5 * 0.8 ** np.arange(20)
    bits = RNG.random((20000, 20)) < rates
    words = (bits * (1 << np.arange(20))).sum(axis=1).astype(np.int32)
    assert np.unique(words).size > MAX_CATEGORIES
    model = learn_values(words, words.dtype)
    assert 64 < len(model.masses) <= MAX_CATEGORIES and sum(model.masses.values()) > 0.9
    drawn = model.sample(np.random.default_rng(1), words.size, words.dtype)
    assert np.isin(drawn, words).mean() > 0.9
    ratio = len(zlib.compress(drawn.tobytes(), 6)) / len(zlib.compress(words.tobytes(), 6))
    assert abs(ratio - 1) < 0.05


def test_many_distinct_integers_keep_quantiles() -> None:
    x = RNG.integers(0, 10**6, N).astype(np.int32)
    assert learn_values(x, x.dtype).quantiles


def test_recurring_floats_are_categorical_continuous_ones_not() -> None:
    m = _masses(N)
    model = learn_values(m, m.dtype)
    assert not model.quantiles  # 95% of values recur: the Z's 5% are replayed, not smeared
    assert np.isin(model.sample(np.random.default_rng(2), N, m.dtype), m).all()
    pt = RNG.exponential(30, N).astype(np.float32)
    assert learn_values(pt, pt.dtype).quantiles


def test_synthetic_words_compress_like_the_real_ones(tmp_path: Path) -> None:
    """End to end through a ROOT file: the synthetic branches hold only the source's words,
    ids and masses, and the bit words' compressed size is the real one's within 10%."""
    counts = RNG.poisson(6, N // 3)
    n = int(counts.sum())
    objs = ak.zip({"filterBits": ak.unflatten(_bit_words(n), counts),
                   "pdgId": ak.unflatten(_pdg_ids(n), counts),
                   "mass": ak.unflatten(_masses(n), counts)})
    path = tmp_path / "words.root"
    with uproot.recreate(path) as f:
        f.mktree("Events", {"Obj": objs.type.content})
        f["Events"].extend({"Obj": objs})
    model = extract(path)
    out = tmp_path / "s.arrow"
    generate(model, "DYJetsToLL", 1, counts.size, out)
    synth = open_source(out).read_all()
    real = {k: ak.to_numpy(ak.flatten(objs[k])) for k in ("filterBits", "pdgId", "mass")}
    for k, x in real.items():
        assert np.isin(to_column(synth[f"Obj_{k}"]).values, x).all(), k
    s = to_column(synth["Obj_filterBits"]).values
    real_bytes = len(zlib.compress(real["filterBits"].tobytes(), 6)) / real["filterBits"].size
    synth_bytes = len(zlib.compress(s.tobytes(), 6)) / s.size
    assert abs(synth_bytes / real_bytes - 1) < 0.10


def test_a_chain_over_hundreds_of_states_is_walked() -> None:
    """Mother indices count up in their events, over more values than the 64 a chain once
    had: learned as a chain, every synthetic event counts up too."""
    counts = RNG.poisson(20, 2000)
    first = RNG.integers(0, 280, counts.size)
    idx = np.concatenate([f + np.arange(c) for f, c in zip(first, counts, strict=True)])
    idx = idx.astype(np.int32)
    model = learn_values(idx, idx.dtype)
    assert not model.quantiles and len(model.masses) > 256
    model.starts, model.follows = learn_chain(idx, counts)
    assert model.follows
    drawn = model.sample_chain(np.random.default_rng(3), counts, idx.dtype)
    steps = np.diff(drawn.astype(np.int64))
    within = np.ones(drawn.size, dtype=bool)
    within[(np.cumsum(counts) - counts)[counts > 0]] = False
    assert (steps[within[1:]] == 1).all()
