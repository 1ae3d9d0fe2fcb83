"""A lister-watcher that serves one shard of a collection: its hash ranges, and only those.

:class:`ShardedListWatch` wraps a cache :class:`~kgen_runtime.cache.ListWatch` (or any
lister-watcher) for a reflector or informer, as client-go's ``NewShardedListWatch`` does:

* every list and watch carries ``shardSelector`` for the ranges (KEP-5866, v1.36);
* a list whose ``metadata.shardInfo.selector`` echoes the selector was filtered by the server
  and is passed on as it is; otherwise (a server without the ``ShardedListAndWatch`` gate
  ignores the parameter, and sends no ``shardInfo``) its items, and the events of the watch
  that follows, are filtered here by the same 64-bit FNV-1a over ``metadata.uid`` or
  ``metadata.namespace``. A streaming list (``sendInitialEvents``) has no list metadata to
  tell, so its events are always filtered here (a no-op for a server that already did);
* :meth:`ShardedListWatch.set_ranges` changes the ranges: the open watches are stopped and
  raise :class:`ShardRangesChangedError`, a :class:`~kgen_runtime.cache.RelistRequiredError`,
  so the reflector lists again at once with the new selector, and the list's ``replace``
  drops (as deletions) the objects that left the shard. A list that was in flight when the
  ranges changed is followed by the same relist rather than by a watch.

An object never leaves the ranges through an update: both hashed fields are immutable, so
neither the server (REAL-CLUSTER.md: its watch delivers the events of objects in range) nor
this filter ever sees an object cross. Objects leave only when the ranges change, by the
relist above.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kgen_runtime.cache import (
    AsyncListerWatcher,
    ListerWatcher,
    ListMetaLike,
    ObjectList,
    RelistRequiredError,
)
from kgen_runtime.cache import AsyncWatcher as _AsyncWatcher
from kgen_runtime.rest.options import ListOptions
from kgen_runtime.shardranges import HashRange, ShardField, format_selector, merge
from kgen_runtime.watch import OBJECT_EVENT_TYPES, Watcher, WatchEvent

__all__ = ["AsyncShardedListWatch", "ShardRangesChangedError", "ShardedListWatch"]

T = TypeVar("T")


class ShardRangesChangedError(RelistRequiredError):
    """The ranges of a :class:`ShardedListWatch` changed: the reflector must list again."""


@dataclass(frozen=True, slots=True)
class _Page(Generic[T]):
    """A list page with the items outside the ranges taken out (same metadata)."""

    metadata: ListMetaLike | None
    items: Sequence[T]


@dataclass(frozen=True, slots=True)
class _Shard:
    """One version of the ranges: what a list or a watch was asked for."""

    generation: int
    field: ShardField
    ranges: tuple[HashRange, ...]
    selector: str

    def holds(self, obj: Any) -> bool:
        digest = self.field.digest(obj.metadata)
        return any(digest in hash_range for hash_range in self.ranges)


class _OpenWatches:
    """The lock of a list-watch's state and its open watches, which a change of ranges
    stops."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watchers: set[Any] = set()

    def opened(self, watcher: Any) -> None:
        with self._lock:
            self._watchers.add(watcher)

    def closed(self, watcher: Any) -> None:
        with self._lock:
            self._watchers.discard(watcher)


class _Ranges(_OpenWatches):
    """The current ranges and what the last list proved; shared by the sync and async twin."""

    def __init__(self, ranges: Iterable[HashRange], field: ShardField) -> None:
        super().__init__()
        self._field = field
        self._shard = self._make(0, ranges)
        self._paging: _Shard | None = None  # the shard of the paged list in progress
        self._listed: _Shard | None = None  # the shard of the last whole list
        self.server_sharded = False

    def _make(self, generation: int, ranges: Iterable[HashRange]) -> _Shard:
        merged = merge(ranges)
        return _Shard(generation, self._field, merged, format_selector(merged, self._field))

    @property
    def current(self) -> _Shard:
        return self._shard

    def set(self, ranges: Iterable[HashRange]) -> list[Any]:
        """New ranges; the watchers to stop (none if the ranges are the same)."""
        with self._lock:
            shard = self._make(self._shard.generation + 1, ranges)
            if shard.ranges == self._shard.ranges:
                return []
            self._shard = shard
            return list(self._watchers)

    def list_options(self, options: ListOptions) -> tuple[_Shard, ListOptions]:
        """The shard of a list page (a continuation keeps its first page's, as the server
        requires identical parameters) and the options carrying its selector."""
        with self._lock:
            if options.continue_ and self._paging is not None:
                shard = self._paging
            else:
                shard = self._paging = self._shard
        return shard, dataclasses.replace(options, shard_selector=shard.selector)

    def listed(self, shard: _Shard, page: ObjectList[T]) -> ObjectList[T]:
        """A page as the reflector should see it: filtered here unless the server did."""
        meta: Any = page.metadata
        info = getattr(meta, "shard_info", None) if meta is not None else None
        echoed = info is not None and info.selector == shard.selector
        with self._lock:
            self.server_sharded = echoed
            self._listed = shard
        if echoed:
            return page
        return _Page(page.metadata, [obj for obj in page.items if shard.holds(obj)])

    def watch_options(self, options: ListOptions) -> tuple[_Shard, bool, ListOptions]:
        """The shard of a watch, whether to filter its events here, and its options.

        Raises:
            ShardRangesChangedError: the ranges changed since the list this watch follows.
        """
        with self._lock:
            shard = self._shard
            streaming = bool(options.send_initial_events)
            if not streaming and self._listed is not None and self._listed != shard:
                raise ShardRangesChangedError(
                    f"shard ranges changed to {shard.selector} since the last list")
            filter_here = streaming or not self.server_sharded
        return shard, filter_here, dataclasses.replace(options, shard_selector=shard.selector)

    def delivered(self, opened: tuple[_Shard, bool], event: WatchEvent[T]) -> WatchEvent[T] | None:
        """``event`` if a watch ``opened`` for (its shard, whether to filter here) delivers
        it, else ``None``; raises if the ranges changed under the watch."""
        shard, filter_here = opened
        if self._shard.generation != shard.generation:
            raise self.changed(shard)
        if filter_here and event.type in OBJECT_EVENT_TYPES and not shard.holds(event.object):
            return None
        return event

    def changed(self, shard: _Shard) -> ShardRangesChangedError:
        return ShardRangesChangedError(
            f"shard ranges changed from {shard.selector} to {self._shard.selector}")

    def still(self, opened: tuple[_Shard, bool]) -> None:
        shard = opened[0]
        if self._shard.generation != shard.generation:
            raise self.changed(shard)


class _WatchOfShard:
    """What both watch wrappers share: the inner watch, the state of the ranges deciding its
    events (a ``_Ranges``, or the owner filter's), what the watch was opened for (a value
    that state understands), and stopping."""

    def __init__(self, inner: Any, state: Any, opened: Any) -> None:
        self._inner = inner
        self._state = state
        self._opened = opened
        state.opened(self)  # from now on, set_ranges stops it

    def stop(self) -> None:
        self._state.closed(self)
        self._inner.stop()


class _ShardWatcher(_WatchOfShard, Generic[T]):
    """A watch of the shard: delivers what its state says of each event; ends by raising
    :class:`ShardRangesChangedError` once the ranges change."""

    def __iter__(self) -> Iterator[WatchEvent[T]]:
        try:
            for event in self._inner:
                delivered = self._state.delivered(self._opened, event)
                if delivered is not None:
                    yield delivered
            self._state.still(self._opened)
        finally:
            self._state.closed(self)


class _Sharded:
    """What both list-watches offer about their ranges."""

    def __init__(self, ranges: Iterable[HashRange], field: ShardField) -> None:
        self._ranges = _Ranges(ranges, field)

    @property
    def ranges(self) -> tuple[HashRange, ...]:
        """The ranges served now, merged and sorted."""
        return self._ranges.current.ranges

    @property
    def selector(self) -> str:
        """The ``shardSelector`` sent now."""
        return self._ranges.current.selector

    @property
    def server_sharded(self) -> bool:
        """Whether the last list was filtered by the server (its ``shardInfo`` echoed)."""
        return self._ranges.server_sharded

    def set_ranges(self, ranges: Iterable[HashRange]) -> None:
        """Serve ``ranges`` from now on: open watches end and the reflector relists."""
        for watcher in self._ranges.set(ranges):
            watcher.stop()


class ShardedListWatch(_Sharded, Generic[T]):
    """A :class:`~kgen_runtime.cache.ListerWatcher` for the objects of some hash ranges
    (see the module docstring).

    Args:
        lister_watcher: What lists and watches the whole collection (a ``ListWatch``).
        ranges: The hash ranges to serve (at least one; merged).
        field: The field hashed: ``metadata.uid`` (default) or ``metadata.namespace``.
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher[T],
        ranges: Iterable[HashRange],
        field: ShardField = ShardField.UID,
    ) -> None:
        super().__init__(ranges, field)
        self._lw = lister_watcher

    def list(self, options: ListOptions) -> ObjectList[T]:
        shard, sharded = self._ranges.list_options(options)
        return self._ranges.listed(shard, self._lw.list(sharded))

    def watch(self, options: ListOptions) -> Watcher[T]:
        shard, filter_here, sharded = self._ranges.watch_options(options)
        return _ShardWatcher(self._lw.watch(sharded), self._ranges, (shard, filter_here))


class _AsyncShardWatcher(_WatchOfShard, Generic[T]):
    """The asyncio twin of :class:`_ShardWatcher`."""

    def __aiter__(self) -> AsyncIterator[WatchEvent[T]]:
        return self._events()

    async def _events(self) -> AsyncIterator[WatchEvent[T]]:
        events = self._inner.__aiter__()
        try:
            async for event in events:
                delivered = self._state.delivered(self._opened, event)
                if delivered is not None:
                    yield delivered
            self._state.still(self._opened)
        finally:
            self._state.closed(self)
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()


class AsyncShardedListWatch(_Sharded, Generic[T]):
    """The asyncio twin of :class:`ShardedListWatch`, over an
    :class:`~kgen_runtime.cache.AsyncListerWatcher` (an ``AsyncListWatch``)."""

    def __init__(
        self,
        lister_watcher: AsyncListerWatcher[T],
        ranges: Iterable[HashRange],
        field: ShardField = ShardField.UID,
    ) -> None:
        super().__init__(ranges, field)
        self._lw = lister_watcher

    async def list(self, options: ListOptions) -> ObjectList[T]:
        shard, sharded = self._ranges.list_options(options)
        return self._ranges.listed(shard, await self._lw.list(sharded))

    async def watch(self, options: ListOptions) -> _AsyncWatcher[T]:
        shard, filter_here, sharded = self._ranges.watch_options(options)
        return _AsyncShardWatcher(await self._lw.watch(sharded), self._ranges,
                                  (shard, filter_here))
