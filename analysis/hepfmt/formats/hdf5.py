"""HDF5 through h5py: the format many HPC tools read, as a physicist would lay out NanoAOD in it.

Layout: group ``Events``; one 1-D dataset per branch, named as the branch, listed in the
source's branch order (the group tracks creation order). Event-level branches
(counters included) have one value per event; a jagged branch (``Muon_pt``) is the flat
dataset of all its values, and its per-event lengths are its counter dataset (``nMuon``), as in
the TTree (``Muon_pt[nMuon]``): no per-branch offsets are stored. The dataset attribute
``counter`` names it.

Clusters: HDF5 has chunks, not clusters. Event-level datasets are chunked by ``cluster_size``
events (``describe`` reads the chunk shape back); a jagged dataset's chunk holds the mean number
of values per cluster, so a cluster's values span about one chunk. Codecs are HDF5's built-in
filters: ``gzip[-<level>]`` (deflate, levels 0-9, h5py's default 4) and ``lzf`` (no level);
``shuffle: true`` adds the byte-shuffle filter. zstd and lz4 would need the ``hdf5plugin``
filters, which are not a dependency, so they are not offered. Booleans are HDF5 enums of one
byte, as h5py writes numpy bools, and read back as numpy bools.

The reader reads each dataset in blocks of whole chunks, so that no chunk is decompressed twice.

The writer builds the file in memory (HDF5's ``core`` driver) and writes it at close: the file's
bytes are those of a direct write, and a full disk is an error, where a direct write's failed
flush crashes HDF5 2.0 when h5py closes a dataset.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from hepfmt.atomic import atomic_path
from hepfmt.checksum import EMPTY, Checksum, checksum, merge
from hepfmt.codec import RAW_DECOMPRESSION, Variant
from hepfmt.errors import InputError
from hepfmt.formats.base import (
    Blocks,
    Format,
    Layout,
    Marks,
    ReadCost,
    Reader,
    ReadParts,
    WriteParts,
    check_layout,
    require_branches,
)
from hepfmt.samples.source import iter_clusters, read_source_meta, schema_of, to_column

GROUP = "Events"
ALGORITHMS = {"none": None, "gzip": "gzip", "lzf": "lzf"}
READ_BLOCK = 1 << 20  # about this many values per read: bounded memory whatever the file size


def filters(variant: Variant, options: dict) -> dict:
    """h5py ``create_dataset`` filter arguments (levels were checked with the variant:
    ``FORMAT.levels``)."""
    out = {"compression": ALGORITHMS[variant.algorithm],
           "shuffle": bool(options.get("shuffle", False))}
    if variant.level is not None:
        out["compression_opts"] = variant.level
    return out


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    import h5py

    meta = read_source_meta(source)
    schema = schema_of(meta)
    n = meta["n_events"]
    n_clusters = max(1, math.ceil(n / cluster_size))
    opts = filters(variant, options)
    # in memory, written to disk whole at close (the same bytes): HDF5 2.0 segfaults closing a
    # dataset whose chunks could not be flushed (a full disk), and the core driver's flush
    # fails cleanly, after the datasets are closed
    with atomic_path(out) as tmp, h5py.File(tmp, "w", driver="core", backing_store=True) as f:
        g = f.create_group(GROUP, track_order=True)
        g.attrs["cluster_size"] = cluster_size
        datasets, pos = {}, {}
        for b in schema.branches:
            length = meta["checksums"][b.name][0] if b.jagged else n
            chunk = max(1, math.ceil(length / n_clusters)) if b.jagged else min(cluster_size, n)
            # resizable, so that an empty collection branch may still have a chunk shape
            datasets[b.name] = g.create_dataset(b.name, shape=(length,), dtype=b.np_dtype,
                                                chunks=(chunk,), maxshape=(None,), **opts)
            if b.jagged:
                datasets[b.name].attrs["counter"] = b.counter
            pos[b.name] = 0
        for table, _ in iter_clusters(source, schema.names, cluster_size):
            for b in schema.branches:
                values = to_column(table.column(b.name)).values
                datasets[b.name][pos[b.name]:pos[b.name] + values.size] = values
                pos[b.name] += values.size
        f.close()
        _verify(tmp, out, n, cluster_size, len(schema.branches))


#: What h5py raises on a damaged file: OSError for chunks and filters, RuntimeError for
#: metadata (a group's links whose checksum fails), KeyError and ValueError for objects that
#: do not resolve
DAMAGED = (OSError, RuntimeError, KeyError, ValueError)


@contextmanager
def _open(path: str | Path) -> Iterator:
    """The file, open; whatever h5py raises on damaged bytes inside the block is an error
    naming the file."""
    import h5py

    try:
        f = h5py.File(str(path), "r")
    except OSError as exc:
        raise InputError(path, f"not a readable HDF5 file ({exc})") from exc
    with f:
        try:
            if GROUP not in f:
                raise InputError(path, f"no group {GROUP!r}")
            yield f
        except DAMAGED as exc:
            raise InputError(path, f"h5py could not read it: {exc}") from exc


def _clusters(g, entries: int) -> list[int]:
    """Event-level chunks as entries per cluster (the chunk shape of the counter-free datasets)."""
    chunk = next(ds.chunks[0] for ds in g.values() if "counter" not in ds.attrs)
    return [min(chunk, entries - s) for s in range(0, entries, chunk)]


def _entries(g) -> int:
    return next(ds.shape[0] for ds in g.values() if "counter" not in ds.attrs)


def _verify(path: Path, name: Path, n_events: int, cluster_size: int, n_branches: int) -> None:
    check_layout(describe(path), name, n_events, cluster_size, n_branches, "chunks")


def describe(path: Path) -> Layout:
    with _open(path) as f:
        g = f[GROUP]
        entries = _entries(g)
        by_branch = {name: int(ds.id.get_storage_size()) for name, ds in g.items()}
        first = next(iter(g.values()))
        file_bytes = Path(path).stat().st_size
        return Layout.of(**{
            "entries": entries,
            "clusters": _clusters(g, entries),
            "branches": len(by_branch),
            "file_bytes": file_bytes,
            "zip_bytes": sum(by_branch.values()),
            "zip_bytes_by_branch": by_branch,
            "footer_bytes": file_bytes - sum(by_branch.values()),
            "footer_bytes_note": "all but the chunks: object headers, B-trees, heaps, free space",
            "compression": first.compression or "none",
            "compression_level": first.compression_opts,
            "shuffle": bool(first.shuffle),
        })


def _prepare(threads: int) -> None:
    import h5py  # noqa: F401  (HDF5 reads are single-threaded)


def _blocks(path: str, branches: list[str], marks: Marks,
            sink: Callable[[str, np.ndarray], None]) -> int:
    """Hand ``sink`` each dataset in blocks of whole chunks, branch after branch; the entries
    (events) of the file. HDF5 stores columns apart, so the one progress mark a reader reaches
    is the end of the read."""
    with _open(path) as f:
        g = f[GROUP]
        marks.opened()
        for b in branches:
            ds = g[b]
            n = ds.shape[0]
            if n <= READ_BLOCK:  # one block: the whole dataset, as ds[()] reads it
                sink(b, ds[()])
                continue
            chunk = ds.chunks[0] if ds.chunks else READ_BLOCK
            step = chunk * max(1, READ_BLOCK // chunk)
            for start in range(0, n, step):
                sink(b, np.asarray(ds[start:start + step]))
        first = g[branches[0]]
        counter = first.attrs.get("counter")
        entries = int(g[counter].shape[0] if counter else first.shape[0])
    marks.chunk(entries)
    return entries


def _read(path: str, branches: list[str], threads: int = 1) -> dict[str, Checksum]:
    with _open(path) as f:
        require_branches(path, f[GROUP], branches)
    out: dict[str, Checksum] = dict.fromkeys(branches, EMPTY)

    def fold(b: str, values: np.ndarray) -> None:
        out[b] = merge(out[b], checksum(values))

    _blocks(path, branches, Marks(), fold)
    return out


def _scan(path: str, branches: list[str], threads: int, marks: Marks) -> int:
    return _blocks(path, branches, marks, lambda _, values: marks.hold(values))


def blocks(path: Path, branches: list[str]) -> Blocks:
    """Every stored chunk of ``branches``' datasets, from HDF5's own chunk index (h5py's
    ``get_chunk_info``): what the reader's ``ds[...]`` makes HDF5 decompress. HDF5 stores an
    edge chunk whole, so every chunk unzips to the chunk shape's bytes. With the shuffle filter
    the bound is deflate's alone (the byte unshuffle after it is not counted); a chunk whose
    filter mask says deflate was skipped is stored as it is (its bound is a copy)."""
    offsets, zipped, unzipped, codecs = [], [], [], set()
    with _open(path) as f:
        g = f[GROUP]
        require_branches(path, g, branches)
        for b in branches:
            ds = g[b]
            codecs.add(ds.compression or "none")
            if ds.chunks is None:  # contiguous: one block, never filtered
                if ds.id.get_storage_size():
                    offsets.append(int(ds.id.get_offset()))
                    zipped.append(int(ds.id.get_storage_size()))
                    unzipped.append(zipped[-1])
                continue
            whole = int(np.prod(ds.chunks)) * ds.dtype.itemsize
            for i in range(ds.id.get_num_chunks()):
                info = ds.id.get_chunk_info(i)
                offsets.append(int(info.byte_offset))
                zipped.append(int(info.size))
                unzipped.append(whole)
    if len(codecs) > 1:
        raise InputError(path, f"its datasets mix filters ({', '.join(sorted(codecs))})")
    codec = codecs.pop() if codecs else "none"
    # deflate stores each chunk as a zlib stream, which the gzip modes inflate (lzf: none)
    library, reused = RAW_DECOMPRESSION.get(codec, (None, None))
    return Blocks(codec, library, reused, offsets, zipped, unzipped,
                  None if library else f"no {codec} decompressor is measured here")


def _bare(path: str, branches: list[str], threads: int) -> object:
    """As a user reads it from h5py's documentation."""
    import h5py

    with h5py.File(path, "r") as f:
        return [f["Events"][b][()] for b in branches]


FORMAT = Format(
    algorithms=frozenset(ALGORITHMS), dictionary=False,
    write=write, describe=describe, options=frozenset({"shuffle"}), levels={"gzip": (0, 9)},
    readers={"h5py": Reader(
        "h5py", "h5py", _prepare, _read, _scan, bare=_bare,
        # analysis/hepfmt/plan/cost.py says how it was measured
        cost=ReadCost(0.05, ReadParts(0.0002, 0.0014, 1_960_000),
                      ReadParts(0.0004, 0.171, 56_900)))},
    write_cost=WriteParts(1.33, 6_450, "gzip-4"),
    test_variants=("none", "gzip-4"), blocks=blocks,
)
