"""A minimal protobuf reader, enough for the metadata two adapters need and their libraries do
not show: Lance's page table (pylance shows each page's buffers and encoding, not its row count)
and ORC's stripe list (pyarrow shows the count of stripes, not their rows). A malformed message
raises ValueError or IndexError; each adapter turns that into an error naming the file."""

from __future__ import annotations

from collections.abc import Iterator


def varint(buf: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    shift = result = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) of a message: ints for varints, bytes otherwise (a nested message,
    a string, or the little-endian bytes of a fixed-width value)."""
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        wire = key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 2:
            n, pos = varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire in (1, 5):
            n = 8 if wire == 1 else 4
            value, pos = buf[pos:pos + n], pos + n
        else:
            raise ValueError(f"protobuf wire type {wire}")
        if pos > len(buf):
            raise ValueError("protobuf field past the end of its message")
        yield key >> 3, value


def message(buf: bytes) -> dict[int, list]:
    """A message's fields: number -> its values, in order (a repeated field has several)."""
    out: dict[int, list] = {}
    for number, value in fields(buf):
        out.setdefault(number, []).append(value)
    return out
