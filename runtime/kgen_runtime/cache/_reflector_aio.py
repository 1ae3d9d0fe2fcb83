"""The asyncio twin of :mod:`kgen_runtime.cache._reflector`: a reflector that is a task.

:class:`AsyncReflector` lists and watches one collection into a store with client-go's
semantics — paged lists from ``"0"`` then the last seen resourceVersion, 410 or 504 "Too large
resource version" on a list ⇒ list the latest state, an expired continuation ⇒ one unpaged
list, optional streaming list, watches from the last seen version with bookmarks and
randomised server timeouts, a watch silent for ``watch_read_timeout`` taken as stalled and
re-opened, ``ERROR`` events, failed watch requests and very short watches ending the round,
429/refused watches retried without a relist, exponential backoff between rounds, periodic
resync, the ``reflector_*`` metrics — because every one of those decisions is
:class:`~kgen_runtime.cache._reflector_state.ReflectorState`'s, shared with the blocking
:class:`~kgen_runtime.cache.Reflector`. Only the waiting differs:

* :meth:`AsyncReflector.run` runs until its task is cancelled (Go's ``ctx.Done()``); a list
  or watch in flight is cancelled with it.
* The stall check is ``asyncio.timeout`` around each wait for the next event (event-loop
  time); backoff and resync waits go through the injectable
  :class:`~kgen_runtime.util.clock_aio.AsyncClock`.
* The store is called from the loop; it must not block (an ``Indexer`` or a ``RealFIFO``
  never waits to add).
* A list yields to the loop between its costly parts, so that no step holds the loop long:
  each page is decoded in a step of the client's, the store is replaced in a step of its
  own, and so is the collector's bookkeeping after the list (which walks every frozen object
  when the process froze its heap).
  ``bench/event_loop_steps.py`` prints the longest steps under load.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, Protocol, TypeVar

from kgen_runtime.cache._backoff import ExponentialBackoff
from kgen_runtime.cache._listwatch import ObjectList, TweakListOptions, selected
from kgen_runtime.cache._metrics import REFLECTOR_METRICS, ReflectorMetrics
from kgen_runtime.cache._reflector import ReflectorOptions
from kgen_runtime.cache._reflector_state import (
    InitialEventsIncompleteError,
    ReflectorState,
    ReflectorStore,
    RelistRequiredError,
    resource_version_of,
)
from kgen_runtime.meta import WireEventFilter, WireFilter
from kgen_runtime.rest.client_aio import AsyncResourceClient
from kgen_runtime.rest.errors import is_gone, is_too_many_requests
from kgen_runtime.rest.options import ListOptions
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock
from kgen_runtime.watch import WatchEvent

__all__ = ["AsyncListWatch", "AsyncListerWatcher", "AsyncReflector", "AsyncWatcher"]

_log = logging.getLogger("kgen_runtime.cache.reflector")

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class AsyncWatcher(Protocol[T_co]):
    """An opened watch: ``async for`` its events, ``stop()`` it (an ``AsyncStreamWatcher``)."""

    def __aiter__(self) -> AsyncIterator[WatchEvent[T_co]]: ...

    def stop(self) -> None: ...


class AsyncListerWatcher(Protocol[T_co]):
    """Lists one page, and opens a watch (raising at once if the server refuses it)."""

    async def list(self, options: ListOptions) -> ObjectList[T_co]: ...

    async def watch(self, options: ListOptions) -> AsyncWatcher[T_co]: ...


class AsyncListWatch(Generic[T]):
    """An :class:`AsyncListerWatcher` over an async client, with the fixed selectors and
    tweak of :class:`~kgen_runtime.cache.ListWatch` applied to every call, and ``keep``
    passed on as there (for an ``AsyncResourceClient``)."""

    def __init__(
        self,
        list_func: Callable[[ListOptions], Awaitable[ObjectList[T]]],
        watch_func: Callable[[ListOptions], Awaitable[Any]],
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        tweak: TweakListOptions | None = None,
        accepts_keep: bool = False,
    ) -> None:
        self._list = list_func
        self._watch = watch_func
        self._label_selector = label_selector
        self._field_selector = field_selector
        self._tweak = tweak
        self.accepts_keep = accepts_keep

    @classmethod
    def from_client(
        cls,
        client: Any,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        tweak: TweakListOptions | None = None,
    ) -> AsyncListWatch[Any]:
        """Adapt an async client (``await list(options)``, ``await watch(options)``; they
        take ``keep`` too if it is an ``AsyncResourceClient``, whose objects are then
        decoded lazily, as :meth:`ListWatch.from_client <kgen_runtime.cache.ListWatch.from_client>`
        says)."""
        typed = isinstance(client, AsyncResourceClient)
        return AsyncListWatch(
            functools.partial(client.list, lazy=True) if typed else client.list,
            functools.partial(client.watch, lazy=True) if typed else client.watch,
            label_selector=label_selector,
            field_selector=field_selector,
            tweak=tweak,
            accepts_keep=typed,
        )

    async def list(self, options: ListOptions, *,
                   keep: WireFilter | None = None) -> ObjectList[T]:
        """One page; ``keep`` (only if :attr:`accepts_keep`) leaves the objects it rejects
        unbuilt."""
        if keep is None:
            return await self._list(self._selected(options))
        keeping: Callable[..., Awaitable[ObjectList[T]]] = self._list  # takes keep too
        return await keeping(self._selected(options), keep=keep)

    async def watch(self, options: ListOptions, *,
                    keep: WireEventFilter | None = None,
                    ) -> AsyncWatcher[T]:
        """A watch; ``keep`` (only if :attr:`accepts_keep`) skips the events it rejects
        unbuilt."""
        if keep is None:
            watcher: AsyncWatcher[T] = await self._watch(self._selected(options))
            return watcher
        keeping: Callable[..., Awaitable[AsyncWatcher[T]]] = self._watch  # takes keep too
        return await keeping(self._selected(options), keep=keep)

    def _selected(self, options: ListOptions) -> ListOptions:
        return selected(options, self._label_selector, self._field_selector, self._tweak)


AsyncWatchErrorHandler = Callable[["AsyncReflector[Any]", BaseException], None]


def _log_error(reflector: AsyncReflector[Any], error: BaseException) -> None:
    level = logging.INFO if is_gone(error) else logging.WARNING
    _log.log(level, "%s: list-and-watch ended: %s", reflector.name, error)


class AsyncReflector(Generic[T]):
    """Lists and watches one collection into a store, as a task (see the module docstring).

    Args are those of :class:`~kgen_runtime.cache.Reflector`, with an async lister-watcher
    and an :class:`AsyncClock`.
    """

    def __init__(
        self,
        lister_watcher: AsyncListerWatcher[T],
        store: ReflectorStore,
        *,
        name: str = "reflector",
        resync_period: float = 0.0,
        should_resync: Callable[[], bool] | None = None,
        options: ReflectorOptions | None = None,
        watch_error_handler: AsyncWatchErrorHandler | None = None,
        metrics: ReflectorMetrics = REFLECTOR_METRICS,
        clock: AsyncClock = ASYNC_REAL_CLOCK,
    ) -> None:
        opts = options or ReflectorOptions()
        self.name = name
        self._lw = lister_watcher
        self._store = store
        self._resync_period = resync_period
        self._should_resync = should_resync or (lambda: True)
        self._watch_read_timeout = opts.watch_read_timeout
        self._use_watch_list = opts.use_watch_list
        self._on_error = watch_error_handler or _log_error
        self._clock = clock
        rng = opts.rng or random.Random()
        self._backoff = ExponentialBackoff(
            opts.initial_backoff,
            opts.max_backoff,
            opts.backoff_reset,
            jitter=opts.backoff_jitter,
            clock=clock,
            rng=rng,
        )
        self._state: ReflectorState[T] = ReflectorState(
            name,
            store,
            page_size=opts.page_size,
            min_watch_timeout=opts.min_watch_timeout,
            rng=rng,
            metrics=metrics,
            clock=clock,
            freeze_initial_list=opts.freeze_initial_list,
        )

    @property
    def last_sync_resource_version(self) -> str:
        """The resourceVersion of the last list or event applied to the store."""
        return self._state.last_sync_rv

    def set_watch_error_handler(self, handler: AsyncWatchErrorHandler) -> None:
        """Replace the hook called when a round ends with an error (before :meth:`run`)."""
        self._on_error = handler

    async def run(self) -> None:
        """Run rounds, backing off between them, until the task is cancelled."""
        while True:
            try:
                await self.list_and_watch()
            except RelistRequiredError as request:
                _log.info("%s: %s; listing again", self.name, request)
                continue
            except Exception as err:
                self._on_error(self, err)
            await self._clock.sleep(None, self._backoff.next_delay())

    async def list_and_watch(self) -> None:
        """One round: list (or stream the list), then watch until the watch must be
        abandoned; raises the error that ended the round."""
        first = await self._open_watch_list() if self._use_watch_list else None
        if first is None:
            with self._state.gc_paused_list():
                await self._list()
        resyncer = (
            asyncio.create_task(self._resync_loop(), name=f"{self.name}-resync")
            if self._resync_period > 0
            else None
        )
        try:
            if first is not None:
                try:
                    await self._handle_watch(first, watch_list=True)
                except InitialEventsIncompleteError as err:
                    _log.warning("%s: %s; falling back to a list", self.name, err)
                    with self._state.gc_paused_list():
                        await self._list()
            await self._watch_loop()
        finally:
            if resyncer is not None:
                resyncer.cancel()

    async def _open_watch_list(self) -> AsyncWatcher[T] | None:
        try:
            return await self._lw.watch(self._state.watch_list_options())
        except Exception as err:
            self._state.watch_list_refused(err)
            _log.warning("%s: streaming list refused (%s), falling back to a list", self.name, err)
            return None

    async def _list(self) -> None:
        state = self._state
        rv = state.list_started()
        try:
            items, list_rv = await self._paged_list(rv)
        except Exception as err:
            if not state.relist_after(err, rv):
                raise
            items, list_rv = await self._paged_list("")
        await asyncio.sleep(0)  # the replace in a step of its own
        state.listed(items, list_rv)
        await asyncio.sleep(0)  # and the collector's bookkeeping after the list (the caller's)

    async def _paged_list(self, rv: str) -> tuple[list[T], str]:
        items: list[T] = []
        options = self._state.first_page(rv)
        while True:
            try:
                page = await self._lw.list(options)
            except Exception as err:
                if not (is_gone(err) and options.continue_):
                    raise
                page = await self._lw.list(self._state.unpaged(rv))
                return list(page.items), resource_version_of(page)
            items.extend(page.items)
            await asyncio.sleep(0)  # a page's decode and the next page's are separate steps
            token = page.metadata.continue_ if page.metadata is not None else None
            if not token:
                return items, resource_version_of(page)
            options = self._state.next_page(token)

    async def _watch_loop(self) -> None:
        while True:
            try:
                watcher = await self._lw.watch(self._state.watch_options())
            except Exception as err:
                if is_too_many_requests(err) or isinstance(err, ConnectionRefusedError):
                    _log.info("%s: watch refused (%s), backing off", self.name, err)
                    await self._clock.sleep(None, self._backoff.next_delay())
                    continue
                raise
            await self._handle_watch(watcher)

    async def _handle_watch(self, watcher: AsyncWatcher[T], *, watch_list: bool = False) -> None:
        """Apply a watch's events until it ends (see ``Reflector._handle_watch``)."""
        state = self._state
        initial: dict[str, Any] | None = {} if watch_list else None
        state.watch_opened()
        count = 0
        stalled = False
        broken: Exception | None = None
        events = watcher.__aiter__()
        try:
            while True:
                try:
                    async with asyncio.timeout(self._watch_read_timeout) as silence:
                        event = await anext(events)
                except StopAsyncIteration:
                    break
                except TimeoutError as err:
                    stalled = silence.expired()
                    broken = None if stalled else err
                    break
                except ConnectionError as err:
                    broken = err  # the stream broke: resume from the last version
                    break
                if initial is None:
                    state.apply(event)
                elif state.collect_initial(event, initial):
                    initial = None
                count += 1
        finally:
            watcher.stop()
            close = getattr(events, "aclose", None)
            if close is not None:
                await close()
        state.watch_ended(
            initial=initial,
            count=count,
            stalled=stalled,
            broken=broken,
            read_timeout=self._watch_read_timeout,
        )

    async def _resync_loop(self) -> None:
        while True:
            await self._clock.sleep(None, self._resync_period)
            if self._should_resync():
                try:
                    self._store.resync()
                except Exception:
                    _log.exception("%s: resync failed", self.name)
