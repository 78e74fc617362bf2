"""Per-branch checksums that every reader, in any language, must reproduce exactly.

A checksum is ``(count, sum, weighted, type)`` over a branch's values in file order (a jagged
branch's values flattened, event after event):

* ``count``: the number of values;
* ``sum``: the sum of their bit patterns read as unsigned integers of the value's own width,
  widened to 64 bits, modulo 2**64 (a bool is 0/1);
* ``weighted``: the sum of ``(i + 1) * bits_i`` modulo 2**64, ``i`` the value's position in the
  branch: it changes when values move (row groups, stripes, batches, baskets or pages
  reordered or swapped) and when a change keeps the sum (one value up, another down);
* ``type``: the values' type, ``(ord(kind) << 8) | width`` of a kind letter (``b`` bool, ``i``
  integer, ``f`` float) and byte width, so a float column re-declared as an int32 of the same
  bits fails the proof, as it must (0: no value seen yet). An integer's sign is not part of
  it: writers store an unsigned counter as signed (uproot's ``Int_t`` counters), which holds the
  same bits for every count a NanoAOD file has; a width or a kind that changes is caught.

Integer arithmetic is exact, so a C++ loop in ROOT, numpy in pyarrow's reader and uproot agree bit
for bit; a float sum would not. Chunks of one branch merge in order, exactly
(:func:`merge`: the second chunk's positions shifted by the first's count), so a reader may hand
its values over in chunks of any size. Touching every value is also what makes a proof read
honest: nothing can be skipped lazily. The ROOT readers' C++ twin of this definition is
``analysis/hepfmt/formats/root/cxx/checksum.hxx``; only the untimed proof reads compute it.
"""

from __future__ import annotations

import numpy as np

Checksum = tuple[int, int, int, int]

#: The checksum of no values: what every branch's running checksum starts from.
EMPTY: Checksum = (0, 0, 0, 0)
_MASK = (1 << 64) - 1
_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def type_code(dtype: np.dtype) -> int:
    """The ``type`` field of a checksum of values of ``dtype``."""
    dtype = np.dtype(dtype)
    kind = "i" if dtype.kind == "u" else dtype.kind
    return (ord(kind) << 8) | (1 if kind == "b" else dtype.itemsize)


def describe_type(code: int) -> str:
    """``f4``, ``i4``, ``b1``...: a type field as a person reads it."""
    return f"{chr(code >> 8)}{code & 0xFF}" if code else "none"


def checksum(values: np.ndarray) -> Checksum:
    """Checksum of a flat numpy array of values (already decoded, any fixed-width dtype), as the
    first chunk of its branch."""
    values = np.ascontiguousarray(values)
    if values.size == 0:  # no value, no type: as a C++ loop that never ran
        return EMPTY
    code = type_code(values.dtype)
    if values.dtype == np.bool_:
        bits = values.view(np.uint8).astype(np.uint64)
    else:
        bits = values.view(_UNSIGNED[values.dtype.itemsize]).astype(np.uint64, copy=False)
    total = int(np.add.reduce(bits, dtype=np.uint64))
    # numpy's unsigned arithmetic wraps modulo 2**64, as the definition does
    positions = np.arange(1, values.size + 1, dtype=np.uint64)
    weighted = int(np.add.reduce(positions * bits, dtype=np.uint64))
    return int(values.size), total, weighted, code


def merge(a: Checksum, b: Checksum) -> Checksum:
    """The checksum of chunk ``a`` followed by chunk ``b`` of one branch. Values of two types in
    one branch are not one branch's values: refused."""
    if a[3] and b[3] and a[3] != b[3]:
        raise ValueError(f"one branch's chunks hold {describe_type(a[3])} and "
                         f"{describe_type(b[3])} values")
    return (a[0] + b[0], (a[1] + b[1]) & _MASK, (a[2] + b[2] + a[0] * b[1]) & _MASK,
            a[3] or b[3])


def fmt(c: Checksum) -> str:
    return f"{c[0]}:{c[1]:016x}:{c[2]:016x}:{describe_type(c[3])}"


def differs_by(got: Checksum, want: Checksum) -> str:
    """What a reader's checksum of a branch gets wrong, in words: the type, the number of
    values, their values, or only their order."""
    if got[3] != want[3] and got[0]:
        return f"type {describe_type(got[3])}, not {describe_type(want[3])}"
    if got[0] != want[0]:
        return f"{got[0]} values, not {want[0]}"
    if got[1] != want[1]:
        return "values differ"
    return "values moved, or changed keeping their sum"
