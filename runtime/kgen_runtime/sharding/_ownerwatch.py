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

Over a :class:`~kgen_runtime.cache.ListWatch` of a client (``accepts_keep``: what informer
factories make) the filter runs on the wire documents, before anything is built: the client's
``keep`` reads ``metadata.uid`` and the controller reference from each list item's and watch
event's JSON, so the objects of other shards cost their ``orjson`` decode and nothing more —
with N replicas each builds only its share, not everything N times. Over any other
lister-watcher the same decisions are made on the built objects.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar

from kgen_runtime.cache import (
    AsyncListerWatcher,
    AsyncListWatch,
    ListerWatcher,
    ListWatch,
    ObjectList,
)
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
from kgen_runtime.watch import OBJECT_EVENT_TYPES, Watcher, WatchEvent

__all__ = ["AsyncOwnerShardedListWatch", "OwnerShardedListWatch", "controller_uid"]

T = TypeVar("T")

_ENTERING = frozenset({"ADDED", "MODIFIED"})


def controller_uid(metadata: Any) -> str | None:
    """The ``uid`` of the controller owner reference in ``metadata``; ``None`` if none."""
    for ref in metadata.owner_references or ():
        if ref.controller:
            return ref.uid or None
    return None


def _wire_controller_uid(metadata: Any) -> str | None:
    """:func:`controller_uid` of a wire object's ``metadata`` (a ``dict`` from ``orjson``).

    A value of another JSON type than the API server sends (a string ``uid``, a boolean
    ``controller``: apimachinery's ``OwnerReference``) counts as absent.
    """
    refs = metadata.get("ownerReferences") if metadata.__class__ is dict else None
    if refs.__class__ is not list:
        return None
    for ref in refs:
        if ref.__class__ is dict and ref.get("controller") is True:
            uid = ref.get("uid")
            return uid if uid.__class__ is str and uid else None
    return None


def _wire_uid(metadata: Any) -> str | None:
    """A wire object's ``metadata.uid`` (``None`` if it is not a string)."""
    uid = metadata.get("uid") if metadata.__class__ is dict else None
    return uid if uid.__class__ is str else None


def _in(ranges: tuple[HashRange, ...], owner_uid: str | None) -> bool:
    """Whether the controller owner ``owner_uid`` (``None``: none) hashes into ``ranges``."""
    if owner_uid is None:
        return False
    digest = fnv1a64(owner_uid)
    return any(digest in hash_range for hash_range in ranges)


def _wire_in(ranges: tuple[HashRange, ...], document: dict[str, Any]) -> bool:
    """A list's ``keep``: whether a wire object's controller owner hashes into ``ranges``."""
    return _in(ranges, _wire_controller_uid(document.get("metadata")))


class _Owners(_OpenWatches):
    """The ranges (and their generation), the uids passed on since the last list, and the
    open watches; shared by the sync and the async twin. Thread-safe."""

    def __init__(self, ranges: Iterable[HashRange]) -> None:
        super().__init__()
        self.generation = 0
        self.ranges = self._checked(ranges)
        self._paging = (0, self.ranges)  # the generation and ranges of the list in progress
        self._listed: int | None = None  # the generation of the last list
        self._held: set[str | None] = set()

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

    def page(self, options: ListOptions) -> tuple[int, tuple[HashRange, ...]]:
        """The generation and ranges a list page is filtered by: the current ones for a
        first page (no ``continue``), its first page's for a continuation."""
        with self._lock:
            return self._paging if options.continue_ else (self.generation, self.ranges)

    def listed(self, options: ListOptions, paging: tuple[int, tuple[HashRange, ...]],
               page: ObjectList[T], kept_on_wire: bool) -> ObjectList[T]:
        """``page`` with the objects of other shards taken out (already, if
        ``kept_on_wire``: its list was given ``keep``). A first page starts a new list:
        what was passed on before is forgotten, and the list's later pages are filtered by
        the same ranges."""
        generation, ranges = paging
        with self._lock:
            if not options.continue_:
                self._paging = paging
                self._held = set()
            items: Sequence[Any] = page.items
            kept = items if kept_on_wire else [
                obj for obj in items if _in(ranges, controller_uid(obj.metadata))]
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

    def _admits(self, kind: str, uid: str | None, owner_uid: str | None) -> bool:
        """Whether an object event is delivered, and what is held after it (the lock held):
        an ``ADDED``/``MODIFIED`` of an owner in the ranges enters (or stays); any other
        event of a held object makes it leave; the rest is dropped."""
        if kind in _ENTERING and _in(self.ranges, owner_uid):
            self._held.add(uid)
            return True
        if uid in self._held:
            self._held.discard(uid)
            return True
        return False

    def kept_on_wire(self, generation: int, kind: str, document: dict[str, Any]) -> bool:
        """A watch's ``keep``: :meth:`_admits` of an event's wire object. After a change of
        ranges every event is kept, so that :meth:`delivered` raises at once."""
        metadata = document.get("metadata")
        with self._lock:
            if self.generation != generation:
                return True
            return self._admits(kind, _wire_uid(metadata), _wire_controller_uid(metadata))

    def delivered(self, opened: tuple[int, bool], event: WatchEvent[T]) -> WatchEvent[T] | None:
        """What to deliver for ``event`` of a watch ``opened`` for (its generation, whether
        its events were admitted on the wire already): the event, ``DELETED`` for an object
        that left, ``None`` for nothing (see the module docstring).

        Raises:
            ShardRangesChangedError: the ranges changed under the watch.
        """
        on_wire = opened[1]
        kind = event.type
        with self._lock:
            self.still(opened)
            if kind not in OBJECT_EVENT_TYPES:
                return event  # BOOKMARK, ERROR
            metadata = event.object.metadata  # type: ignore[attr-defined]
            uid = metadata.uid
            if not on_wire and not self._admits(kind, uid, controller_uid(metadata)):
                return None
            left = kind in _ENTERING and uid not in self._held
        return WatchEvent("DELETED", event.object) if left else event

    def still(self, opened: tuple[int, bool]) -> None:
        if self.generation != opened[0]:
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
        self._wire = (lister_watcher if isinstance(lister_watcher, ListWatch)
                      and lister_watcher.accepts_keep else None)

    def list(self, options: ListOptions) -> ObjectList[T]:
        paging = self._owners.page(options)
        if self._wire is None:
            return self._owners.listed(options, paging, self._lw.list(options), False)
        keep = functools.partial(_wire_in, paging[1])
        return self._owners.listed(options, paging, self._wire.list(options, keep=keep), True)

    def watch(self, options: ListOptions) -> Watcher[T]:
        generation = self._owners.watch_started(options)
        if self._wire is None:
            return _ShardWatcher(self._lw.watch(options), self._owners, (generation, False))
        keep = functools.partial(self._owners.kept_on_wire, generation)
        return _ShardWatcher(self._wire.watch(options, keep=keep), self._owners,
                             (generation, True))


class AsyncOwnerShardedListWatch(_OwnerSharded, Generic[T]):
    """The asyncio twin of :class:`OwnerShardedListWatch`, over an
    :class:`~kgen_runtime.cache.AsyncListerWatcher` (an ``AsyncListWatch``)."""

    def __init__(self, lister_watcher: AsyncListerWatcher[T],
                 ranges: Iterable[HashRange]) -> None:
        super().__init__(ranges)
        self._lw = lister_watcher
        self._wire = (lister_watcher if isinstance(lister_watcher, AsyncListWatch)
                      and lister_watcher.accepts_keep else None)

    async def list(self, options: ListOptions) -> ObjectList[T]:
        paging = self._owners.page(options)
        if self._wire is None:
            return self._owners.listed(options, paging, await self._lw.list(options), False)
        keep = functools.partial(_wire_in, paging[1])
        page = await self._wire.list(options, keep=keep)
        return self._owners.listed(options, paging, page, True)

    async def watch(self, options: ListOptions) -> _AsyncWatcher[T]:
        generation = self._owners.watch_started(options)
        if self._wire is None:
            return _AsyncShardWatcher(await self._lw.watch(options), self._owners,
                                      (generation, False))
        keep = functools.partial(self._owners.kept_on_wire, generation)
        return _AsyncShardWatcher(await self._wire.watch(options, keep=keep), self._owners,
                                  (generation, True))
