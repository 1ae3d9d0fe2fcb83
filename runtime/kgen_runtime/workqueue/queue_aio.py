"""The asyncio twin of :mod:`kgen_runtime.workqueue.queue`: the same guarantees, awaited.

Fair, stingy, exclusive and shut-down aware exactly as :class:`~kgen_runtime.workqueue.Queue`
(both are a :class:`~kgen_runtime.workqueue._state.QueueState`: the same bookkeeping); only
``get`` and ``shut_down_with_drain`` wait, and they ``await``. ``add``, ``done`` and
``shut_down`` never wait and are plain methods, so synchronous event handlers can call them.

Use a queue from one event loop (it is not thread-safe). The worker protocol::

    item, shutdown = await queue.get()
    if shutdown:
        return
    try:
        await process(item)
    finally:
        queue.done(item)        # also when process() was cancelled
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable
from typing import TypeVar

from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock
from kgen_runtime.workqueue._state import GetResult, QueueState
from kgen_runtime.workqueue.metrics import PrometheusMetricsProvider

__all__ = ["AsyncQueue"]

T = TypeVar("T", bound=Hashable)


class AsyncQueue(QueueState[T]):
    """A deduplicating FIFO of work items with a dirty set and a processing set, for asyncio.

    Getters are served in the order they started waiting. A getter cancelled after it was
    woken passes its wake-up on, so no item is left queued while another getter waits.
    """

    def __init__(
        self,
        *,
        name: str = "",
        clock: AsyncClock = ASYNC_REAL_CLOCK,
        metrics_provider: PrometheusMetricsProvider | None = None,
    ) -> None:
        """Create an empty queue (arguments as for :class:`~kgen_runtime.workqueue.Queue`)."""
        # The state's lock is held only while the state changes, so a metrics scrape
        # (another thread) reads its maps consistently; never contended otherwise.
        super().__init__(name, clock, metrics_provider)
        self._clock = clock
        self._waiters: deque[asyncio.Future[None]] = deque()  # one per waiting getter
        self._idle = asyncio.Event()  # set when a draining shutdown may return

    async def get(self, timeout: float | None = None) -> GetResult[T]:
        """Hand out the oldest waiting item, waiting until one is available.

        After shutdown, items still queued are handed out; then ``(None, True)``.

        Raises:
            TimeoutError: ``timeout`` seconds passed with no item and no shutdown.
        """
        if not self._queue and not self._shutting_down:
            async with asyncio.timeout(timeout):
                # Another task may take the item between our wake-up and our turn: re-check.
                while not self._queue and not self._shutting_down:
                    await self._await_item()
        return self._get()

    async def shut_down_with_drain(
        self, *, include_queued: bool = False, timeout: float | None = None
    ) -> bool:
        """Shut down, then wait until every handed-out item is done (see
        :meth:`kgen_runtime.workqueue.Queue.shut_down_with_drain`).

        Returns:
            ``True`` when drained; ``False`` on timeout or when :meth:`shut_down` was called
            meanwhile.
        """
        self._draining = True
        self._drain_queued = include_queued
        self._shutting_down = True
        self._wake_all_getters()
        self._idle.clear()
        try:
            if not self._drained():
                async with asyncio.timeout(timeout):
                    await self._idle.wait()
        except TimeoutError:
            pass
        drained = self._drained() and self._draining
        self._draining = False
        return drained

    async def _await_item(self) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(future)
        self._getters += 1
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self._wake_getter()  # woken, then cancelled: hand the wake-up on
            else:
                self._waiters.remove(future)
            raise
        finally:
            self._getters -= 1

    def _wait_for_item(self, timeout: float | None) -> bool:
        """:meth:`get` awaited an item first: the queue is empty only once shut down."""
        return False

    def _wake_getter(self) -> None:
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)
                return

    def _wake_all_getters(self) -> None:
        while self._waiters:
            future = self._waiters.popleft()
            if not future.done():
                future.set_result(None)

    def _wake_drainer(self) -> None:
        self._idle.set()
