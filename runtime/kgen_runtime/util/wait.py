"""Periodic loops, polling and backoff (apimachinery's ``util/wait``).

Every helper blocks the calling thread and returns promptly once its ``stop`` event is set
(it never sleeps past it). Time is read and slept through an injectable
:class:`~kgen_runtime.util.clock.Clock`.

Two error conventions, as in client-go:

- The loops (:func:`until`, :func:`jitter_until`, :func:`backoff_until`) run a function for
  its side effects. If it raises, the traceback is logged by
  :func:`~kgen_runtime.util.runtime.handle_crash` and the loop goes on.
- The conditions of :func:`poll_until` and :func:`exponential_backoff` answer a question. An
  exception from a condition is the error result of the whole wait (Go's ``(false, err)``):
  it propagates to the caller and the waiting ends.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.util.runtime import handle_crash

__all__ = [
    "Backoff",
    "WaitTimeoutError",
    "backoff_until",
    "exponential_backoff",
    "jitter",
    "jitter_until",
    "poll_until",
    "until",
]


class WaitTimeoutError(TimeoutError):
    """The condition did not become true in time, or the stop event was set first."""


def jitter(duration: float, max_factor: float, rand: Callable[[], float] = random.random) -> float:
    """Return a random duration in ``[duration, duration * (1 + max_factor))``.

    A ``max_factor <= 0`` means 1.0, as in client-go's ``wait.Jitter``.
    """
    if max_factor <= 0:
        max_factor = 1.0
    return duration + rand() * max_factor * duration


@dataclass(frozen=True)
class Backoff:
    """Parameters of a growing delay (client-go's ``wait.Backoff``); immutable, so shareable.

    Attributes:
        duration: The first delay, in seconds.
        factor: Each delay is the previous one times ``factor`` (0 or 1: constant).
        jitter: If positive, each delay is stretched by a random fraction up to ``jitter``.
        steps: How many delays grow; afterwards the last one repeats. For
            :func:`exponential_backoff` it is also the number of attempts.
        cap: If positive, the delay never grows past ``cap``; reaching it ends the growth.
    """

    duration: float
    factor: float = 1.0
    jitter: float = 0.0
    steps: int = 1
    cap: float = 0.0

    def __iter__(self) -> Iterator[float]:
        """Iterate over :meth:`delays` (so a Backoff can be passed where delays are wanted)."""
        return self.delays()

    def delays(self, rand: Callable[[], float] = random.random) -> Iterator[float]:
        """Yield the successive delays forever (client-go's repeated ``Backoff.Step()``)."""
        duration, steps = self.duration, self.steps
        while True:
            current = duration
            if steps >= 1:
                steps -= 1
                if self.factor != 0:
                    duration *= self.factor
                    if 0 < self.cap < duration:
                        duration, steps = self.cap, 0
            yield jitter(current, self.jitter, rand) if self.jitter > 0 else current


def backoff_until(
    fn: Callable[[], object],
    delays: Iterable[float],
    stop: threading.Event,
    *,
    sliding: bool = True,
    clock: Clock = REAL_CLOCK,
) -> None:
    """Run ``fn`` repeatedly, waiting the next of ``delays`` between runs, until ``stop`` is
    set or ``delays`` runs out.

    ``delays`` is typically a :class:`Backoff` (iterating one yields its delays forever); any
    iterable of seconds works, e.g. a generator that resets after a quiet period. With
    ``sliding`` the delay starts after ``fn`` returns; without it, the delay includes ``fn``'s
    running time (a run that took longer than the delay is followed at once by the next).
    ``stop`` is checked before every run. Exceptions from ``fn`` are logged and the loop goes
    on.
    """
    waits = iter(delays)
    while not stop.is_set():
        started = clock.now()
        planned = 0.0 if sliding else next(waits, None)
        if planned is None:
            return
        with handle_crash():
            fn()
        wait = next(waits, None) if sliding else planned - (clock.now() - started)
        if wait is None or clock.sleep(stop, wait):
            return


def jitter_until(
    fn: Callable[[], object],
    period: float,
    stop: threading.Event,
    *,
    jitter_factor: float = 0.0,
    sliding: bool = True,
    clock: Clock = REAL_CLOCK,
) -> None:
    """Run ``fn`` every ``period`` seconds (stretched by up to ``jitter_factor``) until
    ``stop`` is set; see :func:`backoff_until` for ``sliding`` and crash handling."""
    backoff = Backoff(duration=period, jitter=jitter_factor, steps=0)
    backoff_until(fn, backoff, stop, sliding=sliding, clock=clock)


def until(
    fn: Callable[[], object], period: float, stop: threading.Event, *, clock: Clock = REAL_CLOCK
) -> None:
    """Run ``fn`` every ``period`` seconds after it returns, until ``stop`` is set.

    client-go's ``wait.Until``: a sliding, unjittered :func:`jitter_until`.
    """
    jitter_until(fn, period, stop, clock=clock)


def poll_until(
    condition: Callable[[], bool],
    interval: float,
    timeout: float | None = None,
    stop: threading.Event | None = None,
    *,
    immediate: bool = False,
    clock: Clock = REAL_CLOCK,
) -> None:
    """Check ``condition`` every ``interval`` seconds until it returns true.

    Args:
        condition: Called from this thread; an exception ends the wait and propagates.
        interval: Seconds between checks.
        timeout: Give up after this many seconds; ``None`` waits until ``stop``.
        stop: Give up as soon as it is set.
        immediate: Check once before the first interval.
        clock: The time source.

    Raises:
        WaitTimeoutError: ``timeout`` passed or ``stop`` was set before the condition held.
    """
    stop = stop if stop is not None else threading.Event()
    deadline = None if timeout is None else clock.now() + timeout
    if immediate and condition():
        return
    while True:
        remaining = None if deadline is None else deadline - clock.now()
        if remaining is not None and remaining <= 0:
            raise WaitTimeoutError("timed out waiting for the condition")
        if clock.sleep(stop, interval if remaining is None else min(interval, remaining)):
            raise WaitTimeoutError("stopped while waiting for the condition")
        if remaining is not None and remaining < interval:
            raise WaitTimeoutError("timed out waiting for the condition")
        if condition():
            return


def exponential_backoff(
    backoff: Backoff,
    condition: Callable[[], bool],
    *,
    stop: threading.Event | None = None,
    clock: Clock = REAL_CLOCK,
) -> None:
    """Try ``condition`` up to ``backoff.steps`` times, sleeping ``backoff``'s delays between.

    client-go's ``wait.ExponentialBackoff``: returns when the condition holds; an exception
    from it propagates at once.

    Raises:
        WaitTimeoutError: every attempt returned false (or ``steps < 1``), or ``stop`` was set.
    """
    stop = stop if stop is not None else threading.Event()
    delays = backoff.delays()
    for attempt in range(1, backoff.steps + 1):
        if condition():
            return
        if attempt == backoff.steps:
            break
        if clock.sleep(stop, next(delays)):
            raise WaitTimeoutError("stopped while waiting for the condition")
    raise WaitTimeoutError("timed out waiting for the condition")
