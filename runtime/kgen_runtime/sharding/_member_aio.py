"""A ring member as an asyncio task (the twin of :class:`~kgen_runtime.sharding.ShardMember`:
the same rounds, :mod:`._rounds_aio`, awaited)::

    member = AsyncShardMember(clientset.coordination_v1.leases("my-ns"), "foo-controller",
                              pod_name, on_ranges_changed=informer.set_ranges)
    member.start()                  # a task on the running loop
    ...
    await member.stop()             # releases every range, deletes the Lease
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime

from kgen_runtime.sharding._coordinator import utc_now
from kgen_runtime.sharding._member_core import RangesCallback
from kgen_runtime.sharding._rounds_aio import AsyncMemberRounds, AsyncShardLeaseClient
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock

__all__ = ["AsyncShardMember"]


class AsyncShardMember(AsyncMemberRounds):
    """One member of the ring ``ring``; arguments as for
    :class:`~kgen_runtime.sharding.ShardMember`, with an :class:`AsyncClock`.
    ``on_ranges_changed`` runs on the event loop. Use it from one event loop; :meth:`ranges`,
    :meth:`begin` and :meth:`end` may be called from any thread."""

    def __init__(
        self,
        client: AsyncShardLeaseClient,
        ring: str,
        identity: str,
        *,
        on_ranges_changed: RangesCallback | None = None,
        lease_duration: float = 15.0,
        renew_period: float = 5.0,
        clock: AsyncClock = ASYNC_REAL_CLOCK,
        wall_now: Callable[[], datetime] = utc_now,
    ) -> None:
        super().__init__(client, ring, identity, clock, on_ranges_changed, lease_duration,
                         renew_period, wall_now)
        self._stop: asyncio.Event | None = None
        self._ended: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None

    def end(self, digest: int) -> None:
        """A reconcile :meth:`begin` accepted has ended."""
        self.coordinator.end(digest)
        if self._loop is not None and self._ended is not None:
            self._loop.call_soon_threadsafe(self._ended.set)

    async def run(self, stop: asyncio.Event) -> None:
        """Take part in the ring until ``stop`` is set, then leave it (see
        :meth:`ShardMember.run <kgen_runtime.sharding.ShardMember.run>`)."""
        self._loop = asyncio.get_running_loop()
        self._ended = ended = asyncio.Event()
        coordinator = self.coordinator
        while True:
            await self._round()
            if await self._clock.sleep(stop, coordinator.renew_period):
                break
        coordinator.leave()
        self._report()
        deadline = self._clock.now() + coordinator.lease_duration + coordinator.renew_period
        while not coordinator.left and self._clock.now() < deadline:
            ended.clear()
            await self._round()
            if not coordinator.left:
                await self._clock.sleep(ended, coordinator.renew_period)

    def start(self) -> None:
        """Run :meth:`run` as a task of the running loop until :meth:`stop`."""
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self.run(self._stop),
                                         name=f"shard-{self.coordinator.identity}")

    async def stop(self) -> None:
        """Leave the ring and wait for the task :meth:`start` created."""
        if self._stop is not None and self._task is not None:
            self._stop.set()
            await self._task
