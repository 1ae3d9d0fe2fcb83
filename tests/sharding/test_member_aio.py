"""AsyncShardMember against the test API server on a fake async clock: two members split the
ring; one that leaves with a reconcile in flight keeps that range until the reconcile ends,
then deletes its Lease, and the other takes everything in its next round."""

from __future__ import annotations

import asyncio

from kgen_runtime.api.clientset import AsyncClientset
from kgen_runtime.api.coordination.v1.models import Lease, LeaseList
from kgen_runtime.rest import ListOptions, Preconditions
from kgen_runtime.sharding import (
    HASH_SPACE,
    AsyncShardLeaseClient,
    AsyncShardMember,
    HashRange,
    HashRing,
    merge,
)
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.util.clock_aio import FakeAsyncClock

NS = "kube-system"
DURATION, PERIOD, BOUND = 10.0, 2.0, 5.0
EVERYTHING = (HashRange(0, HASH_SPACE),)


class Counted:
    """An async Lease client that counts LISTs (a member's rounds)."""

    def __init__(self, client: AsyncShardLeaseClient) -> None:
        self.client = client
        self.lists = 0

    async def list(self, options: ListOptions | None = None) -> LeaseList:
        result = await self.client.list(options)
        self.lists += 1
        return result

    async def create(self, obj: Lease) -> Lease:
        return await self.client.create(obj)

    async def update(self, obj: Lease) -> Lease:
        return await self.client.update(obj)

    async def delete(self, name: str, *, preconditions: Preconditions | None = None) -> None:
        await self.client.delete(name, preconditions=preconditions)


def test_async_members_split_the_ring_and_a_leaver_drains_before_handing_over() -> None:
    async def main() -> None:
        with TestAPIServer() as server:
            clientset = AsyncClientset.for_config(server.config())
            try:
                await scenario(clientset)
            finally:
                await clientset.aclose()

    async def scenario(clientset: AsyncClientset) -> None:
        clock = FakeAsyncClock()
        leases = clientset.coordination_v1.leases(NS)
        clients = {name: Counted(leases) for name in ("a", "b")}
        members = {name: AsyncShardMember(client, "ring", name, lease_duration=DURATION,
                                          renew_period=PERIOD, clock=clock)
                   for name, client in clients.items()}
        sleeping = len(members)

        async def until(condition: object) -> None:
            assert callable(condition)
            async with asyncio.timeout(BOUND):
                while not condition():
                    await asyncio.sleep(0.001)

        async def tick(names: tuple[str, ...]) -> None:
            async with asyncio.timeout(BOUND):
                await clock.wait_for_sleepers(sleeping)
            before = {name: clients[name].lists for name in names}
            clock.step(PERIOD)
            for name in names:
                await until(lambda name=name: clients[name].lists > before[name])
            async with asyncio.timeout(BOUND):
                await clock.wait_for_sleepers(sleeping)

        for member in members.values():
            member.start()
        two = HashRing(["a", "b"])
        for _ in range(4):
            await tick(("a", "b"))
        assert members["a"].ranges() == two.ranges_of("a")
        assert members["b"].ranges() == two.ranges_of("b")

        digest = two.ranges_of("b")[0].start
        assert members["b"].begin(digest) and not members["a"].begin(digest)
        leaving = asyncio.create_task(members["b"].stop())
        await until(lambda: members["b"].ranges() == ())  # refuses new work at once
        await tick(("a",))
        # b left the ring: a takes all b released, but not the range b still drains ...
        draining = two.ranges_of("b")[0]
        assert merge((*members["a"].ranges(), draining)) == EVERYTHING
        assert not any(digest in r for r in members["a"].ranges())
        assert not leaving.done()  # ... until its reconcile ends
        members["b"].end(digest)
        async with asyncio.timeout(BOUND):
            await leaving
        assert [lease.metadata.name for lease in (await leases.list()).items] == ["a"]
        sleeping -= 1
        await tick(("a",))
        assert members["a"].ranges() == EVERYTHING
        await members["a"].stop()
        assert (await leases.list()).items == []

    asyncio.run(asyncio.wait_for(main(), BOUND * 6))

