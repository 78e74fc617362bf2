"""Proof that data is what it claims to be: a source against its sidecar, a written file against
its source, every branch, once and untimed.

A size or a read time of a file with wrong content is not a result, and a wrong source makes
every file written from it wrong. So ``convert`` checks its source before writing (a flipped
byte or another sample's sidecar is caught here, not in a table) and verifies what it wrote
before recording its size; ``measure`` re-checks what each timed reader returns.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hepfmt import formats
from hepfmt.checksum import differs_by
from hepfmt.checksum import fmt as fmt_checksum
from hepfmt.errors import HepfmtError, InputError, VerificationError
from hepfmt.measure import digest
from hepfmt.samples.source import describe_source, open_source, read_source_meta, schema_of


def check_source(path: str | Path) -> dict:
    """The source's sidecar, once the Arrow file is proven whole (structure validated before
    any buffer is used: a corrupt memory-mapped file would otherwise crash a writer) and its
    values proven equal to the sidecar's checksums."""
    meta = read_source_meta(path)
    reader = open_source(path)
    try:
        for i in range(reader.num_record_batches):
            reader.get_batch(i).validate(full=True)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, f"corrupt Arrow IPC source ({exc})") from exc
    try:
        got = describe_source(path, schema_of(meta))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(path, f"source does not match its sidecar's schema ({exc})") from exc
    if got["n_events"] != meta["n_events"]:
        raise InputError(path, f"{got['n_events']} events, its sidecar says {meta['n_events']}")
    bad = [b for b, c in got["checksums"].items() if c != list(meta["checksums"][b])]
    if bad:
        want = meta["checksums"][bad[0]]
        why = differs_by(tuple(got["checksums"][bad[0]]), tuple(want)) if len(want) == 4 \
            else "its sidecar's checksums are of an older hepfmt, without order or type"
        raise InputError(path, f"{len(bad)} branches differ from the sidecar's checksums, e.g. "
                               f"{bad[0]}: {why} (a corrupt source, or another sample's "
                               "sidecar)")
    return meta


def differing(got: dict, names: list[str], checksums: dict) -> list[str]:
    """The branches of ``names`` whose checksums ``got`` by a reader differ from the source's."""
    return [b for b in names if tuple(got[b]) != tuple(checksums[b])]


def mismatch(reader: str, got: dict, bad: list[str], checksums: dict) -> str:
    """What :func:`differing` found, in one line for an error or a proof record."""
    first, want = tuple(got[bad[0]]), tuple(checksums[bad[0]])
    why = differs_by(first, want) if len(first) == len(want) == 4 else "another checksum form"
    return (f"{len(bad)} branches read back by {reader} differ from the source, e.g. "
            f"{bad[0]} ({why}: {fmt_checksum(first) if len(first) == 4 else first} != "
            f"{fmt_checksum(want) if len(want) == 4 else want})")


def prove_readers(path: str | Path, adapter: str, meta: dict, readers: list[str],
                  identity: digest.Identity | None = None) -> dict[str, dict]:
    """Each reader's read of every branch against the source's checksums, untimed: what a read
    measurement needs proven before it times that reader (``measure`` then skips its own
    proof). A reader's failure is recorded, not raised: it disqualifies that reader's timings,
    not the file, whose verdict is :func:`verify_written`'s. With ``identity`` (of the bytes
    that were hashed, :func:`.digest.hashed`), a file replaced or written after the hash is
    refused after each read: the proofs would be of other bytes than the recorded digest's."""
    fmt = formats.get(adapter)
    names = [b["name"] for b in meta["schema"]]
    out: dict[str, dict] = {}
    for name in readers:
        reader = fmt.readers[name]
        try:
            reader.prepare(1)
            got = reader.read(str(path), names)
        except HepfmtError as exc:
            out[name] = {"ok": False, "error": str(exc)}
            continue
        finally:
            if identity is not None:
                digest.unchanged(path, identity)
        bad = differing(got, names, meta["checksums"])
        out[name] = {"ok": not bad,
                     "error": mismatch(name, got, bad, meta["checksums"]) if bad else None}
    return out


def verify_written(path: str | Path, adapter: str, meta: dict,
                   proofs: dict[str, dict] | None = None,
                   identity: digest.Identity | None = None) -> None:
    """Every branch of a written file, read back by its adapter's verifying reader, equals the
    source's checksums. A passed proof of every branch by another of the format's exact
    readers (``proofs``, from :func:`prove_readers`) already shows that, so the file is not
    read a second time. ``identity``: as for :func:`prove_readers`."""
    if any(p["ok"] for p in (proofs or {}).values()):
        return
    fmt = formats.get(adapter)
    reader = fmt.readers[fmt.verifier or next(iter(fmt.readers))]
    names = [b["name"] for b in meta["schema"]]
    reader.prepare(1)
    got = reader.read(str(path), names)
    if identity is not None:
        digest.unchanged(path, identity)
    bad = differing(got, names, meta["checksums"])
    if bad:
        raise VerificationError(path, mismatch(reader.name, got, bad, meta["checksums"]))
