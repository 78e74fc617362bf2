"""TTrees and RNTuples written by uproot: the writer of a user who has no ROOT installation.

uproot writes one basket per branch (TTree) or one cluster (RNTuple) per ``extend`` call, so the
source is passed one cluster at a time. What uproot decides for itself, and files record:

* TTree counter branches (``nMuon``) are always ``Int_t``, whatever their source type
  (``uint32`` in NanoAOD): same bits for the counts NanoAOD holds, so checksums still agree;
* a TTree gets no cluster ranges (``fAutoFlush`` stays ROOT's byte-based default): ROOT's cluster
  iterator then estimates clusters from bytes, and the real boundaries are those of the baskets,
  aligned across branches (:func:`hepfmt.formats.root.ttree.describe` reports those);
* there is no basket or page size to set.
"""

from __future__ import annotations

from pathlib import Path

import awkward as ak

from hepfmt.codec import Variant
from hepfmt.formats.root.backend import TREE, create
from hepfmt.samples.schema import Schema
from hepfmt.samples.source import iter_clusters, to_column

KINDS = ("ttree", "rntuple")


def _arrays(table, schema: Schema) -> dict:
    """One cluster as uproot takes it: numpy arrays, and awkward lists built on the Arrow
    buffers without a copy."""
    out = {}
    for b in schema.branches:
        col = to_column(table.column(b.name))
        out[b.name] = col.values if col.offsets is None else ak.Array(
            ak.contents.ListOffsetArray(ak.index.Index64(col.offsets),
                                        ak.contents.NumpyArray(col.values)))
    return out


def write(kind: str, source: Path, tmp: Path, schema: Schema, variant: Variant,
          cluster_size: int) -> None:
    import uproot

    if kind not in KINDS:
        raise ValueError(f"uproot writes {KINDS}, not {kind!r}")
    counters = {b.name: b.counter for b in schema.branches if b.jagged}
    with create(tmp, lambda name: uproot.recreate(
            name, compression=variant.uproot_compression())) as f:
        if kind == "ttree":
            types = {b.name: f"var * {b.dtype}" if b.jagged else b.dtype
                     for b in schema.branches}
            tree = f.mktree(TREE, types, counter_name=counters.__getitem__)
        else:
            types = {b.name: ak.types.from_datashape(
                f"var * {b.dtype}" if b.jagged else b.dtype, highlevel=False)
                for b in schema.branches}
            tree = f.mkrntuple(TREE, types)
        for table, _ in iter_clusters(source, schema.names, cluster_size):
            tree.extend(_arrays(table, schema))
