"""A value model of a NanoAOD-like tree, learned from a real file and sampled to make new events.

Sizes and read rates depend on what the bytes look like: how many branches are booleans and how
often they fire, how jagged the collections are, which values repeat, how many mantissa bits a
float keeps. The model records exactly those properties, per branch, from a real file:

* ``bool``: the firing rate;
* numbers: *point masses* (exact frequencies of values that recur: zeros, defaults such as -1
  or -999, and every value of a *categorical* branch: an integer with up to a thousand
  distinct values, bit-field words and PDG ids included, or a float whose values nearly all
  recur, as masses that take a few exact values) mixed with a *quantile table* of the
  remaining values; sampling is one inverse-CDF lookup per value;
* floats: the number of mantissa bits actually stored (NanoAOD rounds many floats to 10-12);
* jagged branches: whether they are sorted in decreasing order within each event (pt), and how
  often a value repeats the one before it in the same event beyond chance (a generator-level
  particle and its copies down the decay chain share eta, phi and mass); for a categorical one
  that is sequenced in its events (the generator record's status, pdgId, mother index), which
  value opens an event and which follows which (a Markov chain: :mod:`.chain`);
* event scalars that only grow (``event``): a first value plus a model of the steps;
* event-level bools identical in every event to an earlier one (trigger paths that are
  aliases, or nested ones that fired on the same events): which one, so that they are
  generated identical (ROOT's RNTuple stores identical pages once);
* collections (the ``X_*`` members and their counters, ``nX`` or one per member): the
  multiplicity distribution, one per collection, so that every member has the same length;
* exact relations between branches (:mod:`.relations_model`): a flat integer that is a
  collection's length, a branch that copies another; generation honours them, so a synthetic
  sample never contradicts itself (models written before them have none and load unchanged).

Other correlations between branches are not modelled (a jet's eta does not depend on its pt
here); compression sees each branch on its own, so this is what matters for sizes.

The model's ``branches`` list has the same form as :class:`.schema.Schema`'s JSON, so a
model file is also a schema file.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import cached_property
from importlib import resources
from pathlib import Path

import numpy as np

from hepfmt import records
from hepfmt.errors import InputError
from hepfmt.samples.chain import chain_tables, walk
from hepfmt.samples.relations_model import Relations
from hepfmt.samples.schema import Schema

#: The built-in model: learned with ``hepfmt schema extract`` from coffea's ``nano_dy.root`` (CMS
#: Drell-Yan NanoAOD, 40 events, 1499 branches).
DEFAULT_MODEL = "nanoaod_dy.model.json"
#: Points of a quantile table (fewer when a branch has fewer values).
QUANTILES = 33
#: A value is a point mass when it recurs at least this often (and at least twice).
MASS_THRESHOLD = 0.02
#: Bins of the guide table that speeds up drawing from point masses.
GUIDE = 256
#: Categorical branches, learned as a frequency table of whole values, may have up to this many
#: distinct values: an integer always (bit-field words such as ``TrigObj_filterBits`` or
#: ``GenPart_statusFlags``, PDG ids: a value between two quantiles is a word or a particle that
#: does not exist, and costs the compressor the bits of a random number: +125% on
#: ``TrigObj_filterBits``), a float when its values recur (:data:`RECURRING`). 1024 keeps a
#: table below ~25 kB of JSON and a chain over it (:mod:`.chain`) below 12 MB, and no
#: continuous float stored with NanoAOD's 10-12 mantissa bits over its range takes as few
#: values.
MAX_CATEGORIES = 1024
#: A float is categorical (masses of particles that take a few exact values: ``GenPart_mass``)
#: when at least this fraction of its values repeat another value exactly: a continuous
#: quantity repeats only through rounding, far less in any file whose values do not already
#: exhaust its few distinct ones.
RECURRING = 0.9


@dataclass
class ValueModel:
    """How one branch's values are distributed (see the module docstring)."""

    kind: str  # "bool", "number" or "sequence"
    rate: float = 0.0  # bool: fraction true
    masses: dict[str, float] = field(default_factory=dict)  # repr(value) -> probability
    quantiles: list[float] = field(default_factory=list)  # of the values that are not masses
    mantissa_bits: int | None = None  # float32: explicit mantissa bits stored (<= 23)
    sorted_desc: bool = False  # jagged: decreasing within each event
    repeat: float = 0.0  # jagged: probability a value copies the previous one in its event
    same_as: str | None = None  # event-level bool: identical to this earlier branch
    first: float | None = None  # sequence: first value; masses/quantiles model the steps
    starts: dict[str, int] = field(default_factory=dict)  # chain: value -> events it opens
    follows: dict[str, dict[str, int]] = field(default_factory=dict)  # chain: value -> next's

    def sample(self, rng: np.random.Generator, n: int, dtype: np.dtype, rate_scale: float = 1.0,
               index0: int = 0) -> np.ndarray:
        """``n`` values of ``dtype``; one uniform draw per value, so it is fast and stable.

        ``rate_scale`` multiplies a bool's rate (a process's trigger-rate shift); ``index0`` is
        the index of the first value, so that a sequence continues across chunks.
        """
        if self.kind == "bool":
            rate = min(1.0, self.rate * rate_scale)
            if rate <= 0.0:
                return np.zeros(n, dtype=bool)
            if rate >= 1.0:
                return np.ones(n, dtype=bool)
            return rng.random(n, dtype=np.float32) < rate
        x = self._draw(rng, n)
        if self.kind == "sequence":
            x = np.rint(self.first + index0 * self.mean()) + np.cumsum(x) - x[:1]
        return _cast(x, dtype, self.mantissa_bits)

    def sample_chain(self, rng: np.random.Generator, counts: np.ndarray,
                     dtype: np.dtype) -> np.ndarray:
        """Values of a jagged branch with a chain (``follows``), ``counts`` per event."""
        values, start, transitions = self._chain
        return _cast(values[walk(rng, counts, start, transitions)], dtype, self.mantissa_bits)

    @cached_property
    def _chain(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return chain_tables(self.masses, self.starts, self.follows)

    def mean(self) -> float:
        """Mean of the (step) distribution: masses plus the quantile table's trapezoid mean."""
        m = sum(float(v) * p for v, p in self.masses.items())
        rest = 1.0 - sum(self.masses.values())
        if self.quantiles and rest > 0:
            q = np.asarray(self.quantiles)
            m += rest * float(((q[1:] + q[:-1]) / 2).mean() if q.size > 1 else q[0])
        return m

    @cached_property
    def _tables(self) -> tuple[np.ndarray, np.ndarray, float, np.ndarray]:
        """Mass values, their cumulative probabilities and total, the quantiles: built once."""
        values = np.array([float(v) for v in self.masses])
        cum = np.cumsum(np.array(list(self.masses.values()), dtype=np.float64))
        total = float(cum[-1]) if cum.size else 0.0
        if not self.quantiles and cum.size:
            cum = cum / total  # masses only: normalise away rounding
        return values, cum.astype(np.float32), total, np.asarray(self.quantiles, np.float64)

    @cached_property
    def _guide(self) -> np.ndarray:
        """First candidate category for each 1/GUIDE of probability (see ``_categorical``)."""
        cum = self._tables[1]
        return np.minimum(np.searchsorted(cum, np.arange(GUIDE, dtype=np.float32) / GUIDE,
                                          side="right"), max(cum.size - 1, 0))

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        # float32 uniforms: half the cost of float64, and 2**-24 resolves any learned frequency
        u = rng.random(n, dtype=np.float32)
        values, cum, total, q = self._tables
        if not q.size:
            return values[_categorical(u, cum, self._guide)]
        if not cum.size:
            return _interp_uniform(u, q)
        out = np.empty(n)
        hit = u < total
        out[hit] = values[_categorical(u[hit], cum, self._guide)]
        out[~hit] = _interp_uniform((u[~hit] - total) / (1.0 - total), q)
        return out


def _categorical(u: np.ndarray, cum: np.ndarray, guide: np.ndarray) -> np.ndarray:
    """Index ``i`` with ``cum[i-1] <= u < cum[i]``: a guide table gives the first candidate and
    a few vectorised steps finish, instead of a binary search per value."""
    i = guide[(u * GUIDE).astype(np.intp)]
    last = cum.size - 1
    while True:
        step = (u >= cum[i]) & (i < last)
        if not step.any():
            return i
        i += step


def _interp_uniform(t: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Inverse CDF of a quantile table at equally spaced probabilities: the bin is computed,
    not searched (several times faster than ``np.interp`` on large draws)."""
    if q.size == 1:
        return np.full(t.size, q[0])
    x = t * (q.size - 1)
    i = np.minimum(x.astype(np.intp), q.size - 2)
    return q[i] + (x - i) * np.diff(q)[i]


@dataclass
class Model:
    """Schema plus value models plus multiplicities: everything generation needs."""

    schema: Schema
    values: dict[str, ValueModel]
    multiplicity: dict[str, dict[str, float]]  # collection -> {count: probability}
    n_events: int = 0
    origin: str = ""
    relations: Relations = field(default_factory=Relations)

    def __post_init__(self) -> None:
        counters = self.schema.counters()
        missing = [b.name for b in self.schema.branches
                   if b.name not in self.values and b.name not in counters]
        missing += [f"{c} (multiplicity)" for c in self.schema.collections()
                    if c not in self.multiplicity]
        if missing:
            raise InputError(self.origin or "model", f"no value model for {missing[:5]}")
        self.relations.check(self.schema, self.origin or "model")

    def subset(self, names: list[str]) -> Model:
        """The model restricted to ``names`` plus the counters their jagged branches need."""
        keep = set(names) | {self.schema[n].counter for n in names if self.schema[n].counter}
        schema = Schema(tuple(b for b in self.schema.branches if b.name in keep),
                        self.schema.origin)
        return Model(schema, {k: v for k, v in self.values.items() if k in keep},
                     {k: v for k, v in self.multiplicity.items() if k in schema.collections()},
                     self.n_events, f"subset of {self.origin}", self.relations.subset(schema))

    def to_json(self, path: str | Path) -> None:
        doc = {
            "origin": self.origin, "n_events": self.n_events,
            "branches": [asdict(b) for b in self.schema.branches],
            "multiplicity": self.multiplicity,
            "values": {k: {f: x for f, x in asdict(v).items() if x not in (None, [], {}, False)
                           or f == "kind"} for k, v in self.values.items()},
        }
        if self.relations:
            doc["relations"] = self.relations.to_dict()
        Path(path).write_text(json.dumps(doc, indent=0, separators=(",", ":")) + "\n")

    @classmethod
    def from_json(cls, path: str | Path) -> Model:
        schema = Schema.from_json(path)
        try:
            doc = records.read_json(path, "hepfmt model")
            values = {k: ValueModel(**v) for k, v in doc["values"].items()}
            relations = Relations.from_dict(doc.get("relations"))
            relations.check(schema, str(path))  # naming the file, not the model's origin
            return cls(schema, values, _by_collection(schema, doc["multiplicity"]),
                       doc.get("n_events", 0), doc.get("origin", str(path)), relations)
        except KeyError as exc:
            raise InputError(path, f"a schema without a value model (no {exc}); derive one "
                                   "with 'hepfmt schema extract'") from exc
        except (ValueError, TypeError, AttributeError) as exc:
            raise InputError(path, f"not a hepfmt model ({exc})") from exc


def _by_collection(schema: Schema, multiplicity: dict[str, dict]) -> dict[str, dict]:
    """Models written before collections were found by name keyed multiplicities by counter
    (``nJet``): the same distributions, keyed by the counter's collection (``Jet``)."""
    sized = schema.counters()
    return {sized[k][0].collection if k in sized else k: v for k, v in multiplicity.items()}


def default_model() -> Model:
    with resources.as_file(resources.files("hepfmt.samples.data") / DEFAULT_MODEL) as p:
        return Model.from_json(p)


def load_model(path: str | Path | None) -> Model:
    """The model at ``path``, or the built-in one when no path is given."""
    return Model.from_json(path) if path else default_model()


def _cast(x: np.ndarray, dtype: np.dtype, mantissa_bits: int | None) -> np.ndarray:
    if dtype.kind == "f":
        out = x.astype(dtype)
        if mantissa_bits is not None and dtype == np.float32:
            out = round_mantissa(out, mantissa_bits)
        return out
    info = np.iinfo(dtype)
    return np.clip(np.rint(x), info.min, info.max).astype(dtype)


def round_mantissa(x: np.ndarray, bits: int) -> np.ndarray:
    """Round float32 values to ``bits`` explicit mantissa bits, as NanoAOD's precision= does."""
    if bits >= 23:
        return x.astype(np.float32)
    u = x.astype(np.float32).view(np.uint32)
    shift = np.uint32(23 - bits)
    half = np.uint32(1 << (23 - bits - 1))
    return (((u + half) >> shift) << shift).view(np.float32)


def mantissa_bits(x: np.ndarray) -> int | None:
    """Explicit mantissa bits a float32 array really uses: 23 minus the fewest trailing zeros."""
    m = x.astype(np.float32).view(np.uint32) & np.uint32(0x7FFFFF)
    m = m[m != 0]
    if m.size == 0:
        return None
    lowest = m & (~m + np.uint32(1))  # the lowest set bit of each mantissa
    return 23 - int(np.log2(lowest.astype(np.float64)).min())


# -- learning ------------------------------------------------------------------------------------


def learn_values(x: np.ndarray, dtype: np.dtype) -> ValueModel:
    """Point masses + quantiles (+ mantissa bits) of one branch's flattened values."""
    if dtype == np.bool_:
        return ValueModel("bool", rate=float(x.mean()) if x.size else 0.0)
    bits = mantissa_bits(x) if dtype == np.float32 else None
    if x.size == 0:
        return ValueModel("number", masses={"0": 1.0}, mantissa_bits=bits)
    vals, counts = np.unique(x, return_counts=True)
    freq = counts / x.size
    keep = _point_masses(counts, dtype)
    masses = {repr(v.item()): float(f) for v, f in zip(vals[keep], freq[keep], strict=True)}
    rest = np.repeat(vals[~keep], counts[~keep]).astype(np.float64)
    quantiles = []
    if rest.size:
        k = min(QUANTILES, rest.size + 1)
        quantiles = [float(q) for q in np.quantile(rest, np.linspace(0, 1, k))]
    return ValueModel("number", masses=masses, quantiles=quantiles, mantissa_bits=bits)


def _point_masses(counts: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Which distinct values (occurring ``counts`` times) are point masses: all of a
    categorical branch's; of an integer with more distinct values than a table holds, the
    :data:`MAX_CATEGORIES` most frequent that recur (bit-field words again: the
    quantiles then only stand for the rarest words); else those that recur often."""
    if categorical(counts, dtype):
        return np.ones(counts.size, dtype=bool)
    keep = (counts / counts.sum() >= MASS_THRESHOLD) & (counts >= 2)
    if dtype.kind in "iu":
        top = np.argsort(-counts, kind="stable")[:MAX_CATEGORIES]
        keep[top[counts[top] >= 2]] = True
    return keep


def categorical(counts: np.ndarray, dtype: np.dtype) -> bool:
    """Whether a branch whose distinct values occur ``counts`` times is learned as a frequency
    table of whole values (see :data:`MAX_CATEGORIES` and :data:`RECURRING`)."""
    if counts.size > MAX_CATEGORIES:
        return False
    if dtype.kind in "iu":
        return True
    return counts[counts >= 2].sum() >= RECURRING * counts.sum()


def learn_sequence(x: np.ndarray, dtype: np.dtype) -> ValueModel | None:
    """Event identifiers: growing (``luminosityBlock``) or all distinct (``event``).

    A random draw from their values would repeat numbers and compress far worse than the real
    near-monotonic sequence, so they are modelled as a first value plus steps (of the sorted
    values when they are all distinct but unordered, as event numbers in a file are).
    """
    if x.size < 3 or dtype.kind not in "iu" or np.unique(x).size < 2:
        return None
    if np.unique(x).size == x.size:
        x = np.sort(x)
    steps = np.diff(x.astype(np.float64))
    if (steps < 0).any():
        return None
    step_model = learn_values(steps.astype(np.int64), np.dtype(np.int64))
    return ValueModel("sequence", masses=step_model.masses, quantiles=step_model.quantiles,
                      first=float(x[0]))


#: Strictly decreasing neighbours needed before a branch counts as sorted (not by chance).
MIN_SORTED_EVIDENCE = 5
#: Repeat probabilities below this are not worth a model (nor the random draws).
MIN_REPEAT = 0.01
#: Neighbour pairs within events needed before a repeat probability is learned.
MIN_REPEAT_PAIRS = 20


def _same_event_pairs(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """For each value but the first: whether it is in the same event as the one before."""
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(values.size)[1:] != starts[1:]


def learn_repeat(values: np.ndarray, counts: np.ndarray, model: ValueModel) -> float:
    """Probability ``q`` that a value copies its predecessor in the event: neighbours are equal
    with probability ``q + (1 - q) c``, ``c`` the chance two independent draws are equal (the
    point masses' squared frequencies), so runs come out as often as in the real file."""
    same = _same_event_pairs(values, counts)
    if np.count_nonzero(same) < MIN_REPEAT_PAIRS:
        return 0.0
    equal = float(np.mean((values[1:] == values[:-1])[same]))
    chance = sum(p * p for p in model.masses.values())
    q = (equal - chance) / (1.0 - chance) if chance < 1.0 else 0.0
    return round(q, 4) if q >= MIN_REPEAT else 0.0


def apply_repeat(rng: np.random.Generator, values: np.ndarray, counts: np.ndarray,
                 q: float) -> np.ndarray:
    """Each value but an event's first copies the one before with probability ``q`` (so runs
    form; each value is still drawn from the learned distribution)."""
    first = np.zeros(values.size, dtype=bool)
    first[(np.cumsum(counts) - counts)[counts > 0]] = True
    copy = (rng.random(values.size, dtype=np.float32) < q) & ~first
    source = np.maximum.accumulate(np.where(copy, 0, np.arange(values.size)))
    return values[source]


def sorted_desc(values: np.ndarray, counts: np.ndarray) -> bool:
    """True when values never increase within an event, with enough pairs to be sure."""
    if values.size < 2:
        return False
    d = np.diff(values.astype(np.float64))[_same_event_pairs(values, counts)]
    return bool(np.all(d <= 0) and np.count_nonzero(d < 0) >= MIN_SORTED_EVIDENCE)
