"""A consistent hash ring over the 64-bit hash space, with virtual nodes.

Each member places :data:`VIRTUAL_NODES` tokens on the ring (BLAKE2b of the member's name and
the token's index, as a 64-bit integer); a hash belongs to the member of the first token at
or above it, wrapping past ``2**64`` to the lowest token. Adding or removing one of N
members so moves about 1/N of the space, and only from or to that member (the ring of
timebertt/kubernetes-controller-sharding, which hashes object keys onto member tokens the
same way). Every replica computes the same ring from the same member names, with no I/O.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterable

from kgen_runtime.shardranges import HASH_SPACE, HashRange, merge

__all__ = ["VIRTUAL_NODES", "HashRing", "token"]

VIRTUAL_NODES = 64
"""The number of tokens each member places on the ring."""


def token(member: str, index: int) -> int:
    """The ``index``-th token of ``member``: BLAKE2b-64 of ``"<member>/<index>"``."""
    digest = hashlib.blake2b(f"{member}/{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class HashRing:
    """The assignment of the hash space to ``members`` (immutable; empty means no owner).

    Raises:
        ValueError: a member name is empty, or ``virtual_nodes`` < 1.
    """

    def __init__(self, members: Iterable[str], virtual_nodes: int = VIRTUAL_NODES) -> None:
        if virtual_nodes < 1:
            raise ValueError(f"a hash ring needs at least one virtual node, not {virtual_nodes}")
        self.members = frozenset(members)
        if "" in self.members:
            raise ValueError("a hash ring member needs a non-empty name")
        owners: dict[int, str] = {}
        for member in sorted(self.members):  # a token two members share goes to the first
            for index in range(virtual_nodes):
                owners.setdefault(token(member, index), member)
        self._tokens = sorted(owners)
        self._owners = [owners[position] for position in self._tokens]
        self._ranges = self._assign()

    def _assign(self) -> dict[str, tuple[HashRange, ...]]:
        pieces: dict[str, list[HashRange]] = {member: [] for member in self.members}
        if not self._tokens:
            return {}
        start = 0
        for position, owner in zip(self._tokens, self._owners, strict=True):
            pieces[owner].append(HashRange(start, position + 1))  # [start, position]
            start = position + 1
        if start < HASH_SPACE:  # past the last token: wraps to the first
            pieces[self._owners[0]].append(HashRange(start, HASH_SPACE))
        return {member: merge(ranges) for member, ranges in pieces.items()}

    def owner_of(self, digest: int) -> str | None:
        """The member owning ``digest`` (``None`` on an empty ring)."""
        if not 0 <= digest < HASH_SPACE:
            raise ValueError(f"hash {digest:#x} is outside [0, 2**64)")
        if not self._tokens:
            return None
        index = bisect.bisect_left(self._tokens, digest)
        return self._owners[index % len(self._owners)]

    def ranges_of(self, member: str) -> tuple[HashRange, ...]:
        """The merged ranges ``member`` owns (none if it is not a member)."""
        return self._ranges.get(member, ())
