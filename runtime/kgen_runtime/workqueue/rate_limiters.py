"""Rate limiters (client-go's ``default_rate_limiters.go``): how long to wait before a retry.

A limiter answers :meth:`RateLimiter.when` ("how long should this item wait now?"), counts
failures per item and forgets them. Limiters only compute delays; the rate-limiting queue does
the waiting. All limiters are thread-safe; the token bucket reads an injectable clock, the
others do not depend on time at all. Durations are ``float`` seconds.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from kgen_runtime.util.clock import REAL_CLOCK, TimeSource

__all__ = [
    "BucketRateLimiter",
    "ItemExponentialFailureRateLimiter",
    "ItemFastSlowRateLimiter",
    "MaxOfRateLimiter",
    "RateLimiter",
    "WithMaxWaitRateLimiter",
    "default_controller_rate_limiter",
]

T = TypeVar("T", bound=Hashable)
T_contra = TypeVar("T_contra", bound=Hashable, contravariant=True)

_MAX_EXPONENT = 1023
"""Beyond this, ``2.0 ** exp`` overflows a float; every such delay is the cap anyway."""


class RateLimiter(Protocol[T_contra]):
    """client-go's ``TypedRateLimiter``."""

    def when(self, item: T_contra) -> float:
        """Record one more failure of ``item`` and return how long it should wait (seconds)."""
        ...

    def forget(self, item: T_contra) -> None:
        """Stop tracking ``item`` (it succeeded); its next failure starts afresh."""
        ...

    def num_requeues(self, item: T_contra) -> int:
        """Return how many failures of ``item`` are being tracked."""
        ...


class ItemExponentialFailureRateLimiter(Generic[T]):
    """Per item, ``base_delay * 2 ** failures``, capped at ``max_delay``."""

    def __init__(self, base_delay: float = 0.005, max_delay: float = 1000.0) -> None:
        """Defaults are client-go's: 5 ms doubling up to 1000 s."""
        self._base_delay = base_delay
        self._max_delay = max_delay
        self._failures: dict[T, int] = {}
        self._lock = threading.Lock()

    def when(self, item: T) -> float:
        """Return ``base_delay * 2 ** n`` for the item's n-th failure (from 0), capped."""
        with self._lock:
            exponent = self._failures.get(item, 0)
            self._failures[item] = exponent + 1
        return min(self._base_delay * 2.0 ** min(exponent, _MAX_EXPONENT), self._max_delay)

    def forget(self, item: T) -> None:
        """Reset the item's failure count."""
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        """Return the item's failure count."""
        with self._lock:
            return self._failures.get(item, 0)


class ItemFastSlowRateLimiter(Generic[T]):
    """Per item: ``fast_delay`` for the first ``max_fast_attempts`` failures, then ``slow_delay``.
    """

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        """Create the limiter (client-go has no defaults for this one)."""
        self._fast_delay = fast_delay
        self._slow_delay = slow_delay
        self._max_fast_attempts = max_fast_attempts
        self._failures: dict[T, int] = {}
        self._lock = threading.Lock()

    def when(self, item: T) -> float:
        """Count a failure; return the fast delay while within the fast attempts."""
        with self._lock:
            failures = self._failures.get(item, 0) + 1
            self._failures[item] = failures
        return self._fast_delay if failures <= self._max_fast_attempts else self._slow_delay

    def forget(self, item: T) -> None:
        """Reset the item's failure count."""
        with self._lock:
            self._failures.pop(item, None)

    def num_requeues(self, item: T) -> int:
        """Return the item's failure count."""
        with self._lock:
            return self._failures.get(item, 0)


class BucketRateLimiter(Generic[T]):
    """An overall token bucket (golang.org/x/time/rate): ``qps`` refill, ``burst`` capacity.

    Every :meth:`when` reserves one token; the delay is how long until that token exists. The
    bucket starts full. It does not track items: :meth:`forget` does nothing and
    :meth:`num_requeues` is always 0.
    """

    def __init__(
        self, qps: float = 10.0, burst: int = 100, *, clock: TimeSource = REAL_CLOCK
    ) -> None:
        """Defaults are client-go's: 10 qps, burst 100."""
        if qps <= 0 or burst < 1:
            raise ValueError(f"need qps > 0 and burst >= 1, got qps={qps} burst={burst}")
        self._qps = qps
        self._burst = float(burst)
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock.now()
        self._lock = threading.Lock()

    def when(self, item: T) -> float:
        """Reserve a token; return 0 when one is available, else the wait until it is."""
        with self._lock:
            now = self._clock.now()
            elapsed = max(0.0, now - self._last)
            tokens = min(self._burst, self._tokens + elapsed * self._qps) - 1.0
            self._tokens = tokens
            self._last = now
        return -tokens / self._qps if tokens < 0 else 0.0

    def forget(self, item: T) -> None:
        """Do nothing: the bucket is shared by all items."""

    def num_requeues(self, item: T) -> int:
        """Return 0: the bucket does not count per item."""
        return 0


class MaxOfRateLimiter(Generic[T]):
    """Combines limiters: the longest delay, the highest count; forgets in all of them."""

    def __init__(self, *limiters: RateLimiter[T]) -> None:
        """Combine ``limiters`` (at least one)."""
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self._limiters = limiters

    def when(self, item: T) -> float:
        """Ask every limiter (each records the failure) and return the longest delay."""
        return max([limiter.when(item) for limiter in self._limiters])

    def forget(self, item: T) -> None:
        """Forget the item in every limiter."""
        for limiter in self._limiters:
            limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """Return the highest count among the limiters."""
        return max(limiter.num_requeues(item) for limiter in self._limiters)


class WithMaxWaitRateLimiter(Generic[T]):
    """Caps another limiter's delays at ``max_delay`` (client-go's ``WithMaxWaitRateLimiter``).

    Counting and forgetting are the wrapped limiter's.
    """

    def __init__(self, limiter: RateLimiter[T], max_delay: float) -> None:
        """Wrap ``limiter``."""
        self._limiter = limiter
        self._max_delay = max_delay

    def when(self, item: T) -> float:
        """Return the wrapped limiter's delay, at most ``max_delay``."""
        return min(self._limiter.when(item), self._max_delay)

    def forget(self, item: T) -> None:
        """Forget the item in the wrapped limiter."""
        self._limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """Return the wrapped limiter's count."""
        return self._limiter.num_requeues(item)


def default_controller_rate_limiter(*, clock: TimeSource = REAL_CLOCK) -> MaxOfRateLimiter[T]:
    """client-go's ``DefaultControllerRateLimiter``: per-item exponential (5 ms to 1000 s)
    combined with an overall token bucket (10 qps, burst 100)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock=clock),
    )
