"""Branch selections resolved against each sample's own schema.

A selection is written once in the config (``measure.selections``) but read from samples whose
branches differ: NanoAOD v15 calls ``MET_pt`` ``PFMET_pt``, uproot writes one counter per
jagged branch (``nJet_pt``) where CMSSW writes one per collection (``nJet``). So each item of a
selection is resolved per sample, before any job runs:

* a branch name: itself; a counter name ``n<Collection>`` the sample lacks stands for that
  collection's counter as the sample has it (the one sizing a member the selection also reads,
  else the collection's first);
* a pattern (``Muon_*``, ``Jet_[pe]t*``: :mod:`fnmatch`, case-sensitive): every branch it
  matches, in schema order;
* alternatives, a list (``[MET_pt, PFMET_pt]``): the first that resolves.

An item that resolves to nothing is a config error naming it and the sample. The plan resolves
with each sample's schema known at parse time (generated samples: the model's; local files: the
file's own, read once per process); a remote file's selections are resolved by its measure job,
against the imported source, by the same function.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING

from hepfmt.errors import ConfigError, InputError
from hepfmt.formats.base import is_url

if TYPE_CHECKING:
    from hepfmt.samples.schema import Schema

#: The selection of every branch.
ALL = "*"
#: What separates alternatives on the command line (``--selection ten=MET_pt|PFMET_pt,nJet``).
OR = "|"

#: One item of a selection: a name or pattern, or alternatives (the first that resolves).
Item = str | Sequence[str]
Selection = Sequence[Item] | str


class Unresolved(LookupError):
    """An item of a selection that names no branch of the schema."""

    def __init__(self, item: Item) -> None:
        super().__init__(item)
        self.item = item

    def __str__(self) -> str:
        if isinstance(self.item, str):
            return f"{self.item!r} matches no branch"
        return f"none of {list(self.item)} matches a branch"


def _is_pattern(text: str) -> bool:
    return any(c in text for c in "*?[")


def _one(alternative: str, schema: Schema, names: set[str], wanted: set[str]) -> list[str]:
    if _is_pattern(alternative):
        return [n for n in schema.names if fnmatch.fnmatchcase(n, alternative)]
    if alternative in names:
        return [alternative]
    counters = schema.collections().get(alternative[1:]) if alternative.startswith("n") else None
    if not counters:
        return []
    sizing = [b.counter for b in schema.branches if b.name in wanted and b.counter in counters]
    return [(sizing or counters)[0]]


def resolve(selection: Selection, schema: Schema) -> list[str] | str:
    """The branches of ``schema`` that ``selection`` reads, in the selection's order, each once
    (``"*"`` stays ``"*"``); raises :class:`Unresolved` for the first item that reads none."""
    if selection == ALL:
        return ALL
    names = set(schema.names)
    # members a counter item may stand beside: plain names the schema has (Jet_pt -> nJet_pt)
    wanted = {a for item in selection for a in ([item] if isinstance(item, str) else item)
              if a in names}
    out: list[str] = []
    for item in selection:
        for alternative in [item] if isinstance(item, str) else item:
            found = _one(alternative, schema, names, wanted)
            if found:
                out += found
                break
        else:
            raise Unresolved(item)
    return list(dict.fromkeys(out))


def to_cli(selection: Selection) -> str:
    """A selection as ``--selection NAME=...`` spells it (``,`` between items, ``|`` between
    alternatives); :func:`from_cli` reads it back."""
    if selection == ALL:
        return ALL
    return ",".join(item if isinstance(item, str) else OR.join(item) for item in selection)


def from_cli(text: str) -> Selection:
    if text == ALL:
        return ALL
    return [item.split(OR) if OR in item else item for item in text.split(",")]


@cache
def _file_schema(path: str, tree: str, stamp: tuple[int, int]) -> Schema:
    from hepfmt.samples.inputs import extract_schema

    del stamp  # part of the cache key only: a rewritten file is read again
    return extract_schema(path, tree)


@cache
def _model_schema(path: str | None) -> Schema:
    from hepfmt.samples.model import load_model

    return load_model(path).schema


def sample_schema(config: Mapping, sample: str) -> Schema | None:
    """The branches sample ``sample`` will have: its model's (generated), its file's (imported;
    the header only, well under a second for NanoAOD, once per file and process), or None for a
    remote file, which the plan does not open."""
    s = config["samples"][sample]
    if "file" not in s:
        return _model_schema(config.get("model") or None)
    path = s["file"]
    if is_url(path):
        return None
    st = os.stat(path)
    try:
        return _file_schema(path, s.get("tree", "Events"), (st.st_mtime_ns, st.st_size))
    except InputError as exc:
        raise ConfigError(f"samples.{sample}.file", str(exc)) from None


def for_sample(config: Mapping, sample: str) -> dict[str, list[str] | str | None]:
    """Selection name -> the branches sample ``sample`` reads for it (None: a remote sample's,
    resolved by its measure job); a config error names the item and the sample that lacks it."""
    selections = config["measure"]["selections"]
    schema = sample_schema(config, sample)
    if schema is None:
        return dict.fromkeys(selections)
    out: dict[str, list[str] | str | None] = {}
    for name, sel in selections.items():
        try:
            out[name] = resolve(sel, schema)
        except Unresolved as exc:
            i = list(sel).index(exc.item)
            raise ConfigError(f"measure.selections.{name}[{i}]",
                              f"{exc} of sample {sample!r} ({schema.origin or 'its schema'})"
                              ) from None
    return out


def per_sample(config: Mapping) -> dict[str, dict[str, list[str] | str | None]]:
    """Sample -> :func:`for_sample`, for every sample of the study."""
    return {sample: for_sample(config, sample) for sample in config["samples"]}
