"""The protobuf wire format, as far as Kubernetes' generated messages use it.

Kubernetes' ``generated.proto`` files are proto2 with four wire types: varint (``int32``,
``int64``, ``bool``; no ``sint``/zigzag), 64-bit (``double``), length-delimited (``string``,
``bytes``, messages, map entries, packed repeated scalars) and nothing else. This module reads
a message into ``(field number, wire type, value)`` triples and writes fields in the order it
is given them; what the fields mean is :mod:`._protobuf`'s business.

Why not the ``protobuf`` package: it needs compiled descriptors of every message (k8s ships
none for Python), its JSON mapping is not Kubernetes' (``intstr``, ``Quantity``, ``Time``,
``omitempty``), and Go's encoder writes proto2 fields a generic library leaves out (a
non-pointer string is written even when empty), so a schema-driven walk is needed anyway and
the wire itself is the smallest part of it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

__all__ = [
    "BYTES",
    "FIXED32",
    "FIXED64",
    "VARINT",
    "ProtobufError",
    "Writer",
    "fields",
    "read_varint",
]

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
_UINT64 = (1 << 64) - 1


class ProtobufError(ValueError):
    """A body that is not a well-formed protobuf message."""


def read_varint(data: bytes, offset: int) -> tuple[int, int]:
    """The unsigned varint at ``offset`` and the offset after it."""
    value = shift = 0
    while True:
        if offset >= len(data):
            raise ProtobufError("truncated varint")
        byte = data[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, offset
        shift += 7
        if shift >= 70:
            raise ProtobufError("varint longer than 10 bytes")


def fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Every field of a message in wire order: number, wire type and value (an unsigned int
    for varint and 64-bit fields, the raw bytes for length-delimited ones)."""
    offset = 0
    while offset < len(data):
        key, offset = read_varint(data, offset)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("field number 0")
        if wire == VARINT:
            value, offset = read_varint(data, offset)
            yield number, wire, value
        elif wire == FIXED64:
            if offset + 8 > len(data):
                raise ProtobufError("truncated 64-bit field")
            yield number, wire, struct.unpack_from("<Q", data, offset)[0]
            offset += 8
        elif wire == FIXED32:
            if offset + 4 > len(data):
                raise ProtobufError("truncated 32-bit field")
            yield number, wire, struct.unpack_from("<I", data, offset)[0]
            offset += 4
        elif wire == BYTES:
            length, offset = read_varint(data, offset)
            if offset + length > len(data):
                raise ProtobufError("truncated length-delimited field")
            yield number, wire, data[offset:offset + length]
            offset += length
        else:
            raise ProtobufError(f"unsupported wire type {wire}")


def _varint(value: int) -> bytes:
    value &= _UINT64  # negative int32/int64 are written as 10-byte two's complement, as Go does
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class Writer:
    """Builds one message; fields are written in the order the methods are called."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def varint(self, number: int, value: int) -> None:
        self._parts += (_varint(number << 3 | VARINT), _varint(value))

    def double(self, number: int, value: float) -> None:
        self._parts += (_varint(number << 3 | FIXED64), struct.pack("<d", value))

    def delimited(self, number: int, value: bytes) -> None:
        self._parts += (_varint(number << 3 | BYTES), _varint(len(value)), value)

    def getvalue(self) -> bytes:
        return b"".join(self._parts)
