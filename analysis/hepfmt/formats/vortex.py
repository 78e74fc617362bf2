"""Vortex (vortex-data): a columnar file format that picks compressed encodings per column and
chunk by itself (bit-packing, frame-of-reference, ALP for floats, run-end, dictionary, ...).

There is no codec to choose: the variants are Vortex's two write strategies, ``default``
(balanced for read speed) and ``compact`` (smallest files). Vortex also lays out rows in chunks
of its own choosing: the source is streamed to it one cluster per record batch, but the writer
re-partitions rows (zones of 8192 rows, data chunks by bytes), and vortex-data 0.90 has no option
to keep the batches. ``describe`` reports the file's own row splits (``clusters``), not the
requested size. Jagged branches are Vortex list arrays, counters their own columns.

Layout facts that the Python API does not show (bytes per column, footer sizes) come from the
inspector vortex-data ships (the ``vx`` command: ``vx segments`` and ``vx inspect --json``). It
prints from Rust to the process's stdout, so ``describe`` runs it in a child process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa

from hepfmt.atomic import atomic_path
from hepfmt.codec import Variant
from hepfmt.errors import InputError, VerificationError
from hepfmt.formats.base import (
    Format,
    Layout,
    Marks,
    ReadCost,
    ReadParts,
    WriteParts,
    arrow_reader,
    require_branches,
)
from hepfmt.samples.source import iter_clusters, read_source_meta, schema_of

ALGORITHMS = ("default", "compact")
EOF_BYTES = 8  # version, postscript length, magic "VTXF"

_INSPECT = """import sys
from vortex.cli import main
path = sys.argv[1]
for command in (["segments"], ["inspect", "--json"]):
    sys.argv = ["vx", *command, path]
    main()
"""


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
        f = _open(tmp)
        rows, names = int(f.footer.row_count), _names(f)
        if rows != meta["n_events"] or names != schema.names:
            raise VerificationError(out, f"{rows} rows x {len(names)} columns written, "
                                         f"{meta['n_events']} x {len(schema.branches)} expected")


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


def _inspect(path: str | Path) -> tuple[dict, dict]:
    """(``vx segments``, ``vx inspect --json``) of a file, as parsed JSON."""
    run = subprocess.run([sys.executable, "-c", _INSPECT, str(path)], capture_output=True,
                         text=True, env={**os.environ, "RUST_BACKTRACE": "0"}, check=False)
    try:
        if run.returncode:
            raise ValueError(f"exit status {run.returncode}")
        decoder = json.JSONDecoder()
        segments, end = decoder.raw_decode(run.stdout)
        rest = run.stdout[end:].lstrip()
        inspect, _ = decoder.raw_decode(rest)
    except ValueError as exc:
        raise InputError(path, f"vortex's inspector (vx) could not read it ({exc})") from exc
    return segments, inspect


def describe(path: Path) -> Layout:
    """Bytes per branch are its data segments; the zone maps (per-column min/max/null counts
    per zone of rows, in the data area, read to prune zones) are counted apart, like the
    statistics in a Parquet footer."""
    f = _open(path)
    segments, inspect = _inspect(path)
    by_branch: dict[str, int] = {}
    zones = 0
    for column in segments["columns"]:
        data = [s["byte_length"] for s in column["segments"] if s["name"] != "zones"]
        by_branch[column["name"]] = sum(data)
        zones += sum(s["byte_length"] for s in column["segments"] if s["name"] == "zones")
    postscript = inspect["postscript"]
    footer = sum(part["length"] for part in postscript.values() if part) \
        + inspect["eof"]["postscript_size"] + EOF_BYTES
    return Layout.of(**{
        "entries": int(f.footer.row_count),
        "clusters": [int(b) - int(a) for a, b in f.splits()],
        "clusters_note": "Vortex's own row splits; the requested cluster size is not kept",
        "branches": len(_names(f)),
        "file_bytes": Path(path).stat().st_size,
        "zip_bytes": sum(by_branch.values()),
        "zip_bytes_by_branch": by_branch,
        "zone_map_bytes": zones,
        "footer_bytes": footer,
        "footer_bytes_note": "dtype, layout tree, file statistics and segment map, postscript "
                             "and end marker; zone maps are in zone_map_bytes",
        "segments": inspect["footer"]["total_segments"],
        "format_version": inspect["eof"]["version"],
    })


def _prepare(threads: int) -> None:
    import vortex as vx

    vx.set_worker_threads(max(1, threads))


def _check(path: str, branches: list[str]) -> None:
    require_branches(path, _names(_open(path)), branches)


def _chunks(path: str, branches: list[str], threads: int, marks: Marks):
    f = _open(path)
    marks.opened()
    try:
        yield from f.to_arrow(branches)  # decodes Vortex's encodings into Arrow batches
    except Exception as exc:
        raise InputError(path, f"vortex could not read it: {exc}") from exc


def _bare(path: str, branches: list[str], threads: int) -> object:
    """As a user reads it from Vortex's documentation."""
    import vortex as vx

    return vx.open(path).to_arrow(branches).read_all()


FORMAT = Format(
    algorithms=frozenset(ALGORITHMS), dictionary=False,
    write=write, describe=describe, options=frozenset(), levels={},
    readers={"vortex": arrow_reader(
        "vortex", "vortex-data", _prepare, _chunks, _check, bare=_bare,
        # analysis/hepfmt/plan/cost.py says how it was measured
        cost=ReadCost(1.5, ReadParts(0.0017, 0.0007, 2_410_000), ReadParts(0.0038, 0.0, 65_800)))},
    write_cost=WriteParts(1.64, 27_000, "default"),
    plain="default", test_variants=("default", "compact"), exact_clusters=False,
)
