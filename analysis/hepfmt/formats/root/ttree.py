"""ROOT TTree, written by ROOT itself (PyROOT) and read by RDataFrame or uproot.

The readers also read an RNTuple of the same name (:mod:`hepfmt.formats.root.rntuple` uses them).

Writing: each branch is bound to a numpy buffer with a NanoAOD-style leaf list
(``Muon_pt[nMuon]/F``) and one JIT-compiled C++ loop copies the source columns into the buffers
and calls ``TTree::Fill``; a Python loop over 1500 branches per event would be ~100x slower.
``SetAutoFlush(cluster_size)`` makes clusters of exactly that many entries.

Baskets: ROOT resizes all basket buffers at the first cluster (``OptimizeBaskets``), so "basket
size 32000 bytes" needs a policy, chosen by the ``basket_policy`` option and recorded:

* ``fixed``: every basket buffer is ``basket_size`` bytes for the whole file (sizes are reset
  after ROOT's optimisation); a branch writes several baskets per cluster if it needs them;
* ``optimize``: ROOT's default, ``basket_size`` only until the first cluster;
* ``cluster``: ``kOnlyFlushAtCluster``, exactly one basket per branch per cluster.

Offset arrays: a basket of a jagged branch normally stores, besides the values, the byte offset
of each entry (4 bytes per event per branch). ``store_offsets: false`` sets ROOT's
``kGenerateOffsetMap`` I/O feature: the offsets are not written and ROOT rebuilds them from the
counter branch when reading, as the 2018 study's "ROOT without offsets" files did.

``writer: uproot`` writes the same tree with uproot instead (:mod:`.uproot_writer`).

Readers: RDataFrame (one compiled event loop), a ``TTreeReader`` loop (what a ROOT expert writes
by hand), the classic ``SetBranchAddress`` + ``GetEntry`` loop (all three compiled once into
one cached library) and uproot. Trees without offset arrays are not read reliably by any of them
in ROOT 6.40 / uproot 5.7 (docs/formats.md); the checksums catch it.
"""

from __future__ import annotations

import functools
import os
from dataclasses import replace
from pathlib import Path

import numpy as np

from hepfmt.atomic import atomic_path
from hepfmt.checksum import Checksum
from hepfmt.codec import ROOT_ALGORITHMS, ROOT_DECOMPRESSION, ROOT_LEVELS, Variant, root_algorithm
from hepfmt.errors import ConfigError, InputError, VerificationError
from hepfmt.formats.base import (
    COLUMNAR,
    EVENT_LOOP,
    HANDOVER,
    STREAM,
    BareFn,
    Blocks,
    Format,
    Layout,
    Marks,
    ReadCost,
    Reader,
    ReadParts,
    WriteMemory,
    WriteParts,
    awkward_checksums,
    check_layout,
    is_url,
    keep_chunks,
    require_branches,
)
from hepfmt.formats.root import uproot_writer
from hepfmt.formats.root.backend import (
    LEAF_CODES,
    READERS,
    TREE,
    create,
    cxx_what,
    require_root_file,
    root,
)
from hepfmt.samples.source import iter_batches, read_source_meta, schema_of, to_column

BASKET_POLICIES = ("fixed", "optimize", "cluster")

WRITERS = ("root", "uproot")


def check_writer(out: Path, options: dict, root_only: tuple[str, ...]) -> str:
    """The ``writer`` option, refusing options that only ROOT's writer has: uproot chooses its
    own basket and page sizes, and a knob that silently does nothing would mislabel a result."""
    writer = options.get("writer", "root")
    if writer not in WRITERS:
        raise ConfigError("options.writer", f"{writer!r} is not one of {WRITERS} ({out})")
    ignored = sorted(k for k in root_only if k in options)
    if writer == "uproot" and ignored:
        raise ConfigError("options", f"{ignored} apply to ROOT's writer, not uproot's ({out})")
    return writer


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    meta = read_source_meta(source)
    schema = schema_of(meta)
    if check_writer(out, options, ("basket_size", "basket_policy", "store_offsets")) == "uproot":
        with atomic_path(out) as tmp:
            try:
                uproot_writer.write("ttree", source, tmp, schema, variant, cluster_size)
            except (ValueError, TypeError, OSError) as exc:
                raise VerificationError(out, f"uproot could not write it ({exc})") from exc
            _verify(tmp, out, meta["n_events"], cluster_size, len(schema.branches))
        return
    _write_root(source, out, meta, schema, variant, cluster_size, options)


def _write_root(source: Path, out: Path, meta: dict, schema, variant: Variant, cluster_size: int,
                options: dict) -> None:
    ROOT = root("fill_tree")
    basket_size = int(options.get("basket_size", 32000))
    policy = options.get("basket_policy", "fixed")
    if policy not in BASKET_POLICIES:
        raise VerificationError(out, f"basket_policy {policy!r} not one of {BASKET_POLICIES}")
    settings = variant.root_setting()

    # Branch buffers must hold the longest entry of each collection.
    max_len = {c: 1 for c in schema.counters()}
    for batch in iter_batches(source, list(max_len)):
        for c in max_len:
            max_len[c] = max(max_len[c], int(to_column(batch.column(c)).values.max(initial=0)))

    with atomic_path(out) as tmp:
        try:
            f = create(tmp, lambda name: ROOT.TFile(name, "RECREATE", "", settings))
        except OSError as exc:
            raise InputError(out, f"ROOT could not create the file ({exc})") from exc
        if f.IsZombie():
            raise InputError(out, "ROOT could not create the file")
        t = ROOT.TTree(TREE, "NanoAOD-like events written by hepfmt")
        if not options.get("store_offsets", True):
            features = ROOT.TIOFeatures()
            features.Set(_offset_map_feature())
            t.SetIOFeatures(features)  # before any branch exists: branches copy the features
        t.SetAutoFlush(cluster_size)
        # no auto-save: it flushes every basket (a cluster boundary) once ~300 MB are filled, so
        # an uncompressed 100000-event cluster came out as 60415 + 39585 entries
        t.SetAutoSave(0)
        if policy == "cluster":
            t.SetBit(ROOT.TTree.kOnlyFlushAtCluster)
        buffers = []
        for b in schema.branches:
            buf = np.zeros(max_len[b.counter] if b.jagged else 1, dtype=b.np_dtype)
            leaf = f"{b.name}[{b.counter}]/{LEAF_CODES[b.dtype]}" if b.jagged \
                else f"{b.name}/{LEAF_CODES[b.dtype]}"
            t.Branch(b.name, buf, leaf, basket_size)
            buffers.append(buf)
        sizes = np.array([b.np_dtype.itemsize for b in schema.branches], dtype=np.int32)
        bufs = np.array([x.ctypes.data for x in buffers], dtype=np.uint64)
        reset_at = cluster_size if policy == "fixed" else -1
        for batch in iter_batches(source, schema.names):
            cols = [to_column(batch.column(i)) for i in range(batch.num_columns)]
            keep = [(c.values if c.values.size else np.zeros(1, c.values.dtype), c.offsets)
                    for c in cols]  # keep arrays alive while C++ holds their pointers
            data = np.array([v.ctypes.data for v, _ in keep], dtype=np.uint64)
            offs = np.array([0 if o is None else o.ctypes.data for _, o in keep], dtype=np.uint64)
            ROOT.hepfmt.fill_tree(t, batch.num_rows, len(keep), data, offs, bufs, sizes,
                                  reset_at, basket_size)
        t.Write()
        f.Close()
        _verify(tmp, out, meta["n_events"], cluster_size, len(schema.branches))


def _offset_map_feature():
    return root().Experimental.EIOFeatures.kGenerateOffsetMap


def _verify(path: Path, name: Path, n_events: int, cluster_size: int, n_branches: int) -> None:
    check_layout(describe(path), name, n_events, cluster_size, n_branches)


def describe(path: Path) -> Layout:
    layout = _compiled("tree_layout", "ROOT", str(path))
    zip_by_branch = {str(b): int(z) for b, z in zip(layout.branches, layout.zip, strict=True)}
    return Layout.of(**{
        "entries": int(layout.entries),
        "clusters": [int(n) for n in layout.clusters],
        "branches": len(zip_by_branch),
        "baskets": int(layout.baskets),
        "compression_settings": int(layout.compression),
        # kGenerateOffsetMap: offset arrays of jagged branches not stored
        "store_offsets": bool(layout.store_offsets),
        "auto_flush": int(layout.auto_flush),
        "zip_bytes": int(layout.zip_bytes),
        "tot_bytes": int(layout.tot_bytes),
        "zip_bytes_by_branch": zip_by_branch,
        "file_bytes": int(layout.file_bytes),
    })


def blocks(path: Path, branches: list[str]) -> Blocks:
    """The baskets of ``branches``: each basket's key (header, then the compressed object) is
    read for its key and object lengths; what follows the key is ROOT-framed compressed data,
    or the object itself where compressing did not make it smaller."""
    import uproot

    try:
        with uproot.open(path) as f, open(path, "rb") as raw:
            tree = f[TREE]
            require_branches(path, tree.keys(), branches)
            codec = root_algorithm(int(f.file.fCompress))
            offsets, zipped, unzipped = [], [], []
            for name in branches:
                br = tree[name]
                n = br.num_baskets
                for seek, nbytes in zip(br.member("fBasketSeek")[:n],
                                        br.member("fBasketBytes")[:n], strict=True):
                    raw.seek(int(seek))
                    head = raw.read(16)
                    objlen = int.from_bytes(head[6:10], "big")
                    keylen = int.from_bytes(head[14:16], "big")
                    offsets.append(int(seek) + keylen)
                    zipped.append(int(nbytes) - keylen)
                    unzipped.append(objlen)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(path, f"cannot list its baskets ({exc})") from exc
    library, reused = ROOT_DECOMPRESSION.get(codec, (None, None))
    return Blocks(codec, library, reused, offsets, zipped, unzipped,
                  None if library else f"{codec} is not decompressed here")


def _prepare_rdf(threads: int) -> None:
    ROOT = root(READERS)
    if threads > 1:
        ROOT.EnableImplicitMT(threads)


def _compiled(function: str, library: str, path: str, *args, check: bool = True):
    """``hepfmt::<function>(path, tree, *args)`` of the compiled readers, its C++ exceptions
    turned into an error naming the file. ``check=False`` (the timed scan) skips opening the
    file for its magic: the untimed priming scan's :func:`_cluster_ends` checked it."""
    ROOT = root(READERS)
    if check:
        require_root_file(path)
    try:
        return getattr(ROOT.hepfmt, function)(str(path), TREE, *args)
    except Exception as exc:  # cppyy turns C++ exceptions into Python ones
        raise InputError(path, f"{library} could not read it: {cxx_what(exc)}", str(exc)) \
            from exc


@functools.lru_cache(maxsize=8)
def _cluster_ends(path: str, mtime_ns: int, size: int) -> list[int]:
    """Where the compiled scans mark progress: the file's cluster boundaries, read once per
    process (at the untimed priming scan), so no timed scan pays for a second open."""
    return [int(e) for e in _compiled("cluster_ends", "ROOT", path)]


def _bare_compiled(loop: str) -> BareFn:
    """The compiled loop itself, called straight from Python: no marks kept, no clusters."""

    def call(path: str, branches: list[str], threads: int) -> object:
        return getattr(root(READERS).hepfmt, f"{loop}_scan")(path, TREE, branches, [])

    return call


def _bare_uproot(path: str, branches: list[str], threads: int) -> object:
    import uproot

    with uproot.open(path) as f:
        return f[TREE].arrays(branches)


def _ends_of(path: str) -> list[int]:
    """The cluster ends a compiled scan marks, read once per process (:func:`_cluster_ends`)."""
    if is_url(path):  # read once per process too: a served file does not change under it
        return _cluster_ends(path, 0, 0)
    st = os.stat(path) if Path(path).is_file() else None
    return _cluster_ends(path, st.st_mtime_ns, st.st_size) if st else []


def _marked(got, marks: Marks) -> int:
    """A compiled scan's ``[opened, entries, time, ...]`` handed to ``marks``; the entries."""
    got = list(got)
    marks.opened(got[0])
    for entries, at in zip(got[1::2], got[2::2], strict=True):
        marks.chunk(int(entries), at)
    return int(got[-2]) if len(got) > 1 else 0


def _split(flat, branches: list[str]) -> dict[str, Checksum]:
    return {b: tuple(int(v) for v in flat[4 * i:4 * i + 4]) for i, b in enumerate(branches)}


def compiled_reader(name: str, loop: str, library: str, kind: str = EVENT_LOOP,
                    **facts: object) -> Reader:
    """A compiled loop as a reader: ``<loop>_checksums`` proves it, ``<loop>_scan`` times it
    and hands back its marks, taken on steady_clock (the clock of time.perf_counter)."""

    def read(path: str, branches: list[str], threads: int = 1) -> dict[str, Checksum]:
        # RDataFrame under implicit MT (this read's threads, or a process that enabled it):
        # its slots' runs of entries joined in entry order
        mt = loop == "rdf" and (threads > 1 or bool(root().IsImplicitMTEnabled()))
        proof = "rdf_mt_checksums" if mt else f"{loop}_checksums"
        return _split(_compiled(proof, library, path, branches), branches)

    def scan(path: str, branches: list[str], threads: int, marks: Marks) -> int:
        return _marked(_compiled(f"{loop}_scan", library, path, branches, _ends_of(path),
                                 check=False), marks)

    # an event loop visits every value and keeps none: the stream mode
    return Reader(name, "root", _prepare_rdf, read, scan, kind, url_scheme="root",
                  mode=STREAM, **facts)


def threaded_reader(name: str, loop: str, library: str, mode: str, **facts: object) -> Reader:
    """A compiled columnar read whose columns are dealt out over ``threads`` threads, each
    with its own file handle (``cxx/readers.cxx``'s ``on_threads``): ``<loop>_checksums``
    proves it at the same thread count as ``<loop>_scan`` times it. The ``handover`` scan
    returns the filled arrays, which ``marks`` holds until the harness stopped its clock."""

    def read(path: str, branches: list[str], threads: int = 1) -> dict[str, Checksum]:
        return _split(_compiled(f"{loop}_checksums", library, path, branches,
                                max(1, threads)), branches)

    def scan(path: str, branches: list[str], threads: int, marks: Marks) -> int:
        got = _compiled(f"{loop}_scan", library, path, branches, _ends_of(path),
                        max(1, threads), check=False)
        if mode == HANDOVER:
            marks.hold(got)
            got = got.marks
        return _marked(got, marks)

    return Reader(name, "root", _prepare_columnar, read, scan, COLUMNAR, url_scheme="root",
                  mode=mode, **facts)


def _prepare_columnar(threads: int) -> None:
    """The compiled readers loaded; threads are the read's own (``std::thread`` over columns,
    ROOT's thread safety switched on by the read itself), not ROOT's implicit MT."""
    root(READERS)


#: ROOT's columnar reading, one column at a time: TTree baskets through the bulk API (flat
#: branches) and TBranch::GetBasket (jagged ones), RNTuple fields through RBulkValues; each
#: basket's values touched and dropped (the stream mode), columns over ``threads`` threads.
COLUMNAR_READER = threaded_reader(
    "columnar", "columnar_mt", "ROOT's basket/bulk API", STREAM,
    cost=ReadCost(1.0, ReadParts(0.010, 0.0001, 4_300_000), ReadParts(0.098, 0.009, 71_800)))
#: The same baskets handed over: every column of every entry into one contiguous array
#: (values, and offsets for a jagged branch), as uproot's ``arrays`` returns them: the
#: twin of pyarrow's Table (TTree only).
HANDOVER_READER = threaded_reader(
    "columnar-handover", "handover", "ROOT's basket/bulk API", HANDOVER,
    cost=ReadCost(1.0, ReadParts(0.010, 0.0001, 4_300_000), ReadParts(0.098, 0.009, 60_000)))


def _refuse_offset_map(path: str, tree, version: str) -> None:
    """uproot reads baskets by their stored entry offsets; a tree written without them
    (kGenerateOffsetMap) would fail deep inside a basket, so say why up front."""
    features = tree.all_members.get("fIOFeatures")
    if features is not None and features.member("fIOBits") & 1:
        raise InputError(path, f"written without offset arrays (ROOT kGenerateOffsetMap), "
                               f"which uproot {version} cannot read")


def _prepare_uproot(threads: int) -> None:
    import awkward  # noqa: F401
    import uproot  # noqa: F401


def _uproot_chunks(path: str, branches: list[str], marks: Marks):
    """The selection in one call, as uproot users read a file (``iterate`` in steps costs
    more, and a scan holds all of it anyway)."""
    import uproot

    try:
        with uproot.open(path) as f:
            tree = f[TREE]
            marks.opened()
            yield tree.arrays(branches, library="ak")
    except Exception as exc:
        raise InputError(path, f"uproot could not read it: {exc}") from exc


def _read_uproot(path: str, branches: list[str], threads: int = 1) -> dict[str, Checksum]:
    import uproot

    try:
        with uproot.open(path) as f:
            tree = f[TREE]
            _refuse_offset_map(path, tree, uproot.__version__)
            require_branches(path, tree.keys(), branches)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(path, f"uproot could not read it: {exc}") from exc
    return awkward_checksums(_uproot_chunks(path, branches, Marks()), branches)


def _scan_uproot(path: str, branches: list[str], threads: int, marks: Marks) -> int:
    return keep_chunks(_uproot_chunks(path, branches, marks), marks)


def _unverifiable(options: dict) -> str | None:
    if options.get("store_offsets", True):
        return None
    return ("written without offset arrays, which no reader of ROOT 6.40 or uproot 5.7 reads "
            "back exactly")


#: uproot and RDataFrame's loop, which the TTree and the RNTuple share
UPROOT = Reader("uproot", "uproot", _prepare_uproot, _read_uproot, _scan_uproot,
                bare=_bare_uproot, url_scheme="root", on_storage=True)
RDF = compiled_reader("rdf", "rdf", "RDataFrame", bare=_bare_compiled("rdf"), on_storage=True,
                      marks_clusters=True)


FORMAT = Format(
    algorithms=frozenset(ROOT_ALGORITHMS), levels=ROOT_LEVELS, dictionary=False,
    write=write, describe=describe,
    options=frozenset({"basket_size", "basket_policy", "store_offsets", "writer"}),
    verifier="getentry", unverifiable=_unverifiable, blocks=blocks,
    # costs: analysis/hepfmt/plan/cost.py says how they were measured
    readers={
        "rdf": replace(RDF, cost=ReadCost(1.15, ReadParts(0.010, 0.007, 1_650_000),
                                          ReadParts(0.30, 0.67, 4_170))),
        "ttreereader": compiled_reader(
            "ttreereader", "ttreereader", "TTreeReader", bare=_bare_compiled("ttreereader"),
            on_storage=True, marks_clusters=True,
            cost=ReadCost(1.0, ReadParts(0.007, 0.007, 1_680_000),
                          ReadParts(0.085, 0.62, 5_660))),
        "getentry": compiled_reader(
            "getentry", "getentry", "TTree::GetEntry", bare=_bare_compiled("getentry"),
            marks_clusters=True, cost=ReadCost(1.0, ReadParts(0.017, 0.003, 232_000),
                          ReadParts(0.84, 0.0008, 12_400))),
        "columnar": COLUMNAR_READER,
        "columnar-handover": HANDOVER_READER,
        "uproot": replace(UPROOT, cost=ReadCost(0.6, ReadParts(0.26, 0.0, 780_000),
                                                ReadParts(0.27, 0.87, 36_500))),
    },
    write_cost=WriteParts(2.85, 2_585, "zstd-5"), file_overhead_s=1.6,
    # TTree::Fill holds one cluster of baskets: ~10 kB/entry (+935 MB at 100000 entries of the
    # 1499-branch NanoAOD, measured)
    write_memory=WriteMemory(700, 7),
    test_variants=("none", "zstd-5", "lz4-4"),
)
