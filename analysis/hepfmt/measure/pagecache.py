"""Page-cache control: evict a file and prove, with mincore, that it is gone (cold reads), or load
it whole (warm reads).

``posix_fadvise(DONTNEED)`` is a request, not a guarantee: dirty pages, tmpfs, some network and
FUSE filesystems, or another process mapping the file can keep pages resident. So eviction is
always followed by counting resident pages with ``mincore(2)``; only a count of zero makes a read
"cold". Anything else is reported as not verified, never silently as cold.
"""

from __future__ import annotations

import ctypes
import mmap
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_ubyte)]
_libc.mincore.restype = ctypes.c_int


@dataclass(frozen=True)
class Eviction:
    pages: int
    resident_before: int
    resident_after: int

    @property
    def verified(self) -> bool:
        return self.resident_after == 0


def resident_pages(path: str | Path) -> tuple[int, int]:
    """(resident, total) pages of a file in the page cache, from mincore on a read-only map."""
    size = os.path.getsize(path)
    if size == 0:
        return 0, 0
    n = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    vec = (ctypes.c_ubyte * n)()
    with open(path, "rb") as f, mmap.mmap(f.fileno(), size, prot=mmap.PROT_READ) as m:
        view = np.frombuffer(m, dtype=np.uint8)  # mmap hides its address; numpy exposes it
        rc = _libc.mincore(ctypes.c_void_p(view.ctypes.data), size, vec)
        del view  # the map cannot close while a view exports it
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"mincore failed: {os.strerror(err)}", str(path))
    return int(np.count_nonzero(np.frombuffer(vec, dtype=np.uint8) & 1)), n


def evict(path: str | Path) -> Eviction:
    """Write back, drop and re-count the file's cached pages."""
    before, total = resident_pages(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    after, _ = resident_pages(path)
    return Eviction(total, before, after)


def load(path: str | Path) -> tuple[int, int]:
    """Read the file whole so that its pages are cached, and count them: (resident, total). A
    timing that calls itself warm can then say it was."""
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass
    return resident_pages(path)
