"""Keeps a store in step with the server: client-go's ``Reflector``.

The loop, per round (:meth:`Reflector.list_and_watch`):

1. **List** in pages of ``page_size`` and ``replace`` the store with the result. The first
   list asks for resourceVersion ``"0"`` (any cached state will do), later ones for the last
   one seen (``NotOlderThan`` semantics); if the server says that version is gone (410 /
   ``Expired``) or newer than its own (504 "Too large resource version", after an etcd
   restore or on a lagging server), the list is repeated at once for the latest state
   (``""``). A continuation that expires mid-way falls back to one unpaged list.
   With ``use_watch_list``, a *streaming list* comes first instead: a watch with
   ``sendInitialEvents`` whose initial events, up to the bookmark annotated
   ``k8s.io/initial-events-end``, replace the store, and which then goes on as the watch of
   step 2. If the server refuses it, reports an error, or the stream ends early, the paged
   list is used after all (from ``""`` when the error said the version is gone or too
   large).
2. **Watch** from the list's resourceVersion with bookmarks, a randomised server-side timeout
   (``min_watch_timeout`` to twice that, 5 to 10 minutes by default, so that many clients do
   not reconnect in step) and a client-side read timeout: if no event — not even a bookmark —
   arrives for ``watch_read_timeout`` seconds, the stream is taken to be stalled, closed, and
   the watch re-opened. Each event goes to the store and advances
   ``last_sync_resource_version``.
3. A watch that **ends** (server timeout, dropped connection, a stream that breaks with
   ``ConnectionError``/``TimeoutError``) is re-opened from the last seen resourceVersion:
   nothing is missed and nothing repeated. A watch that ends within a second
   with no event, an ``ERROR`` event (including 410 Gone), or a watch request that fails
   ends the round, and the next round relists. 429 and refused connections on opening a watch
   are retried without a relist. A ``RelistRequiredError`` from the lister-watcher (its
   data changed, e.g. a sharded informer's ranges) relists at once, without backoff.

Between rounds the loop waits an :class:`ExponentialBackoff` delay (0.8 s doubling to 30 s,
reset after 2 minutes of health; see :class:`ReflectorOptions`). Errors that end a round go
to ``watch_error_handler`` (client-go's ``WatchErrorHandler``; the default logs them). While
a watch is open, the store's ``resync()`` is called every ``resync_period`` seconds if
``should_resync()`` says so.

Each list and each watch is recorded in the ``reflector_*`` metrics (see
:class:`ReflectorMetrics`).

Threads: :meth:`run` blocks its caller until ``stop`` is set; it runs the loop in a worker
thread, a watchdog for the read timeout and, if resyncing, a resync thread, and joins them all
before returning. They are daemon threads, so a process that exits without setting ``stop``
is not kept alive by them. A list request in flight is not interrupted (its transport timeout
bounds it); an open watch is stopped at once. The store must be thread-safe (it is called
from the loop and the resync thread).
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from kgen_runtime.cache._backoff import ExponentialBackoff
from kgen_runtime.cache._listwatch import ListerWatcher
from kgen_runtime.cache._metrics import REFLECTOR_METRICS, ReflectorMetrics
from kgen_runtime.cache._reflector_state import (
    InitialEventsIncompleteError,
    ReflectorState,
    ReflectorStore,
    RelistRequiredError,
    resource_version_of,
)
from kgen_runtime.rest import cancel_on
from kgen_runtime.rest.errors import is_gone, is_too_many_requests
from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.util.runtime import handle_crash
from kgen_runtime.util.wait import backoff_until
from kgen_runtime.watch import Watcher

__all__ = [
    "Reflector",
    "ReflectorOptions",
    "ReflectorStore",
    "WatchErrorHandler",
]

_log = logging.getLogger("kgen_runtime.cache.reflector")

T = TypeVar("T")

WatchErrorHandler = Callable[["Reflector[Any]", BaseException], None]
"""Called with the reflector and the error that ended a list-and-watch round."""


@dataclass(frozen=True, slots=True)
class ReflectorOptions:
    """How a reflector lists, watches and backs off; the defaults are client-go's.

    Attributes:
        page_size: Items per list page (0: no paging).
        min_watch_timeout: The server-side watch timeout is drawn from
            ``[min_watch_timeout, 2 * min_watch_timeout)`` seconds.
        watch_read_timeout: Seconds without any event (bookmarks included) after which an
            open watch is taken to be stalled and re-opened.
        initial_backoff: First delay between failed rounds; doubles up to ``max_backoff``.
        max_backoff: Longest delay between rounds.
        backoff_reset: Seconds of health after which the delay starts over.
        backoff_jitter: Up to this fraction of each delay is added at random.
        rng: Source of the randomness (watch timeouts, jitter); seed it for reproducibility.
        use_watch_list: Get the initial state as a *streaming list* (a watch with
            ``sendInitialEvents``; client-go's ``WatchListClient``) instead of paged lists,
            falling back to a list if the server does not finish the stream.
        freeze_initial_list: After the first list, move every object then alive (the
            decoded cache included) to the cyclic collector's permanent generation
            (``gc.freeze``), so full collections stop re-scanning the cache: one took
            1.5 s with 50,000 typed Foos cached, 0 ms after (bench/README.md). The freeze is
            process-wide: garbage cycles alive at that moment are never collected, and
            objects of other code are exempted too; hence opt-in, meant for controllers
            whose heap is mostly their caches. Without it, every list's objects still
            skip the young generations (promoted straight to the oldest, where garbage
            cycles are collected as usual), so only full collections walk the cache.
    """

    page_size: int = 500
    min_watch_timeout: float = 300.0
    watch_read_timeout: float = 120.0
    initial_backoff: float = 0.8
    max_backoff: float = 30.0
    backoff_reset: float = 120.0
    backoff_jitter: float = 1.0
    rng: random.Random | None = None
    use_watch_list: bool = False
    freeze_initial_list: bool = False


def default_watch_error_handler(reflector: Reflector[Any], error: BaseException) -> None:
    """Log the error: ``Gone`` (an expected relist) at INFO, anything else at WARNING."""
    level = logging.INFO if is_gone(error) else logging.WARNING
    _log.log(level, "%s: list-and-watch ended: %s", reflector.name, error)


class _Watchdog:
    """Stops the current watch if no event arrived for ``timeout`` seconds of clock time."""

    def __init__(self, clock: Clock, timeout: float) -> None:
        self._clock = clock
        self._timeout = timeout
        self._cond = threading.Condition()
        self._watcher: Watcher[Any] | None = None
        self._last_event = 0.0
        self._stalled = False
        self._closed = False

    def arm(self, watcher: Watcher[Any]) -> None:
        with self._cond:
            self._watcher = watcher
            self._stalled = False
            self._last_event = self._clock.now()
            self._cond.notify_all()

    def kick(self) -> None:
        """Note that an event arrived (cheap: no lock, no wake-up)."""
        self._last_event = self._clock.now()

    def disarm(self) -> bool:
        """Forget the watch; return whether it was stopped for stalling."""
        with self._cond:
            self._watcher = None
            return self._stalled

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def run(self) -> None:
        with self._cond:
            while not self._closed:
                watcher = self._watcher
                if watcher is None:
                    self._clock.wait_until(self._cond, None)
                    continue
                deadline = self._last_event + self._timeout
                if self._clock.now() < deadline:
                    self._clock.wait_until(self._cond, deadline)
                    continue
                self._stalled = True
                self._watcher = None
                watcher.stop()


class Reflector(Generic[T]):
    """Lists and watches one collection into a store (see the module docstring).

    ``last_sync_resource_version`` may be read from any thread.
    """

    def __init__(
        self,
        lister_watcher: ListerWatcher[T],
        store: ReflectorStore,
        *,
        name: str = "reflector",
        resync_period: float = 0.0,
        should_resync: Callable[[], bool] | None = None,
        options: ReflectorOptions | None = None,
        watch_error_handler: WatchErrorHandler | None = None,
        metrics: ReflectorMetrics = REFLECTOR_METRICS,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        opts = options or ReflectorOptions()
        self.name = name
        self._lw = lister_watcher
        self._store = store
        self._resync_period = resync_period
        self._should_resync = should_resync or (lambda: True)
        self._watch_read_timeout = opts.watch_read_timeout
        self._use_watch_list = opts.use_watch_list
        self._on_error = watch_error_handler or default_watch_error_handler
        self._clock = clock
        self._rng = opts.rng or random.Random()
        self._backoff = ExponentialBackoff(
            opts.initial_backoff,
            opts.max_backoff,
            opts.backoff_reset,
            jitter=opts.backoff_jitter,
            clock=clock,
            rng=self._rng,
        )
        self._state: ReflectorState[T] = ReflectorState(
            name,
            store,
            page_size=opts.page_size,
            min_watch_timeout=opts.min_watch_timeout,
            rng=self._rng,
            metrics=metrics,
            clock=clock,
            freeze_initial_list=opts.freeze_initial_list,
        )
        self._lock = threading.Lock()
        self._watcher: Watcher[T] | None = None
        self._watchdog = _Watchdog(clock, opts.watch_read_timeout)

    @property
    def last_sync_resource_version(self) -> str:
        """The resourceVersion of the last list or event applied to the store."""
        return self._state.last_sync_rv

    def set_watch_error_handler(self, handler: WatchErrorHandler) -> None:
        """Replace the hook called when a round ends with an error (before :meth:`run`)."""
        self._on_error = handler

    # --- running -----------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Run rounds until ``stop`` is set, then stop everything and return (blocks)."""
        self._watchdog = _Watchdog(self._clock, self._watch_read_timeout)
        watchdog = threading.Thread(
            target=self._watchdog.run, name=f"{self.name}-watchdog", daemon=True
        )
        worker = threading.Thread(target=self._loop, args=(stop,), name=self.name, daemon=True)
        watchdog.start()
        worker.start()
        stop.wait()
        with self._lock:
            if self._watcher is not None:
                self._watcher.stop()
        worker.join()
        self._watchdog.close()
        watchdog.join()

    def _loop(self, stop: threading.Event) -> None:
        # Requests give up their retry and throttling waits once stop is set, so a reflector
        # talking to an unreachable server still stops promptly.
        with cancel_on(stop):
            backoff_until(lambda: self._round(stop), self._backoff, stop, clock=self._clock)

    def _round(self, stop: threading.Event) -> None:
        try:
            while True:
                try:
                    self.list_and_watch(stop)
                    return
                except RelistRequiredError as request:
                    if stop.is_set():
                        return
                    _log.info("%s: %s; listing again", self.name, request)
        except Exception as err:
            if not stop.is_set():
                self._on_error(self, err)

    def list_and_watch(self, stop: threading.Event) -> None:
        """One round: list, then watch until the watch must be abandoned or ``stop`` is set.

        Raises:
            Exception: the error that ended the round (the caller backs off and relists).
        """
        first = self._open_watch_list(stop) if self._use_watch_list else None
        if first is None:
            self._list_gc_paused()
        if stop.is_set():
            if first is not None:
                first.stop()
            return
        resync_stop = threading.Event()
        resyncer = None
        if self._resync_period > 0:
            resyncer = threading.Thread(
                target=self._resync_loop,
                args=(stop, resync_stop),
                name=f"{self.name}-resync",
                daemon=True,
            )
            resyncer.start()
        try:
            if first is not None:
                try:
                    self._handle_watch(first, stop, watch_list=True)
                except InitialEventsIncompleteError as err:
                    _log.warning("%s: %s; falling back to a list", self.name, err)
                    self._list_gc_paused()
            self._watch_loop(stop)
        finally:
            resync_stop.set()
            if resyncer is not None:
                resyncer.join()

    def _open_watch_list(self, stop: threading.Event) -> Watcher[T] | None:
        """Open a streaming list; ``None`` (after logging why) if the server refuses it."""
        try:
            return self._lw.watch(self._state.watch_list_options())
        except Exception as err:
            self._state.watch_list_refused(err)
            if not stop.is_set():
                _log.warning(
                    "%s: streaming list refused (%s), falling back to a list", self.name, err
                )
            return None

    # --- list ----------------------------------------------------------------------------

    def _list_gc_paused(self) -> None:
        """:meth:`_list` with the cyclic GC paused (see ``ReflectorState.gc_paused_list``)."""
        with self._state.gc_paused_list():
            self._list()

    def _list(self) -> None:
        state = self._state
        rv = state.list_started()
        try:
            items, list_rv = self._paged_list(rv)
        except Exception as err:
            if not state.relist_after(err, rv):
                raise
            items, list_rv = self._paged_list("")
        state.listed(items, list_rv)

    def _paged_list(self, rv: str) -> tuple[list[T], str]:
        items: list[T] = []
        options = self._state.first_page(rv)
        while True:
            try:
                page = self._lw.list(options)
            except Exception as err:
                if not (is_gone(err) and options.continue_):
                    raise
                page = self._lw.list(self._state.unpaged(rv))
                return list(page.items), resource_version_of(page)
            items.extend(page.items)
            token = page.metadata.continue_ if page.metadata is not None else None
            if not token:
                return items, resource_version_of(page)
            options = self._state.next_page(token)

    # --- watch ---------------------------------------------------------------------------

    def _watch_loop(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                watcher = self._lw.watch(self._state.watch_options())
            except Exception as err:
                if stop.is_set():
                    return
                if is_too_many_requests(err) or isinstance(err, ConnectionRefusedError):
                    _log.info("%s: watch refused (%s), backing off", self.name, err)
                    if self._clock.sleep(stop, self._backoff.next_delay()):
                        return
                    continue
                raise
            self._handle_watch(watcher, stop)

    def _handle_watch(
        self, watcher: Watcher[T], stop: threading.Event, *, watch_list: bool = False
    ) -> None:
        """Apply a watch's events until it ends; with ``watch_list``, first collect the initial
        events and ``replace`` the store with them at the end-of-initial-events bookmark.

        Raises:
            InitialEventsIncompleteError: the stream ended before its initial events did.
            Exception: an ``ERROR`` event or a very short watch (the round must end).
        """
        initial: dict[str, Any] | None = {} if watch_list else None
        with self._lock:
            if stop.is_set():
                watcher.stop()
                return
            self._watcher = watcher
        self._watchdog.arm(watcher)
        self._state.watch_opened()
        count = 0
        broken: Exception | None = None
        try:
            for event in watcher:
                self._watchdog.kick()
                if stop.is_set():
                    break
                if initial is None:
                    self._state.apply(event)
                elif self._state.collect_initial(event, initial):
                    initial = None
                count += 1
        except (ConnectionError, TimeoutError) as err:
            broken = err  # the stream broke: resume from the last version, like an end
        finally:
            stalled = self._watchdog.disarm()
            with self._lock:
                self._watcher = None
            watcher.stop()
        if stop.is_set():
            return
        self._state.watch_ended(
            initial=initial,
            count=count,
            stalled=stalled,
            broken=broken,
            read_timeout=self._watch_read_timeout,
        )

    # --- resync --------------------------------------------------------------------------

    def _resync_loop(self, stop: threading.Event, resync_stop: threading.Event) -> None:
        while not self._clock.sleep(resync_stop, self._resync_period):
            if stop.is_set():
                return
            if self._should_resync():
                with handle_crash():
                    self._store.resync()
