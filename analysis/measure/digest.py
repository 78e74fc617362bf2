"""A content digest of a written file (or directory), binding the proofs made at ``convert`` to
the bytes they were made on.

A proof says a reader read the right values from *these* bytes; a byte count says little about
which bytes (a flipped byte keeps the size). So ``convert`` records the digest of the file before
proving its readers, and ``measure`` trusts a proof only on a file whose digest is still that
one. xxHash's XXH3 (128 bits): a non-cryptographic hash, enough against accidents (corruption,
a file rewritten in place), at ~11 GB/s on one core, so that hashing costs next to nothing beside
reading the file, which the measurement does anyway to load the page cache.
"""

from __future__ import annotations

from pathlib import Path

import xxhash

ALGORITHM = "xxh3_128"
BLOCK = 1 << 22


def _feed(h: xxhash.xxh3_128, path: Path, buf: bytearray) -> None:
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while n := f.readinto(buf):
            h.update(view[:n])


def of(path: str | Path) -> str:
    """``"xxh3_128:<hex>"`` of a file's bytes, or of a directory's (a Lance dataset, a Parquet
    directory): its regular files in the order of their relative paths, each preceded by that
    path and its length, so that renaming or moving bytes between files changes the digest.
    Every byte is read, through the page cache: the file is cached afterwards."""
    path = Path(path)
    h = xxhash.xxh3_128()
    buf = bytearray(BLOCK)
    if not path.is_dir():
        _feed(h, path, buf)
        return f"{ALGORITHM}:{h.hexdigest()}"
    files = sorted((p.relative_to(path).as_posix(), p) for p in path.rglob("*") if p.is_file())
    for rel, p in files:
        name = rel.encode()
        h.update(len(name).to_bytes(8, "little") + name + p.stat().st_size.to_bytes(8, "little"))
        _feed(h, p, buf)
    return f"{ALGORITHM}:{h.hexdigest()}"
