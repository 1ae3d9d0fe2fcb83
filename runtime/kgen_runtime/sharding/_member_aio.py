"""A ring member as an asyncio task (the twin of :class:`~kgen_runtime.sharding.ShardMember`:
the same rounds, decided by the same :func:`member_round`, awaited)::

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
from typing import Protocol

from kgen_runtime.api.coordination.v1.models import Lease, LeaseList
from kgen_runtime.rest import ListOptions, Preconditions
from kgen_runtime.sharding._coordinator import (
    DeleteLease,
    ListLeases,
    Round,
    ShardCall,
    member_round,
    utc_now,
)
from kgen_runtime.sharding._member import MemberBase, RangesCallback
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock

__all__ = ["AsyncShardLeaseClient", "AsyncShardMember"]


class AsyncShardLeaseClient(Protocol):
    """The verbs :class:`AsyncShardMember` uses of an async typed Lease client."""

    async def list(self, options: ListOptions | None = None) -> LeaseList: ...

    async def create(self, obj: Lease) -> Lease: ...

    async def update(self, obj: Lease) -> Lease: ...

    async def delete(self, name: str, *, preconditions: Preconditions | None = None) -> None: ...


class AsyncShardMember(MemberBase):
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
        super().__init__(ring, identity, clock.now, on_ranges_changed, lease_duration,
                         renew_period, wall_now)
        self.client = client
        self._clock = clock
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

    async def _round(self) -> None:
        await self._perform(member_round(self.coordinator, self._clock.now))
        self._report()

    async def _perform(self, calls: Round) -> None:
        """Make the API calls of ``calls``, sending back each result or throwing in its error."""
        try:
            call = next(calls)
            while True:
                try:
                    result = await self._call(call)
                except Exception as err:
                    call = calls.throw(err)
                else:
                    call = calls.send(result)
        except StopIteration:
            return

    async def _call(self, call: ShardCall) -> object:
        if isinstance(call, ListLeases):
            listed = await self.client.list(ListOptions(label_selector=call.label_selector))
            return listed.items
        if isinstance(call, DeleteLease):
            precondition = Preconditions(resource_version=call.resource_version)
            await self.client.delete(call.name, preconditions=precondition)
            return None
        if call.lease.metadata is not None and call.lease.metadata.resource_version:
            return await self.client.update(call.lease)
        return await self.client.create(call.lease)
