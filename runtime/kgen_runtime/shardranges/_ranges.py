"""Hash ranges over the 64-bit FNV-1a space that kube-apiserver v1.36 shards lists by.

KEP-5866 (``ShardedListAndWatch``, alpha) hashes an object's ``metadata.uid`` or
``metadata.namespace`` *string* (UTF-8 bytes) with 64-bit FNV-1a and keeps the objects whose
hash lies in ``[start, end)``; the whole space is ``[0, 2**64)``. The wire form of a range is
``shardRange(object.metadata.uid, '0x<16 hex digits>', '0x<16 hex digits>')`` (the end bound
``2**64`` is written ``'0x10000000000000000'``), several ranges joined by `` || ``
(../shared/REAL-CLUSTER.md; the ``shardSelector`` parameter's description in the OpenAPI
documents). Everything here is pure and shared by the client-side filter, the test server and
the membership ring.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = ["HASH_SPACE", "HashRange", "ShardField", "fnv1a64", "format_selector", "merge"]

HASH_SPACE = 1 << 64
"""The exclusive upper bound of the hash space (``2**64``)."""

_FNV_OFFSET_BASIS = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = HASH_SPACE - 1


class ShardField(StrEnum):
    """The object fields kube-apiserver v1.36 can shard on, in their CEL spelling."""

    UID = "object.metadata.uid"
    NAMESPACE = "object.metadata.namespace"

    def digest(self, metadata: Any) -> int:
        """The hash of this field of an object's ``metadata`` (an unset field hashes as "")."""
        return fnv1a64((metadata.uid if self is ShardField.UID else metadata.namespace) or "")


def fnv1a64(value: str) -> int:
    """The 64-bit FNV-1a hash of ``value``'s UTF-8 bytes, as kube-apiserver computes it."""
    digest = _FNV_OFFSET_BASIS
    for byte in value.encode():
        digest = ((digest ^ byte) * _FNV_PRIME) & _MASK
    return digest


@dataclass(frozen=True, order=True, slots=True)
class HashRange:
    """The half-open range ``[start, end)`` of the hash space; ``0 <= start < end <= 2**64``."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end <= HASH_SPACE:
            raise ValueError(
                f"hash range [{self.start:#x}, {self.end:#x}) is empty or outside [0, 2**64)"
            )

    def __contains__(self, digest: object) -> bool:
        return isinstance(digest, int) and self.start <= digest < self.end

    def selector(self, field: ShardField = ShardField.UID) -> str:
        """This range as one ``shardRange(...)`` term of a ``shardSelector``."""
        return f"shardRange({field.value}, '{_hex_bound(self.start)}', '{_hex_bound(self.end)}')"


def _hex_bound(bound: int) -> str:
    # 16 hex digits, as the server requires; 2**64 has 17 and is written as such.
    return f"0x{bound:016x}"


def merge(ranges: Iterable[HashRange]) -> tuple[HashRange, ...]:
    """``ranges`` sorted, with overlapping and touching ranges joined: a canonical form."""
    merged: list[HashRange] = []
    for hash_range in sorted(ranges):
        if merged and hash_range.start <= merged[-1].end:
            last = merged[-1]
            merged[-1] = HashRange(last.start, max(last.end, hash_range.end))
        else:
            merged.append(hash_range)
    return tuple(merged)


def format_selector(ranges: Iterable[HashRange], field: ShardField = ShardField.UID) -> str:
    """The ``shardSelector`` for ``ranges`` (merged first); ``ValueError`` if there are none."""
    terms = [hash_range.selector(field) for hash_range in merge(ranges)]
    if not terms:
        raise ValueError("a shard selector needs at least one hash range")
    return " || ".join(terms)
