"""What a read asked of storage: requests and bytes, as the kernel and the readers count them.

Three views, because each misses something: ``/proc/PID/io`` counts read syscalls and bytes of
one process (files and sockets alike, and ``read_bytes`` only what reached a block device); a
block device's ``stat`` counts the requests the device really served (after readahead and
merging, for every process); a reader's own counters (ROOT's ``TFile::GetReadCalls``, uproot's
``Source.num_requests``) count the requests it issued, which over a network are the round trips.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SECTOR = 512  # /sys/block/*/stat counts 512-byte sectors whatever the device's block size


@dataclass(frozen=True)
class IOCount:
    requests: int
    bytes: int

    def __sub__(self, other: IOCount) -> IOCount:
        return IOCount(self.requests - other.requests, self.bytes - other.bytes)


def proc_io(pid: int | str = "self") -> dict[str, int]:
    """``/proc/PID/io`` as numbers (``syscr``, ``rchar``, ``read_bytes``, ...)."""
    text = Path(f"/proc/{pid}/io").read_text()
    return {k: int(v) for k, v in (line.split(":") for line in text.splitlines())}


def syscalls(pid: int | str = "self") -> IOCount:
    """Read syscalls and bytes they returned (``syscr``, ``rchar``)."""
    io = proc_io(pid)
    return IOCount(io["syscr"], io["rchar"])


def block_device(name: str) -> IOCount:
    """Reads completed and bytes read by a block device (``/sys/block/NAME/stat`` fields 1, 3)."""
    fields = Path(f"/sys/block/{Path(name).name}/stat").read_text().split()
    return IOCount(int(fields[0]), int(fields[2]) * SECTOR)


def root_file(tfile) -> IOCount:
    """A ROOT ``TFile``'s own count of the read calls it issued (a vector read is one)."""
    return IOCount(int(tfile.GetReadCalls()), int(tfile.GetBytesRead()))


def uproot_source(source) -> IOCount:
    """An uproot ``Source``'s own count: requests issued (each may carry several ranges)."""
    return IOCount(int(source.num_requests), int(source.num_requested_bytes))


class CountingFile:
    """A read-only file object that counts the reads its consumer issues. fsspec's HTTP and
    XRootD files keep no such count; wrapped, the count is of the ranges pyarrow asked for
    (each a request to the server unless fsspec's block cache served it)."""

    def __init__(self, f) -> None:
        self._f = f
        self.requests = 0
        self.bytes = 0

    def read(self, size: int = -1) -> bytes:
        data = self._f.read(size)
        self.requests += 1
        self.bytes += len(data)
        return data

    def count(self) -> IOCount:
        return IOCount(self.requests, self.bytes)

    def __getattr__(self, name: str):
        return getattr(self._f, name)

    def __enter__(self) -> CountingFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.close()
