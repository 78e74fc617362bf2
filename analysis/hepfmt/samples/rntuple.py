"""An RNTuple's columns as hepfmt takes them, from the file's own field model (its header's
field and column records, as uproot reads them), whoever wrote it.

Writers spell the same data differently: uproot writes ``std::vector<float>`` fields,
RDataFrame's Snapshot ``ROOT::VecOps::RVec<float>`` beside a ``std::uint32_t`` counter, and
ROOT's ``RNTupleImporter`` one untyped record collection per TTree collection
(``_collection15``, holding ``Muon_pt``, ``Muon_eta``, ...) plus projected fields that show it
as the TTree did (``Muon_pt`` as a ``RVec<float>``, ``nMuon`` as a
``ROOT::RNTupleCardinality<std::uint32_t>``). So a field is judged by its structure (a leaf with
one value column, or a collection of one such leaf) and its dtype taken from the column type the
file stores, never from a list of type names; a projected field is judged by the field it shows.
The record collections behind projections are storage, not columns: each of their leaves is
seen through its projection.
"""

from __future__ import annotations

import re

from uproot import const
from uproot.const import RNTupleFieldFlags as Flags
from uproot.const import RNTupleFieldRole as Role

from hepfmt.errors import InputError
from hepfmt.samples.schema import DTYPES

#: In-memory dtype of the column types uproot names (uproot.const); the rest are numpy names.
COLUMN_DTYPES = {"bit": "bool", "real32trunc": "float32", "real32quant": "float32"}
#: A cardinality field (a collection's length per entry) and its integer type.
CARDINALITY = re.compile(r"^ROOT::(?:Experimental::)?RNTupleCardinality<(?:std::)?(u?int\d+)_t>$")
READS = "hepfmt reads numbers and booleans, flat or in one collection level"


def _spelled(records: list, i: int) -> str:
    """A field's type as ROOT spells it; an untyped record collection (RNTupleImporter's
    ``_collectionN``) has none, so its members are listed."""
    r = records[i]
    if r.type_name:
        return r.type_name
    kids = [j for j, k in enumerate(records) if k.parent_field_id == i and j != i]
    inner = ", ".join(f"{records[j].field_name}: {_spelled(records, j)}" for j in kids[:3])
    more = ", ..." if len(kids) > 3 else ""
    what = "collection" if r.struct_role == Role.COLLECTION else "record"
    return f"untyped {what} {{{inner}{more}}}"


def columns(path: str, ntuple: object) -> list[tuple[str, str, bool, str | None]]:
    """(name, dtype, jagged, counter) of every top-level field in file order; the counter is
    the cardinality field the file projects onto the same collection, where it has one."""
    records = list(ntuple.field_records)
    kids: dict[int, list[int]] = {}
    for i, r in enumerate(records):
        if r.parent_field_id != i:
            kids.setdefault(r.parent_field_id, []).append(i)
    values: dict[int, list] = {}
    for c in ntuple.column_records:
        if c.repr_idx == 0:
            values.setdefault(c.field_id, []).append(c)
    top = [i for i, r in enumerate(records) if r.parent_field_id == i]

    def source(i: int) -> int:
        r = records[i]
        return r.source_field_id if r.flags & Flags.PROJECTED and r.source_field_id is not None \
            else i

    def leaf_dtype(i: int) -> str | None:
        """The dtype of a leaf holding one value column (of itself or the field it shows)."""
        cols = values.get(source(i), [])
        if kids.get(i) or len(cols) != 1 or cols[0].type in const.rntuple_index_types:
            return None
        name = const.rntuple_col_num_to_dtype_dict.get(cols[0].type, "")
        name = COLUMN_DTYPES.get(name, name)
        return name if name in DTYPES else None

    projected = {source(j) for i in top for j in [i, *_below(kids, i)]
                 if records[j].flags & Flags.PROJECTED}
    cardinality = {source(i): records[i].field_name for i in top
                   if CARDINALITY.match(records[i].type_name)}
    out = []
    for i in top:
        r = records[i]
        name, role = r.field_name, r.struct_role
        if m := CARDINALITY.match(r.type_name):
            out.append((name, m[1], False, None))
            continue
        dtype = leaf_dtype(i) if role == Role.LEAF else None
        if dtype is not None:
            out.append((name, dtype, False, None))
            continue
        inner = kids.get(i, [])
        if role == Role.COLLECTION and len(inner) == 1:
            dtype = leaf_dtype(inner[0])
            if dtype is not None:
                out.append((name, dtype, True, cardinality.get(source(i))))
                continue
        if role in (Role.COLLECTION, Role.RECORD) and _below(kids, i) and \
                all(j in projected for j in _below(kids, i) if not kids.get(j)):
            continue  # storage of projected fields, read through them
        raise InputError(path, f"field {name}: unsupported type {_spelled(records, i)} ({READS})")
    return out


def _below(kids: dict[int, list[int]], i: int) -> list[int]:
    """Every field under field ``i``."""
    out, todo = [], list(kids.get(i, []))
    while todo:
        j = todo.pop()
        out.append(j)
        todo += kids.get(j, [])
    return out
