"""The asyncio twin of :mod:`kgen_runtime.cache._informer`: an informer that is a set of tasks.

::

    AsyncListerWatcher ─► AsyncReflector ─► RealFIFO ─► (deltas task) ─► Indexer
                            (a task)                                └─► one task per handler

The contract is :class:`~kgen_runtime.cache.SharedIndexInformer`'s (eventual consistency,
per-handler order, tombstones on relist, late handlers fed the cache first, per-handler
resync, shared read-only objects) because the pieces are the same: the same ``RealFIFO``,
``Indexer``, ``SharedProcessor`` and delta application, and the reflector's decisions
(:class:`~kgen_runtime.cache.AsyncReflector`). What differs:

* :meth:`AsyncSharedIndexInformer.run` runs until its task is cancelled; cancelling it
  cancels the reflector, the delta task and every handler task.
* Handler methods may be plain functions (called on the loop: they must not block) or
  coroutine functions (awaited in the handler's own task, one notification at a time, so a
  slow handler delays only itself).
* Reads (``indexer``, listers) never await; use the informer from one event loop.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast

from kgen_runtime.cache._fifo import Delta, RealFIFO, TransformFunc
from kgen_runtime.cache._informer import (
    MINIMUM_RESYNC_PERIOD,
    ResourceEventHandlerRegistration,
    apply_deltas,
    informer_fifo,
)
from kgen_runtime.cache._processor import (
    AddAllNotification,
    Notification,
    ResourceEventHandler,
    SharedProcessor,
    handler_calls,
    initial_adds,
)
from kgen_runtime.cache._reflector import ReflectorOptions
from kgen_runtime.cache._reflector_aio import (
    AsyncListerWatcher,
    AsyncReflector,
    AsyncWatchErrorHandler,
)
from kgen_runtime.cache._store import (
    NAMESPACE_INDEX,
    Indexer,
    IndexFunc,
    meta_namespace_index_func,
    meta_namespace_key_func,
)
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock

__all__ = [
    "AsyncListener",
    "AsyncResourceEventHandler",
    "AsyncResourceEventHandlerFuncs",
    "AsyncSharedIndexInformer",
]

_log = logging.getLogger("kgen_runtime.cache.informer")

#: Handler calls a listener makes before it lets other tasks run: as many as the deltas the
#: delta task applies in one step, ~1-10 ms of a plain handler's work.
_CALLS_PER_STEP = 1000

T = TypeVar("T")


class AsyncListener:
    """One handler's buffer and delivery task (the asyncio twin of ``Listener``)."""

    def __init__(
        self, handler: ResourceEventHandler, resync_period: float, next_resync: float, name: str
    ) -> None:
        self.handler = handler  # an AsyncResourceEventHandler, typed as the processor's
        self.resync_period = resync_period
        self.next_resync = next_resync
        self._name = name
        self._buffer: deque[Notification] = deque()
        self._ready = asyncio.Event()
        self._pending_initial = 0
        self._closed = False
        self._task: asyncio.Task[None] | None = None

    def add(self, notifications: list[Notification]) -> None:
        """Buffer notifications, in order; never waits on the handler."""
        if self._closed:
            return
        self._buffer.extend(notifications)
        self._pending_initial += initial_adds(notifications)
        self._ready.set()

    def pending_initial(self) -> int:
        return self._pending_initial

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=self._name)

    def stop(self) -> None:
        """Stop delivering (pending notifications are dropped) and cancel the task."""
        self._closed = True
        self._buffer.clear()
        if self._task is not None:
            self._task.cancel()

    async def _run(self) -> None:
        handler: AsyncResourceEventHandler = cast(AsyncResourceEventHandler, self.handler)
        buffer = self._buffer
        calls_this_step = 0
        while not self._closed:
            await self._ready.wait()
            self._ready.clear()
            while buffer and not self._closed:
                method, calls, initial = handler_calls(handler, buffer.popleft())
                for args in calls:
                    if self._closed:
                        return
                    try:
                        result = method(*args)
                        # awaited only for a coroutine handler: a plain one costs no coroutine
                        if result is not None and inspect.isawaitable(result):
                            await result
                    except Exception as err:
                        _log.error(
                            "%s: event handler %r failed", self._name, handler, exc_info=err
                        )
                    if initial:
                        self._pending_initial -= 1
                    calls_this_step += 1
                    if calls_this_step == _CALLS_PER_STEP:  # a relist's adds: many steps
                        calls_this_step = 0
                        await asyncio.sleep(0)


class AsyncResourceEventHandler(Protocol):
    """A handler whose methods may be coroutine functions (or plain ones)."""

    def on_add(self, obj: Any, is_in_initial_list: bool) -> Awaitable[None] | None: ...

    def on_update(self, old: Any, new: Any) -> Awaitable[None] | None: ...

    def on_delete(self, obj: Any) -> Awaitable[None] | None: ...


@dataclass(frozen=True, slots=True)
class AsyncResourceEventHandlerFuncs:
    """A handler from functions, plain or ``async def``; a missing one ignores that event."""

    add_func: Callable[[Any], Awaitable[None] | None] | None = None
    update_func: Callable[[Any, Any], Awaitable[None] | None] | None = None
    delete_func: Callable[[Any], Awaitable[None] | None] | None = None

    def on_add(self, obj: Any, is_in_initial_list: bool) -> Awaitable[None] | None:
        return self.add_func(obj) if self.add_func is not None else None

    def on_update(self, old: Any, new: Any) -> Awaitable[None] | None:
        return self.update_func(old, new) if self.update_func is not None else None

    def on_delete(self, obj: Any) -> Awaitable[None] | None:
        return self.delete_func(obj) if self.delete_func is not None else None


class _NotifyingFIFO:
    """The reflector's store: the shared ``RealFIFO``, waking the delta task on each write."""

    def __init__(self, fifo: RealFIFO, ready: asyncio.Event) -> None:
        self._fifo = fifo
        self._ready = ready

    def add(self, obj: Any) -> None:
        self._fifo.add(obj)
        self._ready.set()

    def update(self, obj: Any) -> None:
        self._fifo.update(obj)
        self._ready.set()

    def delete(self, obj: Any) -> None:
        self._fifo.delete(obj)
        self._ready.set()

    def replace(self, objects: Iterable[Any], resource_version: str = "") -> None:
        self._fifo.replace(objects, resource_version)
        self._ready.set()

    def resync(self) -> None:
        self._fifo.resync()
        self._ready.set()


class AsyncSharedIndexInformer(Generic[T]):
    """List+watch cache with an indexer and sync or async event handlers, as tasks.

    Arguments as for :class:`~kgen_runtime.cache.SharedIndexInformer`, with an async
    lister-watcher and an :class:`AsyncClock`.
    """

    def __init__(
        self,
        lister_watcher: AsyncListerWatcher[T],
        *,
        resync_period: float = 0.0,
        indexers: Mapping[str, IndexFunc] | None = None,
        name: str = "informer",
        clock: AsyncClock = ASYNC_REAL_CLOCK,
        reflector_options: ReflectorOptions | None = None,
    ) -> None:
        self.name = name
        self._lw = lister_watcher
        self._default_resync = resync_period
        self._resync_check_period = resync_period
        self._clock = clock
        self._reflector_options = reflector_options
        self._indexer: Indexer[T] = Indexer(
            meta_namespace_key_func,
            {NAMESPACE_INDEX: meta_namespace_index_func, **(indexers or {})},
        )
        self._processor = SharedProcessor(name, clock, listener_factory=AsyncListener)
        self._transform: TransformFunc | None = None
        self._watch_error_handler: AsyncWatchErrorHandler | None = None
        self._fifo: RealFIFO | None = None
        self._reflector: AsyncReflector[T] | None = None
        self._started = False
        self._stopped = False

    def set_transform(self, transform: TransformFunc | None) -> None:
        """Transform every object before it is cached (before :meth:`run`)."""
        self._ensure_not_started("set_transform")
        self._transform = transform

    def set_watch_error_handler(self, handler: AsyncWatchErrorHandler) -> None:
        """Called with every error that makes the reflector relist (before :meth:`run`)."""
        self._ensure_not_started("set_watch_error_handler")
        self._watch_error_handler = handler

    def add_event_handler(
        self,
        on_add: Callable[[T], Awaitable[None] | None] | None = None,
        on_update: Callable[[T, T], Awaitable[None] | None] | None = None,
        on_delete: Callable[[Any], Awaitable[None] | None] | None = None,
        *,
        resync_period: float | None = None,
    ) -> ResourceEventHandlerRegistration:
        """Register handler functions, plain or ``async def`` (see :meth:`add_handler`)."""
        return self.add_handler(
            AsyncResourceEventHandlerFuncs(on_add, on_update, on_delete),
            resync_period=resync_period,
        )

    def add_handler(
        self,
        handler: AsyncResourceEventHandler | ResourceEventHandler,
        *,
        resync_period: float | None = None,
    ) -> ResourceEventHandlerRegistration:
        """Register a handler object with its own task (resync periods as for the blocking
        informer); a handler added while running first gets every cached object as an add.

        Raises:
            RuntimeError: the informer has stopped.
        """
        period = self._default_resync if resync_period is None else resync_period
        if 0 < period < MINIMUM_RESYNC_PERIOD:
            period = MINIMUM_RESYNC_PERIOD
        if self._stopped:
            raise RuntimeError(f"{self.name}: cannot add a handler, the informer has stopped")
        if not self._started:
            if period > 0 and (
                self._resync_check_period <= 0 or period < self._resync_check_period
            ):
                self._resync_check_period = period
            return ResourceEventHandlerRegistration(
                self, self._processor.add_listener(cast(ResourceEventHandler, handler), period)
            )
        if 0 < period < self._resync_check_period:
            period = self._resync_check_period
        listener = self._processor.add_listener(cast(ResourceEventHandler, handler), period)
        listener.add([AddAllNotification(self._indexer.list(), True)])
        return ResourceEventHandlerRegistration(self, listener)

    def remove_event_handler(self, registration: ResourceEventHandlerRegistration) -> None:
        """Unregister a handler and cancel its task (undelivered notifications are dropped)."""
        self._processor.remove_listener(registration._listener)

    @property
    def indexer(self) -> Indexer[T]:
        """The cache. Objects in it are shared: read-only. Reads never await."""
        return self._indexer

    def get_store(self) -> Indexer[T]:
        """The cache (client-go's ``GetStore``); the same object as :attr:`indexer`."""
        return self._indexer

    def get_indexer(self) -> Indexer[T]:
        """The cache (client-go's ``GetIndexer``); the same object as :attr:`indexer`."""
        return self._indexer

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add index functions; allowed at any time (existing objects are indexed at once)."""
        self._indexer.add_indexers(indexers)

    def has_synced(self) -> bool:
        """True once the first list has been applied to the cache and handed to handlers."""
        fifo = self._fifo
        return fifo is not None and fifo.has_synced()

    @property
    def is_stopped(self) -> bool:
        """True once :meth:`run` has ended (its task cancelled)."""
        return self._stopped

    @property
    def last_sync_resource_version(self) -> str:
        reflector = self._reflector
        return reflector.last_sync_resource_version if reflector is not None else ""

    async def run(self) -> None:
        """List, watch and notify until the task is cancelled; then cancel every task.

        Raises:
            RuntimeError: the informer was already started.
        """
        if self._started:
            raise RuntimeError(f"{self.name}: the informer was already started")
        self._started = True
        ready = asyncio.Event()
        fifo = informer_fifo(self._indexer, self._transform)
        reflector: AsyncReflector[T] = AsyncReflector(
            self._lw,
            _NotifyingFIFO(fifo, ready),
            name=self.name,
            resync_period=self._resync_check_period,
            should_resync=self._processor.should_resync,
            watch_error_handler=self._watch_error_handler,
            options=self._reflector_options,
            clock=self._clock,
        )
        self._fifo, self._reflector = fifo, reflector
        self._processor.start()
        try:
            async with asyncio.TaskGroup() as tasks:
                tasks.create_task(reflector.run(), name=f"{self.name}-reflector")
                tasks.create_task(self._process_deltas(fifo, ready), name=f"{self.name}-deltas")
        finally:
            self._stopped = True
            fifo.close()
            self._processor.stop()

    async def _process_deltas(self, fifo: RealFIFO, ready: asyncio.Event) -> None:
        while True:
            await ready.wait()
            ready.clear()
            while len(fifo):  # never waits: this task is the only consumer
                fifo.pop_batch(self._handle_deltas)
                # a burst of events does not hold the loop in one step (a relist is one
                # item: its objects are filed in one step, as client-go's AtomicFIFO does)
                await asyncio.sleep(0)

    def _handle_deltas(self, batch: list[tuple[Delta, bool]]) -> None:
        self._processor.distribute(apply_deltas(self._indexer, batch, self.name))

    def _ensure_not_started(self, what: str) -> None:
        if self._started:
            raise RuntimeError(f"{self.name}: {what} must be called before the informer starts")
