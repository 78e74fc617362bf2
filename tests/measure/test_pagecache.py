"""Cold reads are only cold if eviction is proven: mincore must see the pages go."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hepfmt.measure.pagecache import evict, resident_pages

NO_EVICTION_FS = {"tmpfs", "ramfs"}


def _fstype(path: Path) -> str:
    """Filesystem type of the mount holding ``path`` (longest mount-point prefix)."""
    path = os.path.realpath(path)
    best, fstype = "", "unknown"
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            mnt = fields[1].replace("\\040", " ")
            inside = path == mnt or path.startswith(mnt.rstrip("/") + "/")
            if inside and len(mnt) >= len(best):
                best, fstype = mnt, fields[2]
    return fstype


@pytest.fixture
def resident_file(tmp_path: Path) -> Path:
    fstype = _fstype(tmp_path)
    if fstype in NO_EVICTION_FS:
        pytest.skip(f"{tmp_path} is on {fstype}: its pages live only in memory and cannot be "
                    "evicted, so cold-cache eviction cannot be tested here")
    path = tmp_path / "data.bin"
    path.write_bytes(os.urandom(4 << 20))
    path.read_bytes()  # make it resident
    return path


def test_read_file_is_resident(resident_file):
    """After a read, mincore must report cached pages, or 'verified' would be meaningless."""
    resident, total = resident_pages(resident_file)
    assert total == -(-(4 << 20) // os.sysconf("SC_PAGE_SIZE"))
    assert 0 < resident <= total


def test_evict_empties_page_cache(resident_file):
    """Eviction is followed by a recount; a file on a normal disk must end with zero pages."""
    ev = evict(resident_file)
    assert ev.resident_before > 0
    assert ev.pages == resident_pages(resident_file)[1]
    assert ev.resident_after == 0
    assert ev.verified
    assert resident_pages(resident_file)[0] == 0


def test_empty_file(tmp_path):
    """An empty file cannot be mapped; it has no pages and is trivially evicted."""
    path = tmp_path / "empty"
    path.touch()
    assert resident_pages(path) == (0, 0)
    assert evict(path).verified
