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


def xrootd_served(log: str | Path, offset: int = 0) -> tuple[dict, int]:
    """What an XRootD server traced (``xrootd.trace fs fsio``, :class:`~.servers.XRootDServer`
    with ``trace=True``) serving from byte ``offset`` of its log on: ``requests`` (a read, or a
    run of vector-read elements, as one round trip), ``ranges``, ``bytes`` and each range's
    ``sizes``; and the log's
    new end. The server's view counts every client alike, RNTuple's page reads included, which
    no counter inside ROOT reports process-wide."""
    out: dict = {"requests": 0, "ranges": 0, "bytes": 0, "sizes": []}
    with open(log, "rb") as f:
        f.seek(offset)
        text = f.read()
    in_vector = False
    for line in text.decode(errors="replace").splitlines():
        words = line.split()
        op = next((w for w in ("read", "readV") if w in words), None)
        if op is None or "Xrootd_Protocol:" not in words:
            in_vector = in_vector and "Xrootd_Protocol:" not in words
            continue
        size = words[words.index(op) + 1].split("@")[0]
        nbytes = int(size) if size.isdigit() else 0
        out["ranges"] += 1
        out["bytes"] += nbytes
        out["sizes"].append(nbytes)
        out["requests"] += op == "read" or not in_vector
        in_vector = op == "readV"
    return out, offset + len(text)


class ReaderTap:
    """The requests a reader's library issued, counted inside the reading process.

    ROOT keeps process-wide totals of its ``TFile`` reads (a vector read counts once); uproot
    and fsspec count per file object, so the tap records each file object the library opens.
    None where the library keeps no count that means requests: ROOT's RNTuple reads its pages
    through ``RRawFile``, which ``TFile``'s totals never see, and a local file read by Arrow is
    counted by the kernel only (``syscr``)."""

    def __init__(self, library: str, adapter: str, remote: bool) -> None:
        self.why_not: str | None = None
        self._sources: list = []
        self._fetched = [0, 0]  # HTTP range requests, bytes
        self._count = None
        if library == "root":
            if adapter == "rntuple":
                self.why_not = "ROOT's RNTuple reads pages through RRawFile, outside TFile's count"
            else:
                import ROOT

                self._count = lambda: IOCount(int(ROOT.TFile.GetFileReadCalls()),
                                              int(ROOT.TFile.GetFileBytesRead()))
        elif library == "uproot":
            import uproot.reading

            self._wrap(uproot.reading.ReadOnlyFile, lambda f: f.source)
            self._count = lambda: self._sum(uproot_source)
        elif remote:
            self._wrap_http()
            self._count = lambda: IOCount(*self._fetched)
        else:
            self.why_not = f"{library} keeps no request count of a local file (see syscr)"

    def _wrap(self, cls: type, source_of) -> None:
        """Record every instance's source when it is made (the class patched in this process
        only: a measurement process reads one file with one library)."""
        init, sources = cls.__init__, self._sources

        def recording_init(obj, *args, **kwargs):
            init(obj, *args, **kwargs)
            sources.append(source_of(obj))

        cls.__init__ = recording_init

    def _wrap_http(self) -> None:
        """Count fsspec's HTTP requests: its file fetches every uncached range through
        ``_fetch_range`` (bound when the file is made: patched before, each call is one range
        request), and asks for a file's size with ``_file_info`` (a HEAD request: a round
        trip without data, which DuckDB makes several of per query)."""
        from fsspec.implementations import http

        fetch, info, fetched = http.HTTPFile._fetch_range, http._file_info, self._fetched

        def counted(obj, start: int, end: int) -> bytes:
            data = fetch(obj, start, end)
            fetched[0] += 1
            fetched[1] += len(data)
            return data

        async def counted_info(*args, **kwargs) -> dict:
            fetched[0] += 1
            return await info(*args, **kwargs)

        http.HTTPFile._fetch_range = counted
        http._file_info = counted_info

    def _sum(self, count_of) -> IOCount:
        total = IOCount(0, 0)
        for s in self._sources:
            c = count_of(s)
            total = IOCount(total.requests + c.requests, total.bytes + c.bytes)
        return total

    def count(self) -> IOCount | None:
        """The totals so far (None: see :attr:`why_not`)."""
        return None if self._count is None else self._count()
