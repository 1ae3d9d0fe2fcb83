"""The bookkeeping of a work queue and of its delayed items, without locks or waiting.

:class:`~kgen_runtime.workqueue.Queue` (threads) and
:class:`~kgen_runtime.workqueue.AsyncQueue` (asyncio) keep their items in a
:class:`QueueState`, and the delaying queues theirs in a :class:`WaitingList`; each only adds
its own way of blocking (a lock and condition variables, or futures on one event loop), so
deduplication, the processing set, re-queueing on ``done`` and drain accounting cannot differ.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from kgen_runtime.workqueue.metrics import QueueMetrics

__all__ = ["QueueState", "WaitingList"]

T = TypeVar("T", bound=Hashable)


class QueueState(Generic[T]):
    """Queued items in order; the items waiting (queued, or re-added while processed) and
    the items being processed, each mapped to the time it was added / handed out when
    ``metrics`` are recorded (else 0.0; the metrics read depth, adds and in-progress work
    from these maps at scrape time); the shutdown and drain flags. The owner serialises
    access and holds ``metrics.lock`` while calling :meth:`add`, :meth:`pop` and
    :meth:`done`.

    With metrics, a step costs a clock read and, on get and done, an append of the duration
    to the metrics' pending list, both bound here once (no call into the metrics per item).
    """

    def __init__(self, metrics: QueueMetrics | None) -> None:
        self.metrics = metrics
        self.queue: deque[T] = deque()
        self.dirty: dict[T, float] = {}
        self.processing: dict[T, float] = {}
        self.shutting_down = False
        self.draining = False
        self.drain_queued = False
        self._now: Callable[[], float] | None = None
        if metrics is not None:
            metrics.track(self.dirty, self.processing)
            self._now = metrics.now
            self._waited = metrics.waits.append
            self._worked = metrics.work.append
            self._work = metrics.work

    def add(self, item: T) -> bool:
        """Record an add; ``True`` if ``item`` became ready to hand out (wake a getter)."""
        if self.shutting_down or item in self.dirty:
            return False
        now = self._now
        self.dirty[item] = 0.0 if now is None else now()
        if item in self.processing:
            return False
        self.queue.append(item)
        return True

    def pop(self) -> T:
        """Hand out the oldest queued item (the queue must not be empty)."""
        item = self.queue.popleft()
        added = self.dirty.pop(item)
        now = self._now
        if now is None:
            self.processing[item] = 0.0
        else:
            started = self.processing[item] = now()
            self._waited(started - added)
        return item

    def done(self, item: T) -> bool:
        """Record ``item`` finished; ``True`` if it was re-added meanwhile and is queued again.

        Raises:
            ValueError: ``item`` is not being processed (never handed out, or done twice).
        """
        try:
            started = self.processing.pop(item)
        except KeyError:
            raise ValueError(f"done({item!r}): the item is not being processed") from None
        now = self._now
        if now is not None:
            self._worked(now() - started)
            if len(self._work) >= QueueMetrics.PENDING_LIMIT:
                self.metrics.bin()  # type: ignore[union-attr]
        if item in self.dirty:
            self.queue.append(item)
            return True
        return False

    def drained(self) -> bool:
        """Whether a draining shutdown may return."""
        return not self.processing and not (self.drain_queued and self.queue)


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
