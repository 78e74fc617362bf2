"""Where a Parquet file keeps each page's compressed bytes: the page headers, read from the file.

pyarrow decodes pages but does not hand out their compressed bodies, which the codec bound
(:mod:`hepfmt.measure.bound`) decompresses alone. The footer (pyarrow's metadata) says where
each column chunk starts and how long it is; inside it, pages follow one another, each behind a
``PageHeader`` in Thrift's compact protocol. Only the fields needed here are kept: the page's
sizes and, for data pages v2, the level bytes that precede the compressed values uncompressed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

#: Thrift compact protocol field types.
_TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)
#: PageHeader fields: sizes (2, 3) and the data page v2 header (8) with its level lengths (5, 6)
#: and ``is_compressed`` (7).
_UNCOMPRESSED, _COMPRESSED, _V2 = 2, 3, 8
_DEF_BYTES, _REP_BYTES, _IS_COMPRESSED = 5, 6, 7


class ThriftError(ValueError):
    """A page header that is not valid Thrift: the file is damaged."""


@dataclass(frozen=True)
class Page:
    #: where the page's compressed bytes start, how many, and how many once decompressed
    offset: int
    zipped: int
    unzipped: int


class _Reader:
    def __init__(self, data: bytes, pos: int = 0) -> None:
        self.data, self.pos = data, pos

    def byte(self) -> int:
        if self.pos >= len(self.data):
            raise ThriftError("page header runs past the column chunk")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        out, shift = 0, 0
        while True:
            b = self.byte()
            out |= (b & 0x7F) << shift
            if not b & 0x80:
                return out
            shift += 7
            if shift > 63:
                raise ThriftError("varint longer than 64 bits")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def skip(self, kind: int) -> None:
        if kind in (_TRUE, _FALSE):
            return
        if kind == _BYTE:
            self.byte()
        elif kind in (_I16, _I32, _I64):
            self.varint()
        elif kind == _DOUBLE:
            self.pos += 8
        elif kind == _BINARY:
            n = self.varint()  # read before self.pos is: the varint moves it
            self.pos += n
        elif kind in (_LIST, _SET):
            head = self.byte()
            n = head >> 4 if head >> 4 != 15 else self.varint()
            for _ in range(n):
                if head & 0x0F in (_TRUE, _FALSE):
                    self.byte()  # a bool in a list is a byte
                else:
                    self.skip(head & 0x0F)
        elif kind == _MAP:
            n = self.varint()
            if n:
                types = self.byte()
                for _ in range(n):
                    self.skip(types >> 4)
                    self.skip(types & 0x0F)
        elif kind == _STRUCT:
            self.struct()
        else:
            raise ThriftError(f"unknown Thrift compact type {kind}")

    def struct(self, keep: dict[int, type] | None = None) -> dict[int, object]:
        """A struct's fields: the integer, bool or struct values of the ids in ``keep``
        (struct ids map to the ``keep`` of their own fields), every other one skipped."""
        keep = keep or {}
        out: dict[int, object] = {}
        last = 0
        while True:
            head = self.byte()
            if head == 0:
                return out
            delta, kind = head >> 4, head & 0x0F
            fid = last + delta if delta else self.zigzag()
            last = fid
            want = keep.get(fid)
            if want is None:
                self.skip(kind)
            elif kind in (_TRUE, _FALSE):
                out[fid] = kind == _TRUE
            elif kind in (_I16, _I32, _I64):
                out[fid] = self.zigzag()
            elif kind == _STRUCT and isinstance(want, dict):
                out[fid] = self.struct(want)
            else:
                self.skip(kind)


_HEADER = {_UNCOMPRESSED: int, _COMPRESSED: int,
           _V2: {_DEF_BYTES: int, _REP_BYTES: int, _IS_COMPRESSED: bool}}


def chunk_pages(data: bytes, start: int) -> list[Page]:
    """The pages of one column chunk, ``data`` being its bytes and ``start`` its offset in the
    file. In a data page v2 the level bytes come first and are never compressed, so its
    compressed block is what follows them; a v2 page stored uncompressed is a copy."""
    r = _Reader(data)
    pages: list[Page] = []
    while r.pos < len(data):
        h = r.struct(_HEADER)
        try:
            zipped, unzipped = int(h[_COMPRESSED]), int(h[_UNCOMPRESSED])
        except KeyError as exc:
            raise ThriftError("page header without its sizes") from exc
        body = r.pos
        if r.pos + zipped > len(data) or zipped < 0 or unzipped < 0:
            raise ThriftError("page runs past the column chunk")
        levels = 0
        v2 = h.get(_V2)
        if isinstance(v2, dict):
            levels = int(v2.get(_DEF_BYTES, 0)) + int(v2.get(_REP_BYTES, 0))
            if not v2.get(_IS_COMPRESSED, True):
                unzipped = zipped  # stored as it is
        pages.append(Page(start + body + levels, zipped - levels, unzipped - levels))
        r.pos = body + zipped
    return pages


def pages(path: Path, columns: set[str]) -> tuple[str, list[Page]]:
    """(the codec, the pages) of every column chunk whose top-level field is in ``columns``.
    One codec per file is what hepfmt writes; a file mixing them is refused."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    codecs: set[str] = set()
    out: list[Page] = []
    with open(path, "rb") as f:
        for g in range(meta.num_row_groups):
            rg = meta.row_group(g)
            for c in range(rg.num_columns):
                col = rg.column(c)
                if col.path_in_schema.split(".")[0] not in columns:
                    continue
                codecs.add(col.compression)
                start = col.data_page_offset
                if col.has_dictionary_page and col.dictionary_page_offset is not None:
                    start = min(start, col.dictionary_page_offset)
                f.seek(start)
                out += chunk_pages(f.read(col.total_compressed_size), start)
    if len(codecs) > 1:
        raise ThriftError(f"column chunks of several codecs {sorted(codecs)}")
    return (codecs.pop() if codecs else "UNCOMPRESSED"), out
