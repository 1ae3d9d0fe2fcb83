"""The asyncio twin of test_sharded_manager: two AsyncManagers of one shard ring on one event
loop, with the test server filtering (gate on) and without (client filters)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager

import pytest

from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.core.v1 import ConfigMap, Secret
from kgen_runtime.controller import AsyncCluster, AsyncManager, Request, ShardingConfig
from kgen_runtime.rest import AsyncHTTPTransport
from kgen_runtime.testing import TestAPIServer
from tests.controller._sharding import NS, WAIT, Ledger, create_objects, in_ranges


@pytest.fixture(params=[True, False], ids=["server-filters", "client-filters"])
def gate(request: pytest.FixtureRequest) -> bool:
    """The test server's ShardedListAndWatch feature gate."""
    return bool(request.param)


@pytest.fixture
def server(gate: bool) -> Iterator[TestAPIServer]:
    with TestAPIServer(sharded_list_and_watch=gate) as test_server:
        yield test_server


async def until(condition: Callable[[], Awaitable[bool]]) -> None:
    """Wait (bounded by WAIT) until ``condition()`` holds, checking every 5 ms."""
    async with asyncio.timeout(WAIT):
        while not await condition():
            await asyncio.sleep(0.005)


@asynccontextmanager
async def started(manager: AsyncManager) -> AsyncIterator[AsyncManager]:
    """``manager.start()`` as a task while inside; stopped on leaving, re-raising its error."""
    task = asyncio.create_task(manager.start())
    try:
        yield manager
    finally:
        manager.stop()
        async with asyncio.timeout(WAIT):
            await task


def make_manager(server: TestAPIServer, stack: AsyncExitStack, name: str,
                 ledger: Ledger) -> AsyncManager:
    transport = AsyncHTTPTransport(server.config())
    stack.push_async_callback(transport.aclose)
    cluster = AsyncCluster(transport)
    manager = AsyncManager(
        cluster=cluster,
        sharding=ShardingConfig(ring="configmaps", member=name, lease_namespace="kube-system",
                                lease_duration=2.0, renew_period=0.1),
        graceful_shutdown_timeout=10.0,
    )

    async def reconcile(request: Request) -> None:
        ledger.enter(name, request.name)
        try:  # a GET from the server inside: a window two members' reconciles could share
            await cluster.api_reader.get(ConfigMap, request.namespace, request.name)
        finally:
            ledger.leave(request.name)

    manager.controller_for(ConfigMap).sharded().owns(Secret).complete(reconcile)
    return manager


async def cached(manager: AsyncManager, kind: type[ConfigMap | Secret] = ConfigMap) -> set[str]:
    listed = await manager.cluster.cache.list(kind, namespace=NS)
    return {obj.metadata.name or "" for obj in listed}


def held(manager: AsyncManager, uids: dict[str, str]) -> set[str]:
    member = manager.shard_member
    assert member is not None
    return in_ranges(uids, member.ranges())


def test_two_async_managers_split_the_objects_and_one_takes_over(
    server: TestAPIServer, gate: bool,
) -> None:
    with Clientset.for_config(server.config()) as clients:
        uids = create_objects(clients)
    everything = set(uids)
    ledger = Ledger()

    async def main() -> None:
        async with AsyncExitStack() as stack:
            a = make_manager(server, stack, "a", ledger)
            b = make_manager(server, stack, "b", ledger)
            async with started(b):
                async with started(a):
                    async def split() -> bool:
                        mine_a, mine_b = held(a, uids), held(b, uids)
                        return (bool(mine_a) and bool(mine_b) and not mine_a & mine_b
                                and mine_a | mine_b == everything
                                and await cached(a) == mine_a and await cached(b) == mine_b
                                # the Secrets follow their controlling ConfigMaps
                                and await cached(a, Secret) == mine_a
                                and await cached(b, Secret) == mine_b
                                and ledger.reconciled_by("a") >= mine_a
                                and ledger.reconciled_by("b") >= mine_b)

                    await until(split)
                    a_held = held(a, uids)
                    # Who filtered: the server with its gate on, else the client.
                    assert a.cluster.cache.shards.server_sharded() is gate
                    assert b.cluster.cache.shards.server_sharded() is gate
                    since = len(ledger.log)

                async def taken_over() -> bool:
                    return (held(b, uids) == everything and await cached(b) == everything
                            and await cached(b, Secret) == everything
                            and ledger.reconciled_by("b", since) >= a_held)

                await until(taken_over)

    asyncio.run(main())
    assert ledger.overlaps == []
    assert {name for _, name in ledger.log} == everything
    with Clientset.for_config(server.config()) as clients:
        assert clients.coordination_v1.leases("kube-system").list().items == []
