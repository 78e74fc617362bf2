"""The memory cap of every process that opens a file it did not just write.

A damaged file can make a library allocate without bound: a TTree with 100 flipped bits made
ROOT reserve 11 GB as it opened the tree and then fill it (6.4 GB resident within 5 s, when it
was stopped; 22 GB before the kernel's OOM killer ended it in ``make test``). So such a
process runs under a limit, set before the library sees the file: a child process sets it first
thing at its entry point, from the cap its parent resolved (:func:`child_env`, :func:`apply`); a
command that reads in its own process sets it around the read (:func:`capped`). The parent
that writes the results stays uncapped.

Which limit: ``RLIMIT_DATA``, the process's writable private memory (heap, anonymous maps: what
a runaway allocation grows), not ``RLIMIT_AS``, which also counts address space that is only
reserved or mapped read-only (libraries' code, guard regions, allocators' reservations).
Measured on healthy reads of every format and reader (measure children, all 1499 branches,
proof and timed scans, warm; 2026-11 on this 2-core VM; GB = 1e9 bytes): VmData is what
RLIMIT_DATA counts, VmPeak what RLIMIT_AS would have, RSS what is resident.

=============================================  =========  =========  =========
child                                          VmData     VmPeak     peak RSS
=============================================  =========  =========  =========
600 events: ROOT readers, uproot, h5py         0.26-0.46  0.9-1.3    0.55-0.71
600 events: pyarrow, polars, duckdb, Lance,    1.3-1.7    2.1-2.7    0.20-0.27
Vortex (allocators reserve, untouched)
100000 events: ROOT loops (TTree, RNTuple)     0.43-0.61  1.2-1.3    0.74-0.86
100000 events: h5py, uproot                    0.57-1.31  0.8-1.7    0.53-1.25
100000 events: pyarrow, Lance, Vortex          1.3-2.8    1.6-3.8    0.83-1.62
100000 events: polars, duckdb (4 threads)      2.7-2.9    3.6-4.3    1.02-1.05
bytes per branch (describe), every format      0.26-1.31  0.9-2.0    0.24-0.57
100000 events: Parquet query engines (2 thr.)  0.56-2.29  1.4-3.7    0.35-0.71
damaged TTree (100 flipped bits), describe     11.2+      11.8+      6.4+ (stopped)
=============================================  =========  =========  =========

So an address-space limit would have to sit 1.3 GB higher for the same protection, and more
with every thread (each reserves its stacks and arenas); the data limit tracks what grows.
Linux does not enforce ``RLIMIT_RSS``, and cgroups are not relied on (not writable everywhere).

The default cap: :data:`BASE` plus :data:`PER_BYTE` times the data's uncompressed bytes (the
source sidecar's naive bytes where the caller knows them, else the bytes the file holds
(:func:`held_bytes`: its allocated blocks where fewer than its length) times
:data:`EXPANSION`), plus :data:`PER_THREAD` per extra thread, at least :data:`FLOOR`, at most
the machine's memory. A healthy read of 100000 events (311 MB naive) holds up to 1.5 GB of data
above its start-up, 4.8 bytes per naive byte: the default there is 4.5 GB, 1.6 GB above the
most a healthy read of it took (2.9 GB). Set it with ``HEPFMT_MEMORY_CAP`` (``8G``, ``512M``,
bytes; ``off``) or ``hepfmt --memory-cap``; a file that needs more than the default is named
in the error.

A process that reaches the cap fails however its library reacts (``MemoryError``,
``std::bad_alloc``, a Rust abort, a segfault on a null pointer): :func:`reached` tells that from
another failure, and the error is one line, :func:`exceeded`.
"""

from __future__ import annotations

import os
import re
import resource
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hepfmt.errors import ConfigError, InputError

#: The cap of a process (bytes; ``off``: none), inherited by the child processes it starts.
ENV = "HEPFMT_MEMORY_CAP"
GB = 10**9
#: The least cap: a healthy read of a 100000-event file takes up to 2.9 GB (table above).
FLOOR = 4 * GB
#: What a reading process holds besides the data: interpreter, libraries, their pools (1.7 GB
#: at most, table above).
BASE = 2 * GB
#: Times the data's uncompressed bytes: what a read holds of it (its decoded arrays, the
#: library's buffers, a proof's own read; 4.8 measured) with room to spare.
PER_BYTE = 8
#: A file's uncompressed bytes per byte, where nothing declares them: more than NanoAOD's
#: codecs compress (3-5x), so that a healthy file is never refused for its compression.
EXPANSION = 10
#: Each thread after the first: its stack, allocator arena and library pools (polars and
#: duckdb: 50-75 MB per thread measured).
PER_THREAD = 200 * 10**6
#: A process that died by a signal with resident memory above this share of its cap ran out.
NEAR = 0.5
#: What libraries say when an allocation fails (C++, Python, numpy, Rust, C, Arrow, HDF5).
_OUT_OF_MEMORY = re.compile(
    r"bad_alloc|MemoryError|memory allocation (of \d+ bytes )?failed|allocation fail|"
    r"cannot allocate memory|can't allocate|unable to allocate|out of memory|"
    r"not enough memory|ENOMEM", re.IGNORECASE)
_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": GB, "t": 10**12,
          "ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}
_OFF = ("off", "none", "0")


def parse(text: str, key: str = ENV) -> int | None:
    """Bytes from ``8G``, ``8GB``, ``7.5GiB``, ``512M`` or a number of bytes; None for
    ``off``."""
    text = str(text).strip().lower()
    if text in _OFF:
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]i?)?b?", text)
    if not m:
        raise ConfigError(key, f"{text!r} is not a memory size (8G, 512M, bytes) or 'off'")
    return int(float(m[1]) * _UNITS[m[2] or ""])


def machine_bytes() -> int:
    """Physical memory: a cap above it would let the kernel's OOM killer act first."""
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def held_bytes(st: os.stat_result) -> int:
    """The bytes a file really holds: its length, or its allocated blocks where they are fewer.
    A sparse tail (``truncate -s 3G``) is length without data: it raised the cap to the
    machine's memory, though nothing in it can make a library hold more."""
    return min(st.st_size, st.st_blocks * 512)


def file_bytes(path: str | Path) -> int:
    """The bytes a file holds (:func:`held_bytes`), or a directory's files' (0 where it cannot
    be seen: a URL)."""
    p = Path(path)
    try:
        if p.is_dir():
            return sum(held_bytes(f.stat()) for f in p.rglob("*") if f.is_file())
        return held_bytes(p.stat())
    except OSError:
        return 0


def default_cap(path: str | Path, data_bytes: float | None = None, threads: int = 1) -> int:
    """The cap of a process reading ``path`` (see the module docstring): ``data_bytes`` are the
    uncompressed bytes it holds (a source's naive bytes; 0 for a read of metadata only)."""
    data = file_bytes(path) * EXPANSION if data_bytes is None else data_bytes
    cap = max(FLOOR, BASE + PER_BYTE * data) + PER_THREAD * (max(1, threads) - 1)
    return int(min(cap, machine_bytes()))


def cap_for(path: str | Path, data_bytes: float | None = None, threads: int = 1) -> int | None:
    """The cap the user set (``HEPFMT_MEMORY_CAP``, ``--memory-cap``), else
    :func:`default_cap`; None when the user turned it off."""
    configured = os.environ.get(ENV)
    if configured:
        return parse(configured)
    return default_cap(path, data_bytes, threads)


def child_env(cap: int | None) -> dict[str, str]:
    """The environment of a child process that is to run under ``cap`` (:func:`apply`)."""
    return {**os.environ, ENV: "off" if cap is None else str(cap)}


def data_now() -> int:
    """This process's VmData now (bytes; 0 where /proc does not say): what RLIMIT_DATA counts."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _limit(cap: int, on_top: bool = False) -> tuple[int, int]:
    """Cap the process's data at ``cap`` (a child, at its first step), or, ``on_top``, what it
    may add from now on (a read in a process that has run before it): a long-lived process
    (a test process that has loaded every library, whose allocators keep arenas) may already
    hold more than a bare cap, and every allocation and thread after it would then fail, far
    from the read the cap is for."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = cap + (data_now() if on_top else 0)
    resource.setrlimit(resource.RLIMIT_DATA, (limit if hard < 0 else min(limit, hard), hard))
    return soft, hard


def apply() -> int | None:
    """A child's first step: cap this process at the ``HEPFMT_MEMORY_CAP`` its parent set; the
    cap (None: none set)."""
    cap = parse(os.environ.get(ENV, "off"))
    if cap is not None:
        _limit(cap)
    return cap


#: Sets the cap (argv[1]) and becomes the program (argv[2:]): resource limits survive exec.
_TRAMPOLINE = ("import os, resource, sys; hard = resource.getrlimit(resource.RLIMIT_DATA)[1]; "
               "cap = int(sys.argv[1]); resource.setrlimit(resource.RLIMIT_DATA, "
               "(cap if hard < 0 else min(cap, hard), hard)); os.execvp(sys.argv[2], sys.argv[2:])")


def command(argv: list[str], cap: int | None) -> list[str]:
    """``argv`` to run under ``cap``: for a program without hepfmt's entry point (a compiled
    helper), a Python trampoline sets the limit and executes it."""
    if cap is None:
        return list(argv)
    return [sys.executable, "-c", _TRAMPOLINE, str(cap), *argv]


def gb(n: float) -> str:
    return f"{n / GB:.1f} GB"


def exceeded(path: str | Path, cap: int, detail: str | None = None) -> InputError:
    """The one line of a process that reached its cap."""
    return InputError(path, f"damaged or larger than the memory cap ({gb(cap)})", detail)


def reached(cap: int | None, text: str, crashed: bool, peak_bytes: int) -> bool:
    """Whether a failed process failed for its cap: its library said an allocation failed
    (``text``), or it crashed (a signal, ROOT's ``*** Break ***``) with resident memory near
    the cap (``peak_bytes``: a null pointer from a failed allocation, dereferenced)."""
    if cap is None:
        return False
    return bool(_OUT_OF_MEMORY.search(text)) or (crashed and peak_bytes >= NEAR * cap)


def out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from, says an allocation failed (an
    adapter's error wrapping a bare ``MemoryError`` need not say so in its message)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, MemoryError) or _OUT_OF_MEMORY.search(
                getattr(seen, "detail", None) or str(seen)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@contextmanager
def capped(path: str | Path, data_bytes: float | None = None) -> Iterator[int | None]:
    """Run the block, in this process, under the cap of a read of ``path``; an allocation that
    fails there becomes :func:`exceeded`. The limit before it is restored after."""
    cap = cap_for(path, data_bytes)
    if cap is None:
        yield None
        return
    before = _limit(cap, on_top=True)
    try:
        yield cap
    except Exception as exc:
        if out_of_memory(exc):
            raise exceeded(path, cap, getattr(exc, "detail", None) or str(exc)) from exc
        raise
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, before)
