"""The asyncio twin of :mod:`kgen_runtime.workqueue.delaying`: ``add_after`` on one event loop.

Waiting items sit in the same :class:`~kgen_runtime.workqueue._state.WaitingList` as the
blocking queue's. One waiter task per queue, started by the first ``add_after``, sleeps on the
queue's :class:`~kgen_runtime.util.clock_aio.AsyncClock` until the earliest ready time, moves
every ready item into the queue, and wakes early when a sooner item arrives or on shutdown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from typing import TypeVar

from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock
from kgen_runtime.workqueue._state import WaitingList
from kgen_runtime.workqueue.metrics import PrometheusMetricsProvider
from kgen_runtime.workqueue.queue_aio import AsyncQueue

__all__ = ["AsyncDelayingQueue"]

T = TypeVar("T", bound=Hashable)


class AsyncDelayingQueue(AsyncQueue[T]):
    """An :class:`AsyncQueue` with :meth:`add_after` (semantics of
    :class:`~kgen_runtime.workqueue.DelayingQueue`: an ``add`` of a waiting item puts it in
    at once; re-adding keeps the earlier ready time; items still waiting at shutdown are
    dropped). Shut it down when done, which ends its waiter task."""

    def __init__(
        self,
        *,
        name: str = "",
        clock: AsyncClock = ASYNC_REAL_CLOCK,
        metrics_provider: PrometheusMetricsProvider | None = None,
    ) -> None:
        super().__init__(name=name, clock=clock, metrics_provider=metrics_provider)
        self._waiting: WaitingList[T] = WaitingList()
        self._sooner = asyncio.Event()  # a new earliest item, or shutdown
        self._waiter: asyncio.Task[None] | None = None

    def add_after(self, item: T, delay: float) -> None:
        """Add ``item`` once ``delay`` seconds (clock time) have passed; ``<= 0`` adds now.

        Ignored after shutdown; never waits. Call it from the queue's event loop.
        """
        if self.shutting_down():
            return
        if self._metrics is not None:
            self._metrics.retry()
        if delay <= 0:
            self.add(item)
            return
        if self._waiting.push(item, self._clock.now() + delay):
            self._sooner.set()
        if self._waiter is None:
            self._waiter = asyncio.get_running_loop().create_task(
                self._waiting_loop(), name=f"kgen-delaying-queue-{self.name or id(self)}"
            )

    def waiting_count(self) -> int:
        """Return how many items are waiting for their delay to pass."""
        return len(self._waiting)

    def shut_down(self) -> None:
        """Shut down (see :meth:`AsyncQueue.shut_down`) and end the waiter task."""
        super().shut_down()
        self._sooner.set()

    async def shut_down_with_drain(
        self, *, include_queued: bool = False, timeout: float | None = None
    ) -> bool:
        """End the waiter task, then drain (see :meth:`AsyncQueue.shut_down_with_drain`)."""
        self._shutting_down = True
        self._sooner.set()
        return await super().shut_down_with_drain(include_queued=include_queued, timeout=timeout)

    async def _waiting_loop(self) -> None:
        """Move items into the queue as they become ready, until shutdown."""
        while not self.shutting_down():
            for item in self._waiting.pop_ready(self._clock.now()):
                self.add(item)
            self._sooner.clear()
            next_ready = self._waiting.next_ready_at()
            if next_ready is None:
                await self._sooner.wait()
            else:
                await self._clock.sleep(self._sooner, next_ready - self._clock.now())
