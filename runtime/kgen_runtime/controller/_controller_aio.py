"""The asyncio twin of :mod:`kgen_runtime.controller._controller`: worker tasks, async reconcile.

::

    async def sync(key: str) -> Result | None: ...          # may await other services

    controller = AsyncController("foos", AsyncReconcilerFunc(sync),
                                 cache_synced=[foos_informer.has_synced])
    foos_informer.add_event_handler(on_add=lambda o: controller.enqueue(key_of(o)))
    task = asyncio.create_task(controller.run(workers=4))  # until cancelled
    ...
    task.cancel()                                           # phased shutdown, then returns

or, as for :class:`~kgen_runtime.controller.Controller`, as a base class::

    class FooController(AsyncController[str]):
        async def reconcile(self, key: str) -> Result | None: ...

The guarantees are :class:`~kgen_runtime.controller.Controller`'s — one reconcile per key at a
time, re-reconcile of keys added meanwhile, workers only after the caches synced, the
:class:`~kgen_runtime.controller.Reconciler` contract for results and errors (one decision,
:mod:`._settle`, serves both), nothing a reconciler raises ending a worker, each reconcile's
log context (:func:`kgen_runtime.log.reconcile_context`, a context variable, so per task) and
``controller_runtime_*`` metrics — and shutdown is triggered by cancelling
:meth:`AsyncController.run`:

1. the queue stops taking keys; workers finish the keys in flight and those still queued
   (timers not yet due are dropped), for at most ``shutdown_timeout`` seconds;
2. workers still busy then are cancelled: the cancellation reaches their reconcile, and the
   key is marked done on the way out, so the queue's processing set is never left dirty.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

from kgen_runtime.cache import InformerSynced
from kgen_runtime.controller._controller import DEFAULT_MAX_RETRIES
from kgen_runtime.controller._metrics import (
    RECONCILE_METRICS,
    ReconcileMetricsProvider,
    ReconcileOutcome,
)
from kgen_runtime.controller._reconciler import Result
from kgen_runtime.controller._reconciler_aio import AsyncReconciler
from kgen_runtime.controller._settle import settle_error, settle_result
from kgen_runtime.log import reconcile_context
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock
from kgen_runtime.workqueue import AsyncRateLimitingQueue, RateLimiter

__all__ = ["AsyncController"]

K = TypeVar("K", bound=Hashable)

_log = logging.getLogger("kgen_runtime.controller")

#: How often ``run`` looks at ``cache_synced`` while waiting for the caches.
_SYNC_POLL_SECONDS = 0.01


class AsyncController(Generic[K]):
    """Runs an :class:`AsyncReconciler` over the keys of an async rate-limited queue.

    Arguments as for :class:`~kgen_runtime.controller.Controller`, with an
    :class:`AsyncClock`. Use it from one event loop; :meth:`enqueue` and friends are plain
    methods (handlers may call them), ignored once shutdown has begun.
    """

    def __init__(
        self,
        name: str,
        reconciler: AsyncReconciler[K] | None = None,
        *,
        rate_limiter: RateLimiter[K] | None = None,
        max_retries: int | None = DEFAULT_MAX_RETRIES,
        cache_synced: Sequence[InformerSynced] = (),
        cache_sync_timeout: float | None = None,
        shutdown_timeout: float | None = None,
        metrics: ReconcileMetricsProvider | None = RECONCILE_METRICS,
        clock: AsyncClock = ASYNC_REAL_CLOCK,
    ) -> None:
        self.name = name
        if reconciler is None and type(self).reconcile is AsyncController.reconcile:
            raise TypeError("pass a reconciler or override AsyncController.reconcile")
        self.reconciler: AsyncReconciler[K] = self if reconciler is None else reconciler
        self.max_retries = max_retries
        self._queue: AsyncRateLimitingQueue[K] = AsyncRateLimitingQueue(
            rate_limiter, name=name, clock=clock
        )
        self._cache_synced = tuple(cache_synced)
        self._cache_sync_timeout = cache_sync_timeout
        self._shutdown_timeout = shutdown_timeout
        self._clock = clock
        self._metrics = None if metrics is None else metrics.for_controller(name)
        self._started = False

    async def reconcile(self, key: K) -> Result | None:
        """What a subclass constructed without a ``reconciler`` does with each key."""
        raise NotImplementedError

    @property
    def queue(self) -> AsyncRateLimitingQueue[K]:
        return self._queue

    def enqueue(self, key: K) -> None:
        """Queue ``key`` for reconciling now (deduplicated with pending adds)."""
        self._queue.add(key)

    def enqueue_after(self, key: K, delay: float) -> None:
        """Queue ``key`` once ``delay`` seconds have passed."""
        self._queue.add_after(key, delay)

    def enqueue_rate_limited(self, key: K) -> None:
        """Queue ``key`` after its rate-limiter backoff (counts as a retry)."""
        self._queue.add_rate_limited(key)

    async def run(self, workers: int) -> None:
        """Wait for the caches, then run ``workers`` worker tasks until this task is
        cancelled; then shut down in phases (module docstring) and re-raise the cancellation.

        Raises:
            ValueError: ``workers`` is less than 1.
            RuntimeError: ``run`` was already called.
            TimeoutError: the caches did not sync within ``cache_sync_timeout``.
        """
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        if self._started:
            raise RuntimeError(f"controller {self.name!r} was already run")
        self._started = True
        _log.info("starting controller %s", self.name)
        try:
            async with asyncio.timeout(self._cache_sync_timeout):
                while not all(synced() for synced in self._cache_synced):
                    await asyncio.sleep(_SYNC_POLL_SECONDS)
        except TimeoutError:
            self._queue.shut_down()
            raise TimeoutError(f"controller {self.name!r}: caches did not sync in time") from None
        except asyncio.CancelledError:
            self._queue.shut_down()
            raise
        if self._metrics is not None:
            self._metrics.set_workers(workers)
        tasks = [
            asyncio.create_task(self._worker(), name=f"{self.name}-worker-{i}")
            for i in range(workers)
        ]
        _log.info("controller %s started %d workers", self.name, workers)
        try:
            # Workers return only once the queue shuts down. (Not gather: cancelling this
            # task must not cancel the workers before they drained.)
            await asyncio.wait(tasks)
        finally:
            await self._shut_down(tasks)

    async def process_next_work_item(self) -> bool:
        """Take one key, reconcile it and settle it; ``False`` once the queue is shut down.

        The key is marked done however the reconcile ends, cancellation included.
        """
        got = await self._queue.get()
        if got[1]:
            return False
        key = got[0]
        try:
            with reconcile_context(self.name, key):
                await self._reconcile(key)
        finally:
            self._queue.done(key)
        return True

    async def _reconcile(self, key: K) -> None:
        metrics = self._metrics
        if metrics is None:
            await self._settle(key)
            return
        metrics.started()
        started = self._clock.now()
        outcome: ReconcileOutcome = "error"
        terminal = False
        try:
            outcome, terminal = await self._settle(key)
        finally:
            metrics.finished(outcome, self._clock.now() - started, terminal=terminal)

    async def _settle(self, key: K) -> tuple[ReconcileOutcome, bool]:
        try:
            result = await self.reconciler.reconcile(key)
        except Exception as err:
            return settle_error(self._queue, key, err, self.max_retries, self.name)
        return settle_result(self._queue, key, result)

    async def _worker(self) -> None:
        """Process keys until the queue shuts down; a failing item never ends the loop.

        Yields to the loop after every key: ``get`` on a non-empty queue and a reconcile that
        needs no I/O do not suspend, so a backlog would otherwise run in one loop step.
        """
        while True:
            try:
                if not await self.process_next_work_item():
                    return
            except Exception:
                _log.exception("controller %s: worker crashed on an item; going on", self.name)
            await asyncio.sleep(0)

    async def _shut_down(self, tasks: list[asyncio.Task[None]]) -> None:
        """Drain (bounded by ``shutdown_timeout``), then cancel the workers still busy."""
        _log.info("shutting down controller %s", self.name)
        drained = await self._queue.shut_down_with_drain(
            include_queued=True, timeout=self._shutdown_timeout
        )
        self._queue.shut_down()  # wakes idle workers; they see the shutdown and return
        busy = [task for task in tasks if not task.done()]
        for task in busy:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if not drained:
            _log.error(
                "controller %s: shutdown timed out; cancelled %d workers", self.name, len(busy)
            )
        _log.info("controller %s stopped", self.name)
