"""Which reader stands for a side of a "fastest" pairing (``compare.pairs[].ttree_reader:
fastest``): the one the run's own ``measure`` jobs found quickest.

A "fastest against fastest" ratio fixed to one reader a side is only as good as that guess
(polars outran pyarrow on some files, a tuned Parquet file outran both). The choice is made
from the measure records of the candidate files (the same sample and cluster size, every
reader timed there), not from the pair job's own reads: picking the quicker of two noisy reads
and then reporting that same read would favour whichever side had the luckier draw (the
winner's curse). The pair job then times the chosen readers afresh, interleaved, as any pair.

The figure compared is the whole read (open, set-up and every event: ``ReadRow.median_s``),
warm, of the pair job's selection: a reader with no steady rate (one chunk) is ranked as well
as one with, and the files compared hold the same events.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hepfmt.errors import InputError
from hepfmt.formats import FASTEST
from hepfmt.records import ReadRecord, ReadRow, SizeRecord

#: The cache mode the choice is made in: a pair job reads warm (hepfmt.measure.pairs).
MODE = "warm"


@dataclass(frozen=True)
class Candidate:
    """A measured file a "fastest" side may be read from: its measure record (every reader's
    times) and its size record (its digest and proofs, which the pair job checks as for any
    side)."""

    reads: str
    size_record: str


@dataclass(frozen=True)
class Choice:
    """The reader chosen, the file it reads, and what it was chosen from (recorded in the pair
    record's side, so that a table can say why this reader stands for the format)."""

    path: str
    format: str
    adapter: str
    variant: str
    reader: str
    size_record: str
    reads: str  # the chosen file's measure record
    considered: tuple[dict, ...]
    threads: int

    def as_dict(self) -> dict:
        return {"by": f"whole {MODE} read of the selection, median (hepfmt measure), "
                      f"{self.threads} thread(s)",
                "considered": [dict(c) for c in self.considered]}


def _rows(record: ReadRecord, where: str, selection: str, threads: int) -> list[ReadRow]:
    rows = [r for r in record.rows(where) if r.selection == selection and r.mode == MODE]
    same = [r for r in rows if r.threads == threads]
    return same or [r for r in rows if r.threads == min(x.threads for x in rows)]


def choose(candidates: list[Candidate], selection: str, threads: int) -> Choice:
    """The reader with the shortest median whole read of ``selection`` over every candidate
    file's measure record (ties: the first candidate and reader, in the given order). A
    record without that selection's warm reads is named, never skipped: a choice over part of
    the candidates would not be the fastest."""
    if not candidates:
        raise InputError("--ttree-candidate/--parquet-candidate",
                         "a 'fastest' side needs at least one measured candidate file")
    considered: list[tuple[float, ReadRecord, ReadRow, Candidate]] = []
    for c in candidates:
        record = ReadRecord.load(c.reads)
        rows = _rows(record, c.reads, selection, threads)
        if not rows:
            raise InputError(c.reads, f"no {MODE} read of selection {selection!r}: it cannot "
                                      f"take part in choosing the fastest reader")
        considered += [(r.median_s, record, r, c) for r in rows]
    best = min(considered, key=lambda t: t[0])
    _, record, row, cand = best
    SizeRecord.load(cand.size_record)  # readable before it is trusted as the side's proof
    return Choice(record.file, record.format, record.adapter, record.variant, row.reader,
                  cand.size_record, cand.reads,
                  tuple({"format": rec.format, "variant": rec.variant, "reader": r.reader,
                         "threads": r.threads, "median_s": r.median_s}
                        for _, rec, r, _ in considered), row.threads)


def resolve(side, selection: str, threads: int):
    """``side`` (an hepfmt.measure.pairs.PairSide) with its file and reader replaced by the
    choice among its ``candidates`` where its reader is :data:`FASTEST`; else ``side``."""
    if side.reader != FASTEST:
        return side
    c = choose(list(side.candidates), selection, threads)
    return replace(side, path=c.path, format=c.format, adapter=c.adapter, variant=c.variant,
                   reader=c.reader, size_record=c.size_record, chosen=c.as_dict(),
                   measured=c.reads)
