"""Sequences within an event: a categorical jagged branch as a first-order Markov chain.

A generator record is not a bag of values. Every Drell-Yan event's ``GenPart_status`` opens
with the same run (21, 21, 22, 23, 44, 44, ..., 62), ``GenPart_pdgId`` follows the decay chain
(23, 23, 23, -15, 15, ...), ``GenPart_genPartIdxMother`` mostly counts up (2, 4, 5, 6, 7) and
``GenPart_statusFlags`` repeats bit patterns down the chain. Compressors find those sequences
again and again across events (RNTuple's pages hold a whole cluster of one branch, so LZ4 and
LZMA see them most): drawn independently, or with copies of the previous value only, the
synthetic branches came out 20-50% larger than the real ones (GenPart +17.8% in RNTuple lz4-4).

So a categorical branch (every value a point mass: an integer with few values) that is
sequenced in its events keeps, from the real file, how often each value opens an event
(``starts``) and how often each value follows each other one in the same event (``follows``),
as counts; synthetic events walk that chain, so the values come out as often as they did in
the real file and in the real file's order.

A chain is kept only when it says more than the marginal does, by the Bayesian information
criterion: the log-likelihood it gains on the real pairs must exceed ``ln(pairs) / 2`` per
extra transition it stores. Independent values (``GenJet_hadronFlavour``) keep no chain, so the
model stays small, and a small file cannot make one out of noise.
"""

from __future__ import annotations

import numpy as np

#: Neighbour pairs within events needed before a chain is learned.
MIN_PAIRS = 20


def _counts(keys: np.ndarray, index: np.ndarray) -> dict[str, int]:
    """``repr`` of each value (as :func:`.model.learn_values` keys its masses) -> count."""
    i, n = np.unique(index, return_counts=True)
    return {keys[j]: int(c) for j, c in zip(i, n, strict=True)}


def _information_gain(prev: np.ndarray, nxt: np.ndarray, states: int) -> float:
    """Log-likelihood (nats) of the following values under the chain minus under the
    marginal, less the BIC penalty for the extra transitions the chain stores."""
    def entropy_sum(codes: np.ndarray) -> float:
        c = np.unique(codes, return_counts=True)[1].astype(np.float64)
        return float((c * np.log(c)).sum())

    n = nxt.size
    pairs = prev * states + nxt
    ll_chain = entropy_sum(pairs) - entropy_sum(prev)
    ll_marginal = entropy_sum(nxt) - n * np.log(n)
    extra = np.unique(pairs).size - np.unique(prev).size - (np.unique(nxt).size - 1)
    return ll_chain - ll_marginal - extra * np.log(n) / 2


def learn_chain(values: np.ndarray, counts: np.ndarray) -> tuple[dict, dict]:
    """``(starts, follows)`` of a categorical jagged branch (flattened ``values``, ``counts``
    per event), or two empty dicts when the chain is not worth keeping (module docstring)."""
    firsts = (np.cumsum(counts) - counts)[counts > 0]
    follows_prev = np.ones(values.size, dtype=bool)
    follows_prev[firsts] = False
    if np.count_nonzero(follows_prev) < MIN_PAIRS:
        return {}, {}
    uniq, index = np.unique(values, return_inverse=True)
    if uniq.size < 2:
        return {}, {}
    keys = np.array([repr(v.item()) for v in uniq], dtype=object)
    at = np.flatnonzero(follows_prev)
    prev, nxt = index[at - 1], index[at]
    if _information_gain(prev, nxt, uniq.size) <= 0:
        return {}, {}
    follows = {keys[p]: _counts(keys, nxt[prev == p]) for p in np.unique(prev)}
    return _counts(keys, index[firsts]), follows


def chain_tables(masses: dict[str, float], starts: dict[str, int],
                 follows: dict[str, dict[str, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The values, the cumulative start distribution and the cumulative transition matrix
    (a row per value: a value never seen followed, the last of its events, is followed as the
    marginal says), dense, for :func:`walk`."""
    keys = list(masses) + sorted({k for row in (starts, *follows.values()) for k in row}
                                 - set(masses))
    where = {k: i for i, k in enumerate(keys)}

    def cumulative(weights: dict[str, float]) -> np.ndarray:
        p = np.zeros(len(keys))
        for k, w in weights.items():
            p[where[k]] = w
        return (np.cumsum(p) / p.sum()).astype(np.float32)

    marginal = cumulative(masses)
    rows = [cumulative(follows[k]) if k in follows else marginal for k in keys]
    return (np.array([float(k) for k in keys]), cumulative(starts) if starts else marginal,
            np.vstack(rows))


def walk(rng: np.random.Generator, counts: np.ndarray, start: np.ndarray,
         transitions: np.ndarray) -> np.ndarray:
    """The state (row of :func:`chain_tables`) of every value, events one after another: one
    uniform draw per value, vectorised over the events still running at each position.

    The next state is the number of the row's cumulative probabilities at or below the draw;
    with row ``r`` shifted by ``r`` (exact in float64), one ``searchsorted`` over all rows
    finds it for every event at once, in log time of the states, not linear."""
    counts = counts.astype(np.int64)
    offsets = np.cumsum(counts) - counts
    order = np.argsort(-counts, kind="stable")
    longest_first = counts[order]
    out = np.empty(int(counts.sum()), dtype=np.intp)
    state = np.zeros(counts.size, dtype=np.intp)  # by position in ``order``
    last = start.size - 1
    # rows clipped at 1 (a draw is below 1) so that the shifted rows are in order
    flat = (np.minimum(transitions, 1).astype(np.float64) +
            np.arange(transitions.shape[0])[:, None]).ravel()
    for k in range(int(longest_first[0]) if counts.size else 0):
        m = int(np.searchsorted(-longest_first, -k, side="left"))  # events longer than k
        u = rng.random(m, dtype=np.float32).astype(np.float64)
        if k == 0:
            nxt = np.searchsorted(start, u, side="right")
        else:
            row = state[:m]
            nxt = np.searchsorted(flat, row + u, side="right") - row * start.size
        state[:m] = np.minimum(nxt, last)
        out[offsets[order[:m]] + k] = state[:m]
    return out
