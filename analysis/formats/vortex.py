"""Vortex (vortex-data): a columnar file format that picks compressed encodings per column and
chunk by itself (bit-packing, frame-of-reference, ALP for floats, run-end, dictionary, ...).

There is no codec to choose: the variants are Vortex's two write strategies, ``default``
(balanced for read speed) and ``compact`` (smallest files). Vortex also lays out rows in chunks
of its own choosing: the source is streamed to it one cluster per record batch, but the file's
row splits are Vortex's, and ``describe`` reports those (``clusters``), not the requested size.
Jagged branches are Vortex list arrays, counters their own columns.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from analysis.atomic import atomic_path
from analysis.checksum import Checksum, checksum, merge
from analysis.codecs import Variant
from analysis.errors import InputError, VerificationError
from analysis.formats import Format, Reader
from analysis.source import iter_clusters, read_source_meta, schema_of, to_column

ALGORITHMS = ("default", "compact")


def write(source: Path, out: Path, variant: Variant, cluster_size: int, options: dict) -> None:
    import vortex as vx

    meta = read_source_meta(source)
    schema = schema_of(meta)
    batches = (t.combine_chunks().to_batches()[0]
               for t, _ in iter_clusters(source, schema.names, cluster_size))
    first = next(batches)
    stream = pa.RecordBatchReader.from_batches(first.schema, _chain(first, batches))
    strategy = getattr(vx.io.VortexWriteOptions, variant.algorithm)()
    with atomic_path(out) as tmp:
        try:
            strategy.write(stream, str(tmp))
        except Exception as exc:  # vortex raises its own (Rust) error types
            raise VerificationError(out, f"vortex could not write it ({exc})") from exc
        d = describe(tmp)
        if d["entries"] != meta["n_events"] or d["branches"] != len(schema.branches):
            raise VerificationError(out, f"{d['entries']} rows x {d['branches']} columns "
                                         f"written, {meta['n_events']} x "
                                         f"{len(schema.branches)} expected")


def _chain(first, rest):
    yield first
    yield from rest


def _open(path: str | Path):
    import vortex as vx

    if not Path(path).is_file():
        raise InputError(path, "no such file")
    try:
        return vx.open(str(path))
    except Exception as exc:
        raise InputError(path, f"not a readable Vortex file ({exc})") from exc


def _names(f) -> list[str]:
    return [str(n) for n in f.dtype.to_arrow_schema().names]


def describe(path: Path) -> dict:
    """Vortex exposes no per-column storage sizes in Python: ``zip_bytes`` is the whole file and
    ``zip_bytes_by_branch`` is empty (tables then show the file as one block)."""
    f = _open(path)
    splits = [int(b) - int(a) for a, b in f.splits()]
    file_bytes = Path(path).stat().st_size
    return {
        "entries": int(f.footer.row_count),
        "clusters": splits,
        "clusters_note": "Vortex's own row splits; the requested cluster size is not kept",
        "branches": len(_names(f)),
        "file_bytes": file_bytes,
        "zip_bytes": file_bytes,
        "zip_bytes_by_branch": {},
        "footer_bytes": None,
        "footer_bytes_note": "not exposed by vortex-data's Python API",
    }


def _prepare(threads: int) -> None:
    import vortex as vx

    vx.set_worker_threads(max(1, threads))


def _read(path: str, branches: list[str]) -> dict[str, Checksum]:
    f = _open(path)
    missing = sorted(set(branches) - set(_names(f)))
    if missing:
        raise InputError(path, f"missing branches {missing[:5]}")
    out: dict[str, Checksum] = dict.fromkeys(branches, (0, 0))
    try:
        for chunk in f.scan(branches):  # decodes Vortex's encodings into Arrow
            table = pa.Table.from_struct_array(chunk.to_arrow_array())
            for b in branches:
                out[b] = merge(out[b], checksum(to_column(table.column(b)).values))
    except Exception as exc:
        raise InputError(path, f"vortex could not read it: {exc}") from exc
    return out


FORMAT = Format(
    name="vortex", extension="vortex", algorithms=frozenset(ALGORITHMS), dictionary=False,
    write=write, describe=describe, options=frozenset(),
    readers={"vortex": Reader("vortex", "vortex-data", _prepare, _read)},
)
