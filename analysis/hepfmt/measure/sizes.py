"""Size of a written file, normalised the 2018 way, and where its bytes go.

Computed by the convert step right after the file is written and verified (the format library is
already loaded there), so the size grid costs no extra job, and the read measurements, which are
expensive, can cover a smaller grid than the sizes.
"""

from __future__ import annotations

from pathlib import Path

from hepfmt import formats
from hepfmt.measure import digest as content_digest
from hepfmt.provenance import collect
from hepfmt.records import SizeRecord
from hepfmt.samples.source import read_source_meta, schema_of

TRIGGERS = "triggers"


def zip_bytes_by_branch(path: str, module: str) -> dict[str, int]:
    """Compressed bytes of each branch, from the file's own metadata (empty where the library
    does not say); ``module`` is the adapter's, so that a child process needs no registry."""
    return dict(formats.load(module).describe(Path(path)).zip_bytes_by_branch)


def size_record(path: str | Path, format_name: str, source: str | Path) -> dict:
    """File bytes, normalised size (file bytes / naive bytes), and compressed bytes per group.

    ``normalized_size_no_triggers`` removes the trigger/flag group from both numerator and
    denominator, as the 2018 table's "w/o triggers" columns did: the file's bytes minus the
    triggers' compressed bytes, over the naive bytes minus the triggers' naive bytes.
    """
    path = Path(path)
    meta = read_source_meta(source)
    schema = schema_of(meta)
    layout = formats.get(format_name).describe(path)
    by_group: dict[str, int] = {}
    by_branch = layout["zip_bytes_by_branch"]  # empty when a library does not say (Vortex)
    for b in schema.branches if by_branch else ():
        by_group[b.group] = by_group.get(b.group, 0) + by_branch.get(b.name, 0)
    file_bytes = path.stat().st_size
    naive = meta["naive_bytes"]
    trig_zip = by_group.get(TRIGGERS, 0)
    trig_naive = meta["naive_bytes_by_group"].get(TRIGGERS, 0.0)
    return {
        "file_bytes": file_bytes,
        "naive_bytes": naive,
        "normalized_size": file_bytes / naive,
        "normalized_size_no_triggers": (file_bytes - trig_zip) / (naive - trig_naive)
        if naive > trig_naive and by_group else None,
        "zip_bytes_by_group": by_group,
        "naive_bytes_by_group": meta["naive_bytes_by_group"],
        "layout": {k: v for k, v in layout.items() if k != "zip_bytes_by_branch"},
        # what a read measurement sums over its selection (empty where the library does not say)
        "zip_bytes_by_branch": dict(by_branch),
    }


def write_size_record(path: str | Path, name: str, adapter: str, variant: str,
                      cluster_size: int, source: str | Path, out: str | Path,
                      options: dict | None = None, unverifiable: str | None = None,
                      proofs: dict[str, dict] | None = None,
                      digest: str | None = None) -> dict:
    """The size record of one file with its identity, writer options and provenance, written
    atomically. ``name`` is the config's name of the format, ``adapter`` its module;
    ``unverifiable`` says why its content could not be proven (None: it was, every branch);
    ``proofs`` each reader's proof of every branch (``verify.prove_readers``), which a read
    measurement of the file takes instead of proving the reader again, but only while the file's
    content still has ``digest`` (:func:`hepfmt.measure.digest.of`, taken before the proofs
    were made, so that a change while they ran is a mismatch too; default: taken now)."""
    meta = read_source_meta(source)
    return SizeRecord(
        file=str(path), sample=meta["sample"], process=meta["process"],
        format=name, adapter=adapter,
        variant=variant, cluster_size=cluster_size, options=options or {},
        verified=unverifiable is None, unverifiable=unverifiable,
        proofs=proofs or {}, digest=digest or content_digest.of(path),
        n_events=meta["n_events"], **size_record(path, adapter, source),
        provenance=collect(data_path=Path(path).parent),
    ).write(out)
