"""A structural check of a file before any reader decodes it, so a damaged file is refused in
seconds with bounded memory rather than after a reader has allocated what its damaged sizes
declare or looped over the entries a damaged count claims.

Only metadata and small headers are read: every declared offset and size against the file's
length, declared entry and row counts against each other, declared uncompressed sizes against
the bytes the file really holds. ROOT and Parquet relations live with the importer that checks
them too (:mod:`hepfmt.samples.relations`); the others are here. A healthy file passes
silently; a damaged one raises :class:`~hepfmt.errors.InputError` naming the file and the
relation. Formats without a check here (Lance, Vortex) pass: their readers are the check.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from pathlib import Path

from hepfmt import formats
from hepfmt.errors import InputError
from hepfmt.formats.base import is_url
from hepfmt.formats.root.backend import TREE
from hepfmt.records import data_file
from hepfmt.samples import relations

ARROW_MAGIC = b"ARROW1"
ORC_MAGIC = b"ORC"
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
#: Where an HDF5 superblock may start: 0, then 512 and each doubling (the user block before it).
HDF5_SUPERBLOCK_AT = (0, 512, 1024, 2048, 4096, 8192)


def _root(path: str, kind: str) -> None:
    import uproot

    try:
        f = uproot.open(path)
        key = f.key(TREE)
    except Exception as exc:  # uproot raises many types for unreadable files
        raise InputError(path, f"not a readable ROOT file with {TREE!r} ({exc})") from exc
    relations.check_key(path, key, f.file.fBEGIN, f.file.fEND)
    try:
        obj = f[TREE]
        if kind == "ttree":
            relations.check_ttree(path, obj, f.file.fBEGIN, f.file.fEND)
        else:
            relations.check_rntuple(path, obj)
    except InputError:
        raise
    except Exception as exc:  # uproot, parsing a damaged record of the tree's metadata
        raise InputError(path, f"unreadable {kind} {TREE!r} ({exc})") from exc


def _parquet(path: str) -> None:
    files = [path] if Path(path).is_file() else \
        sorted(str(p) for p in Path(path).rglob("*.parquet") if p.is_file())
    for f in files:
        relations.check_parquet(f)


# --- Arrow IPC ---------------------------------------------------------------------------------

def _table_field(buf: bytes, table: int, field: int) -> int | None:
    """The position of ``field`` of the flatbuffer table at ``table``, if it is set."""
    (back,) = struct.unpack_from("<i", buf, table)
    vtable = table - back
    (vsize,) = struct.unpack_from("<H", buf, vtable)
    if 4 + 2 * field + 2 > vsize:
        return None
    (at,) = struct.unpack_from("<H", buf, vtable + 4 + 2 * field)
    return table + at if at else None


def _ipc_blocks(footer: bytes, field: int) -> list[tuple[int, int, int]]:
    """(offset, metadata length, body length) of the footer's dictionary (field 2) or record
    batch (field 3) blocks."""
    (root,) = struct.unpack_from("<I", footer, 0)
    at = _table_field(footer, root, field)
    if at is None:
        return []
    (rel,) = struct.unpack_from("<I", footer, at)
    vec = at + rel
    (n,) = struct.unpack_from("<I", footer, vec)
    if n * 24 > len(footer):
        raise ValueError(f"{n} blocks in a footer of {len(footer)} bytes")
    return [struct.unpack_from("<qi4xq", footer, vec + 4 + 24 * i) for i in range(n)]


def _arrow_ipc(path: str) -> None:
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(6)
        f.seek(max(0, size - 10))
        tail = f.read(10)
    if size < 20 or head != ARROW_MAGIC or tail[4:] != ARROW_MAGIC:
        raise InputError(path, "no ARROW1 magic at both ends (truncated or not Arrow IPC)")
    (length,) = struct.unpack("<i", tail[:4])
    footer_at = size - 10 - length
    if length <= 0 or footer_at < 8:
        raise InputError(path, f"footer declares {length} bytes in a file of {size} "
                               "(a damaged footer length)")
    with open(path, "rb") as f:
        f.seek(footer_at)
        footer = f.read(length)
    try:
        blocks = {what: _ipc_blocks(footer, field) for what, field in
                  (("dictionary", 2), ("record batch", 3))}
    except (struct.error, ValueError) as exc:
        raise InputError(path, f"unreadable Arrow IPC footer ({exc})") from None
    spans = []
    for (what, listed), plural in zip(blocks.items(), ("dictionaries", "record batches"),
                                      strict=True):
        last = -1
        for i, (offset, meta, body) in enumerate(listed):
            end = offset + meta + body
            if offset < 8 or meta <= 0 or body < 0 or end > footer_at:
                raise InputError(path, f"{what} {i} declares bytes {offset}-{end}, the data "
                                       f"ends at {footer_at} (a damaged block)")
            if offset < last:
                raise InputError(path, f"{what} {i} lies before {what} {i - 1} in the file "
                                       f"({plural} reordered)")
            last = offset
            spans.append((offset, meta + body, f"{what} {i}"))
    relations.check_disjoint(path, spans, "one block listed twice")


# --- ORC ---------------------------------------------------------------------------------------

def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    out = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise ValueError("a varint runs past its message")
        b = buf[pos]
        out |= (b & 0x7F) << shift
        pos, shift = pos + 1, shift + 7
        if not b & 0x80:
            return out, pos


def _protobuf_ints(buf: bytes) -> dict[int, int]:
    """The varint fields of a protobuf message (others skipped)."""
    out, pos = {}, 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        wire = tag & 7
        if wire == 0:
            out[tag >> 3], pos = _varint(buf, pos)
        elif wire == 2:
            n, pos = _varint(buf, pos)
            pos += n
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"wire type {wire}")
    return out


def _orc(path: str) -> None:
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(3)
        f.seek(max(0, size - 256))
        tail = f.read()
    if size < 4 or head != ORC_MAGIC:
        raise InputError(path, "no ORC magic at the start (truncated or not ORC)")
    ps_len = tail[-1]
    if not 0 < ps_len < len(tail):
        raise InputError(path, f"postscript declares {ps_len} bytes (a damaged postscript)")
    try:
        ps = _protobuf_ints(tail[-1 - ps_len:-1])
    except ValueError as exc:
        raise InputError(path, f"unreadable ORC postscript ({exc})") from None
    footer, metadata = ps.get(1, 0), ps.get(5, 0)
    if footer <= 0 or 3 + metadata + footer + ps_len + 1 > size:
        raise InputError(path, f"postscript declares a footer of {footer} and metadata of "
                               f"{metadata} bytes in a file of {size} (a damaged postscript)")


# --- HDF5 --------------------------------------------------------------------------------------

def _hdf5_eof(path: str, size: int) -> None:
    """The superblock's end-of-file address against the file's length."""
    with open(path, "rb") as f:
        for at in HDF5_SUPERBLOCK_AT:
            f.seek(at)
            sb = f.read(96)
            if sb[:8] == HDF5_MAGIC:
                break
        else:
            raise InputError(path, "no HDF5 superblock (truncated or not HDF5)")
    version = sb[8]
    offsets = sb[13] if version < 2 else sb[9]
    if offsets not in (2, 4, 8):
        raise InputError(path, f"superblock declares {offsets}-byte addresses (damaged)")
    # the end-of-file address: the third address of v0/v1, the third of v2/v3 too
    first = (24 if version == 0 else 28) if version < 2 else 12
    (eof,) = struct.unpack_from({2: "<H", 4: "<I", 8: "<Q"}[offsets], sb,
                                first + 2 * offsets)
    if at + eof > size:
        raise InputError(path, f"superblock declares {at + eof} bytes, the file holds {size} "
                               "(truncated or damaged)")


def _hdf5(path: str) -> None:
    import h5py
    import numpy as np

    size = os.path.getsize(path)
    _hdf5_eof(path, size)
    limit = relations.MAX_RATIO * relations.allocated_bytes(path)
    found: list[tuple[str, int, int]] = []

    def note(name: str, obj: object) -> None:
        if isinstance(obj, h5py.Dataset):
            declared = int(np.prod(obj.shape, dtype=np.uint64)) * obj.dtype.itemsize
            found.append((name, declared, obj.id.get_storage_size()))

    try:
        with h5py.File(path, "r") as f:
            f.visititems(note)
    except (OSError, RuntimeError, ValueError, KeyError, TypeError) as exc:
        raise InputError(path, f"not a readable HDF5 file ({exc})") from None
    for name, declared, stored in found:
        if stored > size or declared > limit:
            raise InputError(path, f"dataset {name} declares {declared} bytes, stored in "
                                   f"{stored}, in a file of {size} (a damaged size)")


CHECKS: dict[str, Callable[[str], None]] = {
    "ttree": lambda p: _root(p, "ttree"),
    "rntuple": lambda p: _root(p, "rntuple"),
    "parquet": _parquet,
    "feather": _arrow_ipc,
    "orc": _orc,
    "hdf5": _hdf5,
}


def check(path: str | Path, format_name: str) -> None:
    """Refuse ``path`` (a file of ``format_name``) in one line when its declared structure
    contradicts itself or the file's size; return nothing otherwise. Remote files are left to
    their readers (each small read would be a round trip)."""
    formats.entry(format_name)  # a name the registry knows
    path = str(path)
    if is_url(path):
        return
    data_file(path, f"{formats.label(format_name)} file")
    fn = CHECKS.get(format_name)
    if fn is not None:
        fn(path)
