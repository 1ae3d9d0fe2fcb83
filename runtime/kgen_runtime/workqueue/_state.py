"""The bookkeeping of a work queue and of its delayed items, without waiting.

:class:`~kgen_runtime.workqueue.Queue` (threads) and
:class:`~kgen_runtime.workqueue.AsyncQueue` (asyncio) are both a :class:`QueueState`, and the
delaying queues keep their delayed items in a :class:`WaitingList`; each queue only adds its
own way of waiting and waking (condition variables, or futures on one event loop) through
the state's hooks, so deduplication, the processing set, re-queueing on ``done``, metrics and
drain accounting cannot differ. The state's ``add``, ``done`` and item hand-out are the
queues' own methods (one Python call per step: the blocking queue's hot path).
"""

from __future__ import annotations

import heapq
import itertools
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, Literal, TypeVar

from kgen_runtime.util.clock import TimeSource
from kgen_runtime.workqueue.metrics import (
    PrometheusMetricsProvider,
    QueueMetrics,
    default_metrics_provider,
)

__all__ = ["GetResult", "QueueState", "WaitingList"]

T = TypeVar("T", bound=Hashable)

GetResult = tuple[T, Literal[False]] | tuple[None, Literal[True]]
"""What :meth:`Queue.get` returns: ``(item, False)``, or ``(None, True)`` once shut down."""

_PENDING_LIMIT = QueueMetrics.PENDING_LIMIT


class QueueState(ABC, Generic[T]):
    """Queued items in order; the items waiting (queued, or re-added while processed) and
    the items being processed, each mapped to the time it was added / handed out when
    metrics are recorded (else 0.0; the metrics read depth, adds and in-progress work from
    these maps at scrape time); the shutdown and drain flags; one lock around every change
    (also the metrics' lock, so a scrape from another thread is exact).

    A subclass supplies the waiting: :meth:`_wait_for_item`, :meth:`_wake_getter` (called
    with the lock held when an item became ready and :attr:`_getters` is non-zero: it counts
    the getters waiting), :meth:`_wake_all_getters` and :meth:`_wake_drainer`.

    With metrics, a step costs a clock read and, on get and done, an append of the duration
    to the metrics' pending list, both bound here once (no call into the metrics per item).
    """

    def __init__(
        self, name: str, clock: TimeSource, metrics_provider: PrometheusMetricsProvider | None
    ) -> None:
        """Empty; records metrics when named and a provider is given or installed."""
        self.name = name
        self._lock = threading.Lock()
        self._queue: deque[T] = deque()
        self._dirty: dict[T, float] = {}
        self._processing: dict[T, float] = {}
        self._shutting_down = False
        self._draining = False
        self._drain_queued = False
        self._getters = 0
        provider = metrics_provider or default_metrics_provider()
        self._metrics: QueueMetrics | None = None
        self._now: Callable[[], float] | None = None
        if name and provider is not None:
            metrics = self._metrics = provider.queue_metrics(name, clock, self._lock)
            metrics.track(self._dirty, self._processing)
            self._now = metrics.now
            self._waited = metrics.waits.append
            self._worked = metrics.work.append
            self._work = metrics.work

    def add(self, item: T) -> None:
        """Queue ``item`` unless it is already waiting; ignored after shutdown. Never waits
        beyond the queue lock.

        If a worker holds ``item``, it is marked dirty and queued again on :meth:`done`.
        """
        with self._lock:
            if self._shutting_down or item in self._dirty:
                return
            now = self._now
            self._dirty[item] = 0.0 if now is None else now()
            if item in self._processing:
                return
            self._queue.append(item)
            if self._getters:
                self._wake_getter()

    def _get(self, timeout: float | None = None) -> GetResult[T]:
        """Hand out the oldest waiting item, waiting until one is available (through
        :meth:`_wait_for_item`): :meth:`Queue.get <kgen_runtime.workqueue.Queue.get>`.

        The caller owns the item until it calls :meth:`done` with it. After shutdown, items
        still queued are handed out; once none remain this returns ``(None, True)``.

        Args:
            timeout: Seconds (clock time) to wait for an item; ``None`` waits indefinitely.

        Raises:
            TimeoutError: ``timeout`` passed with no item and no shutdown.
        """
        with self._lock:
            queue = self._queue
            if not queue and not self._wait_for_item(timeout):
                return None, True
            item = queue.popleft()
            added = self._dirty.pop(item)
            now = self._now
            if now is None:
                self._processing[item] = 0.0
            else:
                started = self._processing[item] = now()
                self._waited(started - added)
            return item, False

    def done(self, item: T) -> None:
        """Mark ``item`` finished; if it was added meanwhile, queue it again.

        Raises:
            ValueError: ``item`` is not being processed (never handed out, or done twice).
        """
        with self._lock:
            try:
                started = self._processing.pop(item)
            except KeyError:
                raise ValueError(f"done({item!r}): the item is not being processed") from None
            now = self._now
            if now is not None:
                self._worked(now() - started)
                if len(self._work) >= _PENDING_LIMIT:
                    self._metrics.bin()  # type: ignore[union-attr]
            if item in self._dirty:
                self._queue.append(item)
                if self._getters:
                    self._wake_getter()
            elif self._draining and self._drained():
                self._wake_drainer()

    def __len__(self) -> int:
        """Return the number of items waiting to be handed out (not those in progress)."""
        return len(self._queue)

    def shut_down(self) -> None:
        """Stop accepting items and wake every waiting getter; returns at once.

        Items already queued are still handed out. A drain in progress (the queue's
        ``shut_down_with_drain``) stops waiting and returns ``False``.
        """
        with self._lock:
            self._draining = False
            self._shutting_down = True
            self._wake_all_getters()
            self._wake_drainer()

    def shutting_down(self) -> bool:
        """Return whether :meth:`shut_down` (or the draining variant) has been called."""
        return self._shutting_down

    def _drained(self) -> bool:
        """Whether a draining shutdown may return."""
        return not self._processing and not (self._drain_queued and self._queue)

    @abstractmethod
    def _wait_for_item(self, timeout: float | None) -> bool:
        """Wait, the lock held, until an item is queued or the queue shuts down; return
        whether an item is queued.

        Raises:
            TimeoutError: ``timeout`` passed with no item and no shutdown.
        """

    @abstractmethod
    def _wake_getter(self) -> None:
        """Wake one waiting getter (the lock held)."""

    @abstractmethod
    def _wake_all_getters(self) -> None:
        """Wake every waiting getter (the lock held): the queue shut down."""

    @abstractmethod
    def _wake_drainer(self) -> None:
        """Wake a draining shutdown (the lock held): drained, or the drain was ended."""


class WaitingList(Generic[T]):
    """Items waiting for their ready time, earliest first (a heap); re-adding a waiting item
    keeps the earlier of its two ready times."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, T]] = []  # (ready_at, sequence, item)
        self._ready_at: dict[T, float] = {}
        self._sequence = itertools.count()

    def push(self, item: T, ready_at: float) -> bool:
        """Schedule ``item``; ``True`` if it is now the earliest (the waiter must wake sooner)."""
        known = self._ready_at.get(item)
        if known is not None and known <= ready_at:
            return False
        # A superseded (later) heap entry stays behind and is skipped when it surfaces.
        self._ready_at[item] = ready_at
        sequence = next(self._sequence)
        heapq.heappush(self._heap, (ready_at, sequence, item))
        return self._heap[0][1] == sequence

    def pop_ready(self, now: float) -> list[T]:
        """Remove and return every item whose ready time is ``now`` or earlier, in order."""
        heap = self._heap
        ready: list[T] = []
        while heap and heap[0][0] <= now:
            ready_at, _, item = heapq.heappop(heap)
            if self._ready_at.get(item) == ready_at:
                del self._ready_at[item]
                ready.append(item)
        return ready

    def next_ready_at(self) -> float | None:
        """The earliest ready time (possibly of a superseded entry), ``None`` if empty."""
        return self._heap[0][0] if self._heap else None

    def __len__(self) -> int:
        return len(self._ready_at)
