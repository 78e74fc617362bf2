"""ROOT TTree and RNTuple writers for wide Arrow tables, with one cluster per row group.

The metadata study needs ROOT files of any width (up to 100000 columns) and of column kinds the
main study's TTree adapter does not write (strings), plus RNTuples, which it does not write at
all. Both writers share one JIT-compiled C++ fill loop over raw Arrow buffers: a Python loop over
10^5 columns per row would be far too slow, and RDataFrame cannot declare that many columns.

Column kinds, as Arrow lays them out:

* ``scalar``: fixed-width values (bool as one byte, ints, floats): TTree leaf ``x/F``, RNTuple
  field ``float``;
* ``jagged``: a list of fixed-width values with int64 offsets, sized by a counter column
  (``Muon_pt[nMuon]/F``; RNTuple field ``ROOT::RVec<float>`` beside the ``nMuon`` field, as
  RDataFrame's Snapshot writes NanoAOD);
* ``string``: UTF-8 bytes with int64 offsets: ``std::string`` branch and field.

Clusters: TTree ``SetAutoFlush(rows_per_group)``; RNTuple ``CommitCluster()`` after each row group
with the byte-size cluster limits raised so that only those calls end clusters. Everything else
(basket and page sizes, cluster grouping) is left at the library's defaults: the study measures
the metadata that ROOT writes by default.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from hepfmt.formats.root.backend import CPP_TYPES, LEAF_CODES, TREE, create, root
from hepfmt.samples.source import to_column

KINDS = {"scalar": 0, "jagged": 1, "string": 2}


@dataclass(frozen=True)
class Column:
    """One column of a wide table: its kind, its value dtype and, if jagged, its counter."""

    name: str
    kind: str  # scalar | jagged | string
    dtype: str  # numpy dtype name of the values; "string" for strings
    counter: str | None = None

    @property
    def itemsize(self) -> int:
        return 1 if self.kind == "string" else np.dtype(self.dtype).itemsize

    @property
    def leaf(self) -> str:
        """The TTree leaf list (unused for strings, which are object branches)."""
        if self.kind == "string":
            return ""
        size = f"[{self.counter}]" if self.kind == "jagged" else ""
        return f"{self.name}{size}/{LEAF_CODES[self.dtype]}"


def _buffers(table: pa.Table | pa.RecordBatch, columns: list[Column]):
    """Addresses of each column's values (and int64 offsets) for the C++ loop, plus the arrays
    that own them (keep them alive while C++ reads)."""
    keep, data, offsets = [], [], []
    for col in columns:
        arr = table.column(col.name)
        if isinstance(arr, pa.ChunkedArray):
            arr = arr.combine_chunks()
        if col.kind == "string":
            off = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset:arr.offset
                                                                 + len(arr) + 1]
            chars = arr.buffers()[2]
            values = np.frombuffer(chars, dtype=np.uint8) if chars is not None and chars.size \
                else np.zeros(1, np.uint8)
            off64 = off.astype(np.int64)
        else:
            c = to_column(arr)
            values = c.values if c.values.size else np.zeros(1, c.values.dtype)
            off64 = c.offsets
        keep += [values, off64]
        data.append(values.ctypes.data)
        offsets.append(0 if off64 is None else off64.ctypes.data)
    return np.array(data, dtype=np.uint64), np.array(offsets, dtype=np.uint64), keep


def write(fmt: str, out: str | Path, columns: list[Column],
          groups: Iterable[tuple[pa.Table | pa.RecordBatch, int]], rows_per_group: int,
          compression: int, max_page_size: int = 0) -> None:
    """Write ``groups`` (each: a block of distinct rows and how many rows the group has) as a
    TTree (``fmt="ttree"``) or an RNTuple (``fmt="rntuple"``) named ``Events``.

    ``max_page_size`` (bytes, RNTuple only; 0 = ROOT's default) caps the unzipped page size:
    the main study's RNTuple adapter matches its pages to the TTree's baskets with it.

    Not atomic by itself: the caller writes to a temporary path and verifies it.
    """
    ROOT = root("wide_writers")
    names = [c.name for c in columns]
    kinds = [KINDS[c.kind] for c in columns]
    sizes = [c.itemsize for c in columns]
    vec = ROOT.std.vector
    if fmt == "ttree":
        w = create(out, lambda name: ROOT.hepfmt_wide.TreeWriter(
            name, TREE, compression, rows_per_group, vec["std::string"](names),
            vec["int"](kinds), vec["std::string"]([c.leaf for c in columns]), vec["int"](sizes)))
    elif fmt == "rntuple":
        types = [CPP_TYPES.get(c.dtype, "") for c in columns]
        w = create(out, lambda name: ROOT.hepfmt_wide.NTupleWriter(
            name, TREE, compression, vec["std::string"](names), vec["int"](kinds),
            vec["std::string"](types), vec["int"](sizes), max_page_size))
    else:
        raise ValueError(f"no ROOT writer for format {fmt!r}")
    for block, rows in groups:
        data, offsets, keep = _buffers(block, columns)
        w.Group(rows, block.num_rows, data, offsets)
        del keep
    w.Close()
