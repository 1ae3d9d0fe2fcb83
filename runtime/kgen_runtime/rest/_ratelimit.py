"""Client-side request throttling (client-go's flowcontrol token bucket).

The bucket holds up to ``burst`` tokens and refills at ``qps`` tokens per second; each request
takes one. Waiters reserve their token under the lock and then sleep outside it, so callers are
served in arrival order and a burst of threads never overshoots the configured rate.
"""

from __future__ import annotations

import threading

from kgen_runtime.util.clock import Clock

__all__ = ["TokenBucket"]


class TokenBucket:
    """Allows ``qps`` requests per second on average with bursts of up to ``burst``.

    Thread-safe. The bucket starts full, like client-go's ``NewTokenBucketRateLimiter``.
    """

    def __init__(self, qps: float, burst: int, clock: Clock) -> None:
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

    def accept(self, stop: threading.Event) -> bool:
        """Block until a token is available; return False (token spent) if ``stop`` was set."""
        delay = self.reserve()
        if delay <= 0:
            return not stop.is_set()
        return not self._clock.sleep(stop, delay)
