"""Reads of one file on each storage profile: what they cost, what they asked of storage, and
what the cost model predicts from that.

On this VM the disk is cached by the host, so an evicted file still arrives at memory speed and
a cold read equals a warm one. Each profile therefore gives the reads a storage whose bottleneck
they cannot skip (:mod:`hepfmt.measure.storage`):

* ``page-cache``: the file where it is, read warm: the reads' own CPU cost, the baseline;
* a ``block`` profile (``hdd``, ``sata-ssd``, ``network-disk``): the file copied onto a loop
  device throttled to the profile's bandwidth and IOPS; each reading process runs inside the
  throttled cgroup and every timed scan is cold (evicted, and verified by ``mincore``);
* a ``remote`` profile (``wan``, ``lan``): the file served by XRootD on 127.0.0.1 through a
  Toxiproxy adding the profile's round trip and bandwidth; ROOT and uproot read ``root://``,
  the Arrow-based readers HTTP ranges (XrdHttp) through fsspec.

Every (profile, reader, selection) runs in its own process, as :mod:`.reads` measures (the same
proof of checksums first, untimed): a read through a server therefore returns the same values
as locally, or fails. Each timed scan counts its requests and bytes in every view it has
(:func:`.reads.storage_counts`); the record puts :func:`~.storage.costmodel.predict` of those
counts beside the measured time. A profile that cannot be set up here (not root, no loop
devices, no xrootd, no Toxiproxy, a latency Toxiproxy cannot represent) is recorded as skipped
with what is missing, never as measured, and the other profiles run.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hepfmt import formats
from hepfmt.errors import InputError, UsageError
from hepfmt.formats.base import Reader
from hepfmt.measure.reads import ALL, ReadSpec, spawn_reads, zip_bytes_of
from hepfmt.measure.storage import Unavailable, blockdev, costmodel, ledger, profiles
from hepfmt.measure.timing import Stopping
from hepfmt.provenance import collect
from hepfmt.records import StorageRecord
from hepfmt.samples.source import read_source_meta, schema_of
from hepfmt.stats import summarize

#: The file read where it lies, from the page cache: not a storage class, the baseline.
PAGE_CACHE = "page-cache"


def check_profiles(names: list[str]) -> None:
    """Every name is ``page-cache`` or a known profile (the config's error otherwise)."""
    for name in names:
        if name != PAGE_CACHE:
            profiles.get(name)


@dataclass
class Storage:
    """A profile made ready for reads: where each reader finds the file and how its process
    must be started."""

    profile: profiles.Profile | None  # None: the page cache
    local: str = ""  # the file's path, where it is read as a file
    urls: dict[str, str] = field(default_factory=dict)  # scheme -> URL
    wrap: Callable[[list[str]], list[str]] | None = None
    mode: str = "warm"  # the reads.py cache mode of every timed scan
    device: str = ""
    server_log: str = ""

    @property
    def label(self) -> str:
        """The record's mode: what a timed scan's state was."""
        return "remote" if self.urls else self.mode

    def path_for(self, reader: Reader) -> str:
        """Where ``reader`` finds the file: its URL by the reader's scheme, else the path."""
        return self.urls[reader.url_scheme] if self.urls and reader.url_scheme else self.local


@contextlib.contextmanager
def prepared(name: str, path: Path, workdir: Path) -> Iterator[Storage]:
    """``path`` on storage ``name``; everything made for it is gone on exit (the ledger of
    each resource: :mod:`.storage.ledger`). Raises :class:`Unavailable` naming what is
    missing before anything is made where it can tell."""
    if name == PAGE_CACHE:
        yield Storage(None, local=str(path))
        return
    profile = profiles.get(name)
    if profile.kind == "block":
        size = path.stat().st_size
        with blockdev.emulated(profile, max(2 * size, size + (64 << 20)), workdir) as dev:
            yield Storage(profile, local=str(dev.put(path)), wrap=dev.command, mode="cold",
                          device=dev.loop)
        return
    from hepfmt.measure.storage import shaping
    from hepfmt.measure.storage.servers import XRootDServer

    shaping.toxics(profile)  # a latency the proxy cannot represent: refused before starting
    with XRootDServer(trace=True) as srv, shaping.Toxiproxy() as proxy:
        served = srv.publish(path)
        urls = {"root": srv.root_url(served, proxy.shape(profile, srv.port, f"{name}-root")),
                "http": srv.http_url(served, proxy.shape(profile, srv.http_port,
                                                         f"{name}-http"))}
        yield Storage(profile, urls=urls, server_log=str(srv.log))


def model_input(storage: Storage, io: dict) -> tuple[str, int, int] | None:
    """(view, requests, bytes) the cost model is given for one scan: on a device, what the
    device served (the throttle's own input); remote, the round trips the reader issued
    (the server's count where the reader keeps none) and the bytes the server sent."""
    if storage.profile is None:
        return None
    if storage.device:
        return "device", io["device"]["requests"], io["device"]["bytes"]
    server = io["server"]
    if "reader" in io:
        return "reader", io["reader"]["requests"], server["bytes"]
    return "server", server["requests"], server["bytes"]


def _median(values: list[float]) -> float:
    return float(np.median(values)) if values else float("nan")


def _record(storage: Storage, name: str, spec: ReadSpec, reader: Reader, res: dict,
            zip_bytes: int, n_events: int) -> dict:
    reps = res["modes"][storage.mode]
    stats = summarize([r["wall_s"] for r in reps])
    ios = [r["io"] for r in reps]
    rec: dict[str, object] = {
        "profile": name, "kind": "page-cache" if storage.profile is None else
        storage.profile.kind, "reader": spec.reader, "library": reader.library,
        "selection": spec.selection, "n_branches": len(spec.branches), "mode": storage.label,
        "url": storage.path_for(reader) if storage.urls else "",
        "cold_verified": all(r.get("cold_verified", False) for r in reps)
        if storage.mode == "cold" else None,
        "selection_zip_bytes": zip_bytes, **stats,
        "events_per_s": n_events / stats["median_s"],
        "mb_per_s_compressed": zip_bytes / stats["median_s"] / 1e6,
        "cpu_median_s": _median([r["cpu_s"] for r in reps]),
        "reader_missing": ios[0].get("reader_missing"),
        "repetitions": reps,
    }
    for view in ("kernel", "device", "reader", "server"):
        if view in ios[0]:
            for key in ios[0][view]:
                rec[f"{view}_{key}"] = _median([io[view][key] for io in ios])
    given = [model_input(storage, io) for io in ios]
    if storage.profile is not None and None not in given:
        view = given[0][0]
        requests = int(_median([g[1] for g in given]))
        nbytes = int(_median([g[2] for g in given]))
        p = costmodel.predict(storage.profile, requests, nbytes)
        rec.update(model_view=view, model_requests=requests, model_bytes=nbytes,
                   predicted_s=p.total_s, predicted_transfer_s=p.transfer_s,
                   predicted_ops_s=p.ops_s, predicted_latency_s=p.latency_s,
                   predicted_bound=p.bound)
    return rec


def _describe(name: str) -> dict:
    if name == PAGE_CACHE:
        return {"kind": "page-cache", "description": "the file where it is, read warm from "
                                                     "the page cache (no storage time)"}
    p = profiles.get(name)
    return {"kind": p.kind, "bandwidth_bps": p.bandwidth_bps, "iops": p.iops,
            "latency_s": p.latency_s, "description": p.description}


def measure_storage(path: str | Path, source: str | Path, format_name: str, variant: str,
                    cluster_size: int, readers: list[str],
                    selections: dict[str, list[str] | str], storage_names: list[str],
                    out: str | Path, stopping: Stopping | None = None, threads: int = 1,
                    timeout: float = 3600.0, name: str | None = None,
                    workdir: str | Path | None = None) -> dict:
    """Every (profile, reader, selection) read of one file; one JSON, atomically, or nothing.

    First undoes what killed storage jobs left (:func:`.storage.ledger.reap`: only resources
    of owners that are dead). ``workdir`` holds the emulated devices' images (default: the
    temporary directory)."""
    for left in ledger.reap():
        print(f"could not undo what a killed storage job left: {left}")
    check_profiles(storage_names)
    stopping = stopping or Stopping.default()
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file to measure does not exist")
    fmt = formats.get(format_name)
    unknown = [r for r in readers if r not in fmt.readers]
    if unknown:
        raise UsageError("--readers", f"format {format_name} has no reader {unknown[0]!r}")
    meta = read_source_meta(source)
    schema = schema_of(meta)
    zip_by_branch = zip_bytes_of(path, format_name, timeout)
    status: dict[str, dict] = {}
    reads: list[dict] = []
    skipped: list[dict] = []
    for storage_name in storage_names:
        status[storage_name] = _describe(storage_name)
        try:
            with prepared(storage_name, path, Path(workdir or os.environ.get("TMPDIR", "/tmp"))) \
                    as storage:
                for reader, (sel_name, sel) in itertools.product(readers, selections.items()):
                    r = fmt.readers[reader]
                    why = _why_not(storage, format_name, r)
                    if why:
                        skipped.append({"profile": storage_name, "reader": reader,
                                        "selection": sel_name, "reason": why})
                        continue
                    branches = schema.names if sel == ALL else list(sel)
                    spec = ReadSpec(storage.path_for(r), str(source), format_name,
                                    reader, sel_name, branches, [storage.mode],
                                    stopping.max_repetitions, threads,
                                    formats.entry(format_name).module, stopping.precision,
                                    stopping.min_repetitions, stopping.budget_s,
                                    int(meta["n_events"]), count_io=True,
                                    device=storage.device, server_log=storage.server_log)
                    res = spawn_reads([spec], timeout,
                                      f"{reader}/{sel_name} read on {storage_name}",
                                      storage.wrap)[0]
                    zip_bytes = sum(zip_by_branch.get(b, 0) for b in branches)
                    reads.append(_record(storage, storage_name, spec, r, res, zip_bytes,
                                         int(meta["n_events"])))
        except Unavailable as exc:
            status[storage_name].update(status="skipped", reason=str(exc))
            print(f"storage profile {storage_name} skipped: {exc}")
            continue
        status[storage_name]["status"] = "measured"
    return StorageRecord(
        file=str(path), sample=meta["sample"], process=meta["process"],
        format=name or format_name, adapter=format_name, variant=variant,
        cluster_size=cluster_size, n_events=meta["n_events"],
        file_bytes=path.stat().st_size, profiles=status, skipped_reads=skipped,
        reads=reads, provenance=collect(data_path=path.parent),
    ).write(out)


def _why_not(storage: Storage, adapter: str, reader: Reader) -> str | None:
    """Why ``reader`` is not run on ``storage`` (None: it is): the adapter module says what
    its readers cannot read (``url_refusal``); an adapter that borrows another's readers (the
    RNTuple the TTree's) defers to the module that defines them."""
    if not storage.urls:
        return None
    if reader.url_scheme is None:
        return f"{reader.library} reads no URL"
    for module in (formats.entry(adapter).module, reader.read.__module__):
        refusal = getattr(importlib.import_module(module), "url_refusal", None)
        if refusal is not None:
            return refusal(reader.name)
    return None


def skipped_profiles(doc: dict) -> dict[str, str]:
    """The profiles of a record that were not measured, with why."""
    return {k: v["reason"] for k, v in doc["profiles"].items() if v["status"] == "skipped"}

