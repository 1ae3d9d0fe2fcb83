"""The work queue (client-go's ``util/workqueue`` Type): fair, deduplicating, re-entrant.

Guarantees (``util/workqueue/doc.go``):

- **Fair**: distinct items are handed out in the order they were added (FIFO).
- **Stingy**: an item added several times before a worker gets it is handed out once.
- **Exclusive**: no two workers ever hold the same item. An item added while a worker holds
  it is queued again only when that worker calls :meth:`Queue.done`.
- **Shut-down aware**: after :meth:`Queue.shut_down`, adds are ignored, workers drain what is
  already queued and then :meth:`Queue.get` reports shutdown.

Items must be hashable and are compared by equality (controllers use ``"namespace/name"``
keys). All methods are thread-safe. The implementation is one lock around a
:class:`~kgen_runtime.workqueue._state.QueueState` (a deque and two dicts, shared with the
asyncio twin :class:`~kgen_runtime.workqueue.AsyncQueue`);
a getter is notified only when one is waiting, so uncontended add, get and done each cost
one lock round-trip and no condition-variable work (metrics, when on, are recorded under
the same lock).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, Literal, TypeVar

from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.workqueue._state import QueueState
from kgen_runtime.workqueue.metrics import (
    PrometheusMetricsProvider,
    QueueMetrics,
    default_metrics_provider,
)

__all__ = ["GetResult", "Queue"]

T = TypeVar("T", bound=Hashable)

GetResult = tuple[T, Literal[False]] | tuple[None, Literal[True]]
"""What :meth:`Queue.get` returns: ``(item, False)``, or ``(None, True)`` once shut down."""


class Queue(Generic[T]):
    """A deduplicating FIFO of work items with a dirty set and a processing set.

    The worker protocol::

        item, shutdown = queue.get()
        if shutdown:
            return
        try:
            process(item)
        finally:
            queue.done(item)

    (mypy narrows ``got = queue.get(); if got[1]: ...`` but not the unpacked pair; after
    unpacking, ``if item is None`` narrows for item types that exclude ``None``.)
    """

    def __init__(
        self,
        *,
        name: str = "",
        clock: Clock = REAL_CLOCK,
        metrics_provider: PrometheusMetricsProvider | None = None,
    ) -> None:
        """Create an empty queue.

        Args:
            name: The queue's name; a named queue records metrics when a provider is given
                here or installed with :func:`~kgen_runtime.workqueue.set_metrics_provider`.
            clock: Time source for ``get``/drain timeouts and metrics.
            metrics_provider: Where to record metrics (overrides the installed default).
        """
        self.name = name
        self._clock = clock
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)  # getters wait for an item here
        self._idle = threading.Condition(self._lock)  # a draining shutdown waits here
        self._getters = 0
        provider = metrics_provider or default_metrics_provider()
        self._metrics: QueueMetrics | None = (
            provider.queue_metrics(name, clock, self._lock)
            if name and provider is not None
            else None
        )
        self._state: QueueState[T] = QueueState(self._metrics)

    def add(self, item: T) -> None:
        """Queue ``item`` unless it is already waiting; ignored after shutdown. Never blocks
        beyond the queue lock.

        If a worker holds ``item``, it is marked dirty and queued again on :meth:`done`.
        """
        with self._lock:
            if self._state.add(item) and self._getters:
                self._ready.notify()

    def get(self, timeout: float | None = None) -> GetResult[T]:
        """Hand out the oldest waiting item, blocking until one is available.

        The caller owns the item until it calls :meth:`done` with it. After shutdown, items
        still queued are handed out; once none remain this returns ``(None, True)``.

        Args:
            timeout: Seconds (clock time) to wait for an item; ``None`` waits indefinitely.

        Raises:
            TimeoutError: ``timeout`` passed with no item and no shutdown.
        """
        with self._lock:
            state = self._state
            if not state.queue:
                if state.shutting_down:
                    return None, True
                self._wait_for_item(timeout)
                if not state.queue:
                    return None, True
            return state.pop(), False

    def done(self, item: T) -> None:
        """Mark ``item`` finished; if it was added meanwhile, queue it again.

        Raises:
            ValueError: ``item`` is not being processed (never handed out, or done twice).
        """
        with self._lock:
            state = self._state
            if state.done(item):
                if self._getters:
                    self._ready.notify()
            elif state.draining and not state.processing:
                self._idle.notify_all()

    def __len__(self) -> int:
        """Return the number of items waiting to be handed out (not those in progress)."""
        return len(self._state.queue)

    def shut_down(self) -> None:
        """Stop accepting items and wake every blocked getter; returns at once.

        Items already queued are still handed out. A :meth:`shut_down_with_drain` in progress
        in another thread stops waiting and returns ``False``.
        """
        with self._lock:
            self._state.draining = False
            self._state.shutting_down = True
            self._ready.notify_all()
            self._idle.notify_all()

    def shut_down_with_drain(
        self, *, include_queued: bool = False, timeout: float | None = None
    ) -> bool:
        """Shut down, then block until every handed-out item is done.

        Workers must keep calling :meth:`get`/:meth:`done` meanwhile (a worker that never
        finishes makes this wait forever unless ``timeout`` is given).

        Args:
            include_queued: Also wait until the items still queued have been handed out and
                finished (client-go waits only for in-flight items; see kubernetes#141079).
            timeout: Seconds (clock time) to wait at most; ``None`` waits indefinitely.

        Returns:
            ``True`` when drained; ``False`` on timeout or when :meth:`shut_down` was called
            meanwhile.
        """
        with self._lock:
            state = self._state
            state.draining = True
            state.drain_queued = include_queued
            state.shutting_down = True
            self._ready.notify_all()
            deadline = None if timeout is None else self._clock.now() + timeout
            while state.draining and not state.drained():
                if deadline is not None and self._clock.now() >= deadline:
                    break
                self._clock.wait_until(self._idle, deadline)
            drained = state.drained()
            state.draining = False
            return drained

    def shutting_down(self) -> bool:
        """Return whether :meth:`shut_down` (or the draining variant) has been called."""
        return self._state.shutting_down

    def _wait_for_item(self, timeout: float | None) -> None:
        """Block until an item is queued or shutdown; the caller holds the lock."""
        deadline = None if timeout is None else self._clock.now() + timeout
        self._getters += 1
        try:
            while not self._state.queue and not self._state.shutting_down:
                if deadline is not None and self._clock.now() >= deadline:
                    raise TimeoutError(f"no work item within {timeout} s")
                self._clock.wait_until(self._ready, deadline)
        finally:
            self._getters -= 1
