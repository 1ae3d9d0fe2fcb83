"""A cache of one collection, kept current by list+watch, that notifies handlers of changes:
client-go's ``SharedIndexInformer``.

::

    ListerWatcher ─► Reflector ─► RealFIFO ─► (one thread) ─► Indexer
                                                         └─► SharedProcessor ─► handler threads

Contract (after ``tools/cache/shared_informer.go``):

* **Eventually consistent.** The indexer reflects the server as of
  ``last_sync_resource_version``; it may lag, never runs ahead, and converges after a relist.
* **Notifications per handler in cache order.** Every handler sees, for every object, the
  sequence of states the cache went through, in the order the watch delivered them (the
  in-order FIFO keeps the order across objects too). Consecutive states may be skipped only by
  a relist, which then delivers updates for changed objects and ``DeletedFinalStateUnknown``
  tombstones for objects deleted meanwhile.
* **Delete notifications** carry the last known object, or a tombstone (see above).
* **Resync** re-delivers every cached object as an ``on_update(obj, obj)`` to handlers whose
  own ``resync_period`` is due; other handlers do not see it.
* **Late handlers**: a handler added while the informer runs first receives every cached object
  as an add (``is_in_initial_list=True``), then the live notifications, with nothing missed or
  doubled in between; its registration's ``has_synced`` turns true once those adds were handled.
* **Shared objects.** The objects in the cache and in notifications are shared by every handler
  and lister: read-only; ``deepcopy()`` before changing one.
* **Threads.** :meth:`SharedIndexInformer.run` blocks until ``stop`` is set, then stops and
  joins every thread it started (reflector, delta processing, handler threads). All other
  methods are thread-safe.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any, Generic, Protocol, TypeVar

from kgen_runtime.cache._compact import share_fields_v1
from kgen_runtime.cache._fifo import (
    Delta,
    DeltaType,
    FIFOClosedError,
    RealFIFO,
    ReplacedAllInfo,
    TransformFunc,
)
from kgen_runtime.cache._listwatch import ListerWatcher
from kgen_runtime.cache._processor import (
    AddAllNotification,
    BufferingListener,
    DeleteNotification,
    Notification,
    ResourceEventHandler,
    ResourceEventHandlerFuncs,
    SharedProcessor,
    UpdateNotification,
    add_notification,
)
from kgen_runtime.cache._reflector import Reflector, ReflectorOptions, WatchErrorHandler
from kgen_runtime.cache._store import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    IndexFunc,
    meta_namespace_index_func,
    meta_namespace_key_func,
)
from kgen_runtime.meta._lazy import resource_version
from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.util.runtime import handle_error

__all__ = ["MINIMUM_RESYNC_PERIOD", "ResourceEventHandlerRegistration", "SharedIndexInformer"]

_log = logging.getLogger("kgen_runtime.cache.informer")

T = TypeVar("T")

MINIMUM_RESYNC_PERIOD = 1.0
"""Handler resync periods below this (and above zero) are raised to it, as in client-go."""


class _Informer(Protocol):
    def has_synced(self) -> bool: ...

    def remove_event_handler(self, registration: ResourceEventHandlerRegistration) -> None: ...


class ResourceEventHandlerRegistration:
    """The handle of one added handler: ask whether it has synced, or remove it."""

    def __init__(self, informer: _Informer, listener: BufferingListener) -> None:
        self._informer = informer
        self._listener = listener

    @property
    def handler(self) -> ResourceEventHandler:
        return self._listener.handler

    @property
    def resync_period(self) -> float:
        return self._listener.resync_period

    def has_synced(self) -> bool:
        """True once the informer synced and this handler has handled every initial add."""
        return self._informer.has_synced() and self._listener.pending_initial() == 0

    def remove(self) -> None:
        """Stop delivering to this handler (same as ``informer.remove_event_handler``)."""
        self._informer.remove_event_handler(self)


class SharedIndexInformer(Generic[T]):
    """List+watch cache with an indexer and event handlers (see the module docstring).

    ``resync_period`` is the default for handlers that give none (0: never resync).
    ``indexers`` are added to the built-in ``"namespace"`` index; ``reflector_options`` tune
    listing, watching and backoff (see :class:`ReflectorOptions`).
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher[T],
        *,
        resync_period: float = 0.0,
        indexers: Mapping[str, IndexFunc] | None = None,
        name: str = "informer",
        clock: Clock = REAL_CLOCK,
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
        self._processor = SharedProcessor(name, clock)
        self._transform: TransformFunc | None = None
        self._watch_error_handler: WatchErrorHandler | None = None
        # Held while a delta is applied and while a late handler is fed the cache, so the
        # handler's snapshot and the live notifications neither overlap nor leave a gap.
        self._deltas_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._fifo: RealFIFO | None = None
        self._reflector: Reflector[T] | None = None
        self._started = False
        self._stopped = False

    # --- configuration (before run) -----------------------------------------------------

    def set_transform(self, transform: TransformFunc | None) -> None:
        """Transform every object before it is cached (e.g. drop ``managed_fields``).

        Raises:
            RuntimeError: the informer has already started.
        """
        with self._state_lock:
            self._ensure_not_started("set_transform")
            self._transform = transform

    def set_watch_error_handler(self, handler: WatchErrorHandler) -> None:
        """Called with every error that makes the reflector relist (before :meth:`run`)."""
        with self._state_lock:
            self._ensure_not_started("set_watch_error_handler")
            self._watch_error_handler = handler

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add index functions; allowed at any time (existing objects are indexed at once)."""
        self._indexer.add_indexers(indexers)

    # --- handlers --------------------------------------------------------------------------

    def add_event_handler(
        self,
        on_add: Callable[[T], None] | None = None,
        on_update: Callable[[T, T], None] | None = None,
        on_delete: Callable[[Any], None] | None = None,
        *,
        resync_period: float | None = None,
    ) -> ResourceEventHandlerRegistration:
        """Register handler functions (see :meth:`add_handler`)."""
        return self.add_handler(
            ResourceEventHandlerFuncs(on_add, on_update, on_delete), resync_period=resync_period
        )

    def add_handler(
        self, handler: ResourceEventHandler, *, resync_period: float | None = None
    ) -> ResourceEventHandlerRegistration:
        """Register a handler object with its own listener thread.

        ``resync_period`` (seconds; default: the informer's) below one second is raised to it;
        once the informer runs it cannot be shorter than the informer's resync check period.

        Raises:
            RuntimeError: the informer has stopped.
        """
        period = self._default_resync if resync_period is None else resync_period
        if 0 < period < MINIMUM_RESYNC_PERIOD:
            _log.warning("%s: resync period %.3fs raised to %.0fs", self.name, period, 1.0)
            period = MINIMUM_RESYNC_PERIOD
        with self._state_lock:
            if self._stopped:
                raise RuntimeError(f"{self.name}: cannot add a handler, the informer has stopped")
            if not self._started:
                if period > 0 and (
                    self._resync_check_period <= 0 or period < self._resync_check_period
                ):
                    self._resync_check_period = period
                listener = self._processor.add_listener(handler, period)
                return ResourceEventHandlerRegistration(self, listener)
            if 0 < period < self._resync_check_period:
                period = self._resync_check_period
            with self._deltas_lock:
                listener = self._processor.add_listener(handler, period)
                listener.add([AddAllNotification(self._indexer.list(), True)])
            return ResourceEventHandlerRegistration(self, listener)

    def remove_event_handler(self, registration: ResourceEventHandlerRegistration) -> None:
        """Unregister a handler and stop its thread (undelivered notifications are dropped)."""
        self._processor.remove_listener(registration._listener)

    # --- reading -------------------------------------------------------------------------

    @property
    def indexer(self) -> Indexer[T]:
        """The cache. Objects in it are shared: read-only."""
        return self._indexer

    def get_store(self) -> Indexer[T]:
        return self._indexer

    def get_indexer(self) -> Indexer[T]:
        return self._indexer

    def has_synced(self) -> bool:
        """True once the first list has been applied to the cache and handed to handlers."""
        fifo = self._fifo
        return fifo is not None and fifo.has_synced()

    @property
    def last_sync_resource_version(self) -> str:
        reflector = self._reflector
        return reflector.last_sync_resource_version if reflector is not None else ""

    @property
    def is_stopped(self) -> bool:
        with self._state_lock:
            return self._stopped

    # --- running -------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """List, watch and notify until ``stop`` is set; then join every thread and return.

        Raises:
            RuntimeError: the informer was already started.
        """
        with self._state_lock:
            if self._started:
                raise RuntimeError(f"{self.name}: the informer was already started")
            self._started = True
            fifo = informer_fifo(self._indexer, self._transform)
            reflector: Reflector[T] = Reflector(
                self._lw,
                fifo,
                name=self.name,
                resync_period=self._resync_check_period,
                should_resync=self._processor.should_resync,
                watch_error_handler=self._watch_error_handler,
                options=self._reflector_options,
                clock=self._clock,
            )
            self._fifo, self._reflector = fifo, reflector
        self._processor.start()
        processing = threading.Thread(
            target=self._process_loop, args=(fifo,), name=f"{self.name}-deltas", daemon=True
        )
        processing.start()
        try:
            reflector.run(stop)
        finally:
            with self._state_lock:
                self._stopped = True
            fifo.close()
            processing.join()
            self._processor.stop()

    def _process_loop(self, fifo: RealFIFO) -> None:
        while True:
            try:
                fifo.pop_batch(self._handle_deltas)
            except FIFOClosedError:
                return

    def _handle_deltas(self, batch: list[tuple[Delta, bool]]) -> None:
        with self._deltas_lock:
            self._processor.distribute(apply_deltas(self._indexer, batch, self.name))

    def _ensure_not_started(self, what: str) -> None:
        if self._started:
            raise RuntimeError(f"{self.name}: {what} must be called before the informer starts")


def informer_fifo(indexer: Indexer[Any], transform: TransformFunc | None) -> RealFIFO:
    """The delta queue of an informer over ``indexer`` (shared with the asyncio twin).

    Objects from watch events share equal fieldsV1 trees (``share_fields_v1``): each one
    outlives the young collections and counts towards the next full one, whose walk of the
    cache the trees' dicts were a third of. Lists, paid once with the collector paused and
    their objects promoted, keep their trees (sharing them costs ~2.5 µs per Foo, mostly
    freeing the duplicates).
    """
    return RealFIFO(
        indexer,
        meta_namespace_key_func,
        transform,
        event_transform=share_fields_v1,
        atomic_events=True,
    )


def apply_deltas(
    indexer: Indexer[Any], batch: list[tuple[Delta, bool]], name: str
) -> list[tuple[Notification, bool]]:
    """Apply popped deltas to the cache in order (client-go's ``processDeltas``); the
    notifications they make, each with whether it is a resync (shared with the asyncio twin).

    A delta that fails (an object without a name, a failing index function) is logged and
    skipped; the rest of the batch still applies.
    """
    notifications: list[tuple[Notification, bool]] = []
    append = notifications.append
    for delta, is_in_initial_list in batch:
        if delta.type is _REPLACED_ALL:
            notifications += _apply_replaced_all(indexer, delta.object, is_in_initial_list, name)
            continue
        try:
            append(apply_delta(indexer, delta, is_in_initial_list))
        except Exception as err:
            handle_error(err, f"{name}: failed to apply a {delta.type} delta")
    return notifications


def _apply_replaced_all(
    indexer: Indexer[Any], info: ReplacedAllInfo, is_in_initial_list: bool, name: str
) -> list[tuple[Notification, bool]]:
    """Apply a relist in one step (client-go's ``processReplacedAllInfo``, the ``AtomicFIFO``
    gate): the cache swaps its content for the list's, so no reader sees half of it; then
    come a tombstone for each object gone from it and an add or update for each listed
    object, in the list's order. Adds in a row are one :class:`AddAllNotification`.

    If an index function fails on an object, the relist is applied object by object instead,
    as separate deltas: that object is logged and skipped, the rest applies.
    """
    items = dict(zip(info.keys, info.objects, strict=True))
    try:
        replaced = indexer.replace_by_keys(items)
    except Exception as err:
        handle_error(err, f"{name}: failed to apply a relist in one step; applying each object")
        return apply_deltas(indexer, _relist_deltas(indexer, info, is_in_initial_list), name)
    notifications: list[tuple[Notification, bool]] = [
        (DeleteNotification(DeletedFinalStateUnknown(key, old)), False)
        for key, old in replaced.items()
        if key not in items
    ]
    if not replaced:  # into an empty cache (the first list): adds only
        notifications.append((AddAllNotification(info.objects, is_in_initial_list), False))
        return notifications
    adds: list[Any] = []
    for key, obj in zip(info.keys, info.objects, strict=True):
        old = replaced.get(key)
        if old is None:
            adds.append(obj)
            continue
        if adds:
            notifications.append((AddAllNotification(adds, is_in_initial_list), False))
            adds = []
        # An unchanged resourceVersion is a resync: only handlers due one hear of it.
        is_resync = resource_version(old) == resource_version(obj)
        notifications.append((UpdateNotification(old, obj), is_resync))
    if adds:
        notifications.append((AddAllNotification(adds, is_in_initial_list), False))
    return notifications


def _relist_deltas(
    indexer: Indexer[Any], info: ReplacedAllInfo, is_in_initial_list: bool
) -> list[tuple[Delta, bool]]:
    """A relist as the separate deltas a non-atomic queue would have queued: a ``Deleted``
    tombstone per cached object gone from it, then a ``Replaced`` delta per listed object."""
    listed = set(info.keys)
    deltas = [
        (Delta(DeltaType.DELETED, DeletedFinalStateUnknown(key, old), key), is_in_initial_list)
        for key in indexer.list_keys()
        if key not in listed and (old := indexer.get_by_key(key)) is not None
    ]
    deltas += [
        (Delta(DeltaType.REPLACED, obj, key), is_in_initial_list)
        for key, obj in zip(info.keys, info.objects, strict=True)
    ]
    return deltas


def apply_delta(
    indexer: Indexer[Any], delta: Delta, is_in_initial_list: bool
) -> tuple[Notification, bool]:
    """Apply one delta to the cache; the notification it makes, and whether it is a resync
    (shared with the asyncio twin, ``AsyncSharedIndexInformer``)."""
    obj = delta.object
    key = delta.key or indexer.key_func(obj)  # the FIFO's key: the informer's key function
    if delta.type is _DELETED:
        indexer.delete_by_key(key)
        return DeleteNotification(obj), False
    old = indexer.put_by_key(key, obj)
    if old is None:
        return add_notification(obj, is_in_initial_list), False
    # An unchanged resourceVersion (Sync, or Replaced with no change) is a resync: only
    # handlers due a resync hear of it.
    return UpdateNotification(old, obj), resource_version(old) == resource_version(obj)


#: Members read once: an enum member read from its class costs ~0.1 µs (3.11).
_DELETED = DeltaType.DELETED
_REPLACED_ALL = DeltaType.REPLACED_ALL
