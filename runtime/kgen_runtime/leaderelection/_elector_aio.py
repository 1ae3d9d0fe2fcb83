"""The asyncio twin of :mod:`kgen_runtime.leaderelection._elector`: leader election as a task.

::

    elector = AsyncLeaderElector(
        AsyncLeaseLock(clientset.coordination_v1.leases("kube-system"), "foo", identity),
        on_started_leading=lead,             # async def lead(): ... (cancelled when it ends)
        on_stopped_leading=lambda: ...,      # plain or async def
    )
    task = asyncio.create_task(elector.run())   # until cancelled or leadership is lost
    ...
    task.cancel()                               # stop: releases with release_on_cancel

The guarantees and limits are :class:`~kgen_runtime.controller.LeaderElector`'s, and so are
the decisions (:class:`~kgen_runtime.leaderelection._core.ElectionState`, shared): the same
acquire/renew/release records, expiry measured on the candidate's own clock, renew deadline,
jittered retries, new-leader reports. What differs:

* ``on_started_leading()`` is a coroutine function run as a task of its own once the lease
  is acquired; that task is cancelled when leadership ends (client-go cancels its context).
* Stopping is cancelling :meth:`AsyncLeaderElector.run`: it cancels the leading task, waits
  for it, releases the lease (``release_on_cancel``), calls ``on_stopped_leading`` and
  re-raises the cancellation. When renewal fails instead, ``run`` returns normally.
* A renewal attempt that hangs is cut at the renew deadline (client-go's context timeout).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Protocol

from kgen_runtime.api.coordination.v1.models import Lease
from kgen_runtime.events import EventRecorder
from kgen_runtime.leaderelection._core import (
    JITTER_FACTOR,
    Attempt,
    ElectionState,
    LeaderElectionRecord,
    LeaseLockBase,
    call_record,
    check_durations,
)
from kgen_runtime.util.clock import wall_clock_now
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock
from kgen_runtime.util.wait import jitter

__all__ = ["AsyncLeaderElector", "AsyncLeaseClient", "AsyncLeaseLock"]

_log = logging.getLogger("kgen_runtime.controller.leaderelection")


class AsyncLeaseClient(Protocol):
    """The verbs :class:`AsyncLeaseLock` uses of an async typed Lease client."""

    async def get(self, name: str) -> Lease: ...

    async def create(self, obj: Lease) -> Lease: ...

    async def update(self, obj: Lease) -> Lease: ...


class AsyncLeaseLock(LeaseLockBase):
    """A resource lock on one Lease, awaited (the twin of
    :class:`~kgen_runtime.controller.LeaseLock`: the same optimistic writes and Events)."""

    def __init__(
        self,
        client: AsyncLeaseClient,
        name: str,
        identity: str,
        *,
        event_recorder: EventRecorder | None = None,
    ) -> None:
        super().__init__(name, identity, event_recorder=event_recorder)
        self.client = client

    async def get(self) -> LeaderElectionRecord:
        """Read the Lease; raises ``NotFoundError`` if it does not exist."""
        return self._read(await self.client.get(self.name))

    async def create(self, record: LeaderElectionRecord) -> None:
        """Create the Lease holding ``record``."""
        self._lease = await self.client.create(self._new_lease(record))

    async def update(self, record: LeaderElectionRecord) -> None:
        """Replace the Lease's spec with ``record`` (``RuntimeError`` before a read)."""
        self._lease = await self.client.update(self._updated_lease(record))


class AsyncLeaderElector:
    """Runs one candidate of a leader election as a coroutine (see the module docstring).

    Arguments as for :class:`~kgen_runtime.controller.LeaderElector`, except that
    ``on_started_leading`` is a coroutine function (run as a task, cancelled when
    leadership ends), ``on_stopped_leading`` may be plain or ``async def``, and ``clock`` is
    an :class:`AsyncClock`. Use it from one event loop; :meth:`is_leader`,
    :meth:`get_leader` and :meth:`check` may be called from any thread.

    Raises:
        ValueError: the durations do not satisfy lease_duration > renew_deadline >
            JITTER_FACTOR * retry_period > 0.
    """

    def __init__(
        self,
        lock: AsyncLeaseLock,
        *,
        on_started_leading: Callable[[], Awaitable[None]],
        on_stopped_leading: Callable[[], Awaitable[None] | None],
        on_new_leader: Callable[[str], None] | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = False,
        name: str = "",
        clock: AsyncClock = ASYNC_REAL_CLOCK,
        now: Callable[[], datetime] = wall_clock_now,
        rand: Callable[[], float] = random.random,
    ) -> None:
        check_durations(lease_duration, renew_deadline, retry_period)
        self.lock = lock
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self.name = name or lock.describe()
        self._clock = clock
        self._rand = rand
        self._state = ElectionState(lock.identity, lease_duration, clock.now, now)

    async def run(self) -> None:
        """Acquire the lease, lead until renewal fails (then return) or until this task is
        cancelled (then release with ``release_on_cancel`` and re-raise).

        ``on_stopped_leading`` is always called on the way out.
        """
        leading: asyncio.Task[None] | None = None
        try:
            await self._acquire()
            _log.info("%s: %s became leader", self.name, self.lock.identity)
            self.lock.record_event("became leader")
            leading = asyncio.create_task(self._lead(), name=f"{self.name}-leading")
            await self._renew()
            _log.info("%s: %s stopped leading", self.name, self.lock.identity)
        finally:
            if leading is not None:
                leading.cancel()
                await asyncio.gather(leading, return_exceptions=True)
                if self.release_on_cancel:
                    await self._release()
            await self._stopped()

    def is_leader(self) -> bool:
        """Whether the last observed record names this candidate."""
        return self._state.is_leader()

    def get_leader(self) -> str:
        """The holder in the last observed record (``""`` if none)."""
        return self._state.leader()

    def check(self, max_tolerable_expired_lease: float = 0.0) -> bool:
        """A health check: false only for a leader whose lease expired more than
        ``max_tolerable_expired_lease`` seconds ago."""
        return self._state.healthy(max_tolerable_expired_lease)

    # -- the loops ----------------------------------------------------------------------------

    async def _lead(self) -> None:
        try:
            await self.on_started_leading()
        except Exception:
            _log.exception("%s: on_started_leading failed", self.name)

    async def _stopped(self) -> None:
        try:
            result = self.on_stopped_leading()
            if inspect.isawaitable(result):
                await result
        except Exception:
            _log.exception("%s: on_stopped_leading failed", self.name)

    async def _acquire(self) -> None:
        """Try every jittered ``retry_period`` until acquired (cancellation ends it)."""
        _log.info("%s: attempting to acquire leader lease", self.name)
        while True:
            acquired = await self._try_acquire_or_renew()
            self._maybe_report_transition()
            if acquired:
                return
            await self._clock.sleep(None, jitter(self.retry_period, JITTER_FACTOR, self._rand))

    async def _renew(self) -> None:
        """Renew every ``retry_period`` until a renewal fails for ``renew_deadline``."""
        while True:
            renewed = await self._renew_within_deadline()
            self._maybe_report_transition()
            if not renewed:
                _log.info("%s: failed to renew lease within %ss", self.name, self.renew_deadline)
                self.lock.record_event("stopped leading")
                return
            await self._clock.sleep(None, self.retry_period)

    async def _renew_within_deadline(self) -> bool:
        deadline = self._clock.now() + self.renew_deadline
        while True:
            try:
                async with asyncio.timeout(max(deadline - self._clock.now(), 0.0)):
                    if await self._try_acquire_or_renew():
                        return True
            except TimeoutError:
                _log.error("%s: renewing the lease did not finish by the renew deadline",
                           self.name)
                return False
            remaining = deadline - self._clock.now()
            if remaining <= 0:
                return False
            await self._clock.sleep(None, min(self.retry_period, remaining))

    # -- one attempt --------------------------------------------------------------------------

    async def _try_acquire_or_renew(self) -> bool:
        return await self._perform(
            self._state.try_acquire_or_renew(self.name, self.lock.describe()))

    async def _release(self) -> None:
        await self._perform(self._state.try_release(self.name))

    async def _perform(self, attempt: Attempt) -> bool:
        """Await the lock calls of ``attempt`` (the blocking elector's, decided by
        :class:`ElectionState`); its outcome."""
        try:
            call = next(attempt)
            while True:
                try:
                    result: LeaderElectionRecord | None = None
                    if call.verb == "get":
                        result = await self.lock.get()
                    elif call.verb == "create":
                        await self.lock.create(call_record(call))
                    else:
                        await self.lock.update(call_record(call))
                except Exception as err:
                    call = attempt.throw(err)
                else:
                    call = attempt.send(result)
        except StopIteration as done:
            return bool(done.value)

    def _maybe_report_transition(self) -> None:
        holder = self._state.new_leader()
        if holder is None:
            return
        _log.info("%s: new leader elected: %r", self.name, holder)
        if self.on_new_leader is not None:
            try:
                self.on_new_leader(holder)
            except Exception:
                _log.exception("%s: on_new_leader failed", self.name)
