"""The work queue (client-go's ``util/workqueue`` Type): fair, deduplicating, re-entrant.

Guarantees (``util/workqueue/doc.go``):

- **Fair**: distinct items are handed out in the order they were added (FIFO).
- **Stingy**: an item added several times before a worker gets it is handed out once.
- **Exclusive**: no two workers ever hold the same item. An item added while a worker holds
  it is queued again only when that worker calls :meth:`Queue.done`.
- **Shut-down aware**: after :meth:`Queue.shut_down`, adds are ignored, workers drain what is
  already queued and then :meth:`Queue.get` reports shutdown.

Items must be hashable and are compared by equality (controllers use ``"namespace/name"``
keys). All methods are thread-safe. The queue is a
:class:`~kgen_runtime.workqueue._state.QueueState` (a deque and two dicts under one lock,
shared with the asyncio twin :class:`~kgen_runtime.workqueue.AsyncQueue`) whose ``add``,
``get`` and ``done`` are the state's own methods; a getter is notified only when one is
waiting, so uncontended add, get and done each cost one Python call, one lock round-trip
and no condition-variable work (metrics, when on, are recorded under the same lock).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import TypeVar

from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.workqueue._state import GetResult, QueueState
from kgen_runtime.workqueue.metrics import PrometheusMetricsProvider

__all__ = ["GetResult", "Queue"]

T = TypeVar("T", bound=Hashable)


class Queue(QueueState[T]):
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
        super().__init__(name, clock, metrics_provider)
        self._clock = clock
        self._ready = threading.Condition(self._lock)  # getters wait for an item here
        self._idle = threading.Condition(self._lock)  # a draining shutdown waits here

    get = QueueState._get  # the state's own method: one Python call per get

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
            self._draining = True
            self._drain_queued = include_queued
            self._shutting_down = True
            self._ready.notify_all()
            deadline = None if timeout is None else self._clock.now() + timeout
            while self._draining and not self._drained():
                if deadline is not None and self._clock.now() >= deadline:
                    break
                self._clock.wait_until(self._idle, deadline)
            drained = self._drained()
            self._draining = False
            return drained

    def _wait_for_item(self, timeout: float | None) -> bool:
        """Block, the lock held, until an item is queued or the queue shuts down."""
        if self._shutting_down:
            return False
        deadline = None if timeout is None else self._clock.now() + timeout
        self._getters += 1
        try:
            while not self._queue and not self._shutting_down:
                if deadline is not None and self._clock.now() >= deadline:
                    raise TimeoutError(f"no work item within {timeout} s")
                self._clock.wait_until(self._ready, deadline)
        finally:
            self._getters -= 1
        return bool(self._queue)

    def _wake_getter(self) -> None:
        self._ready.notify()

    def _wake_all_getters(self) -> None:
        self._ready.notify_all()

    def _wake_drainer(self) -> None:
        self._idle.notify_all()
