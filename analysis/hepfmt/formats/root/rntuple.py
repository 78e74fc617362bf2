"""ROOT RNTuple, written by ROOT's RNTupleWriter and read by RDataFrame or uproot.

TTree's successor in ROOT: the study compares it with the TTree and Parquet on the same samples.
Writing reuses the wide-table RNTuple writer (:mod:`.wide_writer`, one JIT-compiled
C++ fill loop over raw Arrow buffers): one top-level field per source branch, scalars as their
own type, jagged branches as ``ROOT::RVec<T>`` beside their counter field (``nMuon``), so that
every branch of the schema exists, as in RDataFrame's NanoAOD snapshots.

Clusters: RNTuple's cluster limits are in bytes only, so the writer raises them out of reach and
calls ``CommitCluster()`` after every ``cluster_size`` entries: clusters are exact entry counts,
like TTree's ``SetAutoFlush`` and Parquet's row groups. Pages: ``page_size`` (default 32000
bytes, as the TTree's baskets and the Parquet pages) caps the unzipped page size
(``RNTupleWriteOptions::SetMaxUnzippedPageSize``); pages start small and grow up to it.

``writer: uproot`` writes the same fields with uproot instead (jagged branches as
``std::vector<T>``, one cluster per ``extend`` call, uproot's own page sizes): the file a user
without ROOT would make.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hepfmt.atomic import atomic_path
from hepfmt.codec import (
    ROOT_ALGORITHMS,
    ROOT_DECOMPRESSION,
    ROOT_LEVELS,
    Variant,
    root_algorithm,
)
from hepfmt.errors import InputError, VerificationError
from hepfmt.formats.base import (
    Blocks,
    Format,
    Layout,
    ReadCost,
    ReadParts,
    WriteMemory,
    WriteParts,
    check_layout,
    require_branches,
)
from hepfmt.formats.root import ttree, uproot_writer, wide_writer
from hepfmt.formats.root.backend import TREE, cxx_what, require_root_file, root
from hepfmt.formats.root.ttree import check_writer
from hepfmt.samples.source import iter_clusters, read_source_meta, schema_of

DEFAULT_PAGE_SIZE = 32000



def _layout(path: str | Path):
    """The descriptor's facts about ``path``, or an InputError naming it."""
    require_root_file(path)
    ROOT = root("rntuple_layout")
    try:  # cppyy turns ROOT's exceptions (RException, runtime_error) into Python ones
        return ROOT.hepfmt_rntuple.layout(str(path), TREE)
    except Exception as exc:
        raise InputError(path, f"not a readable RNTuple {TREE!r} ({cxx_what(exc)})",
                         str(exc)) from exc


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    meta = read_source_meta(source)
    schema = schema_of(meta)
    writer = check_writer(out, options, ("page_size",))
    with atomic_path(out) as tmp:
        try:
            if writer == "uproot":
                uproot_writer.write("rntuple", source, tmp, schema, variant, cluster_size)
            else:
                _write_root(source, tmp, schema, variant, cluster_size,
                            int(options.get("page_size", DEFAULT_PAGE_SIZE)))
        except Exception as exc:  # cppyy: RException (e.g. a page_size too small) from the writer
            raise VerificationError(out, f"the {writer} RNTuple writer refused it ({exc})") \
                from exc
        _verify(tmp, out, meta["n_events"], cluster_size, len(schema.branches))


def _write_root(source: Path, tmp: Path, schema, variant: Variant, cluster_size: int,
                page_size: int) -> None:
    columns = [wide_writer.Column(b.name, "jagged" if b.jagged else "scalar", b.dtype, b.counter)
               for b in schema.branches]
    wide_writer.write("rntuple", tmp, columns, iter_clusters(source, schema.names, cluster_size),
                   cluster_size, variant.root_setting(), page_size)


def _verify(path: Path, name: Path, n_events: int, cluster_size: int, n_branches: int) -> None:
    """Entries, fields and cluster entry counts as the written file's descriptor states them."""
    check_layout(describe(path), name, n_events, cluster_size, n_branches)


def describe(path: Path) -> Layout:
    """The keys of the TTree's ``describe``, from the descriptor. ROOT stores identical pages
    once (same-page merging, e.g. all-false trigger pages): each stored page counts once, for
    the first field using it, so ``zip_bytes`` is what the file holds, not more."""
    layout = _layout(path)
    zip_by_field = {str(f): int(z) for f, z in zip(layout.fields, layout.zip, strict=True)}
    return Layout.of(**{
        "entries": int(layout.entries),
        "clusters": [int(n) for n in layout.clusters],
        "branches": len(zip_by_field),
        "pages": int(layout.pages),
        "compression_settings": int(layout.compression) if layout.compression >= 0 else 0,
        "zip_bytes": sum(zip_by_field.values()),
        "zip_bytes_by_branch": zip_by_field,
        "file_bytes": Path(path).stat().st_size,
    })


def blocks(path: Path, branches: list[str]) -> Blocks:
    """The pages of ``branches`` (their subfields' too), from the descriptor."""
    layout = _layout(path)
    require_branches(path, [str(f) for f in layout.fields], branches)
    ROOT = root("rntuple_layout")
    try:
        flat = [int(x) for x in ROOT.hepfmt_rntuple.pages(str(path), TREE, branches)]
    except Exception as exc:
        raise InputError(path, f"cannot list its pages ({cxx_what(exc)})", str(exc)) from exc
    codec = root_algorithm(int(layout.compression) if layout.compression >= 0 else 0)
    library, reused = ROOT_DECOMPRESSION.get(codec, (None, None))
    return Blocks(codec, library, reused, flat[0::3], flat[1::3], flat[2::3],
                  None if library else f"{codec} is not decompressed here")


FORMAT = Format(
    algorithms=frozenset(ROOT_ALGORITHMS), levels=ROOT_LEVELS, dictionary=False,
    write=write, describe=describe, options=frozenset({"page_size", "writer"}), verifier="rdf",
    blocks=blocks,
    # The TTree's RDataFrame, columnar (here RBulkValues) and uproot readers: each opens an
    # RNTuple by its name. Their costs here (analysis/hepfmt/plan/cost.py says how they were
    # measured)
    readers={
        "rdf": replace(ttree.RDF, cost=ReadCost(1.35, ReadParts(0.012, 0.0004, 1_770_000),
                                                ReadParts(0.089, 0.0085, 10_700))),
        "columnar": replace(ttree.COLUMNAR_READER, cost=ReadCost(
            1.0, ReadParts(0.026, 0.0017, 1_590_000), ReadParts(0.024, 0.0041, 48_900))),
        "uproot": replace(ttree.UPROOT, cost=ReadCost(1.5, ReadParts(0.0005, 1.70, 80_500),
                                                      ReadParts(0.0007, 1.41, 3_790))),
    },
    write_cost=WriteParts(2.82, 3_840, "zstd-5"), file_overhead_s=1.6,
    # the writer holds one cluster as an Arrow block (~5 B/value) and RNTupleWriter's buffered
    # pages of that cluster (estimated from the sizes, not measured like TTree's and Parquet's)
    write_memory=WriteMemory(700, 9),
    queries_cost_as="ttree",
    test_variants=("none", "zstd-5"),
)
