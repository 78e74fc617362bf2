"""Time to decode a file's metadata, per implementation, from memory and from a warm disk.

What is timed, per implementation (each call returns the column and row counts it decoded, which
must equal the written file's, so a lazy or partial decode cannot pass as a fast one):

* ``pyarrow``: ``pq.read_metadata`` (Arrow C++ Thrift decode into ``FileMetaData``, plus
  pyarrow's wrapper and Arrow schema conversion: what a pyarrow user pays to open a file);
* ``root-ttree``: a ``TFile`` (header, key list, ``StreamerInfo``) and ``Get`` of the ``TTree``
  (decompress and stream every ``TBranch`` with its basket tables); the tree is deleted and the
  file closed inside the timed call;
* ``root-rntuple``: a ``TFile``, the RNTuple anchor, and ``RNTupleReader::Open``, which reads and
  deserializes header, footer and every page list into the ``RNTupleDescriptor`` (checked: every
  cluster's page list is loaded);
* ``uproot-ttree`` / ``uproot-rntuple``: ``uproot.open`` and the tree with all its branches /
  the RNTuple's header, footer and page lists;
* ``arrow-rs`` (optional): the Rust ``parquet`` crate's ``ParquetMetaDataReader``, timed inside
  the helper binary (``tools/parquet-footer``); ``arrow-rs+page-index`` also decodes the page
  index.

Two modes. **memory**: the file's bytes are loaded before any timing and the decoder is handed
them (``pa.BufferReader``; a zero-copy ``TMemFile``; ``io.BytesIO`` for uproot), so only parsing
is timed. **disk**: the decoder opens the path itself, with the file in the page cache (it was
just read whole; the resident fraction is recorded from ``mincore``).

Each (file, implementation) runs in a fresh process: imports, JIT compilation and one untimed
decode in each mode happen before timing, then memory and disk repetitions alternate (so a change
of load on the shared machine hits both modes alike), with the garbage collector off inside each
timed call and a collection between calls. Repetitions stop at ``repetitions``, or earlier once
``MIN_REPETITIONS`` are done and the time budget is spent.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hepfmt import records
from hepfmt.atomic import write_json
from hepfmt.defaults import default
from hepfmt.errors import HepfmtError, InputError, VerificationError, exit_with
from hepfmt.formats.root.backend import TREE, root
from hepfmt.measure import isolated, memcap, timelimit
from hepfmt.measure.pagecache import resident_pages
from hepfmt.measure.timing import Stopping, interleaved, timed
from hepfmt.provenance import collect
from hepfmt.stats import summarize

#: The fewest timed decodes per mode: the schema's ``metadata.min_repetitions``.
MIN_REPETITIONS: int = default("metadata.min_repetitions")
MODES = ("memory", "disk")
RUST_HELPER = Path(__file__).resolve().parents[3] / "tools" / "parquet-footer"
RUST_LIBRARY = "parquet (Rust crate, tools/parquet-footer)"

CXX = Path(__file__).resolve().with_name("metadata_decoders.cxx")


@dataclass(frozen=True)
class Decoder:
    """One implementation: ``load`` turns file bytes into what ``memory`` decodes (outside the
    timing); ``memory`` and ``disk`` return ``(columns, rows)`` decoded."""

    name: str
    format: str  # the files it reads: parquet, ttree, rntuple
    library: str  # the package whose version the provenance names
    prepare: Callable[[], None]
    load: Callable[[bytes], object]
    memory: Callable[[object], tuple[int, int]]
    disk: Callable[[str], tuple[int, int]]


def _pyarrow_prepare() -> None:
    import pyarrow as pa
    import pyarrow.parquet

    pa.set_cpu_count(1)
    pa.set_io_thread_count(1)


def _pyarrow_load(data: bytes):
    import pyarrow as pa

    return pa.py_buffer(data)


def _pyarrow_memory(buf) -> tuple[int, int]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    md = pq.read_metadata(pa.BufferReader(buf))
    return md.num_columns, md.num_rows


def _pyarrow_disk(path: str) -> tuple[int, int]:
    import pyarrow.parquet as pq

    md = pq.read_metadata(path)
    return md.num_columns, md.num_rows


def _root_prepare() -> None:
    root(CXX)


def _root_load(data: bytes) -> np.ndarray:
    return np.frombuffer(data, dtype=np.uint8)


def _root_call(fn: Callable, *args) -> tuple[int, int]:
    out = fn(*args)
    return int(out[0]), int(out[1])


def _root_decoders(fmt: str) -> tuple[Callable, Callable]:
    ntuple = fmt == "rntuple"

    def memory(arr: np.ndarray) -> tuple[int, int]:
        return _root_call(root().hepfmt_meta.FromMemory, arr.ctypes.data, arr.size, ntuple, TREE)

    def disk(path: str) -> tuple[int, int]:
        return _root_call(root().hepfmt_meta.FromDisk, path, ntuple, TREE)

    return memory, disk


def _uproot_prepare() -> None:
    import uproot  # noqa: F401


def _uproot_decode(source, fmt: str) -> tuple[int, int]:
    import uproot

    with uproot.open(source) as f:
        obj = f[TREE]
        if fmt == "ttree":
            return len(obj.branches), int(obj.num_entries)
        obj.header, obj.footer, obj.page_link_list  # noqa: B018  (each decodes on access)
        top = sum(1 for i, r in enumerate(obj.field_records) if r.parent_field_id == i)
        return top, int(obj.num_entries)


def _uproot_decoders(fmt: str) -> tuple[Callable, Callable]:
    return (lambda data: _uproot_decode(io.BytesIO(data), fmt),
            lambda path: _uproot_decode(path, fmt))


def _root_decoder(name: str, fmt: str) -> Decoder:
    memory, disk = _root_decoders(fmt)
    return Decoder(name, fmt, "root", _root_prepare, _root_load, memory, disk)


def _uproot_decoder(name: str, fmt: str) -> Decoder:
    memory, disk = _uproot_decoders(fmt)
    return Decoder(name, fmt, "uproot", _uproot_prepare, lambda data: data, memory, disk)


DECODERS: dict[str, Decoder] = {
    "pyarrow": Decoder("pyarrow", "parquet", "pyarrow", _pyarrow_prepare, _pyarrow_load,
                       _pyarrow_memory, _pyarrow_disk),
    "root-ttree": _root_decoder("root-ttree", "ttree"),
    "root-rntuple": _root_decoder("root-rntuple", "rntuple"),
    "uproot-ttree": _uproot_decoder("uproot-ttree", "ttree"),
    "uproot-rntuple": _uproot_decoder("uproot-rntuple", "rntuple"),
}
#: Implementations that run outside Python (their own binary, their own timing loop).
EXTERNAL = {"arrow-rs": "parquet"}
IMPLEMENTATIONS = {**{d.name: d.format for d in DECODERS.values()}, **EXTERNAL}


@dataclass(frozen=True)
class TimingSpec:
    path: str
    implementation: str
    columns: int
    rows: int
    repetitions: int
    budget_s: float


def _timed(fn: Callable[[], tuple[int, int]]) -> tuple[float, float, tuple[int, int]]:
    with timed() as clock:
        got = fn()
    return clock.wall_s, clock.cpu_s, got


def repeat(calls: dict[str, Callable[[], tuple[int, int]]], expect: tuple[int, int],
           repetitions: int, budget_s: float, where: str) -> dict[str, dict]:
    """Time each call (one per mode) alternately (:func:`~hepfmt.measure.timing.interleaved`,
    at least :data:`MIN_REPETITIONS`, then until ``budget_s`` is spent); every result must
    equal ``expect``.

    Only the calls are timed: anything they need must be bound before (see module doc).
    """

    def checked(mode: str, fn: Callable[[], tuple[int, int]]) -> Callable[[], dict]:
        def one() -> dict:
            wall, cpu, got = _timed(fn)
            if tuple(got) != tuple(expect):
                raise VerificationError(where, f"{mode} decode gave (columns, rows) = {got}, "
                                               f"the file has {expect}")
            return {"wall_s": wall, "cpu_s": cpu}
        return one

    stop = Stopping(None, budget_s, MIN_REPETITIONS, repetitions)
    reps, _ = interleaved({m: checked(m, fn) for m, fn in calls.items()}, stop)
    return {m: {"wall_s": [r["wall_s"] for r in rs], "cpu_s": [r["cpu_s"] for r in rs]}
            for m, rs in reps.items()}


def run_decoder(spec: TimingSpec) -> dict:
    """The body of one timing process (see the module docstring)."""
    dec = DECODERS[spec.implementation]
    dec.prepare()
    path = spec.path
    try:
        data = Path(path).read_bytes()  # also warms the page cache for the disk mode
    except OSError as exc:
        raise InputError(path, f"cannot read it ({exc.strerror})") from exc
    loaded = dec.load(data)
    resident, pages = resident_pages(path)
    calls = {"memory": lambda: dec.memory(loaded), "disk": lambda: dec.disk(path)}
    expect = (spec.columns, spec.rows)
    try:
        for fn in calls.values():  # untimed: lazy imports, JIT, first-use caches
            fn()
        times = repeat(calls, expect, spec.repetitions, spec.budget_s,
                       f"{path} ({spec.implementation})")
    except HepfmtError:
        raise
    except Exception as exc:  # the libraries raise many types for unreadable files
        raise InputError(path, f"{spec.implementation} could not decode its metadata: "
                               f"{exc}") from exc
    return {mode: {**t, "resident_fraction": resident / pages if pages else 1.0}
            for mode, t in times.items()}


def rust_helper_version() -> str:
    """The ``parquet`` crate version in the helper's Cargo.lock (what its numbers are from)."""
    try:
        lock = (RUST_HELPER / "Cargo.lock").read_text().split("[[package]]")
    except OSError:
        return "unknown"
    for block in lock:
        if 'name = "parquet"' in block:
            return block.split('version = "', 1)[1].split('"', 1)[0]
    return "unknown"


def _rust_timing(spec: TimingSpec, binary: str, timeout: float) -> dict[str, dict]:
    """The helper times itself (its own process, its own loop); returns times per row name.
    It reads the file (into memory, as the memory mode does) under the cap of its bytes."""
    cap = memcap.cap_for(spec.path, Path(spec.path).stat().st_size)
    limit, _ = timelimit.effective(spec.path, timeout)
    started = time.monotonic()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        try:
            proc = subprocess.Popen(memcap.command([binary, spec.path, str(spec.repetitions)],
                                                   cap), stdout=out, stderr=err, text=True,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            raise VerificationError(spec.path, f"arrow-rs helper failed: {exc}") from exc
        ended = isolated.wait(proc, limit)  # the helper's whole process group on time-out
        if ended is None:
            raise timelimit.stopped(spec.path, "arrow-rs helper", time.monotonic() - started,
                                    limit)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        if memcap.reached(cap, stderr, proc.returncode < 0, 0):
            raise memcap.exceeded(spec.path, cap, stderr)
        raise VerificationError(spec.path, f"arrow-rs helper failed: {stderr.strip()}")
    doc = json.loads(stdout)
    if (doc["columns"], doc["rows"]) != (spec.columns, spec.rows):
        raise VerificationError(spec.path, f"arrow-rs decoded (columns, rows) = "
                                           f"({doc['columns']}, {doc['rows']}), the file has "
                                           f"{(spec.columns, spec.rows)}")
    res = {"memory": doc["memory_s"], "disk": doc["disk_s"]}
    rows = {"arrow-rs": {m: {"wall_s": t, "cpu_s": []} for m, t in res.items()}}
    if doc["memory_page_index_s"]:
        rows["arrow-rs+page-index"] = {"memory": {"wall_s": doc["memory_page_index_s"],
                                                  "cpu_s": []}}
    return rows


def load_layout(path: str | Path) -> dict:
    """A file's record from ``hepfmt metadata write`` (what its metadata says)."""
    return records.load(path, ("format", "columns", "groups", "metadata_bytes"), "layout record")


def time_file(path: str | Path, layout: dict, implementations: list[str], repetitions: int,
              budget_s: float, out: str | Path, rust_binary: str | None = None,
              timeout: float = 3600.0) -> dict:
    """Time every requested implementation on one file (each in a fresh process); write one
    JSON, atomically, or nothing. ``layout`` is the file's record from ``widefiles.write``."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file to time does not exist")
    if repetitions < MIN_REPETITIONS:
        raise VerificationError(path, f"at least {MIN_REPETITIONS} repetitions are required")
    timings = []
    for impl in implementations:
        fmt = IMPLEMENTATIONS.get(impl)
        if fmt != layout["format"]:
            raise VerificationError(path, f"implementation {impl!r} does not read "
                                          f"{layout['format']} files")
        spec = TimingSpec(str(path), impl, layout["columns"], sum(layout["groups"]),
                          repetitions, budget_s)
        if impl == "arrow-rs":
            if rust_binary is None:
                continue  # optional: the helper could not be built here
            rows = _rust_timing(spec, rust_binary, timeout)
            library = RUST_LIBRARY
        else:
            # the child holds the file's bytes (memory mode) besides what it decodes
            rows = {impl: isolated.spawn("hepfmt.metastudy.decode", spec, path, impl, timeout,
                                         data_bytes=path.stat().st_size)}
            library = DECODERS[impl].library
        for name, modes in rows.items():
            for mode, rec in modes.items():
                timings.append({"implementation": name, "library": library, "mode": mode,
                                **summarize(rec["wall_s"]), "wall_s": rec["wall_s"],
                                "cpu_s": rec["cpu_s"],
                                "resident_fraction": rec.get("resident_fraction")})
    prov = collect(data_path=path.parent)
    # Named in every record (used or not) so that records of all formats agree on versions.
    prov["versions"][RUST_LIBRARY] = rust_helper_version()
    doc = {"file": str(path), **{k: v for k, v in layout.items() if k != "provenance"},
           "n_groups": len(layout["groups"]), "timings": timings, "provenance": prov}
    doc.pop("groups", None)
    write_json(out, doc)
    return doc


if __name__ == "__main__":  # a timing process: python -m hepfmt.metastudy.decode SPEC_JSON OUT
    exit_with(isolated.child(sys.argv[1:], TimingSpec, run_decoder))
