"""The structural check before decoding: silent on every healthy file, and a damaged one (a size
past the end, a block listed out of order, a huge entry count) refused in one line naming the
file and the relation, from metadata and small header reads alone."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import uproot

from conftest import compressed_variant
from hepfmt.errors import ConfigError, InputError
from hepfmt.formats import preflight

NANO = Path(__file__).resolve().parents[3] / "shared" / "nanoaod" / "nano_dy.root"
CHECKED = sorted(preflight.CHECKS)


def _damaged(good: Path, dst: Path, patch) -> Path:
    data = bytearray(good.read_bytes())
    patch(data)
    dst.write_bytes(bytes(data))
    return dst


def _refused(path: Path, fmt: str, relation: str) -> str:
    with pytest.raises(InputError) as info:
        preflight.check(path, fmt)
    line = str(info.value)
    assert line.startswith(f"{path}: ") and "\n" not in line and relation in line, line
    return line


@pytest.mark.parametrize("fmt", CHECKED)
def test_a_healthy_file_passes(fmt: str, written) -> None:
    assert preflight.check(written(fmt, compressed_variant(fmt)), fmt) is None


@pytest.mark.skipif(not NANO.is_file(), reason=f"needs {NANO}")
def test_real_nanoaod_passes() -> None:
    assert preflight.check(NANO, "ttree") is None


def test_an_unknown_format_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown format 'nope'"):
        preflight.check(tmp_path, "nope")


# --- TTree -------------------------------------------------------------------------------------

def _tree(path: Path) -> Path:
    """Two baskets of one flat branch, uncompressed, so the basket lists are plain bytes."""
    with uproot.recreate(path, compression=None) as f:
        f.mktree("Events", {"MET_pt": np.float32})
        f["Events"].extend({"MET_pt": np.arange(300, dtype=np.float32)})
        f["Events"].extend({"MET_pt": np.arange(200, dtype=np.float32)})
    return path


def test_a_huge_basket_size_is_refused(tmp_path: Path) -> None:
    good = _tree(tmp_path / "good.root")
    sizes = np.asarray(uproot.open(good)["Events"]["MET_pt"].member("fBasketBytes"))
    old = struct.pack(f">{len(sizes)}i", *sizes)
    huge = sizes.copy()
    huge[1] = 2**30

    def patch(d: bytearray) -> None:
        at = d.index(old)
        d[at:at + len(old)] = struct.pack(f">{len(huge)}i", *huge)

    bad = _damaged(good, tmp_path / "huge_basket.root", patch)
    _refused(bad, "ttree", "branch MET_pt basket 1 at seek")


def test_a_huge_entry_count_is_refused_with_little_memory(tmp_path: Path) -> None:
    good = _tree(tmp_path / "good.root")
    at = uproot.open(good).key("Events").fSeekKey

    def patch(d: bytearray) -> None:
        first = d.index(struct.pack(">q", 500), at)  # the TTree's own fEntries comes first
        d[first:first + 8] = struct.pack(">q", 2**62)

    bad = _damaged(good, tmp_path / "huge_count.root", patch)
    # in a child, so its peak memory (VmHWM: of its own image, unlike ru_maxrss, which keeps
    # the forking parent's) is the check's own, with uproot's and numpy's imports
    code = ("import re,sys\nfrom hepfmt.formats import preflight\n"
            "from hepfmt.errors import InputError\n"
            "try:\n preflight.check(sys.argv[1], 'ttree')\nexcept InputError as e:\n"
            " print(e)\n"
            "print(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())[1])")
    out = subprocess.run([sys.executable, "-c", code, str(bad)], capture_output=True,
                         text=True, timeout=300, check=True).stdout.splitlines()
    assert f"branch MET_pt declares 500 entries, the tree {2**62}" in out[0], out
    assert int(out[1]) < 1_000_000, out  # KiB: far below what 2^62 entries would take


# --- Parquet, Arrow IPC, ORC, HDF5 -------------------------------------------------------------

def test_a_parquet_chunk_past_the_data_is_refused(written, tmp_path: Path) -> None:
    good = written("parquet", compressed_variant("parquet"))
    bad = _damaged(good, tmp_path / "shifted.parquet",
                   lambda d: d.__delitem__(slice(len(d) // 2, len(d) // 2 + 4096)))
    _refused(bad, "parquet", "(a damaged column chunk offset or size)")


def test_a_huge_parquet_footer_length_is_refused(written, tmp_path: Path) -> None:
    good = written("parquet", compressed_variant("parquet"))
    bad = _damaged(good, tmp_path / "footer.parquet",
                   lambda d: d.__setitem__(slice(-8, -4), struct.pack("<i", 2**30)))
    _refused(bad, "parquet", f"footer declares {2**30} bytes")


def _ipc_footer(d: bytearray) -> tuple[int, int]:
    (n,) = struct.unpack("<i", d[-10:-6])
    return len(d) - 10 - n, len(d) - 10


def test_arrow_ipc_batches_swapped_or_past_the_footer_are_refused(written,
                                                                  tmp_path: Path) -> None:
    good = written("feather", compressed_variant("feather"))
    data = bytearray(good.read_bytes())
    start, end = _ipc_footer(data)
    blocks = preflight._ipc_blocks(bytes(data[start:end]), 3)
    packed = [struct.pack("<qi4xq", *b) for b in blocks]
    where = [data.index(p, start) for p in packed]

    def swap(d: bytearray) -> None:
        d[where[0]:where[0] + 24], d[where[1]:where[1] + 24] = packed[1], packed[0]

    def huge(d: bytearray) -> None:
        d[where[1]:where[1] + 24] = struct.pack("<qi4xq", blocks[1][0], blocks[1][1], 2**40)

    _refused(_damaged(good, tmp_path / "swapped.arrow", swap), "feather",
             "record batch 1 lies before record batch 0 in the file (record batches reordered)")
    _refused(_damaged(good, tmp_path / "huge.arrow", huge), "feather",
             "record batch 1 declares bytes")


def test_a_damaged_orc_postscript_is_refused(written, tmp_path: Path) -> None:
    good = written("orc", compressed_variant("orc"))
    bad = _damaged(good, tmp_path / "ps.orc", lambda d: d.__setitem__(-1, 0))
    _refused(bad, "orc", "postscript declares 0 bytes")


def test_an_hdf5_file_shorter_than_its_superblock_says_is_refused(written,
                                                                  tmp_path: Path) -> None:
    good = written("hdf5", compressed_variant("hdf5"))
    bad = _damaged(good, tmp_path / "cut.h5", lambda d: d.__delitem__(slice(-4096, None)))
    _refused(bad, "hdf5", "superblock declares")
