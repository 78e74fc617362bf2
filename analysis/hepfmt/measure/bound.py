"""The codec bound: how fast the codec alone decompresses a file's own compressed bytes.

A reader's throughput says little until it is set against what the CPU can do with the same
bytes. The bound takes the compressed blocks that hold a selection (TTree baskets, RNTuple
pages, Parquet pages: each adapter's ``blocks``), loads them all into memory and decompresses
them on one core with nothing of any reader around it, ``BOUND_PASSES`` times; the median pass is
the bound. It is taken two ways where the codec keeps a context (zstd, gzip):

* ``new``: a context per block, as ROOT does it (``R__unzip`` per frame) and as the one-shot
  ``ZSTD_decompress`` / ``inflateInit`` per Parquet page does;
* ``reused``: one context for every block, what a reader could do.

An uncompressed file's bound is a ``memcpy`` of its blocks: the floor of a read that must at
least move its bytes. A block stored uncompressed inside a compressed file (ROOT keeps a basket
that compression would not shrink as it is) is copied too.

Each read then gets its fraction of the bound: its steady events/s over the bound's events/s
(:func:`hepfmt.stats.bound_fractions`). The bound is a property of the file and the CPU; it
is measured in a process of its own after the timed reads, never during them.
"""

from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from hepfmt import formats
from hepfmt.errors import InputError
from hepfmt.formats.base import Blocks

#: Passes over all the blocks of a selection; the median pass is the bound. Passes of one
#: process differ by a few per cent (1499 branches of 200000 events, zstd: 1.35-1.46 s), so
#: the median of three is as good a bound as that of more, and a pair job takes its two
#: files' bounds in a sixth of its time, not a quarter.
BOUND_PASSES = 3
#: No format here stores a block that decompresses to more (a Parquet page's sizes are int32,
#: a ROOT frame's 24 bits, an ORC block is at most the file's block size): a listing that
#: states more comes from a damaged file, and is refused before anything is allocated for it
MAX_BLOCK = 2**31 - 1


@dataclass(frozen=True)
class CodecBound:
    """The bound of one selection of one file (``events_per_s``: the file's events over the
    median pass)."""

    codec: str
    blocks: int
    zipped_bytes: int
    unzipped_bytes: int
    passes: int
    #: decompress_blocks modes: the library's way and the reused context (None: not taken)
    new_how: str | None
    reused_how: str | None
    new_s: float | None
    reused_s: float | None
    n_events: int
    why_not: str | None = None

    def events_per_s(self, reused: bool = False) -> float | None:
        s = self.reused_s if reused else self.new_s
        return self.n_events / s if s else None

    def mb_per_s(self, reused: bool = False) -> float | None:
        """Decompressed megabytes per second (the bytes the codec produces)."""
        s = self.reused_s if reused else self.new_s
        return self.unzipped_bytes / s / 1e6 if s else None

    def record(self) -> dict:
        return {**asdict(self), "events_per_s_new": self.events_per_s(),
                "events_per_s_reused": self.events_per_s(reused=True),
                "mb_per_s_new": self.mb_per_s(), "mb_per_s_reused": self.mb_per_s(reused=True)}


def median_pass(path: Path, blocks: Blocks, how: str, passes: int) -> float:
    """The median seconds of ``passes`` passes decompressing every block ``how`` says."""
    from hepfmt.formats.root.backend import READERS, cxx_what, root

    ROOT = root(READERS)
    try:
        seconds = ROOT.hepfmt.decompress_blocks(str(path), blocks.offsets, blocks.zipped,
                                               blocks.unzipped, how, passes)
    except Exception as exc:  # cppyy: the C++ runtime_error names the block
        raise InputError(path, f"its blocks do not decompress ({cxx_what(exc)})",
                         str(exc)) from exc
    return statistics.median(list(seconds))


def check_listing(path: Path, blocks: Blocks) -> None:
    """The listing fits the file: its blocks no more bytes than the file has, none stating
    more than any format stores (a damaged size would otherwise be allocated)."""
    size = path.stat().st_size
    if sum(blocks.zipped) > size:
        raise InputError(path, f"its blocks state {sum(blocks.zipped)} bytes, more than the "
                               f"file's {size} (damaged metadata)")
    if blocks.unzipped and max(blocks.unzipped) > MAX_BLOCK:
        raise InputError(path, f"a block states {max(blocks.unzipped)} decompressed bytes, "
                               f"more than any format stores (damaged metadata)")


def measure(path: str | Path, module: str, branches: list[str], n_events: int,
            passes: int = BOUND_PASSES) -> dict:
    """The bound of ``branches`` of the file at ``path`` (adapter ``module``), as a record;
    ``why_not`` says why there is none (a format that does not list its blocks, a codec not
    measured here)."""
    path = Path(path)
    fmt = formats.load(module)
    if fmt.blocks is None:
        return {"why_not": "the format's blocks are not listed here", "n_events": n_events}
    blocks = fmt.blocks(path, list(branches))
    check_listing(path, blocks)
    times = {}
    if blocks.why_not is None:
        for key, how in (("new", blocks.library), ("reused", blocks.reused)):
            if how is not None:
                times[key] = median_pass(path, blocks, how, passes)
    return CodecBound(blocks.codec, len(blocks.offsets), sum(blocks.zipped),
                      sum(blocks.unzipped), passes, blocks.library, blocks.reused,
                      times.get("new"), times.get("reused"), n_events,
                      blocks.why_not).record()
