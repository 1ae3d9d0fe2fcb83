"""The asyncio twin of :mod:`kgen_runtime.util.clock`: real time in production, stepped in tests.

Every timed async component takes a ``clock`` defaulting to :data:`ASYNC_REAL_CLOCK`, reads the
time with ``now()`` (the same monotonic scale as the blocking clock's) and waits with
``await clock.sleep(stop, seconds)``, which an :class:`asyncio.Event` cuts short, so a
:class:`FakeAsyncClock` can wake it with :meth:`FakeAsyncClock.step`.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol

__all__ = ["ASYNC_REAL_CLOCK", "AsyncClock", "FakeAsyncClock", "RealAsyncClock"]


class AsyncClock(Protocol):
    """The time source and the way to wait on it from a coroutine."""

    def now(self) -> float:
        """Return the current time in seconds on a monotonic scale."""
        ...

    async def sleep(self, stop: asyncio.Event | None, seconds: float) -> bool:
        """Wait ``seconds`` or until ``stop`` is set; return whether ``stop`` is set."""
        ...


class RealAsyncClock:
    """:func:`time.monotonic` and :func:`asyncio.sleep`/``asyncio.timeout``."""

    now = staticmethod(time.monotonic)

    async def sleep(self, stop: asyncio.Event | None, seconds: float) -> bool:
        """Wait on ``stop`` for ``seconds`` (see :class:`AsyncClock`)."""
        if stop is None:
            await asyncio.sleep(max(seconds, 0.0))
            return False
        if seconds > 0 and not stop.is_set():
            try:
                async with asyncio.timeout(seconds):
                    await stop.wait()
            except TimeoutError:
                pass
        return stop.is_set()


ASYNC_REAL_CLOCK: AsyncClock = RealAsyncClock()
"""The shared real async clock; stateless, usable from any event loop."""


class FakeAsyncClock:
    """A clock whose time moves only when a test calls :meth:`step`.

    Single event loop. Sleepers are woken by :meth:`step` once their deadline is reached (or
    by their ``stop``); :meth:`wait_for_sleepers` lets a test wait until the code under test
    is blocked on the clock.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._sleepers: dict[asyncio.Future[None], float] = {}
        self._changed = asyncio.Condition()
        #: Every ``seconds`` asked of :meth:`sleep`, in order (zero and negative included).
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self._now

    def step(self, seconds: float) -> None:
        """Advance the time and wake every sleeper whose deadline has come."""
        self._now += seconds
        for future, deadline in list(self._sleepers.items()):
            if deadline <= self._now and not future.done():
                future.set_result(None)

    def sleeper_count(self) -> int:
        return len(self._sleepers)

    async def wait_for_sleepers(self, count: int) -> None:
        """Return once at least ``count`` coroutines sleep here (bound it with a timeout)."""
        async with self._changed:
            await self._changed.wait_for(lambda: len(self._sleepers) >= count)

    async def sleep(self, stop: asyncio.Event | None, seconds: float) -> bool:
        """Wait until :meth:`step` moves the time ``seconds`` ahead, or ``stop`` is set."""
        self.sleeps.append(seconds)
        if seconds <= 0 or (stop is not None and stop.is_set()):
            return stop is not None and stop.is_set()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._sleepers[future] = self._now + seconds
        await self._notify()
        stopper = asyncio.ensure_future(stop.wait()) if stop is not None else None
        try:
            waiting: set[asyncio.Future[Any]] = {future}
            if stopper is not None:
                waiting.add(stopper)
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if stopper is not None:
                stopper.cancel()
            del self._sleepers[future]
            await self._notify()
        return stop is not None and stop.is_set()

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()
