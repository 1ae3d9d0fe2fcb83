"""The reflector's retry delay: apimachinery's ``ExponentialBackoffManager``.

Each call to :meth:`ExponentialBackoff.next_delay` returns the next delay and doubles the base
(0.8 s → 1.6 s → … capped at 30 s), each with up to 100 % jitter added. If more than
``reset_after`` (2 minutes) passed since the previous call — the loop was healthy that long —
the base starts over at the initial delay. These are client-go's reflector defaults.

Iterating an instance yields :meth:`~ExponentialBackoff.next_delay` forever, so it can drive
:func:`kgen_runtime.util.wait.backoff_until`. Not thread-safe: one instance belongs to one loop.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from kgen_runtime.util.clock import REAL_CLOCK, TimeSource

__all__ = ["ExponentialBackoff"]


class ExponentialBackoff:
    """Doubling delays with jitter and a reset after a healthy period (see module docstring)."""

    def __init__(
        self,
        initial: float = 0.8,
        cap: float = 30.0,
        reset_after: float = 120.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        *,
        clock: TimeSource = REAL_CLOCK,
        rng: random.Random | None = None,
    ) -> None:
        self._initial = initial
        self._cap = cap
        self._reset_after = reset_after
        self._factor = factor
        self._jitter = jitter
        self._clock = clock
        self._rng = rng or random.Random()
        self._base = initial
        self._last: float | None = None

    def next_delay(self) -> float:
        """The delay to wait now; advances the schedule."""
        now = self._clock.now()
        if self._last is None or now - self._last > self._reset_after:
            self._base = self._initial
        self._last = now
        delay = self._base
        self._base = min(self._base * self._factor, self._cap)
        if self._jitter > 0:
            delay += self._rng.random() * self._jitter * delay
        return delay

    def __iter__(self) -> Iterator[float]:
        """Yield :meth:`next_delay` forever (each taken when the loop is about to wait)."""
        while True:
            yield self.next_delay()
