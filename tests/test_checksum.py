"""Checksums are the cross-reader truth: (count, sum of own-width bit patterns mod 2**64)."""

from __future__ import annotations

import numpy as np
import pytest

from analysis.checksum import checksum, fmt, merge

U64 = 1 << 64


def test_bool_counts_true_values():
    """A bool is 0/1, whatever numpy's byte holds."""
    assert checksum(np.array([True, False, True, True])) == (4, 3)
    assert checksum(np.zeros(5, dtype=bool)) == (5, 0)


def test_uint8_sum_is_widened():
    """Narrow types are summed in 64 bits, not wrapped at their own width."""
    assert checksum(np.array([0, 1, 255, 255], dtype=np.uint8)) == (4, 511)


def test_signed_types_use_own_width_bit_patterns():
    """-1 as int16 is 0xFFFF (not sign-extended to 64 bits): C++ readers do the same."""
    assert checksum(np.array([-1], dtype=np.int16)) == (1, 0xFFFF)
    assert checksum(np.array([-128, 127], dtype=np.int8)) == (2, 128 + 127)
    assert checksum(np.array([-1, -2], dtype=np.int32)) == (2, 0xFFFFFFFF + 0xFFFFFFFE)


def test_float32_bit_patterns():
    """Floats are checksummed by their bits, so -0.0 and 0.0 differ and order cannot matter."""
    x = np.array([1.0, -2.0, 0.0, -0.0, 0.5], dtype=np.float32)
    want = 0x3F800000 + 0xC0000000 + 0 + 0x80000000 + 0x3F000000
    assert checksum(x) == (5, want)


def test_float64_bit_pattern():
    assert checksum(np.array([1.0, -1.0])) == (2, 0x3FF0000000000000 + 0xBFF0000000000000)
    assert checksum(np.array([-1.0, -1.0])) == (2, 2 * 0xBFF0000000000000 - U64)


def test_int64_negative_wraps_mod_2_64():
    """-1 is 2**64-1; adding 1 wraps to 0. Sums never overflow into Python big ints."""
    assert checksum(np.array([-1, 1], dtype=np.int64)) == (2, 0)
    assert checksum(np.array([-1, -1], dtype=np.int64)) == (2, U64 - 2)
    assert checksum(np.array([2**63 - 1, 2**63 - 1, 2], dtype=np.int64)) == (3, 0)
    assert checksum(np.array([U64 - 1, 5], dtype=np.uint64)) == (2, 4)


def test_empty_and_non_contiguous():
    """Empty collections are common (nMuon == 0); strided views must not be misread."""
    assert checksum(np.array([], dtype=np.float32)) == (0, 0)
    assert checksum(np.array([], dtype=bool)) == (0, 0)
    x = np.arange(10, dtype=np.uint16)
    assert checksum(x[::2]) == (5, 0 + 2 + 4 + 6 + 8)


def test_merge_wraps_and_is_associative():
    a, b, c = (2, U64 - 1), (1, 5), (7, U64 - 3)
    assert merge(a, b) == (3, 4)
    assert merge(merge(a, b), c) == merge(a, merge(b, c))
    assert merge(merge(a, b), c) == merge(merge(a, c), b)
    assert merge((0, 0), a) == a


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int32", "uint32", "int64",
                                   "uint64", "float32", "float64"])
def test_chunking_independence(dtype):
    """Readers see different chunkings (row groups, clusters, batches): merged chunk checksums
    must equal the checksum of the whole, including empty chunks."""
    rng = np.random.default_rng(1)
    raw = rng.integers(0, 256, 8 * 1000, dtype=np.uint8)
    values = raw.view(np.uint8) != 0 if dtype == "bool" else raw.view(dtype)
    whole = checksum(values)
    for cuts in ([0, 0, 10, 10, 999], [1, 333, 500], list(range(0, values.size, 7))):
        acc = (0, 0)
        for part in np.split(values, cuts):
            acc = merge(acc, checksum(part))
        assert acc == whole


def test_fmt():
    assert fmt((3, 255)) == "3:00000000000000ff"
