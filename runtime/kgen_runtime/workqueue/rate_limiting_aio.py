"""The rate-limiting queue (client-go's ``RateLimitingInterface``): retries with backoff.

The rate limiters (:mod:`kgen_runtime.workqueue.rate_limiters`) only compute delays, which the
delaying queue then waits out. The canonical worker loop::

    item, shutdown = await queue.get()
    if shutdown:
        return
    try:
        await sync(item)
    except Exception:
        queue.add_rate_limited(item)   # retry later, backing off per the limiter
    else:
        queue.forget(item)             # success: reset the item's backoff
    finally:
        queue.done(item)
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock
from kgen_runtime.workqueue.delaying_aio import AsyncDelayingQueue
from kgen_runtime.workqueue.metrics import PrometheusMetricsProvider
from kgen_runtime.workqueue.rate_limiters import RateLimiter, default_controller_rate_limiter

__all__ = ["AsyncRateLimitingQueue"]

T = TypeVar("T", bound=Hashable)


class AsyncRateLimitingQueue(AsyncDelayingQueue[T]):
    """A :class:`AsyncDelayingQueue` that asks a :class:`RateLimiter` how long each retry waits.

    As safe to share as :class:`AsyncDelayingQueue`. The limiter's per-item state lives until
    :meth:`forget`; call it when an item succeeds (or is given up on), or the limiter keeps
    that item's failure count forever.
    """

    def __init__(
        self,
        rate_limiter: RateLimiter[T] | None = None,
        *,
        name: str = "",
        clock: AsyncClock = ASYNC_REAL_CLOCK,
        metrics_provider: PrometheusMetricsProvider | None = None,
    ) -> None:
        """Create the queue.

        Args:
            rate_limiter: Defaults to :func:`default_controller_rate_limiter` on ``clock``.
            name: See :class:`AsyncQueue`.
            clock: See :class:`AsyncQueue`.
            metrics_provider: See :class:`AsyncQueue`.
        """
        super().__init__(name=name, clock=clock, metrics_provider=metrics_provider)
        if rate_limiter is None:
            rate_limiter = default_controller_rate_limiter(clock=clock)
        self.rate_limiter = rate_limiter

    def add_rate_limited(self, item: T) -> None:
        """Add ``item`` after the delay the rate limiter gives it (recording a failure)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Tell the limiter ``item`` succeeded; it does not remove the item from the queue."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """Return how many times ``item`` has been rate-limited since it was last forgotten."""
        return self.rate_limiter.num_requeues(item)
