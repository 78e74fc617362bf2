"""A content digest of a written file (or directory), binding the proofs made at ``convert`` to
the bytes they were made on, and the file's identity when it was hashed, binding every later
read to those same bytes.

A proof says a reader read the right values from *these* bytes; a byte count says little about
which bytes (a flipped byte keeps the size). So ``convert`` records the digest of the file before
proving its readers, and ``measure`` trusts a proof only on a file whose digest is still that
one. xxHash's XXH3 (128 bits): a non-cryptographic hash, enough against accidents (corruption,
a file rewritten in place), at ~11 GB/s on one core, so that hashing costs next to nothing beside
reading the file, which the measurement does anyway to load the page cache.

A digest alone proves nothing about a read that opens the path *afterwards*: a file renamed
over it, or rewritten in place, between the hash and the read is read unproven. So the hash
also gives the file's :class:`Identity`, taken by ``fstat`` on the very descriptor it hashed,
and :func:`unchanged` compares the path's identity now against it after each read. The
identity holds the inode (a rename over the path changes it), the size and modification time (a
write) and the change time: the kernel sets ``ctime`` to now on every write, rename, link or
``utime``, and no caller can set it back (short of setting the system clock), so even a file
swapped away and swapped back, or restored byte for byte with its old ``mtime``, no longer has
the identity it was hashed with.
A file rewritten with identical bytes is refused too: whether its bytes are the hashed ones
could only be told by hashing again, and a measurement whose file is being written meanwhile
is not one to trust.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import xxhash

from hepfmt.errors import VerificationError

ALGORITHM = "xxh3_128"
BLOCK = 1 << 22

#: The fields of ``os.stat_result`` that tell one version of a file from another.
FIELDS = ("st_dev", "st_ino", "st_size", "st_mtime_ns", "st_ctime_ns")


@dataclass(frozen=True)
class Identity:
    """Which file a path named, and which version of it: per regular file (one, with the name
    ``""``, for a file; each of a directory's, by relative path), its :data:`FIELDS`."""

    files: tuple[tuple[str, int, int, int, int, int], ...]

    def as_dict(self) -> dict:
        """A JSON-able form (a child process is given it on its command line)."""
        return {"files": [list(f) for f in self.files]}

    @classmethod
    def from_dict(cls, doc: dict) -> Identity:
        return cls(tuple((str(f[0]), *(int(x) for x in f[1:])) for f in doc["files"]))


def _fields(st: os.stat_result) -> tuple[int, ...]:
    return tuple(int(getattr(st, k)) for k in FIELDS)


def _feed(h: xxhash.xxh3_128, path: Path, buf: bytearray) -> tuple[int, ...]:
    """Hash the file's bytes through one descriptor: its identity by ``fstat`` on it, which
    must be the same before and after (a file written while it is hashed has no one digest)."""
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        before = _fields(os.fstat(f.fileno()))
        while n := f.readinto(buf):
            h.update(view[:n])
        after = _fields(os.fstat(f.fileno()))
    if after != before:
        raise VerificationError(path, "changed while it was hashed "
                                      f"({_what_changed(before, after)})")
    return after


def _regular_files(path: Path) -> list[tuple[str, Path]]:
    return sorted((p.relative_to(path).as_posix(), p) for p in path.rglob("*") if p.is_file())


def hashed(path: str | Path) -> tuple[str, Identity]:
    """``"xxh3_128:<hex>"`` of a file's bytes, or of a directory's (a Lance dataset, a Parquet
    directory): its regular files in the order of their relative paths, each preceded by that
    path and its length, so that renaming or moving bytes between files changes the digest;
    and the :class:`Identity` of what was hashed, for :func:`unchanged`. Every byte is read,
    through the page cache: the file is cached afterwards."""
    path = Path(path)
    h = xxhash.xxh3_128()
    buf = bytearray(BLOCK)
    if not path.is_dir():
        fields = _feed(h, path, buf)
        return f"{ALGORITHM}:{h.hexdigest()}", Identity((("", *fields),))
    files = []
    for rel, p in _regular_files(path):
        name = rel.encode()
        h.update(len(name).to_bytes(8, "little") + name + p.stat().st_size.to_bytes(8, "little"))
        files.append((rel, *_feed(h, p, buf)))
    return f"{ALGORITHM}:{h.hexdigest()}", Identity(tuple(files))


def of(path: str | Path) -> str:
    """The digest of :func:`hashed`, where no later read needs the identity."""
    return hashed(path)[0]


def identity(path: str | Path) -> Identity:
    """The path's :class:`Identity` now, without hashing: what a read that proves its own
    values (no digest) is bound to, so the timed reads after it read the file it proved."""
    path = Path(path)
    if not path.is_dir():
        return Identity((("", *_fields(os.stat(path))),))
    return Identity(tuple((rel, *_fields(p.stat())) for rel, p in _regular_files(path)))


def _what_changed(was: tuple[int, ...], now: tuple[int, ...]) -> str:
    names = {"st_dev": "device", "st_ino": "inode", "st_size": "size",
             "st_mtime_ns": "modification time", "st_ctime_ns": "change time"}
    return ", ".join(f"{names[k]} {a} -> {b}" for k, a, b in zip(FIELDS, was, now, strict=True)
                     if a != b)


def unchanged(path: str | Path, ident: Identity) -> None:
    """Refuse the path if it no longer names the file, at the version, that ``ident`` was
    taken of (:func:`hashed`, :func:`identity`): called after every read that relies on a
    proof of those bytes, so that a read of anything else is never a result."""
    try:
        now = identity(path)
    except OSError as exc:
        raise VerificationError(path, f"changed after it was hashed (gone: "
                                      f"{exc.strerror or exc})") from exc
    if now == ident:
        return
    was, cur = dict((f[0], f[1:]) for f in ident.files), dict((f[0], f[1:]) for f in now.files)
    names = sorted(set(was) ^ set(cur))
    if names:
        why = f"{'added' if names[0] in cur else 'removed'} {names[0]!r}"
    else:
        rel = next(r for r in sorted(was) if was[r] != cur[r])
        why = (f"{rel}: " if rel else "") + _what_changed(was[rel], cur[rel])
    raise VerificationError(path, f"changed after it was hashed ({why}); a file must not be "
                                  "replaced or written while it is measured")

