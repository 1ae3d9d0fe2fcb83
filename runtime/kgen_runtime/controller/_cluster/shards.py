"""Which kinds an informer cache shards, and the list-watches that serve their ranges.

A manager with sharding (:class:`~kgen_runtime.controller.ShardingConfig`) turns this on with
its ring's hashed field and its member's ranges; a builder's ``sharded()`` marks its primary
kind. Every informer of a marked kind then lists and watches through a
:class:`~kgen_runtime.sharding.ShardedListWatch` (or its async twin), and :meth:`set_ranges`
(the member's ``on_ranges_changed``) moves them all to the member's new ranges: each relists.

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
from kgen_runtime.sharding import AsyncShardedListWatch, HashRange, ShardedListWatch, ShardField

__all__ = ["NO_RANGES", "CacheShards"]

NO_RANGES = (HashRange(0, 1),)
"""What a member holding nothing serves (see the module docstring)."""


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
        self._list_watches: list[ShardedListWatch[Any] | AsyncShardedListWatch[Any]] = []

    def enable(self, field: ShardField) -> None:
        """Shard the marked kinds by ``field`` (a manager with sharding calls this)."""
        self.field = field

    def mark(self, kind: type[Any]) -> None:
        """Serve ``kind``'s informers made from now on through sharded list-watches.

        Raises:
            ValueError: sharding is not enabled.
        """
        if self.field is None:
            raise ValueError(f"sharding {kind.__qualname__} needs a manager with sharding: "
                             "Manager(sharding=ShardingConfig(...), cluster=...)")
        with self._lock:
            self._kinds.add(kind)

    def sharded(self, kind: type[Any]) -> bool:
        """Whether ``kind`` is marked."""
        with self._lock:
            return kind in self._kinds

    def ranges(self) -> tuple[HashRange, ...]:
        """The ranges served now."""
        with self._lock:
            return self._ranges

    def server_sharded(self) -> bool:
        """Whether the last list of every sharded informer was filtered by the server (its
        ``shardInfo`` echoed the selector); false too when there is none."""
        with self._lock:
            list_watches = list(self._list_watches)
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

    def wrap(self, list_watch: ListerWatcher[Any]) -> ListerWatcher[Any]:
        """``list_watch`` serving the current ranges (a factory's ``wrap_list_watch``)."""
        assert self.field is not None
        with self._lock:
            sharded: ShardedListWatch[Any] = ShardedListWatch(list_watch, self._ranges,
                                                              self.field)
            self._list_watches.append(sharded)
        return sharded

    def wrap_async(self, list_watch: AsyncListerWatcher[Any]) -> AsyncListerWatcher[Any]:
        """The asyncio twin of :meth:`wrap`."""
        assert self.field is not None
        with self._lock:
            sharded: AsyncShardedListWatch[Any] = AsyncShardedListWatch(list_watch, self._ranges,
                                                                        self.field)
            self._list_watches.append(sharded)
        return sharded
