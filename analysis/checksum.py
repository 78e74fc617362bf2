"""Per-branch checksums that every reader, in any language, must reproduce exactly.

A checksum is ``(count, sum)``: the number of values and the sum of their bit patterns read as
unsigned integers of the value's own width, widened to 64 bits, modulo 2**64 (a bool is 0/1).
Integer arithmetic is exact and independent of summation order, so a C++ loop in ROOT, numpy in
pyarrow's reader and uproot all agree bit for bit; a float sum would not. Touching every value is
also what makes a "read" honest: nothing can be skipped lazily. The ROOT readers' C++ twin of
this definition is ``analysis/formats/root/cxx/checksum.hxx``.
"""

from __future__ import annotations

import numpy as np

Checksum = tuple[int, int]

_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def checksum(values: np.ndarray) -> Checksum:
    """Checksum of a flat numpy array of values (already decoded, any fixed-width dtype)."""
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        return int(values.size), int(np.count_nonzero(values))
    bits = values.view(_UNSIGNED[values.dtype.itemsize])
    total = np.add.reduce(bits, dtype=np.uint64) if bits.size else np.uint64(0)
    return int(values.size), int(total)


def merge(a: Checksum, b: Checksum) -> Checksum:
    """Combine checksums of consecutive chunks of one branch."""
    return a[0] + b[0], (a[1] + b[1]) % (1 << 64)


def fmt(c: Checksum) -> str:
    return f"{c[0]}:{c[1]:016x}"
