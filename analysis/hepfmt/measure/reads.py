"""Read-speed measurements of one written file, cold and warm page cache.

Each reader runs in a fresh Python process, so that no library state, JIT cache or allocator
history leaks from one reader into another's timings. One process times every selection and
both cache modes of its reader on the file: what a user of that reader pays once per process
(imports, C++ declarations) is paid once, untimed, and never counted as reading. Inside it:

1. the reader is prepared (imports, C++ declarations, threads) outside any timing;
2. the reader must be proven on the file: its ``read`` of every selected branch must give the
   source's per-branch checksums, or the measurement fails (a fast read of wrong data is not a
   result). ``convert`` proves the readers of the read plan on every branch when it writes the
   file and records it in the size record (:func:`hepfmt.measure.verify.prove_readers`),
   with the digest of the bytes it proved (:mod:`hepfmt.measure.digest`); a reader proven
   there is not proven again, the process instead hashes the file, which loads it into the page
   cache, refuses it if the digest is not the record's (the file changed since ``convert``; an
   old record without a digest is not trusted at all: the reader is proven here), and runs one
   untimed scan of the smallest selection, so that the reader's lazily initialised paths have
   run once. Otherwise the proof runs here, untimed, over the union of
   the selections. Either way no checksum arithmetic is ever counted as reading, and the proof,
   which is not a measurement, can run while other jobs use the machine;
3. per selection, warm repetitions: timed scans of the cached file (``scan`` decodes exactly
   what ``read`` decodes and keeps it, without checksumming it), each reporting when the file
   was open and when each chunk was done (:class:`~hepfmt.formats.base.Marks`), and each
   recording where its wall time went (user, system, waiting), its page faults and its own
   peak memory (:func:`timed_scan`);
4. cold repetitions: each preceded by fsync + ``POSIX_FADV_DONTNEED`` on the file and a
   ``mincore`` count of its resident pages; a repetition whose file still had resident pages is
   recorded as *not verified cold*, and the cold figure is flagged, never reported as cold.

Repetitions continue until the median's 95% interval is within the requested precision, or the
time budget is spent (:class:`~hepfmt.measure.timing.Stopping`). Every scan must have read
every entry of the file. Warm runs before cold, so that the proof's (or the priming) read serves
as the warm runs' priming; a cold repetition's state differs from a warm one's only by the
evicted pages, which is the quantity being measured.
"""

from __future__ import annotations

import dataclasses
import itertools
import resource
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hepfmt import formats
from hepfmt.defaults import default
from hepfmt.errors import InputError, VerificationError, exit_with
from hepfmt.formats import preflight
from hepfmt.formats.base import Marks, Reader, is_url
from hepfmt.measure import digest as content_digest
from hepfmt.measure import invariants, isolated
from hepfmt.measure.pagecache import evict
from hepfmt.measure.storage import counters
from hepfmt.measure.timing import Stopping, repeat, timed
from hepfmt.measure.verify import differing, mismatch
from hepfmt.provenance import collect, machine
from hepfmt.records import CACHE_MODES, ReadRecord, ReadRow, SizeRecord, data_file
from hepfmt.samples.source import read_source_meta, schema_of
from hepfmt.stats import bound_fractions, median_interval, parts_of, summarize

MODES = CACHE_MODES
ALL = "*"


@dataclass(frozen=True)
class ReadSpec:
    path: str
    source: str
    adapter: str  # the format's adapter (a FileRecord's ``format`` is the config's name)
    reader: str
    selection: str
    branches: list[str]
    modes: list[str]
    repetitions: int  # the most repetitions per mode
    threads: int
    #: the adapter's module: the child imports it directly, so a format registered at run time
    #: (a plug-in, a test's toy format) is read there too; empty = the registry's
    module: str = ""
    #: stop repeating once the median's 95% interval is within this fraction of it ...
    precision: float = default("measure.precision")
    #: ... or once this many seconds of repetitions were spent (per mode), after at least
    min_repetitions: int = default("measure.min_repetitions")
    budget_s: float = default("measure.budget_s")
    n_events: int = -1  # entries every scan must read (-1: the source's)
    #: count what each timed scan asked of storage (:func:`storage_counts`): the kernel's and
    #: the reader's view always, a block device's (``/dev/loopN``) and an XRootD server's
    #: (its traced log) where given
    count_io: bool = False
    device: str = ""
    server_log: str = ""

    def stopping(self) -> Stopping:
        return Stopping(self.precision, self.budget_s, self.min_repetitions, self.repetitions)


def process_peak_bytes() -> int:
    """The whole process's peak RSS so far (imports included)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise OSError(f"/proc/self/status has no {field}")


def start_read_peak() -> tuple[int, str]:
    """Start measuring the reads' own peak memory: (resident bytes now, method).

    A process's peak RSS (``ru_maxrss``) is a high-water mark that its imports may already have
    set above anything the reads add (ROOT's start-up, for one), so peak minus baseline can read
    as 0 however much the reads allocate. Linux resets the high-water mark (``VmHWM``) when 5 is
    written to ``/proc/self/clear_refs``; after that, ``VmHWM`` is the reads' peak. Where that
    is refused, the process peak is used and the method says it is only a lower bound.
    """
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return _status_kib("VmRSS") * 1024, "vmhwm-reset"
    except OSError:
        return process_peak_bytes(), "ru_maxrss (lower bound)"


def read_peak_bytes(method: str) -> int:
    """The peak resident bytes since :func:`start_read_peak` (see there)."""
    return _status_kib("VmHWM") * 1024 if method == "vmhwm-reset" else process_peak_bytes()


def verify_read(reader: Reader, spec: ReadSpec, reference: dict) -> None:
    """The reader's checksums of the selection equal the source's (untimed, once)."""
    got = reader.read(spec.path, spec.branches, spec.threads)
    bad = differing(got, spec.branches, reference)
    if bad:
        raise VerificationError(spec.path, mismatch(spec.reader, got, bad, reference))


def _io_snapshot(spec: ReadSpec, tap: counters.ReaderTap | None) -> dict:
    kernel = counters.proc_io()
    return {"kernel": {k: kernel[k] for k in ("syscr", "rchar", "read_bytes")},
            "device": counters.block_device(spec.device) if spec.device else None,
            "reader": tap.count() if tap else None,
            "log_offset": Path(spec.server_log).stat().st_size if spec.server_log else 0}


def storage_counts(spec: ReadSpec, tap: counters.ReaderTap | None, before: dict) -> dict:
    """What one scan asked of storage since ``before`` (an :func:`_io_snapshot`), in every
    view this read has: ``kernel`` (read syscalls and bytes of this process, sockets included;
    ``read_bytes``: from a block device), ``device`` (requests the loop device served, after
    readahead and merging), ``reader`` (requests the library issued), ``server`` (round trips,
    ranges and bytes the XRootD server traced, with the ranges' size quantiles)."""
    after = _io_snapshot(spec, tap)
    out: dict[str, object] = {
        "kernel": {k: after["kernel"][k] - before["kernel"][k] for k in after["kernel"]}}
    for view in ("device", "reader"):
        if after[view] is not None:
            d = after[view] - before[view]
            out[view] = {"requests": d.requests, "bytes": d.bytes}
    if tap is not None and tap.why_not:
        out["reader_missing"] = tap.why_not
    if spec.server_log:
        served, _ = counters.xrootd_served(spec.server_log, before["log_offset"])
        sizes = served.pop("sizes")
        q = np.quantile(sizes, [0.1, 0.5, 0.9]).tolist() if sizes else [0, 0, 0]
        out["server"] = {**served, "size_p10": q[0], "size_p50": q[1], "size_p90": q[2],
                         "size_max": max(sizes, default=0)}
    return out


def reset_scan_peak() -> int | None:
    """Reset the process's resident high-water mark (``VmHWM``) so that it next reads as one
    scan's own peak; the resident bytes now, or None where Linux refuses the reset (then no
    per-scan peak is recorded: the process's peak would be a number for something else)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return _status_kib("VmRSS") * 1024
    except OSError:
        return None


def timed_scan(reader: Reader, spec: ReadSpec, tap: counters.ReaderTap | None = None) -> dict:
    """One timed scan (:func:`.timing.timed`): wall time and its split, bytes read from storage,
    the scan's own peak memory (``scan_peak_rss_bytes``: the high-water mark reset just before
    it, and ``scan_start_rss_bytes`` the resident bytes it started from; None where the reset
    is refused), and the scan's marks (and, with ``spec.count_io``, what it asked of storage).
    Everything the harness does itself is outside the clock and the usage counts."""
    marks = Marks()
    before = _io_snapshot(spec, tap) if spec.count_io else None
    start_rss = reset_scan_peak()
    with timed() as clock:
        entries = reader.scan(spec.path, spec.branches, spec.threads, marks)
    peak = _status_kib("VmHWM") * 1024 if start_rss is not None else None
    rep = {**clock.as_dict(), "entries": entries,
           "scan_peak_rss_bytes": peak, "scan_start_rss_bytes": start_rss,
           **marks.since(clock.start)}
    if before is not None:
        rep["io"] = storage_counts(spec, tap, before)
    if spec.n_events >= 0 and entries != spec.n_events:
        raise VerificationError(spec.path, f"{spec.reader} scanned {entries} entries, the file "
                                           f"has {spec.n_events}")
    if spec.n_events >= 0:
        invariants.check(rep, spec.path, spec.reader, spec.n_events)
    return rep


@dataclass(frozen=True)
class ReadBatch:
    """Every selection one reader times on one file, in one process (see the module
    docstring): :class:`ReadSpec` fields, as dicts, that differ only in selection."""

    specs: list[dict]
    #: where the reader was proven on every branch of this file (``"convert"``), or empty: the
    #: process proves it itself
    proven_by: str = ""
    #: the digest of the bytes that proof was made on (:mod:`hepfmt.measure.digest`)
    digest: str = ""


def _prime(reader: Reader, specs: list[ReadSpec], proven_by: str,
           digest: str) -> tuple[dict, content_digest.Identity]:
    """The start of a process whose reader was proven elsewhere: the file shown to be the bytes
    proven there (its digest, whose read leaves the file's pages cached), and one scan of the
    smallest selection, as the proof's read would have done. That scan is the reader's first
    read in a fresh process (page cache warm; allocator, JIT and library caches cold): timed,
    and returned with its selection's name, never mixed with the repetitions after it."""
    first = specs[0]
    if is_url(first.path) or not digest:
        raise ValueError("a proof made elsewhere is trusted only on a local file with the "
                         "digest of the bytes it proved")
    # reads every byte (the page cache is loaded); the identity binds every later read to them
    now, identity = content_digest.hashed(first.path)
    if now != digest:
        raise VerificationError(first.path, f"changed since {proven_by}: digest {now} != "
                                            f"{digest} (its size record's); write it again")
    smallest = min(specs, key=lambda s: len(s.branches))
    scan = timed_scan(reader, smallest)
    content_digest.unchanged(first.path, identity)
    return {"selection": smallest.selection, **scan}, identity


def _timed_modes(reader: Reader, spec: ReadSpec, tap: counters.ReaderTap | None,
                 identity: content_digest.Identity | None = None) -> dict:
    """One selection's timed repetitions in every cache mode, and the scans' own peak memory."""
    stopping = spec.stopping()
    baseline_rss, rss_method = start_read_peak()  # the scans' peak, not the proof's

    def one(mode: str) -> dict:
        rep: dict[str, object] = {}
        if mode == "cold":
            ev = evict(spec.path)
            rep.update(pages=ev.pages, resident_before=ev.resident_before,
                       resident_after=ev.resident_after, cold_verified=ev.verified)
        scan = timed_scan(reader, spec, tap)
        if identity is not None:  # what was read is what was proven (outside the timing)
            content_digest.unchanged(spec.path, identity)
        return {**rep, **scan}

    out: dict[str, list[dict]] = {}
    stops: dict[str, dict] = {}
    for mode in sorted(spec.modes, key=lambda m: m != "warm"):  # warm first: see docstring
        out[mode], stops[mode] = repeat(lambda mode=mode: one(mode), stopping)
    return {"modes": out, "stopping": stops, "baseline_rss_bytes": baseline_rss,
            "read_peak_rss_bytes": _scans_peak(out, rss_method), "rss_method": rss_method,
            "peak_rss_bytes": process_peak_bytes()}


def _scans_peak(reps: dict[str, list[dict]], method: str) -> int:
    """The highest resident set of the scans: each scan resets the high-water mark
    (:func:`timed_scan`), so it is the most of their own peaks, not the mark at the end."""
    peaks = [r.get("scan_peak_rss_bytes") for rs in reps.values() for r in rs]
    if method == "vmhwm-reset" and peaks and None not in peaks:
        return max(int(p) for p in peaks)
    return read_peak_bytes(method)


#: What every spec of a batch shares: one reader on one file.
_BATCH_SAME = ("path", "source", "adapter", "reader", "threads", "module", "count_io", "device",
               "server_log")


def run_batch(batch: ReadBatch) -> dict:
    """The body of one measurement process (see the module docstring): ``{"reads": [one
    result per spec, in order]}``."""
    specs = [ReadSpec(**s) for s in batch.specs]
    first = specs[0]
    if any(tuple(getattr(s, k) for k in _BATCH_SAME) != tuple(getattr(first, k)
                                                               for k in _BATCH_SAME)
           for s in specs):
        raise ValueError("a read batch is one reader on one file: only selections may differ")
    bad_modes = [m for s in specs for m in s.modes if m not in MODES]
    if bad_modes:
        raise VerificationError(first.path, f"unknown cache mode {bad_modes[0]!r}")
    reader = formats.load(first.module or formats.entry(first.adapter).module).readers[
        first.reader]
    meta = read_source_meta(first.source)
    if first.n_events < 0:
        specs = [dataclasses.replace(s, n_events=int(meta["n_events"])) for s in specs]
    union = list(dict.fromkeys(b for s in specs for b in s.branches))
    reference = {b: tuple(meta["checksums"][b]) for b in union}
    reader.prepare(first.threads)
    # installed before the library opens anything: uproot's and fsspec's counts are per file
    tap = counters.ReaderTap(reader.library, first.adapter, is_url(first.path)) \
        if first.count_io else None
    first: dict = {}
    identity = None
    if batch.proven_by:
        first, identity = _prime(reader, specs, batch.proven_by, batch.digest)
    else:  # the proof is the first read: none is timed
        local = not is_url(specs[0].path)
        identity = content_digest.identity(specs[0].path) if local else None
        verify_read(reader, dataclasses.replace(specs[0], branches=union), reference)
        if identity is not None:
            content_digest.unchanged(specs[0].path, identity)
    proven_by = batch.proven_by or "measure"
    return {"reads": [{**_timed_modes(reader, s, tap, identity), "proven_by": proven_by,
                       **({"first_read": first} if first.get("selection") == s.selection
                          else {})} for s in specs]}


def spawn_reads(specs: list[ReadSpec], timeout: float, what: str = "",
                wrap: Callable[[list[str]], list[str]] | None = None,
                proven_by: str = "", digest: str = "") -> list[dict]:
    """One reader's selections on one file, measured in a fresh interpreter: their results
    (``proven_by``, ``digest``: see :class:`ReadBatch`)."""
    first = specs[0]
    what = what or f"{first.reader}/{','.join(s.selection for s in specs)} read"
    batch = ReadBatch([dataclasses.asdict(s) for s in specs], proven_by, digest)
    # its memory cap from what the file holds uncompressed: the source's naive bytes
    naive = read_source_meta(first.source)["naive_bytes"]
    return isolated.spawn("hepfmt.measure.reads", batch, first.path, what, timeout,
                          wrap, data_bytes=naive, threads=first.threads)["reads"]


def median_of(reps: list[dict], key: str) -> float | None:
    """The median of one figure over repetitions, or None where any lacks it (a record from
    before the figure: a median of some repetitions would be of a different set)."""
    values = [r.get(key) for r in reps]
    if not values or any(v is None for v in values):
        return None
    return float(np.median(values))


def _read_record(spec: ReadSpec, mode: str, reps: list[dict], res: dict, zip_bytes: int,
                 naive: float, n_events: int, fs_verifiable: bool, values: int,
                 bound: dict | None) -> ReadRow:
    """One read's figures (``values``: the selection's values, ``bound``: its codec bound).
    A cold figure is verified only if mincore found every page evicted in every repetition
    *and* the filesystem is one where that means a read from the device (not tmpfs, nor a
    network filesystem with server-side caches: provenance.FS_KINDS)."""
    times = [r["wall_s"] for r in reps]
    stats = summarize(times)
    ci = median_interval(times)
    split = parts_of(reps)
    steady = split["events_per_s_steady"]
    first = res.get("first_read") if mode == "warm" else None
    return ReadRow.new(
        reader=spec.reader, library=formats.get(spec.adapter).readers[spec.reader].library,
        selection=spec.selection, n_branches=len(spec.branches), mode=mode,
        cold_verified=fs_verifiable and all(r.get("cold_verified", False) for r in reps)
        if mode == "cold" else None,
        threads=spec.threads, selection_zip_bytes=zip_bytes,
        selection_naive_bytes=naive, selection_values=values, proven_by=res.get("proven_by"),
        **stats,
        mb_per_s_compressed=zip_bytes / stats["median_s"] / 1e6,
        mb_per_s_naive=naive / stats["median_s"] / 1e6,
        events_per_s=n_events / stats["median_s"],
        median_lo_s=ci["lo_s"], median_hi_s=ci["hi_s"], median_coverage=ci["coverage"],
        **res["stopping"][mode],
        **split,
        # the steady rate in bytes, with the selection's bytes spread evenly over its events
        mb_per_s_steady_compressed=None if steady is None else
        zip_bytes * steady / n_events / 1e6,
        mb_per_s_steady_naive=None if steady is None else naive * steady / n_events / 1e6,
        # the first read of the process (the smallest selection's only; a warm one)
        first_read_s=first["wall_s"] if first else None,
        first_read_minflt=first.get("minflt") if first else None,
        cpu_median_s=float(np.median([r["cpu_s"] for r in reps])),
        minflt_median=float(np.median([r.get("minflt", np.nan) for r in reps])),
        user_median_s=median_of(reps, "user_s"), sys_median_s=median_of(reps, "sys_s"),
        wait_median_s=median_of(reps, "wait_s"), majflt_median=median_of(reps, "majflt"),
        disk_read_bytes_median=float(np.median([r["disk_read_bytes"] for r in reps])),
        peak_rss_bytes=res["peak_rss_bytes"],
        baseline_rss_bytes=res["baseline_rss_bytes"],
        # what the reads themselves held: their peak RSS above the resident set they started
        # from (after imports and the reader's set-up; see start_read_peak), made per scan by
        # ReadRow (hepfmt.records.own_peak_bytes) where the scans reset the high-water mark
        rss_over_baseline_bytes=res["read_peak_rss_bytes"] - res["baseline_rss_bytes"],
        rss_method=res["rss_method"],
        **bound_fractions(steady, bound),
        repetitions=reps,
    )


def codec_bounds(path: str | Path, format_name: str, branches_of: dict[str, list[str]],
                 meta: dict, timeout: float) -> dict[str, dict]:
    """The codec bound (:mod:`.bound`) of each selection, in a child process: it decompresses
    blocks of a file that only its readers have opened so far, under a memory cap sized by the
    selection's bytes."""
    if is_url(path):
        return {}
    out = {}
    for name, branches in branches_of.items():
        naive = sum(meta["naive_bytes_by_branch"][b] for b in branches)
        out[name] = isolated.call(
            "hepfmt.measure.bound:measure",
            {"path": str(path), "module": formats.entry(format_name).module,
             "branches": branches, "n_events": int(meta["n_events"])},
            path, f"codec bound of {name}", timeout, data_bytes=naive)
    return out


def recorded_bounds(reads: str | Path, path: str | Path, selections: dict[str, list[str]],
                    meta: dict) -> dict[str, dict] | None:
    """The codec bound of each selection of ``path`` as its measure record ``reads`` holds it,
    or None where the record cannot stand for a bound taken here: a bound is a property of the
    file and the CPU, so a second job on the same file (a pair job after the file's measure
    job) takes it from the record instead of decompressing the file again, but only when the
    record is of this file and these events, was measured on this CPU model, and holds a bound
    of every selection over the same branches (their count and their values). A record not
    there (a pair job re-run by ``bench reproduce`` where no measure job ran) is no record."""
    if not Path(reads).is_file():
        return None
    record = ReadRecord.load(reads)
    if (str(record.file) != str(path) or int(record.n_events) != int(meta["n_events"])
            or record.provenance.get("machine", {}).get("cpu") != machine()["cpu"]):
        return None
    rows = record.rows(reads)
    out = {}
    for name, branches in selections.items():
        values = sum(int(meta["checksums"][b][0]) for b in branches)
        same = [r for r in rows if r.selection == name and r.n_branches == len(branches)
                and r.selection_values == values]
        if name not in record.bounds or not same:
            return None
        out[name] = record.bounds[name]
    return out


def zip_bytes_of(path: Path, format_name: str, timeout: float) -> dict[str, int]:
    """Compressed bytes of each branch, from the file's own metadata. The file is opened by
    a library for the first time here: in a child process, where a crash on a corrupt file
    becomes an error naming it."""
    return isolated.call("hepfmt.measure.sizes:zip_bytes_by_branch",
                         {"path": str(path), "module": formats.entry(format_name).module},
                         path, "reading its layout", timeout, data_bytes=0)  # metadata only


def _size_record_of(path: Path, size_record: str | Path | None,
                    naive_bytes: float) -> SizeRecord | None:
    """The file's size record, once it is shown to describe this file, of its size and its
    source's naive bytes (:meth:`SizeRecord.load_for`; their content is checked, where a proof
    depends on it, by the measurement: :func:`_prime`)."""
    if size_record is None:
        return None
    return SizeRecord.load_for(size_record, path, naive_bytes, content_digest.of)


def proven_by(record: SizeRecord | None, reader: str, path: Path) -> str:
    """``"convert"`` when the size record holds a passed proof of ``reader`` on every branch of
    the file, and the digest of the bytes it proved (which the measurement checks before any
    timing); empty when it holds none, or no digest (a record older than digests: the proof
    cannot be tied to the file's bytes, so the read proves the reader again); an error when the
    proof failed: a reader that read wrong values is never timed."""
    proof = record.proofs.get(reader) if record is not None else None
    if proof is None or not record.digest:
        return ""
    if not proof["ok"]:
        raise VerificationError(path, f"{reader} failed its proof at convert: {proof['error']}")
    return "convert"


def measure_file(path: str | Path, source: str | Path, format_name: str, variant: str,
                 cluster_size: int, readers: list[str], selections: dict[str, list[str] | str],
                 modes: list[str], stopping: Stopping, threads: int | list[int],
                 out: str | Path, timeout: float = 3600.0, name: str | None = None,
                 size_record: str | Path | None = None) -> dict:
    """Measure every requested read of one file; write one JSON, atomically, or nothing.

    ``format_name`` is the adapter, ``name`` the config's name of the format; ``threads`` a
    count or a sweep (every read timed at each count, each in its own process);
    ``stopping`` when each read and mode stops repeating;
    ``size_record`` the file's record from ``convert``: its bytes per branch and its readers'
    proofs (see :func:`proven_by`), so that neither is read from the file again."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file to measure does not exist")
    data_file(path, "file to measure")
    # a damaged file's structure refused in seconds, before any reader decodes it
    preflight.check(path, format_name)
    fmt = formats.get(format_name)
    meta = read_source_meta(source)
    schema = schema_of(meta)
    record = _size_record_of(path, size_record, meta["naive_bytes"])
    # empty where the library does not say (Vortex): asking the file again would not help
    zip_by_branch = record.zip_bytes_by_branch if record is not None \
        else zip_bytes_of(path, format_name, timeout)
    provenance = collect(data_path=path.parent)
    fs_verifiable = bool(provenance["filesystem"]["cold_verifiable"])
    made = []  # per read: what makes its row once its selection's codec bound is known
    branches_of = {name: schema.names if sel == ALL else list(sel)
                   for name, sel in selections.items()}
    sweep = [threads] if isinstance(threads, int) else list(threads)
    for reader, n_threads in itertools.product(readers, sweep):
        if reader not in fmt.readers:
            raise VerificationError(path, f"format {format_name} has no reader {reader!r}")
        specs = []
        for sel_name, branches in branches_of.items():
            missing = [b for b in branches if b not in meta["checksums"]]
            if missing:
                raise InputError(source, f"selection {sel_name!r}: no branches {missing}")
            specs.append(ReadSpec(str(path), str(source), format_name, reader, sel_name,
                                  branches, list(modes), stopping.max_repetitions, n_threads,
                                  formats.entry(format_name).module, stopping.precision,
                                  stopping.min_repetitions, stopping.budget_s,
                                  int(meta["n_events"])))
        proven = proven_by(record, reader, path)
        results = spawn_reads(specs, timeout, proven_by=proven,
                              digest=record.digest if record else "")
        for spec, res in zip(specs, results, strict=True):
            zip_bytes = sum(zip_by_branch.get(b, 0) for b in spec.branches)
            naive = sum(meta["naive_bytes_by_branch"][b] for b in spec.branches)
            values = sum(int(meta["checksums"][b][0]) for b in spec.branches)
            for mode, reps in res["modes"].items():
                made.append((spec, mode, reps, res, zip_bytes, naive, values))
    # after every timed read: the codec bound of each selection, and each read's fraction of it
    bounds = codec_bounds(path, format_name, branches_of, meta, timeout)
    reads = [_read_record(spec, mode, reps, res, zip_bytes, naive, meta["n_events"],
                          fs_verifiable, values, bounds.get(spec.selection)).as_dict()
             for spec, mode, reps, res, zip_bytes, naive, values in made]
    return ReadRecord(
        file=str(path), sample=meta["sample"], process=meta["process"],
        format=name or format_name, adapter=format_name, variant=variant,
        cluster_size=cluster_size, n_events=meta["n_events"], reads=reads, bounds=bounds,
        provenance=provenance,
    ).write(out)


if __name__ == "__main__":  # a measurement process: python -m hepfmt.measure.reads BATCH_JSON OUT
    exit_with(isolated.child(sys.argv[1:], ReadBatch, run_batch))
