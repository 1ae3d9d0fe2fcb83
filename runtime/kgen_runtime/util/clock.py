"""An injectable clock (k8s.io/utils/clock): real time in production, stepped time in tests.

Every timed component of the runtime takes a ``clock`` argument defaulting to
:data:`REAL_CLOCK`. Times are ``float`` seconds on a monotonic scale (only differences mean
anything). A component never calls :func:`time.sleep`; it blocks through the clock, so a
:class:`FakeClock` can wake it with :meth:`FakeClock.step`.
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime
from typing import Protocol

__all__ = ["REAL_CLOCK", "Clock", "FakeClock", "RealClock", "TimeSource", "wall_clock_now"]


class TimeSource(Protocol):
    """What needs only the time (token buckets, metrics): both :class:`Clock` and the async
    clock of :mod:`kgen_runtime.util.clock_aio` provide it."""

    def now(self) -> float:
        """Return the current time in seconds on a monotonic scale."""
        ...


class Clock(Protocol):
    """The time source and the way to block on it.

    Both blocking methods wake early when someone else signals the caller (``cond`` notified,
    ``stop`` set); neither raises on timeout.
    """

    def now(self) -> float:
        """Return the current time in seconds on a monotonic scale."""
        ...

    def wait_until(self, cond: threading.Condition, deadline: float | None) -> None:
        """Like ``cond.wait(deadline - now())``; the caller must hold ``cond``.

        Returns when ``cond`` is notified, when ``deadline`` (clock time; ``None`` means never)
        has passed, or spuriously: callers re-check their predicate and the time in a loop.
        """
        ...

    def sleep(self, stop: threading.Event, seconds: float) -> bool:
        """Block for ``seconds`` or until ``stop`` is set; return ``stop.is_set()``."""
        ...


class RealClock:
    """Wall-clock time from :func:`time.monotonic`; blocking is plain ``threading`` waits."""

    now = staticmethod(time.monotonic)
    """Return :func:`time.monotonic` (the C function itself: queues call it per item)."""

    def wait_until(self, cond: threading.Condition, deadline: float | None) -> None:
        """Wait on ``cond`` until notified or ``deadline`` passes (see :class:`Clock`)."""
        if deadline is None:
            cond.wait()
            return
        remaining = deadline - time.monotonic()
        if remaining > 0:
            cond.wait(remaining)

    def sleep(self, stop: threading.Event, seconds: float) -> bool:
        """Wait on ``stop`` for ``seconds`` (see :class:`Clock`)."""
        return stop.wait(seconds) if seconds > 0 else stop.is_set()


REAL_CLOCK: Clock = RealClock()
"""The shared real clock; stateless, safe to use from any thread."""

_STOP_POLL_SECONDS = 0.001
"""How often :meth:`FakeClock.sleep` looks at its stop event, in real seconds.

Python cannot block on an Event and a second wake-up source at once, so a fake sleep waits on
the clock's own condition (woken at once by :meth:`FakeClock.step`) in slices of this length.
"""


class FakeClock:
    """A clock whose time moves only when a test calls :meth:`step` (client-go's FakeClock).

    Thread-safe. Sleepers registered through :meth:`wait_until` or :meth:`sleep` are woken by
    :meth:`step` as soon as their deadline is reached; :meth:`wait_for_sleepers` lets a test
    wait, with a real-time bound, until the code under test is blocked on the clock.
    """

    def __init__(self, start: float = 1000.0) -> None:
        """Start at ``start`` seconds (non-zero so that "time zero" bugs show up)."""
        self._now = start
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._sleepers: dict[int, tuple[float, threading.Condition | None]] = {}
        self._next_id = 0

    def now(self) -> float:
        """Return the fake time."""
        with self._lock:
            return self._now

    def step(self, seconds: float) -> None:
        """Advance the time by ``seconds`` and wake every sleeper whose deadline has come."""
        with self._lock:
            self._now += seconds
            due = [c for d, c in self._sleepers.values() if c is not None and d <= self._now]
            self._changed.notify_all()
        # Notify outside our lock: a waiter holds its own condition while it registers here.
        for cond in due:
            with cond:
                cond.notify_all()

    def sleeper_count(self) -> int:
        """Return how many threads are blocked on this clock right now."""
        with self._lock:
            return len(self._sleepers)

    def wait_for_sleepers(self, count: int, timeout: float = 5.0) -> bool:
        """Block (real time, at most ``timeout``) until at least ``count`` threads sleep here."""
        with self._lock:
            return self._changed.wait_for(lambda: len(self._sleepers) >= count, timeout)

    def wait_until(self, cond: threading.Condition, deadline: float | None) -> None:
        """Wait on ``cond`` until notified or :meth:`step` reaches ``deadline``."""
        with self._lock:
            if deadline is not None and self._now >= deadline:
                return
            key = self._register(float("inf") if deadline is None else deadline, cond)
        try:
            cond.wait()
        finally:
            self._unregister(key)

    def sleep(self, stop: threading.Event, seconds: float) -> bool:
        """Block until :meth:`step` moves the time ``seconds`` ahead, or ``stop`` is set."""
        with self._lock:
            deadline = self._now + seconds
            key = self._register(deadline, None)
            try:
                while self._now < deadline and not stop.is_set():
                    self._changed.wait(_STOP_POLL_SECONDS)
            finally:
                del self._sleepers[key]
                self._changed.notify_all()
        return stop.is_set()

    def _register(self, deadline: float, cond: threading.Condition | None) -> int:
        """Record a sleeper; the caller holds ``self._lock``."""
        key = self._next_id
        self._next_id += 1
        self._sleepers[key] = (deadline, cond)
        self._changed.notify_all()
        return key

    def _unregister(self, key: int) -> None:
        with self._lock:
            del self._sleepers[key]
            self._changed.notify_all()


def wall_clock_now() -> datetime:
    """The current UTC wall time: the default ``now`` of what is written to objects (Event
    timestamps, Lease renew times), never of durations, which the monotonic clock measures."""
    return datetime.now(UTC)
