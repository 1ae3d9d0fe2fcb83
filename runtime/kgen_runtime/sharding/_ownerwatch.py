"""A lister-watcher that serves the objects *controlled by* one shard's objects.

A sharded controller caches only the primary objects of its hash ranges
(:class:`~kgen_runtime.sharding.ShardedListWatch`); :class:`OwnerShardedListWatch` does the
same for the kinds it owns, so that a replica's memory follows its share of every kind it
caches. An owned object belongs to the shard of its *controller*: the owner reference with
``controller: true``, whose ``uid`` is hashed (64-bit FNV-1a) as the owner's own
``metadata.uid`` is, so an object lands in the replica that reconciles its owner — what
timebertt/kubernetes-controller-sharding does with its shard labels.

kube-apiserver's ``shardSelector`` hashes only ``metadata.uid`` and ``metadata.namespace``
(``../shared/REAL-CLUSTER.md``), so this filter is always client-side: lists and watches go
out unchanged and every object is filtered here.

* An object without a controller reference is dropped: no shard reconciles it through an
  ``owns()`` handler (``EnqueueRequestForOwner`` maps only a controller of the owner's kind),
  so no replica needs it.
* Unlike a uid, ``ownerReferences`` can change (adoption, orphaning), so an object can enter
  or leave the shard by an update. The list-watch remembers the uids it passed on: an
  ``ADDED``/``MODIFIED`` event of an object that left is passed on as ``DELETED`` (the cache
  drops it), one that entered as it came (the informer adds an object it did not hold), and
  the events of objects it never passed on are dropped — so handlers never hear of them.
* :meth:`OwnerShardedListWatch.set_ranges` works as ``ShardedListWatch``'s: open watches end
  with :class:`~kgen_runtime.sharding.ShardRangesChangedError` and the reflector relists,
  which drops (as deletions) the objects that left.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Generic, TypeVar

from kgen_runtime.cache import AsyncListerWatcher, ListerWatcher, ObjectList
from kgen_runtime.cache import AsyncWatcher as _AsyncWatcher
from kgen_runtime.rest.options import ListOptions
from kgen_runtime.sharding._listwatch import (
    ShardRangesChangedError,
    _AsyncShardWatcher,
    _OpenWatches,
    _Page,
    _ShardWatcher,
)
from kgen_runtime.shardranges import HashRange, fnv1a64, merge
from kgen_runtime.watch import Watcher, WatchEvent

__all__ = ["AsyncOwnerShardedListWatch", "OwnerShardedListWatch", "controller_uid"]

T = TypeVar("T")

_ENTERING = frozenset({"ADDED", "MODIFIED"})


def controller_uid(metadata: Any) -> str | None:
    """The ``uid`` of the controller owner reference in ``metadata``; ``None`` if none."""
    for ref in metadata.owner_references or ():
        if ref.controller:
            return ref.uid or None
    return None


def _holds(ranges: tuple[HashRange, ...], obj: Any) -> bool:
    """Whether ``obj``'s controller owner hashes into ``ranges``."""
    uid = controller_uid(obj.metadata)
    if uid is None:
        return False
    digest = fnv1a64(uid)
    return any(digest in hash_range for hash_range in ranges)


class _Owners(_OpenWatches):
    """The ranges (and their generation), the uids passed on since the last list, and the
    open watches; shared by the sync and the async twin. Thread-safe."""

    def __init__(self, ranges: Iterable[HashRange]) -> None:
        super().__init__()
        self.generation = 0
        self.ranges = self._checked(ranges)
        self._paging = (0, self.ranges)  # the generation and ranges of the list in progress
        self._listed: int | None = None  # the generation of the last list
        self._held: set[str] = set()

    @staticmethod
    def _checked(ranges: Iterable[HashRange]) -> tuple[HashRange, ...]:
        merged = merge(ranges)
        if not merged:
            raise ValueError("an owner-sharded list-watch needs at least one range")
        return merged

    def set(self, ranges: Iterable[HashRange]) -> list[Any]:
        """New ranges; the watchers to stop (none if the ranges are the same)."""
        merged = self._checked(ranges)
        with self._lock:
            if merged == self.ranges:
                return []
            self.generation += 1
            self.ranges = merged
            return list(self._watchers)

    def listed(self, options: ListOptions, page: ObjectList[T]) -> ObjectList[T]:
        """``page`` with the objects of other shards taken out. A first page (no
        ``continue``) starts a new list: what was passed on before is forgotten, and the
        list's later pages are filtered by the same ranges."""
        with self._lock:
            if not options.continue_:
                self._paging = (self.generation, self.ranges)
                self._held = set()
            generation, ranges = self._paging
            kept: list[Any] = [obj for obj in page.items if _holds(ranges, obj)]
            self._held.update(obj.metadata.uid for obj in kept)
            self._listed = generation
        return _Page(page.metadata, kept)

    def watch_started(self, options: ListOptions) -> int:
        """The generation a new watch serves.

        Raises:
            ShardRangesChangedError: the ranges changed since the list this watch follows.
        """
        with self._lock:
            if options.send_initial_events:  # a streaming list: its events are the list
                self._held = set()
            elif self._listed is not None and self._listed != self.generation:
                raise ShardRangesChangedError("shard ranges changed since the last list")
            return self.generation

    def delivered(self, generation: int, event: WatchEvent[T]) -> WatchEvent[T] | None:
        """What to deliver for ``event`` (see the module docstring), ``None`` for nothing.

        Raises:
            ShardRangesChangedError: the ranges changed under the watch.
        """
        kind = event.type
        with self._lock:
            self.still(generation)
            if kind not in _ENTERING and kind != "DELETED":
                return event  # BOOKMARK, ERROR
            uid = event.object.metadata.uid  # type: ignore[attr-defined]
            if kind in _ENTERING and _holds(self.ranges, event.object):
                self._held.add(uid)
                return event
            if uid not in self._held:
                return None
            self._held.discard(uid)
        return event if kind == "DELETED" else WatchEvent("DELETED", event.object)

    def still(self, generation: int) -> None:
        if self.generation != generation:
            raise ShardRangesChangedError("shard ranges changed under the watch")


class _OwnerSharded:
    """What both list-watches offer about their ranges."""

    def __init__(self, ranges: Iterable[HashRange]) -> None:
        self._owners = _Owners(ranges)

    @property
    def ranges(self) -> tuple[HashRange, ...]:
        """The ranges served now, merged and sorted."""
        return self._owners.ranges

    @property
    def server_sharded(self) -> bool:
        """Always false: the server cannot hash owner references; the filter is here."""
        return False

    def set_ranges(self, ranges: Iterable[HashRange]) -> None:
        """Serve ``ranges`` from now on: open watches end and the reflector relists."""
        for watcher in self._owners.set(ranges):
            watcher.stop()


class OwnerShardedListWatch(_OwnerSharded, Generic[T]):
    """A :class:`~kgen_runtime.cache.ListerWatcher` for the objects whose controller owner's
    uid hashes into some ranges (see the module docstring).

    Args:
        lister_watcher: What lists and watches the whole collection (a ``ListWatch``).
        ranges: The hash ranges to serve (at least one; merged).
    """

    def __init__(self, lister_watcher: ListerWatcher[T], ranges: Iterable[HashRange]) -> None:
        super().__init__(ranges)
        self._lw = lister_watcher

    def list(self, options: ListOptions) -> ObjectList[T]:
        return self._owners.listed(options, self._lw.list(options))

    def watch(self, options: ListOptions) -> Watcher[T]:
        generation = self._owners.watch_started(options)
        return _ShardWatcher(self._lw.watch(options), self._owners, generation)


class AsyncOwnerShardedListWatch(_OwnerSharded, Generic[T]):
    """The asyncio twin of :class:`OwnerShardedListWatch`, over an
    :class:`~kgen_runtime.cache.AsyncListerWatcher` (an ``AsyncListWatch``)."""

    def __init__(self, lister_watcher: AsyncListerWatcher[T],
                 ranges: Iterable[HashRange]) -> None:
        super().__init__(ranges)
        self._lw = lister_watcher

    async def list(self, options: ListOptions) -> ObjectList[T]:
        return self._owners.listed(options, await self._lw.list(options))

    async def watch(self, options: ListOptions) -> _AsyncWatcher[T]:
        generation = self._owners.watch_started(options)
        return _AsyncShardWatcher(await self._lw.watch(options), self._owners, generation)
