"""Checksums are the cross-reader truth: (count, sum of own-width bit patterns mod 2**64,
position-weighted sum, type). The count and sum are checked on their own first (``[:2]``), then
what the position and the type add: a proof that sees order, type and sum-keeping changes."""

from __future__ import annotations

import numpy as np
import pytest

from hepfmt.checksum import EMPTY, checksum, differs_by, fmt, merge

U64 = 1 << 64


def test_bool_counts_true_values():
    """A bool is 0/1, whatever numpy's byte holds."""
    assert checksum(np.array([True, False, True, True]))[:2] == (4, 3)
    assert checksum(np.zeros(5, dtype=bool))[:2] == (5, 0)


def test_uint8_sum_is_widened():
    """Narrow types are summed in 64 bits, not wrapped at their own width."""
    assert checksum(np.array([0, 1, 255, 255], dtype=np.uint8))[:2] == (4, 511)


def test_signed_types_use_own_width_bit_patterns():
    """-1 as int16 is 0xFFFF (not sign-extended to 64 bits): C++ readers do the same."""
    assert checksum(np.array([-1], dtype=np.int16))[:2] == (1, 0xFFFF)
    assert checksum(np.array([-128, 127], dtype=np.int8))[:2] == (2, 128 + 127)
    assert checksum(np.array([-1, -2], dtype=np.int32))[:2] == (2, 0xFFFFFFFF + 0xFFFFFFFE)


def test_float32_bit_patterns():
    """Floats are checksummed by their bits, so -0.0 and 0.0 differ and order cannot matter."""
    x = np.array([1.0, -2.0, 0.0, -0.0, 0.5], dtype=np.float32)
    want = 0x3F800000 + 0xC0000000 + 0 + 0x80000000 + 0x3F000000
    assert checksum(x)[:2] == (5, want)


def test_float64_bit_pattern():
    assert checksum(np.array([1.0, -1.0]))[:2] == (2, 0x3FF0000000000000 + 0xBFF0000000000000)
    assert checksum(np.array([-1.0, -1.0]))[:2] == (2, 2 * 0xBFF0000000000000 - U64)


def test_int64_negative_wraps_mod_2_64():
    """-1 is 2**64-1; adding 1 wraps to 0. Sums never overflow into Python big ints."""
    assert checksum(np.array([-1, 1], dtype=np.int64))[:2] == (2, 0)
    assert checksum(np.array([-1, -1], dtype=np.int64))[:2] == (2, U64 - 2)
    assert checksum(np.array([2**63 - 1, 2**63 - 1, 2], dtype=np.int64))[:2] == (3, 0)
    assert checksum(np.array([U64 - 1, 5], dtype=np.uint64))[:2] == (2, 4)


def test_empty_and_non_contiguous():
    """Empty collections are common (nMuon == 0); strided views must not be misread."""
    assert checksum(np.array([], dtype=np.float32))[:2] == (0, 0)
    assert checksum(np.array([], dtype=bool))[:2] == (0, 0)
    x = np.arange(10, dtype=np.uint16)
    assert checksum(x[::2])[:2] == (5, 0 + 2 + 4 + 6 + 8)


def test_merge_is_exact_and_associative():
    x = np.arange(1, 20, dtype=np.uint32)
    a, b, c = checksum(x[:5]), checksum(x[5:11]), checksum(x[11:])
    assert merge(merge(a, b), c) == merge(a, merge(b, c)) == checksum(x)
    assert merge(EMPTY, a) == a


def test_order_is_part_of_the_proof():
    """Chunks (row groups, baskets, pages) swapped hold the same values: the count and the sum
    agree, the position-weighted sum does not."""
    x = np.arange(1000, dtype=np.float32)
    swapped = np.concatenate([x[500:], x[:500]])
    assert checksum(swapped)[:2] == checksum(x)[:2]
    assert checksum(swapped) != checksum(x)
    assert differs_by(checksum(swapped), checksum(x)).startswith("values moved")
    assert merge(checksum(x[500:]), checksum(x[:500])) != merge(checksum(x[:500]),
                                                                checksum(x[500:]))


def test_a_change_that_keeps_the_sum_is_caught():
    x = np.arange(100, dtype=np.int32)
    y = x.copy()
    y[10] += 1
    y[90] -= 1
    assert checksum(y)[:2] == checksum(x)[:2] and checksum(y) != checksum(x)


def test_a_type_redeclared_with_the_same_bits_is_caught():
    x = np.linspace(0, 1, 50, dtype=np.float32)
    as_int = x.view(np.int32)
    assert checksum(as_int)[:3] == checksum(x)[:3] and checksum(as_int) != checksum(x)
    assert differs_by(checksum(as_int), checksum(x)) == "type i4, not f4"
    with pytest.raises(ValueError, match="i4 and f4"):
        merge(checksum(as_int), checksum(x))


def test_an_integer_sign_is_not_a_type_change():
    """uproot writes NanoAOD's uint32 counters as Int_t: same bits, the same proof."""
    counts = np.array([0, 3, 2, 7], dtype=np.uint32)
    assert checksum(counts) == checksum(counts.astype(np.int32))
    assert checksum(counts) != checksum(counts.astype(np.int64))


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
        acc = EMPTY
        for part in np.split(values, cuts):
            acc = merge(acc, checksum(part))
        assert acc == whole


def test_fmt():
    assert fmt((3, 255, 4096, (ord("f") << 8) | 4)) == \
        "3:00000000000000ff:0000000000001000:f4"
