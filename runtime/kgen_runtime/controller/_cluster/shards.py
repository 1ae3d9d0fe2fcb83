"""Which kinds an informer cache shards, and the list-watches that serve their ranges.

A manager with sharding (:class:`~kgen_runtime.controller.ShardingConfig`) turns this on with
its ring's hashed field and its member's ranges; a builder's ``sharded()`` marks its primary
kind, and its ``owns()`` the kinds it owns. Every informer of a marked primary kind then lists
and watches through a :class:`~kgen_runtime.sharding.ShardedListWatch` (or its async twin).
An owned kind follows its owners: with a ring over ``metadata.uid`` its informers keep only
the objects whose controller owner's uid is in the ranges
(:class:`~kgen_runtime.sharding.OwnerShardedListWatch`, a client-side filter); with a ring
over ``metadata.namespace`` a ``ShardedListWatch`` over the object's own namespace does, as a
namespaced owner's dependents live in its namespace (and a cluster-scoped owner, like its
dependents, hashes the empty namespace). :meth:`set_ranges` (the member's
``on_ranges_changed``) moves them all to the member's new ranges: each relists.

A member that holds no range yet (it is joining, or the ring has more members than ranges to
give) serves :data:`NO_RANGES`, the one-hash range ``[0, 1)``, since a ``shardSelector`` needs
at least one range: such a cache holds only the objects whose FNV-1a is 0, and the builder's
reconcile gate (``begin``) refuses them as it refuses every hash the member does not hold.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from kgen_runtime.cache import AsyncListerWatcher, ListerWatcher
from kgen_runtime.sharding import (
    AsyncOwnerShardedListWatch,
    AsyncShardedListWatch,
    HashRange,
    OwnerShardedListWatch,
    ShardedListWatch,
    ShardField,
)

__all__ = ["NO_RANGES", "CacheShards"]

NO_RANGES = (HashRange(0, 1),)
"""What a member holding nothing serves (see the module docstring)."""


_Sharded = (ShardedListWatch[Any] | AsyncShardedListWatch[Any] | OwnerShardedListWatch[Any]
            | AsyncOwnerShardedListWatch[Any])


def served(ranges: Iterable[HashRange]) -> tuple[HashRange, ...]:
    """``ranges``, or :data:`NO_RANGES` if there are none."""
    return tuple(ranges) or NO_RANGES


class CacheShards:
    """The sharding of one cache (see the module docstring); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.field: ShardField | None = None
        self._ranges: tuple[HashRange, ...] = NO_RANGES
        self._kinds: set[type[Any]] = set()
        self._owned: set[type[Any]] = set()
        self._list_watches: list[_Sharded] = []

    def enable(self, field: ShardField) -> None:
        """Shard the marked kinds by ``field`` (a manager with sharding calls this)."""
        self.field = field

    def mark(self, kind: type[Any]) -> None:
        """Serve ``kind``'s informers made from now on through sharded list-watches.

        Raises:
            ValueError: sharding is not enabled, or ``kind`` is marked owned.
        """
        self._mark(kind, self._kinds, self._owned, "owned by a sharded controller")

    def mark_owned(self, kind: type[Any]) -> None:
        """Serve ``kind``'s informers made from now on through list-watches of the objects
        whose controller owner is in the ranges (see the module docstring).

        Raises:
            ValueError: sharding is not enabled, or ``kind`` is marked a primary kind.
        """
        self._mark(kind, self._owned, self._kinds, "the primary kind of a sharded controller")

    def _mark(self, kind: type[Any], into: set[type[Any]], other: set[type[Any]],
              other_role: str) -> None:
        if self.field is None:
            raise ValueError(f"sharding {kind.__qualname__} needs a manager with sharding: "
                             "Manager(sharding=ShardingConfig(...), cluster=...)")
        with self._lock:
            if kind in other:
                raise ValueError(f"{kind.__qualname__} is already {other_role}: its cache "
                                 "cannot be sharded both by its own uid and by its owner's")
            into.add(kind)

    def sharded(self, kind: type[Any]) -> bool:
        """Whether ``kind`` is marked (a primary or an owned kind)."""
        with self._lock:
            return kind in self._kinds or kind in self._owned

    def _by_owner(self, kind: type[Any]) -> bool:
        """Whether ``kind``'s informers filter by the controller owner's uid."""
        with self._lock:
            return kind in self._owned and self.field is ShardField.UID

    def ranges(self) -> tuple[HashRange, ...]:
        """The ranges served now."""
        with self._lock:
            return self._ranges

    def server_sharded(self) -> bool:
        """Whether the last list of every informer sending a ``shardSelector`` was filtered
        by the server (its ``shardInfo`` echoed the selector); false too when there is none.
        The owner filters are left out: they never ask the server."""
        with self._lock:
            list_watches = [lw for lw in self._list_watches
                            if isinstance(lw, (ShardedListWatch, AsyncShardedListWatch))]
        return bool(list_watches) and all(lw.server_sharded for lw in list_watches)

    def set_ranges(self, ranges: Iterable[HashRange]) -> None:
        """Serve ``ranges`` (or :data:`NO_RANGES`) from now on: every sharded informer
        relists."""
        now = served(ranges)
        with self._lock:
            self._ranges = now
            list_watches = list(self._list_watches)
        for list_watch in list_watches:
            list_watch.set_ranges(now)

    def wrap(self, kind: type[Any], list_watch: ListerWatcher[Any]) -> ListerWatcher[Any]:
        """``list_watch`` of ``kind`` serving the current ranges (a factory's
        ``wrap_list_watch``)."""
        assert self.field is not None
        by_owner = self._by_owner(kind)
        with self._lock:
            sharded: ShardedListWatch[Any] | OwnerShardedListWatch[Any] = (
                OwnerShardedListWatch(list_watch, self._ranges) if by_owner
                else ShardedListWatch(list_watch, self._ranges, self.field))
            self._list_watches.append(sharded)
        return sharded

    def wrap_async(self, kind: type[Any], list_watch: AsyncListerWatcher[Any],
                   ) -> AsyncListerWatcher[Any]:
        """The asyncio twin of :meth:`wrap`."""
        assert self.field is not None
        by_owner = self._by_owner(kind)
        with self._lock:
            sharded: AsyncShardedListWatch[Any] | AsyncOwnerShardedListWatch[Any] = (
                AsyncOwnerShardedListWatch(list_watch, self._ranges) if by_owner
                else AsyncShardedListWatch(list_watch, self._ranges, self.field))
            self._list_watches.append(sharded)
        return sharded
