"""Client-side request throttling (client-go's flowcontrol token bucket).

The bucket holds up to ``burst`` tokens and refills at ``qps`` tokens per second; each request
takes one. Waiters reserve their token under the lock and then wait outside it, so callers are
served in arrival order and a burst of threads or tasks never overshoots the configured rate.
The bucket itself never waits: :func:`accept` (threads) and :func:`accept_async` (asyncio) do.
"""

from __future__ import annotations

import asyncio
import threading

from kgen_runtime.util.clock import Clock, TimeSource
from kgen_runtime.util.clock_aio import AsyncClock

__all__ = ["TokenBucket", "accept", "accept_async"]


class TokenBucket:
    """Allows ``qps`` requests per second on average with bursts of up to ``burst``.

    Thread-safe. The bucket starts full, like client-go's ``NewTokenBucketRateLimiter``.
    """

    def __init__(self, qps: float, burst: int, clock: TimeSource) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(f"TokenBucket needs qps > 0 and burst >= 1, got {qps}, {burst}")
        self._qps = qps
        self._burst = float(burst)
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = float(burst)
        self._last = clock.now()

    def reserve(self) -> float:
        """Take a token now, going into debt if needed; return how long to wait before using it."""
        with self._lock:
            now = self._clock.now()
            self._tokens = min(self._burst, self._tokens + (now - self._last) * self._qps)
            self._last = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self._qps


def accept(bucket: TokenBucket, clock: Clock, stop: threading.Event) -> bool:
    """Block until a token is available; return False (token spent) if ``stop`` was set."""
    delay = bucket.reserve()
    if delay <= 0:
        return not stop.is_set()
    return not clock.sleep(stop, delay)


async def accept_async(bucket: TokenBucket, clock: AsyncClock, stop: asyncio.Event) -> bool:
    """:func:`accept` for a coroutine: waits on ``clock`` without blocking the event loop."""
    delay = bucket.reserve()
    if delay <= 0:
        return not stop.is_set()
    return not await clock.sleep(stop, delay)
