"""One open watch on the store: a filtered, ordered queue of events (the apiserver's watcher).

The store offers every write event to every subscription under its lock, so a subscription
sees the writes in resourceVersion order with none missing. A subscription applies the
watch's namespace and selectors the way the apiserver does: a modification that makes an
object start matching is sent as ADDED, one that makes it stop matching as DELETED.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.storage._resources import ServedResource
from kgen_runtime.testing.apiserver.storage._selectors import WatchFilter
from kgen_runtime.util.clock import REAL_CLOCK, Clock

__all__ = ["StoreEvent", "Subscription", "WatchEnded"]

Obj = dict[str, Any]

INITIAL_EVENTS_END = "k8s.io/initial-events-end"


@dataclass(frozen=True, slots=True)
class StoreEvent:
    """One write: its resourceVersion, the object after it and (unless ADDED) before it."""

    rv: int
    group_resource: tuple[str, str]
    type: str
    object: Obj
    previous: Obj | None


class WatchEnded(Exception):
    """The stream is over: closed, dropped, timed out or ended after an ERROR event."""


class Subscription:
    """An open watch. ``next`` blocks for the next event; ``close`` ends it from any thread.

    Args:
        cond: The store's condition; every store write notifies it.
        current_rv: The store's current resourceVersion (read with the lock held), used for
            BOOKMARK events.
        bookmark_interval: With bookmarks allowed, seconds of silence before a BOOKMARK.
        timeout: Seconds after which the stream ends (``timeoutSeconds``).
        clock: Time of bookmarks, the deadline and read timeouts (``next``).
    """

    def __init__(
        self,
        cond: threading.Condition,
        info: ServedResource,
        where: WatchFilter,
        current_rv: Callable[[], int],
        *,
        bookmark_interval: float | None,
        timeout: float | None,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self._cond = cond
        self._info = info
        self._where = where
        self._current_rv = current_rv
        self._bookmark_interval = bookmark_interval
        self._clock = clock
        self._deadline = None if timeout is None else clock.now() + timeout
        self._queue: deque[tuple[str, Obj]] = deque()
        self._closed = False
        self._stalled = False
        self._ending = False
        self._after = 0
        self._next_bookmark = self._bookmark_due()
        self._on_close: list[Callable[[Subscription], None]] = []

    # -- fed by the store (lock held) ---------------------------------------------------------

    def add_initial(self, obj: Obj) -> None:
        if self._where.matches(obj):
            self._queue.append(("ADDED", self._info.present(obj)))

    def add_initial_events_end(self, rv: int) -> None:
        self._queue.append(("BOOKMARK", self._bookmark(rv, initial_events_end=True)))

    def fail(self, error: StatusError) -> None:
        """Queue an ERROR event carrying ``error``'s Status; the stream ends after it."""
        self._queue.append(("ERROR", error.status()))
        self._ending = True

    def start_after(self, rv: int) -> None:
        """Deliver only events newer than ``rv`` (a watch from a resourceVersion)."""
        self._after = rv

    def offer(self, event: StoreEvent) -> None:
        if (event.group_resource != (self._info.group, self._info.plural) or self._ending
                or self._stalled or event.rv <= self._after):
            return
        now = self._where.matches(event.object) and event.type != "DELETED"
        before = event.previous is not None and self._where.matches(event.previous)
        if event.type == "DELETED":
            kind = "DELETED" if before else ""
        elif now:
            kind = "MODIFIED" if before else "ADDED"
        else:
            kind = "DELETED" if before else ""
        if kind:
            self._queue.append((kind, self._info.present(event.object)))

    # -- read by the stream -------------------------------------------------------------------

    def next(self, timeout: float | None = None) -> tuple[str, Obj] | None:
        """The next ``(type, object)``; ``None`` if ``timeout`` seconds pass without one.

        Raises:
            WatchEnded: once the stream is closed, past its deadline, or drained after an
                ERROR event.
        """
        give_up = None if timeout is None else self._clock.now() + timeout
        with self._cond:
            while True:
                now = self._clock.now()
                deadline = None if self._stalled else self._deadline
                if self._closed or (deadline is not None and now >= deadline):
                    raise WatchEnded
                if not self._stalled:
                    if self._queue:
                        self._next_bookmark = self._bookmark_due()
                        return self._queue.popleft()
                    if self._ending:
                        raise WatchEnded
                    if self._next_bookmark is not None and now >= self._next_bookmark:
                        self._next_bookmark = self._bookmark_due()
                        return "BOOKMARK", self._bookmark(max(self._current_rv(), self._after))
                wake = [t for t in (give_up, deadline,
                                    None if self._stalled else self._next_bookmark)
                        if t is not None]
                if give_up is not None and now >= give_up:
                    return None
                self._clock.wait_until(self._cond, min(wake) if wake else None)

    def stall(self) -> None:
        """Stop delivering events for good (queued and later ones are dropped); the stream
        stays open, silent even past its deadline, until closed."""
        with self._cond:
            self._stalled = True
            self._queue.clear()
            self._cond.notify_all()

    def close(self) -> None:
        """End the stream; ``next`` raises :class:`WatchEnded`. Idempotent, any thread."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            self._queue.clear()
            callbacks, self._on_close = self._on_close, []
            self._cond.notify_all()
        for callback in callbacks:
            callback(self)

    def on_close(self, callback: Callable[[Subscription], None]) -> None:
        self._on_close.append(callback)

    def _bookmark_due(self) -> float | None:
        if self._bookmark_interval is None:
            return None
        return self._clock.now() + self._bookmark_interval

    def _bookmark(self, rv: int, *, initial_events_end: bool = False) -> Obj:
        metadata: Obj = {"resourceVersion": str(rv)}
        if initial_events_end:
            metadata["annotations"] = {INITIAL_EVENTS_END: "true"}
        return {"kind": self._info.kind, "apiVersion": self._info.api_version,
                "metadata": metadata}
