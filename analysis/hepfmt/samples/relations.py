"""Relations a real file's structure must satisfy, checked before and while it is read.

A damaged file often decodes: a TTree basket seek pointing at another branch's basket, a Parquet
row group listed twice, an RNTuple page list that skips elements all give numbers, and an import
would carry them into the sample and every model learned from it. What the file declares about
itself is redundant (a basket's key names its branch and its entries, a row group its rows, a
cluster its entry range), so each redundancy is checked: first cheaply from metadata and small
header reads only (:func:`check_ttree`, :func:`check_parquet`, :func:`check_rntuple`, which
bound every declared size by the file's, so a damaged file is refused in seconds with bounded
memory), then per chunk of values read (:func:`check_chunk`). A failure is one
:class:`~hepfmt.errors.InputError` naming the file, the branch and the relation.
"""

from __future__ import annotations

import itertools
import os
import struct
from pathlib import Path

import numpy as np

from hepfmt.errors import InputError

#: Declared uncompressed bytes beyond this multiple of the bytes a file really holds are refused:
#: no codec a NanoAOD writer uses packs real data that densely, and a reader would allocate them.
MAX_RATIO = 1000
#: ROOT compresses in blocks of at most 2^24 - 1 bytes, each behind a 9-byte header.
ROOT_BLOCK, ROOT_BLOCK_HEADER = 0xFFFFFF, 9
#: Bytes read at a basket's seek: its TKey and TBasket headers (names are short).
KEY_READ = 1024
_KEY = struct.Struct(">ihiIhh")  # fNbytes fVersion fObjlen fDatime fKeylen fCycle
_BASKET = struct.Struct(">hiiiib")  # fVersion fBufferSize fNevBufSize fNevBuf fLast flag


def allocated_bytes(path: str | Path) -> int:
    """Bytes the file really holds on disk (a sparse tail holds none), at most its length."""
    st = os.stat(path)
    blocks = getattr(st, "st_blocks", None)
    return st.st_size if blocks is None else min(st.st_size, blocks * 512)


# --- TTree -------------------------------------------------------------------------------------

def _tstring(buf: bytes, pos: int) -> tuple[str, int]:
    n = buf[pos]
    pos += 1
    if n == 255:
        (n,) = struct.unpack_from(">i", buf, pos)
        pos += 4
    if n < 0 or pos + n > len(buf):
        raise ValueError("name runs past the header")
    return buf[pos:pos + n].decode("latin-1"), pos + n


def basket_header(buf: bytes) -> dict:
    """A basket's TKey and TBasket headers, as written at its seek."""
    nbytes, version, objlen, _, keylen, _ = _KEY.unpack_from(buf, 0)
    wide = version > 1000
    (seek_key,) = struct.unpack_from(">q" if wide else ">i", buf, _KEY.size)
    pos = _KEY.size + (16 if wide else 8)
    classname, pos = _tstring(buf, pos)
    name, pos = _tstring(buf, pos)
    _, pos = _tstring(buf, pos)
    _, _, _, nevbuf, last, _ = _BASKET.unpack_from(buf, pos)
    return {"nbytes": nbytes, "objlen": objlen, "keylen": keylen, "seek": seek_key,
            "classname": classname, "name": name, "nevbuf": nevbuf, "last": last,
            "header_end": pos + _BASKET.size}


def _unpacked_bound(stored: int, objlen: int) -> int:
    """The most bytes ``stored`` bytes of a ROOT record can unpack to: themselves when stored
    plain, else one full block per block header they hold room for."""
    return stored if objlen == stored else (stored // ROOT_BLOCK_HEADER + 1) * ROOT_BLOCK


def _data_span(path: str | Path, begin: int, end: int) -> None:
    """The file header's data span (fBEGIN to fEND) within the file: else it was cut."""
    size = os.path.getsize(path)
    if not 0 < begin <= end <= size:
        raise InputError(path, f"declares its data at bytes {begin}-{end} of {size} "
                               "(truncated or damaged)")


def check_key(path: str | Path, key: object, begin: int, end: int) -> None:
    """The key of the object about to be read (a TTree, an RNTuple anchor): its record within
    the file's data (``begin``/``end``: the header's fBEGIN/fEND), its unpacked size bounded."""
    _data_span(path, begin, end)
    seek, nbytes, keylen, objlen = key.fSeekKey, key.fNbytes, key.fKeylen, key.fObjlen
    name = key.fName
    if not begin <= seek or nbytes <= 0 or seek + nbytes > end or not 0 < keylen <= nbytes:
        raise InputError(path, f"key {name!r} declares bytes {seek}-{seek + nbytes}, the data "
                               f"lies at {begin}-{end} (a damaged key)")
    if not 0 <= objlen <= _unpacked_bound(nbytes - keylen, objlen):
        raise InputError(path, f"key {name!r} declares {objlen} uncompressed bytes in "
                               f"{nbytes - keylen} (a damaged key)")


def _basket_problem(h: dict, seek: int, nbytes: int, branch: str, entries: int) -> str | None:
    """What is wrong with the basket whose headers ``h`` were read at ``seek``, if anything."""
    if h["classname"] != "TBasket":
        return f"is a {h['classname']!r} key, not a basket (a damaged seek)"
    if h["name"] != branch:
        return f"belongs to branch {h['name']} (a damaged seek)"
    if h["seek"] != seek:
        return f"says it was written at seek {h['seek']} (a damaged seek)"
    if h["nbytes"] != nbytes:
        return f"holds {h['nbytes']} bytes, the branch declares {nbytes} (a damaged seek or size)"
    if not h["header_end"] <= h["keylen"] <= nbytes:
        return f"has a key length of {h['keylen']} (a damaged header)"
    if h["nevbuf"] != entries:
        return (f"holds {h['nevbuf']} entries, its entry range {entries} "
                "(a damaged seek or entry range)")
    stored = nbytes - h["keylen"]
    if not 0 <= h["objlen"] <= _unpacked_bound(stored, h["objlen"]) \
            or not h["keylen"] <= h["last"] <= h["keylen"] + h["objlen"]:
        return f"declares {h['objlen']} uncompressed bytes in {stored} (a damaged header)"
    return None


def _entry_ranges(path: str, branch: object, n_entries: int) -> tuple[list[int], np.ndarray]:
    """The seeks, bytes and entry boundaries of ``branch``'s baskets written to the file,
    checked against each other and the tree's entry count."""
    name = branch.name
    declared = int(branch.member("fEntries"))
    if declared != n_entries:
        raise InputError(path, f"branch {name} declares {declared} entries, the tree "
                               f"{n_entries} (a damaged entry count)")
    w = int(branch.member("fWriteBasket"))
    seeks = np.asarray(branch.member("fBasketSeek"), dtype=np.int64)
    sizes = np.asarray(branch.member("fBasketBytes"), dtype=np.int64)
    starts = np.asarray(branch.member("fBasketEntry"), dtype=np.int64)
    if not 0 <= w <= min(len(seeks), len(sizes), len(starts) - 1):
        raise InputError(path, f"branch {name} declares {w} baskets in lists of {len(seeks)} "
                               "(a damaged basket count)")
    starts = starts[:w + 1]
    if starts[0] != 0 or np.any(np.diff(starts) < 0):
        raise InputError(path, f"branch {name} basket entry ranges do not start at 0 and "
                               f"increase ({starts[:8].tolist()} ...)")
    embedded = len(branch.embedded_baskets) if starts[w] != n_entries else 0
    if starts[w] > n_entries or (starts[w] < n_entries and not embedded):
        raise InputError(path, f"branch {name} basket entry ranges end at {starts[w]}, the "
                               f"tree holds {n_entries} entries (a damaged entry count)")
    return [int(s) for s in seeks[:w]], np.stack([sizes[:w], starts[:w], starts[1:]])


def check_disjoint(path: str, spans: list[tuple[int, int, str]], what: str) -> None:
    """Byte ranges ``(start, length, owner)`` must not overlap: two owners of one range mean
    a pointer that was damaged to point at another's data."""
    spans = sorted(spans)
    for (a, n, who), (b, _, other) in itertools.pairwise(spans):
        if b < a + n:
            raise InputError(path, f"{other} at offset {b} overlaps {who} at offset {a} "
                                   f"({what})")


def check_ttree(path: str | Path, tree: object, begin: int, end: int) -> None:
    """Every basket of every branch of ``tree`` against the file (``begin``/``end``: the
    file header's fBEGIN/fEND) and its branch: within the file, its key naming the branch and
    the seek, its entries equal to its entry range, ranges covering the tree's entries."""
    path = str(path)
    _data_span(path, begin, end)
    n_entries = int(tree.num_entries)
    spans: list[tuple[int, int, str]] = []
    with open(path, "rb") as f:
        fd = f.fileno()
        for branch in tree.values(recursive=True):
            seeks, table = _entry_ranges(path, branch, n_entries)
            for i, (seek, (nbytes, first, stop)) in enumerate(zip(seeks, table.T, strict=True)):
                where = f"branch {branch.name} basket {i} at seek {seek}"
                if not begin <= seek or seek + nbytes > end or nbytes <= 0:
                    raise InputError(path, f"{where} of {nbytes} bytes lies outside the file's "
                                           f"data (bytes {begin}-{end}; a damaged seek or size)")
                try:
                    h = basket_header(os.pread(fd, min(int(nbytes), KEY_READ), seek))
                except (struct.error, ValueError, IndexError):
                    raise InputError(path, f"{where} has no readable basket header "
                                           "(a damaged seek)") from None
                problem = _basket_problem(h, seek, int(nbytes), branch.name, int(stop - first))
                if problem:
                    raise InputError(path, f"{where} {problem}")
                spans.append((seek, int(nbytes), f"branch {branch.name} basket {i}"))
    check_disjoint(path, spans, "two baskets at one place: a damaged seek")


# --- Parquet -----------------------------------------------------------------------------------

def parquet_footer_length(path: str | Path) -> int:
    """The footer's declared length, checked against the file before any of it is parsed."""
    size = os.path.getsize(path)
    if size < 12:
        raise InputError(path, f"{size} bytes is too short for Parquet (truncated)")
    with open(path, "rb") as f:
        head = f.read(4)
        f.seek(size - 8)
        tail = f.read(8)
    (length,) = struct.unpack("<i", tail[:4])
    if head != b"PAR1" or tail[4:] != b"PAR1":
        raise InputError(path, "no PAR1 magic at both ends (truncated or not Parquet)")
    if not 0 < length <= size - 12:
        raise InputError(path, f"footer declares {length} bytes in a file of {size} "
                               "(a damaged footer length)")
    return length


def _parquet_row_group(path: str, md: object, i: int, data_end: int,
                       spans: list[tuple[int, int, str]]) -> tuple[int, int]:
    """Row group ``i``'s columns against its rows and the file; (its rows, uncompressed bytes)."""
    rg = md.row_group(i)
    rows, unpacked = rg.num_rows, 0
    if rows < 0:
        raise InputError(path, f"row group {i} declares {rows} rows")
    for j in range(rg.num_columns):
        col = rg.column(j)
        name = col.path_in_schema
        start = col.data_page_offset
        if col.has_dictionary_page and col.dictionary_page_offset is not None:
            start = min(start, col.dictionary_page_offset)
        n = col.total_compressed_size
        if n == 0 and col.num_values == 0 == rows:
            continue  # an empty row group's chunks hold nothing, anywhere
        if start < 4 or n < 0 or start + n > data_end:
            raise InputError(path, f"column {name} row group {i} declares bytes {start}-"
                                   f"{start + n}, the data ends at {data_end} "
                                   "(a damaged column chunk offset or size)")
        values, nested = col.num_values, md.schema.column(j).max_repetition_level > 0
        if values < rows if nested else values != rows:
            raise InputError(path, f"column {name} row group {i} holds {values} values for "
                                   f"{rows} rows (a damaged row count)")
        unpacked += max(col.total_uncompressed_size, 0)
        spans.append((start, n, f"column {name} row group {i}"))
    return rows, unpacked


def check_parquet(path: str | Path) -> None:
    """A Parquet file's footer and every column chunk against the file and each other: within
    the data, disjoint, in file order, values matching rows, rows summing to the file's."""
    import pyarrow.parquet as pq

    path = str(path)
    data_end = os.path.getsize(path) - 8 - parquet_footer_length(path)
    try:
        md = pq.read_metadata(path)
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ...
        raise InputError(path, f"not a readable Parquet footer ({exc})") from exc
    spans: list[tuple[int, int, str]] = []
    total, unpacked, last_start = 0, 0, -1
    for i in range(md.num_row_groups):
        first = len(spans)
        rows, size = _parquet_row_group(path, md, i, data_end, spans)
        total, unpacked = total + rows, unpacked + size
        start = min((s for s, _, _ in spans[first:]), default=last_start)
        if start < last_start:
            raise InputError(path, f"row group {i} lies before row group {i - 1} in the file "
                                   "(row groups reordered)")
        last_start = start
    if total != md.num_rows:
        raise InputError(path, f"row groups hold {total} rows, the file declares {md.num_rows} "
                               "(a damaged row count)")
    limit = MAX_RATIO * allocated_bytes(path)
    if unpacked > limit:
        raise InputError(path, f"declares {unpacked} uncompressed bytes, more than {MAX_RATIO}x "
                               "the bytes it holds (a damaged size)")
    check_disjoint(path, spans, "one column chunk listed twice: a duplicated row group")


# --- RNTuple -----------------------------------------------------------------------------------

def _rntuple_anchor(path: str, ntuple: object, size: int) -> None:
    """The header and footer the anchor points at, within the file, their unpacked sizes
    bounded."""
    for part in ("Header", "Footer"):
        seek, nbytes, length = (int(ntuple.member(f"f{k}{part}"))
                                for k in ("Seek", "NBytes", "Len"))
        if seek < 0 or nbytes <= 0 or seek + nbytes > size \
                or not 0 < length <= _unpacked_bound(nbytes, length):
            raise InputError(path, f"RNTuple {part.lower()} declares {nbytes} bytes at {seek}, "
                                   f"{length} unpacked, in a file of {size} (a damaged anchor)")


def _rntuple_pages(path: str, page_lists: list, size: int) -> None:
    """Each column's pages, cluster by cluster: within the file, summing to where the column's
    next cluster starts, no two overlapping. ROOT stores identical pages once (same-page
    merging, across columns of other types too), so two pages may share exactly one range."""
    spans: list[tuple[int, int, str]] = []
    shared: set[tuple[int, int]] = set()
    starts: dict[int, int] = {}
    for k, columns in enumerate(page_lists):
        for j, col in enumerate(columns):
            if getattr(col, "suppressed", False):
                continue
            if j in starts and col.element_offset != starts[j]:
                raise InputError(path, f"column {j} cluster {k} starts at element "
                                       f"{col.element_offset}, its pages before end at "
                                       f"{starts[j]} (damaged page lists)")
            count = 0
            for p, page in enumerate(col.pages):
                loc = page.locator
                if int(getattr(loc.type, "value", loc.type)) == 0:  # a byte range of this file
                    where = f"column {j} cluster {k} page {p}"
                    if loc.offset < 0 or loc.num_bytes < 0 or loc.offset + loc.num_bytes > size:
                        raise InputError(path, f"{where} declares bytes {loc.offset}-"
                                               f"{loc.offset + loc.num_bytes} of {size} "
                                               "(a damaged page locator)")
                    if (loc.offset, loc.num_bytes) not in shared:
                        shared.add((loc.offset, loc.num_bytes))
                        spans.append((loc.offset, loc.num_bytes, where))
                count += abs(page.num_elements)
            starts[j] = col.element_offset + count
    check_disjoint(path, spans, "two pages at one place: a damaged page locator")


def check_rntuple(path: str | Path, ntuple: object) -> None:
    """An RNTuple's anchor, clusters and pages: header and footer within the file, clusters
    contiguous from entry 0 to the entry count, pages as :func:`_rntuple_pages` says."""
    path = str(path)
    size = os.path.getsize(path)
    _rntuple_anchor(path, ntuple, size)
    n_entries = int(ntuple.num_entries)
    nxt = 0
    for k, c in enumerate(ntuple.cluster_summaries):
        if c.num_first_entry != nxt or c.num_entries < 0:
            raise InputError(path, f"cluster {k} starts at entry {c.num_first_entry} with "
                                   f"{c.num_entries} entries, expected at {nxt} "
                                   "(damaged cluster ranges)")
        nxt += c.num_entries
    if nxt != n_entries:
        raise InputError(path, f"clusters hold {nxt} entries, the RNTuple declares {n_entries} "
                               "(a damaged entry count)")
    _rntuple_pages(path, ntuple.page_link_list, size)


# --- values read -------------------------------------------------------------------------------

def check_chunk(path: str | Path, chunk: dict, names: list[str]) -> int:
    """The entries of one chunk of values read, the same for every branch; offsets start at 0,
    never decrease and end at the values' length."""
    entries: int | None = None
    first = ""
    for name in names:
        col = chunk[name]
        if col.offsets is None:
            n = len(col.values)
        else:
            off = col.offsets
            n = len(off) - 1
            if n < 0 or off[0] != 0 or off[-1] != len(col.values) or np.any(np.diff(off) < 0):
                raise InputError(path, f"branch {name}: offsets do not run from 0 up to its "
                                       f"{len(col.values)} values (damaged lengths)")
        if entries is None:
            entries, first = n, name
        elif n != entries:
            raise InputError(path, f"branch {name} read {n} entries where {first} read "
                                   f"{entries} (damaged entry ranges)")
    return entries or 0
