"""The asyncio twin of :mod:`kgen_runtime.workqueue.queue`: the same guarantees, awaited.

Fair, stingy, exclusive and shut-down aware exactly as :class:`~kgen_runtime.workqueue.Queue`
(the bookkeeping is the same :class:`~kgen_runtime.workqueue._state.QueueState`); only
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
import threading
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock
from kgen_runtime.workqueue._state import QueueState
from kgen_runtime.workqueue.metrics import (
    PrometheusMetricsProvider,
    QueueMetrics,
    default_metrics_provider,
)
from kgen_runtime.workqueue.queue import GetResult

__all__ = ["AsyncQueue"]

T = TypeVar("T", bound=Hashable)


class AsyncQueue(Generic[T]):
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
        self.name = name
        self._clock = clock
        # Held only while the state changes, so a metrics scrape (another thread) reads the
        # state's maps consistently; never contended otherwise.
        self._lock = threading.Lock()
        provider = metrics_provider or default_metrics_provider()
        self._metrics: QueueMetrics | None = (
            provider.queue_metrics(name, clock, self._lock)
            if name and provider is not None
            else None
        )
        self._state: QueueState[T] = QueueState(self._metrics)
        self._getters: deque[asyncio.Future[None]] = deque()
        self._idle = asyncio.Event()  # set when a draining shutdown may return

    def add(self, item: T) -> None:
        """Queue ``item`` unless it is already waiting; ignored after shutdown. Never waits."""
        with self._lock:
            ready = self._state.add(item)
        if ready:
            self._wake_getter()

    async def get(self, timeout: float | None = None) -> GetResult[T]:
        """Hand out the oldest waiting item, waiting until one is available.

        After shutdown, items still queued are handed out; then ``(None, True)``.

        Raises:
            TimeoutError: ``timeout`` seconds passed with no item and no shutdown.
        """
        state = self._state
        if not state.queue and not state.shutting_down:
            async with asyncio.timeout(timeout):
                # Another task may take the item between our wake-up and our turn: re-check.
                while not state.queue and not state.shutting_down:
                    await self._wait_for_item()
        if not state.queue:
            return None, True
        with self._lock:
            return state.pop(), False

    def done(self, item: T) -> None:
        """Mark ``item`` finished; if it was added meanwhile, queue it again.

        Raises:
            ValueError: ``item`` is not being processed (never handed out, or done twice).
        """
        state = self._state
        with self._lock:
            requeued = state.done(item)
        if requeued:
            self._wake_getter()
        elif state.draining and state.drained():
            self._idle.set()

    def __len__(self) -> int:
        """Return the number of items waiting to be handed out (not those in progress)."""
        return len(self._state.queue)

    def shut_down(self) -> None:
        """Stop accepting items and wake every waiting getter; a drain in progress returns
        ``False``."""
        self._state.draining = False
        self._state.shutting_down = True
        self._wake_all()
        self._idle.set()

    async def shut_down_with_drain(
        self, *, include_queued: bool = False, timeout: float | None = None
    ) -> bool:
        """Shut down, then wait until every handed-out item is done (see
        :meth:`kgen_runtime.workqueue.Queue.shut_down_with_drain`).

        Returns:
            ``True`` when drained; ``False`` on timeout or when :meth:`shut_down` was called
            meanwhile.
        """
        state = self._state
        state.draining = True
        state.drain_queued = include_queued
        state.shutting_down = True
        self._wake_all()
        self._idle.clear()
        try:
            if not state.drained():
                async with asyncio.timeout(timeout):
                    await self._idle.wait()
        except TimeoutError:
            pass
        drained = state.drained() and state.draining
        state.draining = False
        return drained

    def shutting_down(self) -> bool:
        return self._state.shutting_down

    async def _wait_for_item(self) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._getters.append(future)
        try:
            await future
        except BaseException:
            if future.done() and not future.cancelled():
                self._wake_getter()  # woken, then cancelled: hand the wake-up on
            else:
                self._getters.remove(future)
            raise

    def _wake_getter(self) -> None:
        while self._getters:
            future = self._getters.popleft()
            if not future.done():
                future.set_result(None)
                return

    def _wake_all(self) -> None:
        while self._getters:
            future = self._getters.popleft()
            if not future.done():
                future.set_result(None)
