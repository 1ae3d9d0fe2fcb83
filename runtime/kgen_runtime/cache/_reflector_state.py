"""What a reflector decides without doing I/O, shared by the blocking and the async one.

:class:`~kgen_runtime.cache.Reflector` (threads) and :class:`~kgen_runtime.cache.AsyncReflector`
(asyncio) both keep a :class:`ReflectorState`: which resourceVersion to list and watch from,
the options of each list page and watch, how an event changes the store, how a streaming
list's initial events are gathered, and what the end of a watch means (go on, or end the
round). Each reflector only adds its own way of waiting, so their client-go semantics (see
the ``_reflector`` module docstring) cannot drift apart.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Mapping
from typing import Any, Generic, Protocol, TypeVar

from kgen_runtime.cache._store import meta_namespace_key_func
from kgen_runtime.meta import Status
from kgen_runtime.rest.errors import ApiError, api_error_from_status
from kgen_runtime.rest.options import ListOptions
from kgen_runtime.watch import WatchEvent

__all__ = [
    "INITIAL_EVENTS_END",
    "InitialEventsIncompleteError",
    "ReflectorState",
    "ReflectorStore",
    "resource_version_of",
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


def status_error(status: Any) -> ApiError:
    """The typed error for a watch ``ERROR`` event's Status (a model or a wire dict)."""
    if isinstance(status, ApiError):
        return status
    if isinstance(status, Status | Mapping):
        return api_error_from_status(status)
    return api_error_from_status(status.model_dump())


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
    """

    def __init__(
        self,
        name: str,
        store: ReflectorStore,
        *,
        page_size: int,
        min_watch_timeout: float,
        rng: random.Random,
    ) -> None:
        self.name = name
        self.store = store
        self.last_sync_rv = ""
        self._rv_unavailable = False
        self._page_size = page_size
        self._min_watch_timeout = min_watch_timeout
        self._rng = rng

    # --- list ----------------------------------------------------------------------------

    def relist_resource_version(self) -> str:
        """``"0"`` first (any cached state), then the last seen one; ``""`` after a 410."""
        if self._rv_unavailable:
            return ""
        return self.last_sync_rv or "0"

    def gone_on_list(self, rv: str) -> bool:
        """A list from ``rv`` got 410: whether to list again at once from ``""``."""
        if rv == "":
            return False
        _log.info("%s: resourceVersion %s is gone, listing the latest state", self.name, rv)
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
        """A whole list arrived: replace the store with it."""
        self._rv_unavailable = False
        self.store.replace(items, rv)
        self.last_sync_rv = rv

    # --- watch ---------------------------------------------------------------------------

    def watch_options(self) -> ListOptions:
        return ListOptions(
            resource_version=self.last_sync_rv or None,
            timeout_seconds=self.watch_timeout(),
            allow_watch_bookmarks=True,
        )

    def watch_list_options(self) -> ListOptions:
        """A streaming list: a watch sending the initial state, then the end bookmark."""
        return ListOptions(
            resource_version=self.last_sync_rv or None,
            resource_version_match="NotOlderThan",
            send_initial_events=True,
            allow_watch_bookmarks=True,
            timeout_seconds=self.watch_timeout(),
        )

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
        rv = obj.metadata.resource_version
        if rv:
            self.last_sync_rv = rv

    def collect_initial(self, event: WatchEvent[T], initial: dict[str, Any]) -> bool:
        """Gather one initial event; at the end bookmark replace the store and return True."""
        obj: Any = event.object
        if event.type == "ERROR":
            error = status_error(obj)
            raise InitialEventsIncompleteError(f"the server ended it: {error}") from error
        if event.type == "BOOKMARK":
            annotations = obj.metadata.annotations or {}
            if annotations.get(INITIAL_EVENTS_END) != "true":
                return False
            rv = obj.metadata.resource_version or ""
            self.store.replace(list(initial.values()), rv)
            self.last_sync_rv = rv
            return True
        key = meta_namespace_key_func(obj)
        if event.type == "DELETED":
            initial.pop(key, None)
        else:
            initial[key] = obj
        return False

    def watch_ended(
        self,
        *,
        initial: dict[str, Any] | None,
        count: int,
        seconds: float,
        stalled: bool,
        broken: BaseException | None,
        read_timeout: float,
    ) -> None:
        """Judge a watch that ended (not by stop): return to re-open it from the last seen
        resourceVersion, or raise to end the round.

        Raises:
            InitialEventsIncompleteError: a streaming list ended before its initial events.
            ConnectionError: a very short watch (closed within a second, no event).
        """
        if initial is not None:
            reason = "stalled" if stalled else f"broke ({broken})" if broken else "ended"
            raise InitialEventsIncompleteError(
                f"the streaming list {reason} after {len(initial)} of its initial events"
            )
        if count == 0 and seconds < SHORT_WATCH_SECONDS:
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
