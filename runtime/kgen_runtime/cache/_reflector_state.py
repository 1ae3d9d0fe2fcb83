"""What a reflector decides without doing I/O, shared by the blocking and the async one.

:class:`~kgen_runtime.cache.Reflector` (threads) and :class:`~kgen_runtime.cache.AsyncReflector`
(asyncio) both keep a :class:`ReflectorState`: which resourceVersion to list and watch from,
the options of each list page and watch, when to relist from the latest state (410 Gone,
504 "Too large resource version"), how an event changes the store, how a streaming list's
initial events are gathered, what the end of a watch means (go on, or end the round), and the
``reflector_*`` metrics of every list and watch. Each reflector only adds its own way of
waiting, so their client-go semantics (see the ``_reflector`` module docstring) cannot drift
apart.
"""

from __future__ import annotations

import gc
import logging
import random
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Generic, Protocol, TypeVar

from kgen_runtime.cache._metrics import ReflectorMetrics
from kgen_runtime.cache._store import meta_namespace_key_func
from kgen_runtime.meta import Status
from kgen_runtime.meta._lazy import resource_version
from kgen_runtime.meta._memory import no_gc, promote_to_oldest_generation
from kgen_runtime.rest.errors import (
    ApiError,
    api_error_from_status,
    is_gone,
    is_too_large_resource_version,
)
from kgen_runtime.rest.options import ListOptions
from kgen_runtime.util.clock import TimeSource
from kgen_runtime.watch import WatchEvent

__all__ = [
    "INITIAL_EVENTS_END",
    "InitialEventsIncompleteError",
    "ReflectorState",
    "ReflectorStore",
    "RelistRequiredError",
    "UnexpectedWatchObjectError",
    "resource_version_of",
    "rv_unavailable",
]

_log = logging.getLogger("kgen_runtime.cache.reflector")

T = TypeVar("T")

#: A watch shorter than this that delivered nothing counts as a failure (client-go's rule).
SHORT_WATCH_SECONDS = 1.0

#: The annotation of the bookmark that ends a streaming list's initial events.
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


class ReflectorStore(Protocol):
    """What the reflector writes to: a :class:`RealFIFO` or an :class:`Indexer`."""

    def add(self, obj: Any) -> None: ...

    def update(self, obj: Any) -> None: ...

    def delete(self, obj: Any) -> None: ...

    def replace(self, objects: Iterable[Any], resource_version: str = "") -> None: ...

    def resync(self) -> None: ...


class InitialEventsIncompleteError(Exception):
    """A streaming list ended before the bookmark that marks the end of its initial events."""


class RelistRequiredError(Exception):
    """Raised by a lister-watcher (from ``watch`` or while a watch is iterated) when what it
    serves changed, e.g. a sharded informer's ranges: the reflector lists again at once,
    without backoff and without calling the watch error handler, and the list's ``replace``
    drops what is no longer served."""


class UnexpectedWatchObjectError(Exception):
    """A watch ``ERROR`` event whose object is not a Status (apimachinery's
    ``UnexpectedObjectError``): the round ends and the reflector lists again."""


def status_error(status: Any) -> Exception:
    """The typed error for a watch ``ERROR`` event's Status (a model or a wire dict), or an
    :class:`UnexpectedWatchObjectError` naming what came instead of one."""
    if isinstance(status, ApiError):
        return status
    wire = status if isinstance(status, Mapping) else (
        status.model_dump(by_alias=True, exclude_none=True) if hasattr(status, "model_dump")
        else None)
    if not isinstance(wire, Mapping) or not (
            wire.get("kind") == "Status" or wire.get("code") or wire.get("reason")):
        return UnexpectedWatchObjectError(
            f"unexpected object in a watch ERROR event: {wire if wire is not None else status!r}")
    return api_error_from_status(status if isinstance(status, Status) else wire)


def rv_unavailable(error: BaseException) -> bool:
    """The resourceVersion asked for cannot be served: gone, or newer than the server's."""
    return is_gone(error) or is_too_large_resource_version(error)


def resource_version_of(page: Any) -> str:
    """The resourceVersion of a list page (``""`` without metadata)."""
    meta = page.metadata
    return (meta.resource_version or "") if meta is not None else ""


class ReflectorState(Generic[T]):
    """The resourceVersion bookkeeping and event handling of one reflector.

    Args:
        name: For log messages.
        store: Where lists and events go.
        page_size: Items per list page (0: no paging).
        min_watch_timeout: Server-side watch timeouts are drawn from
            ``[min_watch_timeout, 2 * min_watch_timeout)`` seconds.
        rng: Randomness of the watch timeouts.
        metrics: Where each list and watch is recorded.
        clock: The reflector's time source, for the durations of lists and watches.
        freeze_initial_list: ``gc.freeze()`` after the first list (``ReflectorOptions``).
    """

    def __init__(
        self,
        name: str,
        store: ReflectorStore,
        *,
        page_size: int,
        min_watch_timeout: float,
        rng: random.Random,
        metrics: ReflectorMetrics,
        clock: TimeSource,
        freeze_initial_list: bool = False,
    ) -> None:
        self.name = name
        self.store = store
        self.last_sync_rv = ""
        self._rv_unavailable = False
        self._page_size = page_size
        self._min_watch_timeout = min_watch_timeout
        self._rng = rng
        self._metrics = metrics
        self._clock = clock
        self._list_started = 0.0
        self._freeze_after_list = freeze_initial_list
        self._watch_started = 0.0

    # --- list ----------------------------------------------------------------------------

    @contextmanager
    def gc_paused_list(self) -> Iterator[None]:
        """Around a whole list: the cyclic GC paused throughout (between pages it would
        re-scan the growing list and the cache again and again, which made a 50,000-object
        sync grow faster than linearly); after the first list that succeeds, the heap frozen
        if ``freeze_initial_list`` asked for it, else after every list that succeeds, the
        objects it decoded promoted straight to the oldest generation (the young collections
        would otherwise walk all of them twice on their way there)."""
        with no_gc():
            yield
            if self._freeze_after_list:
                self._freeze_after_list = False
                gc.freeze()
            else:
                promote_to_oldest_generation()

    def list_started(self) -> str:
        """A list begins (its duration is measured from now); the resourceVersion to list
        from: ``"0"`` first (any cached state), then the last seen one; ``""`` after the
        server said that one is gone or too large."""
        self._list_started = self._clock.now()
        if self._rv_unavailable:
            return ""
        return self.last_sync_rv or "0"

    def relist_after(self, error: BaseException, rv: str) -> bool:
        """A list from ``rv`` failed with ``error``: whether to list again at once from
        ``""`` (410 Gone, or 504 "Too large resource version", unless ``rv`` was ``""``)."""
        if rv == "" or not rv_unavailable(error):
            return False
        _log.info("%s: resourceVersion %s is %s, listing the latest state", self.name, rv,
                  "gone" if is_gone(error) else "newer than the server's")
        self._rv_unavailable = True
        return True

    def first_page(self, rv: str) -> ListOptions:
        return ListOptions(resource_version=rv or None, limit=self._page_size or None)

    def next_page(self, token: str) -> ListOptions:
        return ListOptions(limit=self._page_size or None, continue_=token)

    def unpaged(self, rv: str) -> ListOptions:
        """After a continuation expired (410 on a later page): one list without paging."""
        _log.info("%s: list continuation expired, listing without paging", self.name)
        return ListOptions(resource_version=rv or None)

    def listed(self, items: list[T], rv: str) -> None:
        """A whole list arrived: replace the store with it, and record it."""
        self._rv_unavailable = False
        self.store.replace(items, rv)
        self.last_sync_rv = rv
        seconds = self._clock.now() - self._list_started
        self._metrics.listed(self.name, seconds, len(items), rv)

    # --- watch ---------------------------------------------------------------------------

    def watch_options(self) -> ListOptions:
        return ListOptions(
            resource_version=self.last_sync_rv or None,
            timeout_seconds=self.watch_timeout(),
            allow_watch_bookmarks=True,
        )

    def watch_list_options(self) -> ListOptions:
        """A streaming list: a watch sending the initial state, then the end bookmark (from
        the latest state if the last one was gone or too large)."""
        return ListOptions(
            resource_version=(None if self._rv_unavailable else self.last_sync_rv) or None,
            resource_version_match="NotOlderThan",
            send_initial_events=True,
            allow_watch_bookmarks=True,
            timeout_seconds=self.watch_timeout(),
        )

    def watch_list_refused(self, error: BaseException) -> None:
        """Opening a streaming list failed with ``error`` (the reflector lists instead)."""
        if rv_unavailable(error):
            self._rv_unavailable = True

    def watch_timeout(self) -> int:
        return int(self._min_watch_timeout * (1.0 + self._rng.random()))

    def apply(self, event: WatchEvent[T]) -> None:
        """One watch event into the store; an ``ERROR`` event raises its error."""
        kind = event.type
        if kind == "ERROR":
            raise status_error(event.object)
        obj: Any = event.object
        if kind == "ADDED":
            self.store.add(obj)
        elif kind == "MODIFIED":
            self.store.update(obj)
        elif kind == "DELETED":
            self.store.delete(obj)
        elif kind != "BOOKMARK":
            _log.warning("%s: ignoring watch event of unknown type %r", self.name, kind)
            return
        rv = resource_version(obj)  # from the wire document of an untouched object
        if rv:
            self.last_sync_rv = rv

    def collect_initial(self, event: WatchEvent[T], initial: dict[str, Any]) -> bool:
        """Gather one initial event; at the end bookmark replace the store and return True."""
        obj: Any = event.object
        if event.type == "ERROR":
            error = status_error(obj)
            if rv_unavailable(error):
                self._rv_unavailable = True
            raise InitialEventsIncompleteError(f"the server ended it: {error}") from error
        if event.type == "BOOKMARK":
            annotations = obj.metadata.annotations or {}
            if annotations.get(INITIAL_EVENTS_END) != "true":
                return False
            rv = obj.metadata.resource_version or ""
            self.store.replace(list(initial.values()), rv)
            self.last_sync_rv = rv
            listed = self._clock.now() - self._watch_started
            self._metrics.listed(self.name, listed, len(initial), rv)
            return True
        key = meta_namespace_key_func(obj)
        if event.type == "DELETED":
            initial.pop(key, None)
        else:
            initial[key] = obj
        return False

    def watch_opened(self) -> None:
        """A watch (or streaming list) is open: its duration is measured from now."""
        self._watch_started = self._clock.now()

    def watch_ended(
        self,
        *,
        initial: dict[str, Any] | None,
        count: int,
        stalled: bool,
        broken: BaseException | None,
        read_timeout: float,
    ) -> None:
        """Record a watch that ended (not by stop) after ``count`` events, then judge it:
        return to re-open it from the last seen resourceVersion, or raise to end the round.

        Raises:
            InitialEventsIncompleteError: a streaming list ended before its initial events.
            ConnectionError: a very short watch (closed within a second, no event).
        """
        seconds = self._clock.now() - self._watch_started
        short = count == 0 and seconds < SHORT_WATCH_SECONDS
        self._metrics.watched(self.name, seconds, count, self.last_sync_rv, short=short)
        if initial is not None:
            reason = "stalled" if stalled else f"broke ({broken})" if broken else "ended"
            raise InitialEventsIncompleteError(
                f"the streaming list {reason} after {len(initial)} of its initial events"
            )
        if short:
            raise ConnectionError(
                "very short watch: the watch closed within a second without any event"
            ) from broken
        if stalled:
            _log.warning(
                "%s: watch stalled (no event for %.0fs), re-opening from resourceVersion %s",
                self.name,
                read_timeout,
                self.last_sync_rv,
            )
        elif broken is not None:
            _log.info(
                "%s: watch stream broke (%s), re-opening from resourceVersion %s",
                self.name,
                broken,
                self.last_sync_rv,
            )
