"""A ring member's rounds against the API server's Leases: each LISTs the ring's Leases (by
the ring's label), feeds them to the coordinator (:func:`member_round` decides) and writes
the member's own Lease as asked: create, update with its ``resourceVersion``, or delete when
it has left. The members on a thread and on a task only schedule the rounds.
"""

from __future__ import annotations

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
)
from kgen_runtime.sharding._member_core import MemberBase, RangesCallback
from kgen_runtime.util.clock_aio import AsyncClock

__all__ = ["AsyncMemberRounds", "AsyncShardLeaseClient"]


class AsyncShardLeaseClient(Protocol):
    """The verbs a ring member uses of a typed Lease client of one namespace."""

    async def list(self, options: ListOptions | None = None) -> LeaseList: ...

    async def create(self, obj: Lease) -> Lease: ...

    async def update(self, obj: Lease) -> Lease: ...

    async def delete(self, name: str, *, preconditions: Preconditions | None = None) -> None: ...


class AsyncMemberRounds(MemberBase):
    """A member's rounds over ``client``, timed by ``clock`` (see the module docstring)."""

    def __init__(
        self,
        client: AsyncShardLeaseClient,
        ring: str,
        identity: str,
        clock: AsyncClock,
        on_ranges_changed: RangesCallback | None,
        lease_duration: float,
        renew_period: float,
        wall_now: Callable[[], datetime],
    ) -> None:
        super().__init__(ring, identity, clock.now, on_ranges_changed, lease_duration,
                         renew_period, wall_now)
        self.client = client
        self._clock = clock

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
